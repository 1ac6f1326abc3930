// The matmul family (matmul, mm, bmm, addmm, baddbmm, linear) against a long double oracle
// written here: every torch.matmul case, odd shapes and strides, the golden and fast bounds of
// Note [gemm numerics], float16/bfloat16, special values, determinism over threads and SIMD
// targets, and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/mpsim.h"
#include "tests/random_inputs.h"
#include "tests/simd_targets.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
using LD = long double;

std::vector<float> random_floats(std::int64_t n, unsigned seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

Tensor random_tensor(const Shape& shape, unsigned seed, float lo = -1, float hi = 1) {
  return from_vector(random_floats(shape.numel(), seed, lo, hi), shape);
}

// The exact value of one dot product (long double holds every float product exactly and sums
// K of them with error K * 2^-64 * sum |a b|), and sum |a b| for the bounds.
struct Dot {
  LD exact = 0;
  LD magnitude = 0;
};

// Row-major values of a logical [*, M, K] @ [*, K, N] with equal batch counts.
std::vector<Dot> oracle(const std::vector<float>& a, const std::vector<float>& b,
                        std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
  std::vector<Dot> out(static_cast<std::size_t>(batch * m * n));
  for (std::int64_t t = 0; t < batch; ++t) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        Dot& d = out[static_cast<std::size_t>((t * m + i) * n + j)];
        for (std::int64_t p = 0; p < k; ++p) {
          const LD prod = static_cast<LD>(a[static_cast<std::size_t>((t * m + i) * k + p)]) *
                          b[static_cast<std::size_t>((t * k + p) * n + j)];
          d.exact += prod;
          d.magnitude += std::fabs(prod);
        }
      }
    }
  }
  return out;
}

// The unit in the last place of a float32 value's binade (subnormal spacing below 2^-126).
LD ulp32(LD v) {
  int e = 0;
  std::frexp(v, &e);
  return std::ldexp(1.0L, std::max(e, -125) - 24);
}

// Golden (Note [gemm numerics]): |got - exact| <= 0.5 ulp(exact) + K 2^-53 sum|ab|; the
// oracle's own error (K 2^-64 sum|ab|) is far below the slack of rounding `exact` to float.
void expect_golden(const std::vector<float>& got, const std::vector<Dot>& want, std::int64_t k) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const LD bound = 0.5L * ulp32(want[i].exact) + k * std::ldexp(want[i].magnitude, -53) +
                     k * std::ldexp(want[i].magnitude, -62);
    ASSERT_LE(std::fabs(got[i] - want[i].exact), bound)
        << "element " << i << ": got " << got[i] << ", exact "
        << static_cast<double>(want[i].exact);
  }
}

// Fast: |got - exact| <= K 2^-24 sum|ab| + 0.5 ulp(exact) (the c = 1 bound of gemm.h).
void expect_fast(const std::vector<float>& got, const std::vector<Dot>& want, std::int64_t k) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const LD bound = 0.5L * ulp32(want[i].exact) + k * std::ldexp(want[i].magnitude, -24);
    ASSERT_LE(std::fabs(got[i] - want[i].exact), bound) << "element " << i;
  }
}

TEST(Matmul, TailsAroundEveryBlockSizeWithinTheBounds) {
  // Sizes straddle the micro-tile (6/8 rows, 8..48 columns; a last panel of one, two or three
  // vectors), the K block (128), the row block and the transposed path (n narrower than a
  // panel).
  const std::int64_t sizes_mn[] = {1, 5, 8, 9, 17, 47, 49, 80, 97, 200};
  const std::int64_t sizes_k[] = {1, 3, 127, 129, 300};
  unsigned seed = 1;
  for (std::int64_t m : sizes_mn) {
    for (std::int64_t n : sizes_mn) {
      for (std::int64_t k : sizes_k) {
        if (m * n * k > 2'000'000) continue;
        const std::vector<float> av = random_floats(m * k, seed++),
                                 bv = random_floats(k * n, seed++);
        const Tensor a = from_vector(av, {m, k}), b = from_vector(bv, {k, n});
        const Tensor c = mm(a, b);
        ASSERT_EQ(c.sizes(), Shape({m, n}));
        SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k);
        const std::vector<Dot> want = oracle(av, bv, 1, m, n, k);
        expect_golden(c.to_vector<float>(), want, k);
        PrecisionGuard fast(Precision::Fast);
        expect_fast(mm(a, b).to_vector<float>(), want, k);
      }
    }
  }
}

TEST(Matmul, PositiveInputsAreWithinOneUlpOfTheCorrectlyRoundedSum) {
  // No cancellation: the double chain's error is far below half a float ulp.
  const std::int64_t m = 33, n = 70, k = 513;
  const std::vector<float> av = random_floats(m * k, 7, 0, 2), bv = random_floats(k * n, 8, 0, 2);
  const std::vector<float> got =
      mm(from_vector(av, {m, k}), from_vector(bv, {k, n})).to_vector<float>();
  const std::vector<Dot> want = oracle(av, bv, 1, m, n, k);
  int exact = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float rounded = static_cast<float>(want[i].exact);
    ASSERT_LE(std::fabs(static_cast<LD>(got[i]) - rounded), ulp32(want[i].exact)) << i;
    exact += got[i] == rounded;
  }
  // Rounding once from a double chain: correctly rounded but for near-ties.
  EXPECT_GE(exact, static_cast<int>(got.size()) * 99 / 100);
}

TEST(Matmul, FastStaysWithinItsBoundAndGoldenIsTheDefault) {
  const std::int64_t m = 70, n = 90, k = 700;
  const std::vector<float> av = random_floats(m * k, 11), bv = random_floats(k * n, 12);
  const Tensor a = from_vector(av, {m, k}), b = from_vector(bv, {k, n});
  const std::vector<Dot> want = oracle(av, bv, 1, m, n, k);
  std::vector<float> fast;
  {
    PrecisionGuard guard(Precision::Fast);
    fast = mm(a, b).to_vector<float>();
  }
  expect_fast(fast, want, k);
  const std::vector<float> golden = mm(a, b).to_vector<float>();
  expect_golden(golden, want, k);
  EXPECT_NE(fast, golden);  // the float chain rounds at every step
}

// Note [thin gemm], Note [whole K]: with one or two column panels, or K above one block, full
// row panels of a row-major a are read in place over all of K; a view with column stride 2
// takes the packed route in K blocks. Both give the same chains, so the same bits, and within
// the oracle's bounds.
TEST(Matmul, ThinProductsReadInPlaceGiveThePackedBits) {
  struct Case {
    std::int64_t m, n, k;
  };
  // n = 40 (attention's P V), one and two float32 panels exactly, a tail of rows, K below and
  // above a block, and K = 0 (zeros); then wider products, which run each micro-tile over the
  // whole K (Note [whole K]: K above one block), reading full row panels in place and packing
  // the tail's.
  const Case cases[] = {{203, 40, 700}, {97, 48, 300}, {64, 96, 129},   {50, 7, 1000},
                        {9, 20, 5},     {16, 20, 0},   {203, 200, 300}, {101, 530, 129},
                        {7, 300, 260},  {300, 150, 0}};
  unsigned seed = 300;
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.m << "x" << c.n << "x" << c.k);
    const std::vector<float> av = random_floats(c.m * c.k, seed++),
                             bv = random_floats(c.k * c.n, seed++);
    const Tensor a = from_vector(av, {c.m, c.k}), b = from_vector(bv, {c.k, c.n});
    Tensor wide = zeros({c.m, 2 * c.k});
    wide.slice(1, 0, 2 * c.k, 2).copy_(a);
    const Tensor strided = wide.slice(1, 0, 2 * c.k, 2);  // column stride 2: packed
    const std::vector<Dot> want = oracle(av, bv, 1, c.m, c.n, c.k);
    for (Precision p : {Precision::Golden, Precision::Fast}) {
      PrecisionGuard guard(p);
      const std::vector<float> got = mm(a, b).to_vector<float>();
      EXPECT_EQ(got, mm(strided, b).to_vector<float>());
      if (p == Precision::Golden) {
        expect_golden(got, want, c.k);
      } else {
        expect_fast(got, want, c.k);
      }
    }
    const Tensor a64 = a.to(DType::Float64), b64 = b.to(DType::Float64);
    Tensor wide64 = zeros({c.m, 2 * c.k}, DType::Float64);
    wide64.slice(1, 0, 2 * c.k, 2).copy_(a64);
    EXPECT_EQ(mm(a64, b64).to_vector<double>(),
              mm(wide64.slice(1, 0, 2 * c.k, 2), b64).to_vector<double>());
  }
}

// Note [gemm streaming]: an output of 16 MiB or more leaves through streaming stores (Fast
// float32, float64); its rows hold the bits of the same rows computed as a smaller product.
TEST(Matmul, LargeOutputsStreamTheSameBits) {
  const std::int64_t m = 2048, n = 2048, k = 40;  // 16 MiB of float32
  const std::vector<float> av = random_floats(m * k, 500), bv = random_floats(k * n, 501);
  const Tensor a = from_vector(av, {m, k}), b = from_vector(bv, {k, n});
  auto values = [](const Tensor& t) { return t.to(DType::Float64).to_vector<double>(); };
  for (DType dt : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor at = a.to(dt), bt = b.to(dt);
    for (Precision p : {Precision::Golden, Precision::Fast}) {
      PrecisionGuard guard(p);
      const Tensor full = mm(at, bt);
      const Tensor top = mm(at.narrow(0, 0, 64), bt);  // 512 KiB: normal stores
      EXPECT_EQ(values(full.narrow(0, 0, 64)), values(top));
      const Tensor last = mm(at.narrow(0, m - 7, 7), bt);
      EXPECT_EQ(values(full.narrow(0, m - 7, 7)), values(last));
    }
  }
  // And the values: the Golden bound on a few rows.
  PrecisionGuard fast(Precision::Fast);
  const std::vector<float> got = mm(a, b).narrow(0, 1000, 3).to_vector<float>();
  const std::vector<float> rows(av.begin() + 1000 * k, av.begin() + 1003 * k);
  expect_fast(got, oracle(rows, bv, 1, 3, n, k), k);
}

TEST(Matmul, EveryTorchMatmulCase) {
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {
      {{7}, {7}, {}},                           // dot
      {{7}, {7, 5}, {5}},                       // vector @ matrix
      {{4, 7}, {7}, {4}},                       // matrix @ vector
      {{4, 7}, {7, 5}, {4, 5}},                 // mm
      {{3, 4, 7}, {7}, {3, 4}},                 // batched @ vector
      {{7}, {3, 7, 5}, {3, 5}},                 // vector @ batched
      {{3, 4, 7}, {7, 5}, {3, 4, 5}},           // batched @ matrix (folded into rows)
      {{4, 7}, {3, 7, 5}, {3, 4, 5}},           // matrix @ batched
      {{2, 1, 4, 7}, {3, 7, 5}, {2, 3, 4, 5}},  // broadcast batch dims
      {{2, 3, 4, 7}, {1, 7, 5}, {2, 3, 4, 5}},
  };
  unsigned seed = 100;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.a.to_string() + " @ " + c.b.to_string());
    const Tensor a = random_tensor(c.a, seed++), b = random_tensor(c.b, seed++);
    const Tensor got = matmul(a, b);
    ASSERT_EQ(got.sizes(), c.out);
    // Oracle through explicit [*, M, K] @ [*, K, N] forms broadcast to the output's batch.
    const std::int64_t k = c.a.dims().back();
    const Tensor a3 = c.a.size() == 1 ? a.unsqueeze(0) : a;
    const Tensor b3 = c.b.size() == 1 ? b.unsqueeze(1) : b;
    const std::int64_t m = a3.size(-2), n = b3.size(-1);
    const std::int64_t batch = std::max<std::int64_t>(1, got.numel() / (m * n));
    std::vector<std::int64_t> bs(c.out.begin(), c.out.end());
    if (c.b.size() > 1) bs.pop_back();
    if (c.a.size() > 1) bs.pop_back();
    const Shape batch_shape(bs);
    auto spread = [&](const Tensor& t, std::int64_t r, std::int64_t cols) {
      std::vector<std::int64_t> dims(batch_shape.begin(), batch_shape.end());
      dims.push_back(r);
      dims.push_back(cols);
      return t.expand(Shape(dims)).contiguous().to_vector<float>();
    };
    expect_golden(got.to_vector<float>(),
                  oracle(spread(a3, m, k), spread(b3, k, n), batch, m, n, k), k);
  }
}

TEST(Matmul, StridedTransposedAndExpandedViews) {
  const std::int64_t m = 19, n = 23, k = 150;
  const Tensor base_a = random_tensor({k, 2 * m}, 21);
  const Tensor a = base_a.slice(1, 0, 2 * m, 2).t();            // [m, k], strides (2, 2m)
  const Tensor b = random_tensor({n, k}, 22).t();               // [k, n], column-major
  const Tensor col = random_tensor({k, 1}, 23).expand({k, n});  // stride 0 columns
  const std::vector<float> av = a.contiguous().to_vector<float>();
  for (const Tensor& rhs : {b, col}) {
    const std::vector<float> bv = rhs.contiguous().to_vector<float>();
    expect_golden(mm(a, rhs).to_vector<float>(), oracle(av, bv, 1, m, n, k), k);
  }
}

TEST(Matmul, BmmAndBaddbmm) {
  const std::int64_t batch = 5, m = 9, n = 50, k = 40;
  const std::vector<float> av = random_floats(batch * m * k, 31),
                           bv = random_floats(batch * k * n, 32),
                           cv = random_floats(batch * m * n, 33);
  const Tensor a = from_vector(av, {batch, m, k}), b = from_vector(bv, {batch, k, n});
  const std::vector<Dot> want = oracle(av, bv, batch, m, n, k);
  expect_golden(bmm(a, b).to_vector<float>(), want, k);
  // baddbmm: beta * input + alpha * a @ b, computed in double from the exact product.
  const std::vector<float> got =
      baddbmm(from_vector(cv, {batch, m, n}), a, b, 0.5, 2).to_vector<float>();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const LD exact = 2 * want[i].exact + 0.5L * cv[i];
    const LD bound = 0.5L * ulp32(exact) + 2 * k * std::ldexp(want[i].magnitude, -52) +
                     std::ldexp(std::fabs(exact), -52);
    ASSERT_LE(std::fabs(got[i] - exact), bound) << i;
  }
}

TEST(Matmul, AddmmBroadcastsInputAndBetaZeroIgnoresIt) {
  const std::int64_t m = 6, n = 10, k = 20;
  const std::vector<float> av = random_floats(m * k, 41), bv = random_floats(k * n, 42);
  const Tensor a = from_vector(av, {m, k}), b = from_vector(bv, {k, n});
  const std::vector<Dot> want = oracle(av, bv, 1, m, n, k);
  const std::vector<float> row = random_floats(n, 43);
  const std::vector<float> got = addmm(from_vector(row, {n}), a, b).to_vector<float>();
  for (std::int64_t i = 0; i < m * n; ++i) {
    const LD exact = want[static_cast<std::size_t>(i)].exact + row[static_cast<std::size_t>(i % n)];
    ASSERT_LE(std::fabs(got[static_cast<std::size_t>(i)] - exact),
              0.5L * ulp32(exact) +
                  std::ldexp(std::fabs(exact) + want[static_cast<std::size_t>(i)].magnitude, -50))
        << i;
  }
  // beta = 0: the input is not read, so its NaN does not propagate (PyTorch).
  const Tensor nan_input = full({m, n}, std::numeric_limits<double>::quiet_NaN());
  const std::vector<float> ignored = addmm(nan_input, a, b, 0, 1).to_vector<float>();
  EXPECT_EQ(ignored, mm(a, b).to_vector<float>());
  EXPECT_THROW(addmm(random_tensor({m, 1, n}, 44), a, b), ShapeError);
}

TEST(Matmul, LinearWithAndWithoutBias) {
  const std::int64_t in = 37, out = 13;
  const std::vector<float> xv = random_floats(2 * 3 * in, 51), wv = random_floats(out * in, 52),
                           bias = random_floats(out, 53);
  const Tensor x = from_vector(xv, {2, 3, in}), w = from_vector(wv, {out, in});
  // Oracle: x @ w^T with w^T written out.
  std::vector<float> wt(static_cast<std::size_t>(in * out));
  for (std::int64_t o = 0; o < out; ++o)
    for (std::int64_t i = 0; i < in; ++i)
      wt[static_cast<std::size_t>(i * out + o)] = wv[static_cast<std::size_t>(o * in + i)];
  const std::vector<Dot> want = oracle(xv, wt, 1, 6, out, in);
  const Tensor plain = linear(x, w);
  ASSERT_EQ(plain.sizes(), Shape({2, 3, out}));
  expect_golden(plain.to_vector<float>(), want, in);
  const std::vector<float> biased = linear(x, w, from_vector(bias, {out})).to_vector<float>();
  for (std::size_t i = 0; i < biased.size(); ++i) {
    const LD exact = want[i].exact + bias[i % out];
    ASSERT_LE(std::fabs(biased[i] - exact),
              0.5L * ulp32(exact) + std::ldexp(std::fabs(exact) + want[i].magnitude, -50));
  }
  // A 1-d weight drops the out dim; a 1-d input drops the row dim.
  EXPECT_EQ(linear(x, from_vector(std::vector<float>(wv.begin(), wv.begin() + in), {in})).sizes(),
            Shape({2, 3}));
  EXPECT_EQ(linear(from_vector(std::vector<float>(xv.begin(), xv.begin() + in), {in}), w).sizes(),
            Shape({out}));
}

// float16 / bfloat16: widened exactly, one double chain, one rounding to the 16-bit type.
TEST(Matmul, HalfAndBFloat16RoundOnceFromTheWideSum) {
  const std::int64_t m = 7, n = 29, k = 200;
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    const Tensor a = random_tensor({m, k}, 61).to(dt), b = random_tensor({k, n}, 62).to(dt);
    const std::vector<Dot> want = oracle(a.to_vector<float>(), b.to_vector<float>(), 1, m, n, k);
    const int mantissa = dt == DType::Float16 ? 10 : 7;
    for (Precision p : {Precision::Golden, Precision::Fast}) {
      PrecisionGuard guard(p);
      const Tensor c = mm(a, b);
      ASSERT_EQ(c.dtype(), dt);
      const std::vector<float> got = c.to_vector<float>();
      for (std::size_t i = 0; i < got.size(); ++i) {
        int e = 0;
        std::frexp(want[i].exact, &e);
        const LD ulp =
            std::ldexp(1.0L, std::max(e, dt == DType::Float16 ? -13 : -125) - 1 - mantissa);
        const LD chain = p == Precision::Golden ? std::ldexp(want[i].magnitude, -53)
                                                : std::ldexp(want[i].magnitude, -24);
        ASSERT_LE(std::fabs(got[i] - want[i].exact), 0.5L * ulp + k * chain)
            << dtype_name(dt) << " element " << i;
      }
    }
  }
}

// Golden float16 / bfloat16, bit for bit on every SIMD target: the double chain of exact
// products in k order, rounded once (round16). k = 300 spans several K blocks, m and n leave
// partial panels; a and b row-major (their runs widened in vectors when packed) and b
// column-major (widened one by one); sums a hair off a 16-bit midpoint, which a rounding to
// float before the 16-bit one would get wrong.
class MatmulOnTarget : public test::OnEveryTarget {};

TEST_P(MatmulOnTarget, HalfAndBFloat16GoldenIsTheRoundedChain) {
  const std::int64_t m = 37, n = 53, k = 300;
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    const int mantissa = dt == DType::Float16 ? 10 : 7;
    const Tensor a = random_tensor({m, k}, 63).to(dt), b = random_tensor({k, n}, 64).to(dt);
    const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
    std::vector<float> want;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (std::int64_t q = 0; q < k; ++q) {
          acc = acc + static_cast<double>(av[static_cast<std::size_t>(i * k + q)]) *
                          bv[static_cast<std::size_t>(q * n + j)];
        }
        want.push_back(test::round16(acc, mantissa));
      }
    }
    const Tensor b_cols = b.t().contiguous().t();  // column-major b
    // Row 0 sums 1 + 2^-(mantissa + 1) + 2^-30 (nearest: 1 + 2^-mantissa; rounded to float
    // first it would sit on the midpoint and tie to even, 1), row 1 the same less 2^-30
    // (nearest: 1), rows 2 and 3 their negations; 21 equal columns.
    const float mid = std::ldexp(1.0f, -(mantissa + 1)), tiny = std::ldexp(1.0f, -15);
    const Tensor ca =
        from_vector<float>({1, mid, tiny, 1, mid, -tiny, -1, -mid, -tiny, -1, -mid, tiny}, {4, 3})
            .to(dt);
    const Tensor cb = from_vector<float>({1, 1, tiny}, {3, 1}).expand({3, 21}).contiguous().to(dt);
    const float up = 1 + std::ldexp(1.0f, -mantissa);
    std::vector<float> crafted;
    for (float v : {up, 1.0f, -up, -1.0f}) crafted.insert(crafted.end(), 21, v);
    EXPECT_EQ(mm(a, b).to_vector<float>(), want);
    EXPECT_EQ(mm(a, b_cols).to_vector<float>(), want);
    EXPECT_EQ(mm(ca, cb).to_vector<float>(), crafted);
  }
}

// A double sum past FLT_MAX rounds to inf in a float32 output on every SIMD target, whole
// vectors of columns and the rest (the emulated targets' own demotion would clamp it to
// FLT_MAX), and in a float16 one past 65504.
TEST_P(MatmulOnTarget, OverflowingSumsRoundToInf) {
  const float inf = std::numeric_limits<float>::infinity();
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    const Tensor a = full({3, 2}, 3e38), b = ones({2, 21});
    EXPECT_EQ(mm(a, b).to_vector<float>(), std::vector<float>(63, inf));
    EXPECT_EQ(mm(-a, b).to_vector<float>(), std::vector<float>(63, -inf));
    const Tensor h = full({3, 2}, 40000.0, DType::Float16);
    EXPECT_EQ(mm(h, ones({2, 21}, DType::Float16)).to_vector<float>(),
              std::vector<float>(63, inf));
  }
}

MPSIM_ON_EVERY_TARGET(MatmulOnTarget);

TEST(Matmul, Float64AccumulatesInDouble) {
  const std::int64_t m = 5, n = 6, k = 1000;
  const Tensor a = random_tensor({m, k}, 71).to(DType::Float64),
               b = random_tensor({k, n}, 72).to(DType::Float64);
  const std::vector<Dot> want = oracle(a.to_vector<float>(), b.to_vector<float>(), 1, m, n, k);
  const std::vector<double> got = mm(a, b).to_vector<double>();
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::fabs(got[i] - want[i].exact), k * std::ldexp(want[i].magnitude, -52)) << i;
  }
}

TEST(Matmul, SpecialValuesPropagateAsIeee) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Row 0 holds a NaN, row 1 an infinity meeting a zero (NaN), row 2 an infinity meeting a
  // positive value, row 3 a denormal product that must not flush.
  const Tensor a = from_vector<float>({nan, 1, 1, inf, 0, 1, inf, 1, 1, 1e-30f, 0, 0}, {4, 3});
  const Tensor b = from_vector<float>({1, 0, 1, 1, 1, 1}, {3, 2});
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    const std::vector<float> c = mm(a, b).to_vector<float>();
    EXPECT_TRUE(std::isnan(c[0]) && std::isnan(c[1]));
    EXPECT_EQ(c[2], inf);           // inf * 1 + 0 * 1 + 1 * 1
    EXPECT_TRUE(std::isnan(c[3]));  // inf * 0
    EXPECT_EQ(c[4], inf);
    EXPECT_TRUE(std::isnan(c[5]));  // inf * 0 again
    const Tensor tiny =
        mm(from_vector<float>({1e-30f}, {1, 1}), from_vector<float>({1e-10f}, {1, 1}));
    EXPECT_EQ(tiny.item<float>(), static_cast<float>(1e-30 * static_cast<double>(1e-10f)));
  }
}

TEST(Matmul, EmptyShapes) {
  EXPECT_EQ(mm(zeros({0, 4}), zeros({4, 3})).sizes(), Shape({0, 3}));
  // K == 0: the sum of nothing is zero; addmm gives beta * input.
  const Tensor z = mm(zeros({2, 0}), zeros({0, 3}));
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(addmm(full({2, 3}, 4.0), zeros({2, 0}), zeros({0, 3}), 0.5).to_vector<float>(),
            std::vector<float>(6, 2.0f));
  EXPECT_EQ(bmm(zeros({0, 2, 3}), zeros({0, 3, 4})).sizes(), Shape({0, 2, 4}));
  EXPECT_EQ(matmul(zeros({0}), zeros({0})).item<float>(), 0.0f);
  // K == 0 through linear (found by tests/fuzz/op_fuzz: the engine offset the null data of the
  // empty operands while packing nothing).
  const Tensor l = linear(zeros({1, 6, 1, 0}), zeros({7, 0}));
  EXPECT_EQ(l.sizes(), Shape({1, 6, 1, 7}));
  EXPECT_EQ(l.to_vector<float>(), std::vector<float>(42, 0.0f));
}

// The chain of every output is fixed by K: 1, 2 and 8 threads give the same bits, in both
// precisions, for one large problem (tiles in parallel) and a batch of small ones.
TEST(Matmul, BitIdenticalForAnyThreadCount) {
  const Tensor a = random_tensor({300, 700}, 81), b = random_tensor({700, 500}, 82);
  const Tensor ba = random_tensor({64, 20, 30}, 83), bb = random_tensor({64, 30, 40}, 84);
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    std::vector<std::vector<float>> runs, batched;
    for (int threads : {1, 2, 8}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      runs.push_back(mm(a, b).to_vector<float>());
      batched.push_back(bmm(ba, bb).to_vector<float>());
    }
    EXPECT_EQ(runs[0], runs[1]);
    EXPECT_EQ(runs[0], runs[2]);
    EXPECT_EQ(batched[0], batched[1]);
    EXPECT_EQ(batched[0], batched[2]);
  }
}

// Golden float32 is exact products in one double chain: every SIMD target gives its bits.
// Fast matches across the targets with FMA (avx2, avx512, neon).
TEST(Matmul, GoldenBitIdenticalOnEverySimdTarget) {
  const Tensor a = random_tensor({45, 300}, 91), b = random_tensor({300, 61}, 92);
  std::vector<float> golden_ref, fast_ref;
  test::for_each_target([&](const std::string& target) {
    const std::vector<float> golden = mm(a, b).to_vector<float>();
    if (golden_ref.empty()) golden_ref = golden;
    EXPECT_EQ(golden, golden_ref);
    if (target == "avx2" || target == "avx512" || target == "neon") {
      PrecisionGuard guard(Precision::Fast);
      const std::vector<float> fast = mm(a, b).to_vector<float>();
      if (fast_ref.empty()) fast_ref = fast;
      EXPECT_EQ(fast, fast_ref);
    }
  });
}

TEST(Matmul, BadInputNamesOpArgumentExpectedAndGiven) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] {
              mm(zeros({4, 3}), zeros({4, 5}));
            }),
            "[mm] inner dimensions differ: self is [4, 3], other is [4, 5]");
  EXPECT_THAT(message([] {
                matmul(zeros({2, 4, 3}), zeros({4, 5}));
              }),
              HasSubstr("[matmul] inner dimensions differ: self is [2, 4, 3], other is [4, 5]"));
  EXPECT_THAT(message([] { matmul(zeros({}), zeros({3})); }), HasSubstr("at least 1-d"));
  EXPECT_THAT(message([] {
                mm(zeros({3}), zeros({3, 3}));
              }),
              HasSubstr("[mm] expected self to be a 2-d tensor, got shape [3]"));
  EXPECT_THAT(message([] {
                bmm(zeros({2, 3, 4}), zeros({3, 4, 5}));
              }),
              HasSubstr("[bmm] batch sizes differ"));
  EXPECT_THAT(message([] {
                matmul(zeros({2, 3}), zeros({3, 2}, DType::Float16));
              }),
              HasSubstr("[matmul] expected other to have the dtype of self, float32, got float16"));
  EXPECT_THAT(message([] {
                mm(zeros({2, 3}, DType::Int64), zeros({3, 2}, DType::Int64));
              }),
              HasSubstr("supports floating point tensors"));
  EXPECT_THAT(message([] {
                matmul(zeros({2, 2, 3}), zeros({3, 3, 2}));
              }),
              HasSubstr("cannot be broadcast"));
  EXPECT_THAT(message([] {
                linear(zeros({2, 3}), zeros({4, 5}));
              }),
              HasSubstr("[linear] input's last dim 3 differs from weight's in_features 5"));
  EXPECT_THAT(message([] {
                linear(zeros({2, 3}), zeros({4, 3}), zeros({5}));
              }),
              HasSubstr("[linear] bias of shape [5] cannot be broadcast"));
  EXPECT_THROW(matmul(zeros({2, 3}), zeros({3, 2}, DType::Float32, Device::mps())), DeviceError);
  EXPECT_THROW(matmul(Tensor(), zeros({3})), InvalidArgument);
}

}  // namespace
}  // namespace mpsim
