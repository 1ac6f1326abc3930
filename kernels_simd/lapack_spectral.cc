// The lapack family's kernels that need more than double's LU or Eigen's real solvers: det in
// long double and the general eigendecomposition (complex results). A translation unit of its
// own: Eigen's EigenSolver and the long double LU would push lapack.cc past the compile
// memory limit of scripts/build_times.sh under ASan.
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels_simd/lapack.h"
#include "kernels_simd/lapack_batch.h"

namespace mpsim::simd {

namespace {

using detail::Mat;
using detail::run;

// det of square A by LU with partial pivoting (getrf's pivots) in long double, the product of
// the pivots in long double. A determinant near zero is all cancellation: double's LU leaves an
// error of about n 2^-53 ||A||^n, which for a (numerically) singular float64 matrix is the
// whole value; x87's 64-bit significand makes it 2^11 times smaller (op_db's near-singular
// float64 samples: closer to the exact rational determinant than LAPACK's every time,
// tests/python/conformance.py). Where long double is double (MSVC, Apple arm64) it is double's.
double det_extended(const Mat& a) {
  using LMat = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
  LMat m = a.cast<long double>();
  const Eigen::Index n = m.rows();
  long double det = 1.0L;
  for (Eigen::Index j = 0; j < n; ++j) {
    Eigen::Index p = j;
    for (Eigen::Index i = j + 1; i < n; ++i) {
      if (std::abs(m(i, j)) > std::abs(m(p, j))) p = i;
    }
    if (p != j) {
      m.row(p).swap(m.row(j));
      det = -det;
    }
    const long double pivot = m(j, j);
    det *= pivot;
    if (pivot == 0.0L) continue;  // a zero column: det is 0 (NaN where a later pivot is NaN)
    for (Eigen::Index i = j + 1; i < n; ++i) {
      const long double l = m(i, j) / pivot;
      for (Eigen::Index c = j + 1; c < n; ++c) m(i, c) -= l * m(j, c);
    }
  }
  return static_cast<double>(det);
}

KernelStatus det_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams&, std::span<const Mat> in, std::span<Mat> out) {
    out[0](0, 0) = det_extended(in[0]);
  });
}

// A -> eigenvalues as [n, 2] (re, im) [, eigenvectors as [n, 2 n]]: Eigen's EigenSolver (real
// Schur form by Hessenberg reduction and Francis QR, in double; a complex A: ComplexEigenSolver,
// the complex Schur form). Both are unique only up to
// order and phase (LAPACK's geev, torch's, leaves the Schur form's order), so mpsim fixes them:
// the values ascending by real part, then imaginary part; each vector of unit norm with its
// first component of largest modulus real and positive.
KernelStatus eig_kernel(const KernelCall& call) {
  return run(call, [](const LapackParams& p, std::span<const Mat> in, std::span<Mat> out) {
    const Eigen::Index n = in[0].rows();
    if (n == 0) return;
    // a complex matrix arrives as its parts, [n, 2 n] (core/lapack_ops.cc, eig_parts)
    const bool complex_input = in[0].cols() == 2 * n;
    Eigen::VectorXcd w;
    Eigen::MatrixXcd unordered;
    if (complex_input) {
      Eigen::MatrixXcd a(n, n);
      for (Eigen::Index i = 0; i < n; ++i) {
        for (Eigen::Index j = 0; j < n; ++j) a(i, j) = {in[0](i, 2 * j), in[0](i, 2 * j + 1)};
      }
      const Eigen::ComplexEigenSolver<Eigen::MatrixXcd> ces(a, p.vectors);
      w = ces.eigenvalues();
      if (p.vectors) unordered = ces.eigenvectors();
    } else {
      const Eigen::EigenSolver<Mat> es(in[0], p.vectors);
      w = es.eigenvalues();
      if (p.vectors) unordered = es.eigenvectors();
    }
    std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) {
      return w(a).real() < w(b).real() || (w(a).real() == w(b).real() && w(a).imag() < w(b).imag());
    });
    for (Eigen::Index i = 0; i < n; ++i) {
      out[0](i, 0) = w(order[i]).real();
      out[0](i, 1) = w(order[i]).imag();
    }
    if (!p.vectors) return;
    Eigen::MatrixXcd v(n, n);
    for (Eigen::Index j = 0; j < n; ++j) v.col(j) = unordered.col(order[j]);
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::Index top = 0;
      for (Eigen::Index i = 1; i < n; ++i) {
        if (std::abs(v(i, j)) > std::abs(v(top, j))) top = i;
      }
      const double norm = v.col(j).norm();
      const std::complex<double> c = v(top, j);
      if (norm > 0 && std::abs(c) > 0) v.col(j) *= std::conj(c) / (std::abs(c) * norm);
      v(top, j).imag(0.0);  // real by construction; drop the product's rounding
      for (Eigen::Index i = 0; i < n; ++i) {
        out[1](i, 2 * j) = v(i, j).real();
        out[1](i, 2 * j + 1) = v(i, j).imag();
      }
    }
  });
}

}  // namespace

void register_lapack_spectral_kernels(KernelTable& table) {
  table.set(op_id("linalg_det"), &det_kernel, kFloatDTypes);
  table.set(op_id("linalg_eig"), &eig_kernel, {DType::Float32, DType::Float64});
}

}  // namespace mpsim::simd
