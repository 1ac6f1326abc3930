// The lapack family (core/lapack_ops.h) against long double oracles written here: each
// factorization reproduces its matrix and has its structure (triangles, orthogonality,
// pivots), solves and inverses satisfy their equations, the values equal the long double
// result rounded once (within an ulp), float16 inputs, special values, empty matrices, bad
// input with its error, and the same bits for any thread count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/mpsim.h"
#include "tests/random_inputs.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
using LD = long double;
using MatLD = std::vector<std::vector<LD>>;

std::vector<float> random_floats(std::int64_t n, unsigned seed) {
  return test::random_tensor({n}, seed).to_vector<float>();  // uniform in [-1, 1)
}

// A well-conditioned n x n matrix: uniform [-1, 1) plus `shift` on the diagonal.
std::vector<float> dominant(std::int64_t n, unsigned seed, float shift) {
  auto v = random_floats(n * n, seed);
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i * n + i)] += shift;
  return v;
}

MatLD to_ld(const std::vector<float>& v, std::int64_t rows, std::int64_t cols,
            std::int64_t offset = 0) {
  MatLD m(static_cast<std::size_t>(rows), std::vector<LD>(static_cast<std::size_t>(cols)));
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
          v[static_cast<std::size_t>(offset + i * cols + j)];
    }
  }
  return m;
}

MatLD product(const MatLD& a, const MatLD& b) {
  MatLD c(a.size(), std::vector<LD>(b[0].size(), 0.0L));
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t k = 0; k < b.size(); ++k) {
      for (std::size_t j = 0; j < b[0].size(); ++j) c[i][j] += a[i][k] * b[k][j];
    }
  }
  return c;
}

// Gauss-Jordan with partial pivoting in long double: the inverse and the determinant.
LD invert(MatLD a, MatLD* inverse) {
  const std::size_t n = a.size();
  MatLD inv(n, std::vector<LD>(n, 0.0L));
  for (std::size_t i = 0; i < n; ++i) inv[i][i] = 1.0L;
  LD det = 1.0L;
  for (std::size_t j = 0; j < n; ++j) {
    std::size_t p = j;
    for (std::size_t i = j + 1; i < n; ++i) {
      if (std::fabs(a[i][j]) > std::fabs(a[p][j])) p = i;
    }
    if (p != j) {
      std::swap(a[p], a[j]);
      std::swap(inv[p], inv[j]);
      det = -det;
    }
    det *= a[j][j];
    const LD pivot = a[j][j];
    for (std::size_t c = 0; c < n; ++c) {
      a[j][c] /= pivot;
      inv[j][c] /= pivot;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (i == j) continue;
      const LD f = a[i][j];
      for (std::size_t c = 0; c < n; ++c) {
        a[i][c] -= f * a[j][c];
        inv[i][c] -= f * inv[j][c];
      }
    }
  }
  if (inverse != nullptr) *inverse = inv;
  return det;
}

// |got - exact| within one ulp of exact in float32 (plus a tiny absolute slack for values
// that cancel to nearly zero).
void expect_within_ulp(float got, LD exact, LD scale, const char* what) {
  const LD ulp = std::ldexp(1.0L, std::ilogb(static_cast<float>(exact)) - 23);
  EXPECT_LE(std::fabs(static_cast<LD>(got) - exact), ulp + scale * 0x1p-50L)
      << what << ": got " << got << ", exact " << static_cast<double>(exact);
}

class Lapack : public ::testing::Test {};

TEST_F(Lapack, DetAndInverseAreTheLongDoubleValuesRoundedOnce) {
  const std::int64_t n = 5, batch = 3;
  std::vector<float> all;
  for (std::int64_t b = 0; b < batch; ++b) {
    auto m = random_floats(n * n, 10 + static_cast<unsigned>(b));
    all.insert(all.end(), m.begin(), m.end());
  }
  const Tensor a = from_vector(all, {batch, n, n});
  const auto det = linalg_det(a).to_vector<float>();
  const auto inv = linalg_inv(a).to_vector<float>();
  for (std::int64_t b = 0; b < batch; ++b) {
    MatLD exact_inv;
    const LD exact_det = invert(to_ld(all, n, n, b * n * n), &exact_inv);
    expect_within_ulp(det[static_cast<std::size_t>(b)], exact_det, 1.0L, "det");
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        expect_within_ulp(inv[static_cast<std::size_t>(b * n * n + i * n + j)],
                          exact_inv[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)], 1.0L,
                          "inverse");
      }
    }
  }
}

TEST_F(Lapack, SolveSatisfiesItsEquationOnBothSides) {
  const std::int64_t n = 4;
  const auto av = dominant(n, 3, 4.0f);
  const auto bv = random_floats(n * 2, 4);
  const Tensor a = from_vector(av, {n, n});
  const Tensor b = from_vector(bv, {n, 2});
  MatLD inv;
  invert(to_ld(av, n, n), &inv);
  const MatLD x_exact = product(inv, to_ld(bv, n, 2));
  const auto x = linalg_solve(a, b).to_vector<float>();
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < 2; ++j) {
      expect_within_ulp(x[static_cast<std::size_t>(i * 2 + j)],
                        x_exact[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)], 1.0L,
                        "solve");
    }
  }
  // X A = B^T: X = B^T A^-1
  const MatLD bt = [&] {
    MatLD t(2, std::vector<LD>(static_cast<std::size_t>(n)));
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < 2; ++j)
        t[j][static_cast<std::size_t>(i)] = bv[static_cast<std::size_t>(i * 2) + j];
    }
    return t;
  }();
  const MatLD y_exact = product(bt, inv);
  const auto y = linalg_solve(a, b.transpose(0, 1), false).to_vector<float>();
  for (std::size_t i = 0; i < 2; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      expect_within_ulp(y[i * static_cast<std::size_t>(n) + static_cast<std::size_t>(j)],
                        y_exact[i][static_cast<std::size_t>(j)], 1.0L, "solve left=false");
    }
  }
}

TEST_F(Lapack, LuReproducesItsMatrixWithLapackPivots) {
  const std::int64_t m = 4, n = 3;
  const auto av = random_floats(m * n, 7);
  const auto plu = linalg_lu(from_vector(av, {m, n}));
  const MatLD p = to_ld(plu[0].to_vector<float>(), m, m);
  const MatLD l = to_ld(plu[1].to_vector<float>(), m, n);
  const MatLD u = to_ld(plu[2].to_vector<float>(), n, n);
  const MatLD back = product(p, product(l, u));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      EXPECT_NEAR(
          static_cast<double>(back[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]),
          av[static_cast<std::size_t>(i * n + j)], 1e-6);
    }
  }
  // L unit lower with |entries| <= 1 (partial pivoting), the first pivot the largest |a_i0|.
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const LD v = l[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      if (i == j) {
        EXPECT_EQ(v, 1.0L);
      } else if (i < j) {
        EXPECT_EQ(v, 0.0L);
      } else {
        EXPECT_LE(std::fabs(v), 1.0L);
      }
    }
  }
  std::int64_t largest = 0;
  for (std::int64_t i = 1; i < m; ++i) {
    if (std::fabs(av[static_cast<std::size_t>(i * n)]) >
        std::fabs(av[static_cast<std::size_t>(largest * n)])) {
      largest = i;
    }
  }
  const auto f = linalg_lu_factor_ex(from_vector(av, {m, n}));
  EXPECT_EQ(f[1].dtype(), DType::Int32);
  EXPECT_EQ(f[1].to_vector<std::int32_t>()[0], largest + 1);
  EXPECT_EQ(f[2].item<std::int32_t>(), 0);
}

TEST_F(Lapack, CholeskyQrSvdAndEighReproduceTheirMatrices) {
  const std::int64_t n = 4;
  const auto av = dominant(n, 21, 5.0f);
  // Cholesky reads the lower triangle: the oracle symmetrizes it.
  MatLD sym = to_ld(av, n, n);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    for (std::size_t j = i + 1; j < static_cast<std::size_t>(n); ++j) sym[i][j] = sym[j][i];
  }
  const Tensor a = from_vector(av, {n, n});
  const MatLD l = to_ld(linalg_cholesky(a).to_vector<float>(), n, n);
  MatLD lt(static_cast<std::size_t>(n), std::vector<LD>(static_cast<std::size_t>(n)));
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    for (std::size_t j = 0; j < static_cast<std::size_t>(n); ++j) {
      lt[i][j] = l[j][i];
      if (j > i) {
        EXPECT_EQ(l[i][j], 0.0L);
      }
    }
  }
  const MatLD llt = product(l, lt);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    for (std::size_t j = 0; j < static_cast<std::size_t>(n); ++j) {
      EXPECT_NEAR(static_cast<double>(llt[i][j]), static_cast<double>(sym[i][j]), 4e-6);
    }
  }
  // QR: Q^T Q = I, R upper, Q R = A; R's diagonal sign is LAPACK's: -sign(a_00) first.
  const auto qr = linalg_qr(from_vector(av, {n, n}));
  const MatLD q = to_ld(qr[0].to_vector<float>(), n, n);
  const MatLD r = to_ld(qr[1].to_vector<float>(), n, n);
  const MatLD qr_back = product(q, r);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    for (std::size_t j = 0; j < static_cast<std::size_t>(n); ++j) {
      EXPECT_NEAR(static_cast<double>(qr_back[i][j]), av[i * static_cast<std::size_t>(n) + j],
                  4e-6);
      if (i > j) {
        EXPECT_EQ(r[i][j], 0.0L);
      }
      LD dot = 0;
      for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) dot += q[k][i] * q[k][j];
      EXPECT_NEAR(static_cast<double>(dot), i == j ? 1.0 : 0.0, 1e-6);
    }
  }
  EXPECT_EQ(std::signbit(static_cast<double>(r[0][0])), !std::signbit(av[0]));
  // SVD: U diag(S) Vh = A, S descending, U's largest component per column positive.
  const auto svd = linalg_svd(from_vector(av, {n, n}));
  const MatLD u = to_ld(svd[0].to_vector<float>(), n, n);
  const auto s = svd[1].to_vector<float>();
  const MatLD vh = to_ld(svd[2].to_vector<float>(), n, n);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    if (i > 0) {
      EXPECT_GE(s[i - 1], s[i]);
    }
    std::size_t at = 0;
    for (std::size_t k = 1; k < static_cast<std::size_t>(n); ++k) {
      if (std::fabs(u[k][i]) > std::fabs(u[at][i])) at = k;
    }
    EXPECT_GT(u[at][i], 0.0L);
    for (std::size_t j = 0; j < static_cast<std::size_t>(n); ++j) {
      LD x = 0;
      for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) x += u[i][k] * s[k] * vh[k][j];
      EXPECT_NEAR(static_cast<double>(x), av[i * static_cast<std::size_t>(n) + j], 1e-5);
    }
  }
  // eigh: A v = w v for the symmetric matrix of the lower triangle, w ascending.
  const auto eh = linalg_eigh(from_vector(av, {n, n}));
  const auto w = eh[0].to_vector<float>();
  const MatLD v = to_ld(eh[1].to_vector<float>(), n, n);
  for (std::size_t c = 0; c < static_cast<std::size_t>(n); ++c) {
    if (c > 0) {
      EXPECT_LE(w[c - 1], w[c]);
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
      LD av_i = 0;
      for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) av_i += sym[i][k] * v[k][c];
      EXPECT_NEAR(static_cast<double>(av_i), static_cast<double>(w[c] * v[i][c]), 1e-5);
    }
  }
}

TEST_F(Lapack, Float16IsRoundedOnceFromDouble) {
  const std::int64_t n = 3;
  const auto av = dominant(n, 5, 3.0f);
  const Tensor a16 = from_vector(av, {n, n}).to(DType::Float16);
  const auto rounded = a16.to_vector<float>();  // the inputs as float16 holds them
  MatLD inv;
  const LD det = invert(to_ld(rounded, n, n), &inv);
  const Tensor d = linalg_det(a16);
  EXPECT_EQ(d.dtype(), DType::Float16);
  EXPECT_EQ(d.item<float>(), static_cast<float>(Half(static_cast<double>(det))));
  const auto got = linalg_inv(a16).to_vector<float>();
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], static_cast<float>(Half(static_cast<double>(inv[i / 3][i % 3]))));
  }
}

TEST_F(Lapack, SpecialValuesAndEmptyMatrices) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor a = from_vector<float>({1, nan, 0, 1}, {2, 2});
  for (float v : linalg_svdvals(a).to_vector<float>()) EXPECT_TRUE(std::isnan(v));
  for (float v : linalg_matrix_exp(a).to_vector<float>()) EXPECT_TRUE(std::isnan(v));
  // A 0 x 0 matrix: det 1, an empty inverse, a batch of none: an empty result.
  EXPECT_EQ(linalg_det(zeros({2, 0, 0})).to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(linalg_inv(zeros({0, 0})).numel(), 0);
  EXPECT_EQ(linalg_det(zeros({0, 3, 3})).sizes(), Shape({0}));
  // A singular matrix: det 0, slogdet (0, -inf).
  const Tensor singular = from_vector<float>({1, 2, 2, 4}, {2, 2});
  EXPECT_EQ(linalg_det(singular).item<float>(), 0.0f);
  const auto sl = linalg_slogdet(singular);
  EXPECT_EQ(sl[0].item<float>(), 0.0f);
  EXPECT_EQ(sl[1].item<float>(), -std::numeric_limits<float>::infinity());
  // -0.0 entries factor as zeros.
  EXPECT_EQ(linalg_det(from_vector<float>({-0.0f, 1, 1, -0.0f}, {2, 2})).item<float>(), -1.0f);
}

TEST_F(Lapack, BadInputRaisesClearErrors) {
  EXPECT_THAT(
      [] {
        linalg_inv(zeros({2, 3}));
      },
      ::testing::ThrowsMessage<ShapeError>(HasSubstr("[linalg_inv]")));
  EXPECT_THAT([] { linalg_det(zeros({3})); },
              ::testing::ThrowsMessage<ShapeError>(HasSubstr("at least 2 dimensions")));
  EXPECT_THAT(
      [] {
        linalg_det(zeros({2, 2}, DType::Int64));
      },
      ::testing::ThrowsMessage<DTypeError>(HasSubstr("floating point")));
  EXPECT_THAT(
      [] {
        linalg_inv(zeros({2, 2, 2}));
      },
      ::testing::ThrowsMessage<LinAlgError>(
          HasSubstr("(Batch element 0): The diagonal element 1 is zero")));
  EXPECT_THAT(
      [] {
        linalg_cholesky(from_vector<float>({1, 0, 0, -1}, {2, 2}));
      },
      ::testing::ThrowsMessage<LinAlgError>(HasSubstr("leading minor of order 2")));
  EXPECT_THAT(
      [] {
        linalg_solve(zeros({3, 3}), zeros({2, 1}));
      },
      ::testing::ThrowsMessage<ShapeError>(HasSubstr("incompatible shapes")));
  EXPECT_THAT(
      [] {
        linalg_qr(zeros({2, 2}), "full");
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("mode must be")));
  EXPECT_THAT(
      [] {
        linalg_lu_factor(zeros({2, 2}));
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("U[1,1] is zero")));
  EXPECT_THAT(
      [] {
        linalg_lu_factor_ex(zeros({2, 2}), false);
      },
      ::testing::ThrowsMessage<NotImplementedError>(HasSubstr("without pivoting")));
  EXPECT_THAT(
      [] {
        linalg_matrix_norm(zeros({2, 2}), "3");
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("Order 3 not supported")));
  EXPECT_THAT(
      [] {
        linalg_multi_dot({zeros({2, 3}), zeros({2, 3})});
      },
      ::testing::ThrowsMessage<ShapeError>(HasSubstr("cannot be multiplied")));
  // The _ex forms report instead of raising.
  EXPECT_EQ(linalg_inv_ex(zeros({2, 2}))[1].item<std::int32_t>(), 1);
}

TEST_F(Lapack, BitIdenticalForAnyThreadCount) {
  const std::int64_t batch = 64, n = 6;
  const Tensor a = from_vector(random_floats(batch * n * n, 99), {batch, n, n});
  auto run = [&](int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    std::vector<float> out;
    for (const Tensor& t : {linalg_inv(a), linalg_svd(a)[0], linalg_eigh(a)[1], linalg_pinv(a),
                            linalg_qr(a)[1], linalg_matrix_exp(a)}) {
      const auto v = t.to_vector<float>();
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  };
  const auto one = run(1);
  for (int threads : {2, 4}) {
    const auto many = run(threads);
    ASSERT_EQ(one.size(), many.size());
    EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0)
        << threads << " threads";
  }
}

}  // namespace
}  // namespace mpsim
