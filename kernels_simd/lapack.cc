// The lapack family: each matrix of a batch read into double, the op computed there, each
// output rounded once (Note [lapack in double], kernels_simd/lapack.h). The factorizations
// and solves are written here with LAPACK's conventions; eigh, svd and the matrix exponential
// use Eigen in double.
#include "kernels_simd/lapack.h"

#include "kernels_simd/lapack_batch.h"

#include <tbb/parallel_for.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <unsupported/Eigen/MatrixFunctions>
#include <vector>

#include "core/dtype.h"

namespace mpsim::simd {

namespace {

using detail::load;
using detail::Mat;
using detail::run;
using detail::store;
using detail::Vec;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- LU with partial pivoting (getrf) ----

struct Lu {
  Mat lu;                         // unit L below the diagonal, U on and above it
  std::vector<Eigen::Index> piv;  // row j was swapped with row piv[j] (0-based)
  std::int64_t info = 0;          // 1-based index of the first zero pivot, 0 when none
};

Lu lu_factor(Mat a) {
  const Eigen::Index m = a.rows(), n = a.cols(), k = std::min(m, n);
  Lu r;
  r.piv.resize(static_cast<std::size_t>(k));
  for (Eigen::Index j = 0; j < k; ++j) {
    Eigen::Index p = j;
    double best = std::abs(a(j, j));
    for (Eigen::Index i = j + 1; i < m; ++i) {
      if (std::abs(a(i, j)) > best) {
        best = std::abs(a(i, j));
        p = i;
      }
    }
    r.piv[static_cast<std::size_t>(j)] = p;
    if (a(p, j) != 0.0) {
      if (p != j) a.row(p).swap(a.row(j));
      const double pivot = a(j, j);
      for (Eigen::Index i = j + 1; i < m; ++i) a(i, j) /= pivot;
    } else if (r.info == 0) {
      r.info = j + 1;
    }
    for (Eigen::Index c = j + 1; c < n; ++c) {
      const double u = a(j, c);
      for (Eigen::Index i = j + 1; i < m; ++i) a(i, c) -= a(i, j) * u;
    }
  }
  r.lu = std::move(a);
  return r;
}

// Solves A X = B (transpose: A^T X = B) for square A = P L U given as (lu, piv).
Mat lu_solve(const Mat& lu, const std::vector<Eigen::Index>& piv, Mat b, bool transpose) {
  const auto swap_rows = [&](Eigen::Index j) {
    const Eigen::Index p = piv[static_cast<std::size_t>(j)];
    if (p != j) b.row(p).swap(b.row(j));
  };
  const auto k = static_cast<Eigen::Index>(piv.size());
  if (!transpose) {
    for (Eigen::Index j = 0; j < k; ++j) swap_rows(j);
    lu.triangularView<Eigen::UnitLower>().solveInPlace(b);
    lu.triangularView<Eigen::Upper>().solveInPlace(b);
  } else {
    lu.triangularView<Eigen::Upper>().transpose().solveInPlace(b);
    lu.triangularView<Eigen::UnitLower>().transpose().solveInPlace(b);
    for (Eigen::Index j = k - 1; j >= 0; --j) swap_rows(j);
  }
  return b;
}

Mat inverse(const Mat& a, std::int64_t* info) {
  const Lu f = lu_factor(a);
  if (info != nullptr) *info = f.info;
  return lu_solve(f.lu, f.piv, Mat::Identity(a.rows(), a.cols()), false);
}

// ---- Cholesky (potrf) of the lower triangle ----

// L with L L^T = the symmetric matrix of a's lower triangle; info: the order of the first
// leading minor that is not positive definite (the columns from there on are zero).
Mat cholesky_lower(const Mat& a, std::int64_t* info) {
  const Eigen::Index n = a.rows();
  Mat l = Mat::Zero(n, n);
  *info = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    double d = a(j, j);
    for (Eigen::Index c = 0; c < j; ++c) d -= l(j, c) * l(j, c);
    if (!(d > 0.0)) {
      *info = j + 1;
      return l;
    }
    l(j, j) = std::sqrt(d);
    for (Eigen::Index i = j + 1; i < n; ++i) {
      double s = a(i, j);
      for (Eigen::Index c = 0; c < j; ++c) s -= l(i, c) * l(j, c);
      l(i, j) = s / l(j, j);
    }
  }
  return l;
}

// The lower factor of a given triangle: upper holds U with A = U^T U, so U^T is that L.
Mat lower_factor(const Mat& t, bool upper) {
  return upper ? Mat(t.triangularView<Eigen::Upper>().transpose())
               : Mat(t.triangularView<Eigen::Lower>());
}

// X with (L L^T) X = B.
Mat cholesky_solve(const Mat& l, Mat b) {
  l.triangularView<Eigen::Lower>().solveInPlace(b);
  l.triangularView<Eigen::Lower>().transpose().solveInPlace(b);
  return b;
}

// ---- Householder QR (geqrf, orgqr, ormqr) ----

// a becomes geqrf's packed form: R on and above the diagonal, the reflectors' tails below it.
Vec geqrf(Mat& a) {
  const Eigen::Index m = a.rows(), n = a.cols(), k = std::min(m, n);
  Vec tau = Vec::Zero(k);
  for (Eigen::Index j = 0; j < k; ++j) {
    const double alpha = a(j, j);
    const double xnorm = a.col(j).tail(m - j - 1).stableNorm();
    if (xnorm == 0.0) continue;  // H = I
    const double beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
    tau(j) = (beta - alpha) / beta;
    a.col(j).tail(m - j - 1) /= alpha - beta;
    a(j, j) = beta;
    for (Eigen::Index c = j + 1; c < n; ++c) {
      double w = a(j, c);
      for (Eigen::Index i = j + 1; i < m; ++i) w += a(i, j) * a(i, c);
      w *= tau(j);
      a(j, c) -= w;
      for (Eigen::Index i = j + 1; i < m; ++i) a(i, c) -= w * a(i, j);
    }
  }
  return tau;
}

// c = H_j c (from the left), H_j = I - tau v v^T with v = [0...0, 1, reflectors(j+1:, j)].
void reflect_left(const Mat& v, Eigen::Index j, double tau, Mat& c) {
  if (tau == 0.0) return;
  const Eigen::Index m = v.rows();
  for (Eigen::Index col = 0; col < c.cols(); ++col) {
    double w = c(j, col);
    for (Eigen::Index i = j + 1; i < m; ++i) w += v(i, j) * c(i, col);
    w *= tau;
    c(j, col) -= w;
    for (Eigen::Index i = j + 1; i < m; ++i) c(i, col) -= w * v(i, j);
  }
}

// c = c H_j (from the right).
void reflect_right(const Mat& v, Eigen::Index j, double tau, Mat& c) {
  if (tau == 0.0) return;
  const Eigen::Index m = v.rows();
  for (Eigen::Index row = 0; row < c.rows(); ++row) {
    double w = c(row, j);
    for (Eigen::Index i = j + 1; i < m; ++i) w += c(row, i) * v(i, j);
    w *= tau;
    c(row, j) -= w;
    for (Eigen::Index i = j + 1; i < m; ++i) c(row, i) -= w * v(i, j);
  }
}

// The first `cols` columns of Q = H_0 H_1 ... H_{k-1} (orgqr), k = tau's size.
Mat householder_q(const Mat& v, const Vec& tau, Eigen::Index cols) {
  Mat q = Mat::Identity(v.rows(), cols);
  for (Eigen::Index j = tau.size() - 1; j >= 0; --j) reflect_left(v, j, tau(j), q);
  return q;
}

// ---- Spectral decompositions ----

// Makes the first component of largest magnitude of column i of u positive, flipping column i
// of each matrix of `with` alongside.
void fix_signs(Mat& u, Eigen::Index count, Mat* with) {
  for (Eigen::Index i = 0; i < count; ++i) {
    Eigen::Index at = 0;
    double best = -1.0;
    for (Eigen::Index r = 0; r < u.rows(); ++r) {
      if (std::abs(u(r, i)) > best) {
        best = std::abs(u(r, i));
        at = r;
      }
    }
    if (u.rows() > 0 && u(at, i) < 0.0) {
      u.col(i) = -u.col(i);
      if (with != nullptr) with->col(i) = -with->col(i);
    }
  }
}

// Eigenvalues ascending (and eigenvectors, as columns) of the symmetric matrix of a triangle.
void eigh(const Mat& a, bool upper, bool vectors, Vec* w, Mat* v) {
  if (a.rows() == 0) {
    *w = Vec(0);
    if (vectors) *v = Mat(0, 0);
    return;
  }
  const Mat lower = upper ? Mat(a.transpose()) : a;
  Eigen::SelfAdjointEigenSolver<Mat> es(
      lower, vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
  if (es.info() != Eigen::Success) {
    *w = Vec::Constant(a.rows(), kNaN);
    if (vectors) *v = Mat::Constant(a.rows(), a.cols(), kNaN);
    return;
  }
  *w = es.eigenvalues();
  if (vectors) {
    *v = es.eigenvectors();
    fix_signs(*v, v->cols(), nullptr);
  }
}

struct Svd {
  Mat u;  // m x k (full: m x m)
  Vec s;  // k, descending
  Mat v;  // n x k (full: n x n)
};

bool all_finite(const Mat& a) { return a.allFinite(); }

Svd svd(const Mat& a, bool vectors, bool full) {
  const Eigen::Index m = a.rows(), n = a.cols(), k = std::min(m, n);
  Svd r;
  if (!all_finite(a)) {  // Jacobi sweeps on NaN stop at once; say so instead
    r.s = Vec::Constant(k, kNaN);
    if (vectors) {
      r.u = Mat::Constant(m, full ? m : k, kNaN);
      r.v = Mat::Constant(n, full ? n : k, kNaN);
    }
    return r;
  }
  if (k == 0) {  // Eigen's SVD needs a non-empty matrix; a full U (V) is then the identity
    r.s = Vec(0);
    if (vectors) {
      r.u = full ? Mat(Mat::Identity(m, m)) : Mat(m, 0);
      r.v = full ? Mat(Mat::Identity(n, n)) : Mat(n, 0);
    }
    return r;
  }
  if (!vectors) {
    r.s = Eigen::JacobiSVD<Mat>(a).singularValues();
    return r;
  }
  const unsigned flags =
      full ? Eigen::ComputeFullU | Eigen::ComputeFullV : Eigen::ComputeThinU | Eigen::ComputeThinV;
  Eigen::JacobiSVD<Mat> s(a, flags);
  r.s = s.singularValues();
  r.u = s.matrixU();
  r.v = s.matrixV();
  fix_signs(r.u, k, &r.v);
  return r;
}

// Singular values (descending), or |eigenvalues| (descending) of a symmetric matrix.
Vec singular_values(const Mat& a, bool hermitian) {
  if (!hermitian) return svd(a, false, false).s;
  Vec w;
  eigh(a, false, false, &w, nullptr);
  Vec s = w.cwiseAbs();
  std::sort(s.data(), s.data() + s.size(), std::greater<>());
  return s;
}

double cutoff(const LapackParams& p, const Vec& s) {
  const double smax = s.size() == 0 ? 0.0 : s.maxCoeff();
  return std::max(p.atol, p.rtol * smax);
}

// ---- Norms ----

double matrix_norm(const Mat& a, MatrixOrd ord) {
  switch (ord) {
    case MatrixOrd::Fro:
      return a.stableNorm();
    case MatrixOrd::Nuc:
      return svd(a, false, false).s.sum();
    case MatrixOrd::Two:
      return svd(a, false, false).s.maxCoeff();
    case MatrixOrd::MinusTwo:
      return svd(a, false, false).s.minCoeff();
    case MatrixOrd::One:
      return a.cwiseAbs().colwise().sum().maxCoeff();
    case MatrixOrd::MinusOne:
      return a.cwiseAbs().colwise().sum().minCoeff();
    case MatrixOrd::Inf:
      return a.cwiseAbs().rowwise().sum().maxCoeff();
    case MatrixOrd::MinusInf:
      return a.cwiseAbs().rowwise().sum().minCoeff();
  }
  return kNaN;
}

// ---- The kernels: inputs and outputs in the order of core/lapack_ops.cc ----

// A -> LU, pivots (1-based), info
KernelStatus lu_factor_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams&, std::span<const Mat> in, std::span<Mat> out) {
    const Lu f = lu_factor(in[0]);
    out[0] = f.lu;
    for (std::size_t j = 0; j < f.piv.size(); ++j) {
      out[1](static_cast<Eigen::Index>(j), 0) = static_cast<double>(f.piv[j] + 1);
    }
    out[2](0, 0) = static_cast<double>(f.info);
  });
}

// LU, pivots (1-based), B -> X
KernelStatus lu_solve_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    std::vector<Eigen::Index> piv(static_cast<std::size_t>(in[1].rows()));
    for (std::size_t j = 0; j < piv.size(); ++j) {
      piv[j] = static_cast<Eigen::Index>(in[1](static_cast<Eigen::Index>(j), 0)) - 1;
    }
    if (p.left) {
      out[0] = lu_solve(in[0], piv, in[2], p.transpose);
    } else {  // X A = B: A^T X^T = B^T
      out[0] = lu_solve(in[0], piv, in[2].transpose(), !p.transpose).transpose();
    }
  });
}

// A -> sign, log |det|
KernelStatus slogdet_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams&, std::span<const Mat> in, std::span<Mat> out) {
    const Lu f = lu_factor(in[0]);
    double sign = 1.0, log_abs = 0.0;
    for (Eigen::Index j = 0; j < f.lu.rows(); ++j) {
      const double u = f.lu(j, j);
      if (u < 0.0) sign = -sign;
      if (f.piv[static_cast<std::size_t>(j)] != j) sign = -sign;
      if (std::isnan(u)) sign = kNaN;
      log_abs += std::log(std::abs(u));
    }
    if (f.info != 0) sign = 0.0;
    out[0](0, 0) = sign;
    out[1](0, 0) = log_abs;
  });
}

// A -> inverse, info
KernelStatus inv_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams&, std::span<const Mat> in, std::span<Mat> out) {
    std::int64_t info = 0;
    out[0] = inverse(in[0], &info);
    out[1](0, 0) = static_cast<double>(info);
  });
}

// A, B -> X, info
KernelStatus solve_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    const Lu f = lu_factor(in[0]);
    out[0] = p.left ? lu_solve(f.lu, f.piv, in[1], false)
                    : Mat(lu_solve(f.lu, f.piv, in[1].transpose(), true).transpose());
    out[1](0, 0) = static_cast<double>(f.info);
  });
}

// A, B -> X of A X = B (X A = B), A triangular
KernelStatus solve_triangular_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    Mat t = p.upper ? Mat(in[0].triangularView<Eigen::Upper>())
                    : Mat(in[0].triangularView<Eigen::Lower>());
    if (p.unitriangular) t.diagonal().setOnes();
    if (p.left) {
      out[0] = in[1];
      if (p.upper) {
        t.triangularView<Eigen::Upper>().solveInPlace(out[0]);
      } else {
        t.triangularView<Eigen::Lower>().solveInPlace(out[0]);
      }
    } else {
      Mat x = in[1].transpose();
      if (p.upper) {
        t.triangularView<Eigen::Upper>().transpose().solveInPlace(x);
      } else {
        t.triangularView<Eigen::Lower>().transpose().solveInPlace(x);
      }
      out[0] = x.transpose();
    }
  });
}

// A -> L (U = L^T when upper), info
KernelStatus cholesky_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    std::int64_t info = 0;
    const Mat l = cholesky_lower(p.upper ? Mat(in[0].transpose()) : in[0], &info);
    out[0] = p.upper ? Mat(l.transpose()) : l;
    out[1](0, 0) = static_cast<double>(info);
  });
}

// B, L -> X of (L L^T) X = B
KernelStatus cholesky_solve_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    out[0] = cholesky_solve(lower_factor(in[1], p.upper), in[0]);
  });
}

// L -> (L L^T)^-1
KernelStatus cholesky_inverse_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    const Mat l = lower_factor(in[0], p.upper);
    out[0] = cholesky_solve(l, Mat::Identity(l.rows(), l.cols()));
  });
}

// A -> packed QR, tau
KernelStatus geqrf_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams&, std::span<const Mat> in, std::span<Mat> out) {
    Mat a = in[0];
    out[1] = geqrf(a);
    out[0] = a;
  });
}

// reflectors, tau -> Q's first columns
KernelStatus householder_product_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams&, std::span<const Mat> in, std::span<Mat> out) {
    out[0] = householder_q(in[0], in[1].col(0), in[0].cols());
  });
}

// reflectors, tau, C -> Q C, Q^T C, C Q or C Q^T
KernelStatus ormqr_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    const Mat& v = in[0];
    const Vec tau = in[1].col(0);
    Mat c = in[2];
    const Eigen::Index k = tau.size();
    // Q = H_0 ... H_{k-1}: Q C applies H_{k-1} first, C Q applies H_0 first.
    const bool descending = p.left != p.transpose;
    for (Eigen::Index t = 0; t < k; ++t) {
      const Eigen::Index j = descending ? k - 1 - t : t;
      if (p.left) {
        reflect_left(v, j, tau(j), c);
      } else {
        reflect_right(v, j, tau(j), c);
      }
    }
    out[0] = c;
  });
}

// A -> Q, R (vectors) or R
KernelStatus qr_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    Mat a = in[0];
    const Vec tau = geqrf(a);
    Mat& r = out[p.vectors ? 1 : 0];
    r = a.topRows(r.rows()).triangularView<Eigen::Upper>();
    if (p.vectors) out[0] = householder_q(a, tau, out[0].cols());
  });
}

// A -> eigenvalues ascending [, eigenvectors]
KernelStatus eigh_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    Vec w;
    Mat v;
    eigh(in[0], p.upper, p.vectors, &w, &v);
    out[0] = w;
    if (p.vectors) out[1] = v;
  });
}

// A -> U, S, Vh (vectors) or S
KernelStatus svd_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    const Svd s = svd(in[0], p.vectors, p.full);
    if (!p.vectors) {
      out[0] = s.s;
      return;
    }
    out[0] = s.u;
    out[1] = s.s;
    out[2] = s.v.transpose();
  });
}

// A, B -> solution, squared residuals, rank, singular values: the minimum-norm least-squares
// solution through the SVD, singular values <= rcond * s_max taken as zero.
KernelStatus lstsq_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    const Mat& a = in[0];
    const Mat& b = in[1];
    const Svd s = svd(a, true, false);
    const double cut = p.rtol * (s.s.size() == 0 ? 0.0 : s.s.maxCoeff());
    Mat utb = s.u.transpose() * b;
    std::int64_t rank = 0;
    for (Eigen::Index i = 0; i < s.s.size(); ++i) {
      if (s.s(i) > cut) {
        utb.row(i) /= s.s(i);
        ++rank;
      } else {
        utb.row(i).setZero();
      }
    }
    const Mat x = s.v * utb;
    out[0] = x;
    if (p.residuals) out[1] = (a * x - b).colwise().squaredNorm().transpose();
    out[2](0, 0) = static_cast<double>(rank);
    out[3] = s.s;
  });
}

// A -> pinv
KernelStatus pinv_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    const Mat& a = in[0];
    if (p.hermitian) {
      Vec w;
      Mat v;
      eigh(a, false, true, &w, &v);
      const double cut = cutoff(p, w.cwiseAbs());
      Vec inv_w = Vec::Zero(w.size());
      for (Eigen::Index i = 0; i < w.size(); ++i) {
        if (std::abs(w(i)) > cut) inv_w(i) = 1.0 / w(i);
      }
      out[0] = v * inv_w.asDiagonal() * v.transpose();
      return;
    }
    const Svd s = svd(a, true, false);
    const double cut = cutoff(p, s.s);
    Vec inv_s = Vec::Zero(s.s.size());
    for (Eigen::Index i = 0; i < s.s.size(); ++i) {
      if (s.s(i) > cut) inv_s(i) = 1.0 / s.s(i);
    }
    out[0] = s.v * inv_s.asDiagonal() * s.u.transpose();
  });
}

// A -> the number of singular values above the cutoff
KernelStatus matrix_rank_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    const Vec s = singular_values(in[0], p.hermitian);
    const double cut = cutoff(p, s);
    out[0](0, 0) = static_cast<double>((s.array() > cut).count());
  });
}

KernelStatus matrix_norm_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    out[0](0, 0) = matrix_norm(in[0], p.ord);
  });
}

// A -> cond_p(A): s_max / s_min for 2 (-2: the reciprocal), else |A|_p |A^-1|_p (inf when A is
// singular)
KernelStatus cond_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    const Mat& a = in[0];
    if (a.size() == 0) {  // torch's: 0 for an empty matrix
      out[0](0, 0) = 0.0;
      return;
    }
    if (p.ord == MatrixOrd::Two || p.ord == MatrixOrd::MinusTwo) {
      const Vec s = svd(a, false, false).s;
      const double hi = s.size() == 0 ? kNaN : s.maxCoeff();
      const double lo = s.size() == 0 ? kNaN : s.minCoeff();
      out[0](0, 0) = p.ord == MatrixOrd::Two ? hi / lo : lo / hi;
      return;
    }
    std::int64_t info = 0;
    const Mat inv = inverse(a, &info);
    out[0](0, 0) = info != 0 ? kInf : matrix_norm(a, p.ord) * matrix_norm(inv, p.ord);
  });
}

// A -> A^n (n < 0: (A^-1)^-n), info of the inverse
KernelStatus matrix_power_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    std::int64_t info = 0;
    Mat base = p.power < 0 ? inverse(in[0], &info) : in[0];
    Mat result = Mat::Identity(base.rows(), base.cols());
    for (std::uint64_t n = p.power < 0 ? 0 - static_cast<std::uint64_t>(p.power)
                                       : static_cast<std::uint64_t>(p.power);
         n != 0; n >>= 1) {
      if ((n & 1u) != 0) result = result * base;
      if (n > 1) base = base * base;
    }
    out[0] = result;
    out[1](0, 0) = static_cast<double>(info);
  });
}

KernelStatus matrix_exp_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams&, std::span<const Mat> in, std::span<Mat> out) {
    out[0] = all_finite(in[0]) ? Mat(in[0].exp()) : Mat::Constant(in[0].rows(), in[0].cols(), kNaN);
  });
}

// A_1, ..., A_k -> A_1 A_2 ... A_k, in double from left to right
KernelStatus multi_dot_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams&, std::span<const Mat> in, std::span<Mat> out) {
    Mat x = in[0];
    for (std::size_t i = 1; i < in.size(); ++i) x = x * in[i];
    out[0] = x;
  });
}

}  // namespace

void register_lapack_kernels(KernelTable& table) {
  table.set(op_id("linalg_lu_factor_ex"), &lu_factor_kernel, kFloatDTypes);
  table.set(op_id("linalg_lu_solve"), &lu_solve_kernel, kFloatDTypes);
  table.set(op_id("linalg_slogdet"), &slogdet_kernel, kFloatDTypes);
  table.set(op_id("linalg_inv_ex"), &inv_kernel, kFloatDTypes);
  table.set(op_id("linalg_solve_ex"), &solve_kernel, kFloatDTypes);
  table.set(op_id("linalg_solve_triangular"), &solve_triangular_kernel, kFloatDTypes);
  table.set(op_id("linalg_cholesky_ex"), &cholesky_kernel, kFloatDTypes);
  table.set(op_id("cholesky_solve"), &cholesky_solve_kernel, kFloatDTypes);
  table.set(op_id("cholesky_inverse"), &cholesky_inverse_kernel, kFloatDTypes);
  table.set(op_id("geqrf"), &geqrf_kernel, kFloatDTypes);
  table.set(op_id("linalg_householder_product"), &householder_product_kernel, kFloatDTypes);
  table.set(op_id("ormqr"), &ormqr_kernel, kFloatDTypes);
  table.set(op_id("linalg_qr"), &qr_kernel, kFloatDTypes);
  table.set(op_id("linalg_eigh"), &eigh_kernel, kFloatDTypes);
  table.set(op_id("linalg_svd"), &svd_kernel, kFloatDTypes);
  table.set(op_id("linalg_lstsq"), &lstsq_kernel, kFloatDTypes);
  table.set(op_id("linalg_pinv"), &pinv_kernel, kFloatDTypes);
  table.set(op_id("linalg_matrix_rank"), &matrix_rank_kernel, kFloatDTypes);
  table.set(op_id("linalg_matrix_norm"), &matrix_norm_kernel, kFloatDTypes);
  table.set(op_id("linalg_cond"), &cond_kernel, kFloatDTypes);
  table.set(op_id("linalg_matrix_power"), &matrix_power_kernel, kFloatDTypes);
  table.set(op_id("linalg_matrix_exp"), &matrix_exp_kernel, kFloatDTypes);
  table.set(op_id("linalg_multi_dot"), &multi_dot_kernel, kFloatDTypes);
}

}  // namespace mpsim::simd
