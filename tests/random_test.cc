// Random numbers: Philox known answers, the documented bit-to-value mappings recomputed here,
// reproducibility across seeds, threads and devices, and the distributions' moments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <numbers>

#include "core/mpsim.h"
#include "kernels_simd/divisor.h"
#include "kernels_simd/philox.h"
#include "kernels_simd/philox_simd.h"
#include "tests/simd_targets.h"

namespace mpsim {
namespace {

using simd::philox4x32_10;
using simd::philox_bits;

// Known-answer vectors of Random123 (philox4x32, 10 rounds).
TEST(Philox, KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (simd::PhiloxBlock{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                          {0xffffffffu, 0xffffffffu}),
            (simd::PhiloxBlock{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                          {0xa4093822u, 0x299f31d0u}),
            (simd::PhiloxBlock{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

// Box-Muller of an element's bits in long double: u1 = (hi + 1) 2^-32, u2 = lo 2^-32, and
// cos(2 pi u2) = cos(pi/2 v) with v = 4 u2 split exactly into the nearest integer q and
// t = v - q (so the argument of cosl/sinl carries no rounding of 2 pi u2 near a zero).
long double box_muller(std::uint64_t bits) {
  const long double u1 = (static_cast<long double>(bits >> 32) + 1) * 0x1p-32L;
  const long double v = static_cast<long double>(bits & 0xffffffffu) * 0x1p-30L;
  const long double q = std::nearbyint(v), t = v - q;
  const long double h = std::numbers::pi_v<long double> / 2 * t;
  const int quadrant = static_cast<int>(q) % 4;
  const long double c = quadrant == 0 ? std::cos(h) : quadrant == 1 ? -std::sin(h)
                        : quadrant == 2 ? -std::cos(h) : std::sin(h);
  return std::sqrt(-2 * std::log(u1)) * c;
}

// The vector generator (one block per 64-bit lane) against the scalar definition, on every
// target, across a counter that wraps past 2^64 and a key with both halves set.
class PhiloxOnTarget : public test::OnEveryTarget {};

TEST_P(PhiloxOnTarget, VectorBlocksMatchTheScalarDefinition) {
  for (const std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{0x0123456789abcdefull}}) {
    for (const std::uint64_t start : {std::uint64_t{0}, std::uint64_t{1} << 32,
                                      ~std::uint64_t{0} - 20}) {
      std::vector<std::uint64_t> got(2 * 45);
      simd::philox_pairs(seed, start, 45, got.data());
      for (std::uint64_t p = 0; p < 45; ++p) {
        const simd::PhiloxBlock r = simd::philox_block(seed, start + p);
        ASSERT_EQ(got[2 * p], simd::philox_word_pair(r, 0)) << target() << " block " << p;
        ASSERT_EQ(got[2 * p + 1], simd::philox_word_pair(r, 2)) << target() << " block " << p;
      }
    }
  }
}

MPSIM_ON_EVERY_TARGET(PhiloxOnTarget);

// randint's bits mod range by a multiply (kernels_simd/divisor.h) against the % operator.
TEST(Random, InvariantDivisorMatchesTheRemainderOperator) {
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> divisors = {1, 2, 3, 5, 7, 10, 1000, 4294967295ull, 4294967296ull,
                                         4294967297ull, (1ull << 63) - 1, 1ull << 63,
                                         (1ull << 63) + 1, ~0ull - 1, ~0ull};
  for (int i = 0; i < 200; ++i) divisors.push_back(rng() >> (rng() % 64) | 1);
  for (int i = 0; i < 40; ++i) divisors.push_back(1ull << (rng() % 64));
  for (const std::uint64_t d : divisors) {
    const simd::InvariantDivisor div(d);
    for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, d - 1, d, d + 1, 2 * d - 1,
                                  ~std::uint64_t{0}, ~std::uint64_t{0} - d}) {
      ASSERT_EQ(div.remainder(n), n % d) << n << " mod " << d;
    }
    for (int k = 0; k < 500; ++k) {
      const std::uint64_t n = rng();
      ASSERT_EQ(div.remainder(n), n % d) << n << " mod " << d;
    }
  }
}

TEST(Random, RandAndRandnFollowTheDocumentedMappings) {
  manual_seed(1234);
  const std::int64_t n = 1 << 16;
  const std::vector<float> u = rand({n}).to_vector<float>();
  const std::vector<double> z = randn({n}, DType::Float64).to_vector<double>();  // blocks n/2..
  const std::vector<float> zf = randn({n}, DType::Float32).to_vector<float>();   // blocks n..
  long double worst = 0, worst_f = 0;
  for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(n); ++i) {
    const std::uint64_t r = philox_bits(1234, 0, i);
    EXPECT_EQ(u[i], static_cast<float>(static_cast<double>(r >> 40) * 0x1p-24)) << i;
    // Note [normal transform]: relative error below 2^-49 in double.
    const long double want = box_muller(philox_bits(1234, n / 2, i));
    worst = std::max(worst, std::fabs((z[i] - want) / want));
    // float32: the long double value rounded once, but for values within 2^-20 ulp of a
    // rounding boundary (none in these draws).
    const long double want_f = box_muller(philox_bits(1234, n, i));
    const float rounded = static_cast<float>(want_f);
    const long double ulp =
        std::nextafter(std::fabs(rounded), INFINITY) - std::fabs(rounded);
    worst_f = std::max(worst_f, std::fabs(zf[i] - want_f) / ulp);
    EXPECT_EQ(zf[i], rounded) << i;
  }
  EXPECT_LT(worst, 0x1p-49L);
  // randint: low + bits mod (high - low), also over the whole int64 range.
  const std::vector<std::int64_t> k = randint(-7, 1000, {1001}).to_vector<std::int64_t>();
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  const std::vector<std::int64_t> wide =
      randint(lo, std::numeric_limits<std::int64_t>::max(), {1001}).to_vector<std::int64_t>();
  for (std::uint64_t i = 0; i < 1001; ++i) {
    EXPECT_EQ(k[i], -7 + static_cast<std::int64_t>(philox_bits(1234, 3 * n / 2, i) % 1007)) << i;
    const std::uint64_t r = philox_bits(1234, 3 * n / 2 + 501, i) % (~std::uint64_t{0});
    EXPECT_EQ(wide[i], static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + r)) << i;
  }
  EXPECT_LE(worst_f, 0.5L + 0x1p-20L);
  std::printf("randn: worst relative error in float64 2^%.1f; float32 within %.6Lf ulp\n",
              std::log2(static_cast<double>(worst)), worst_f);
}

// Note [normal transform]: only IEEE-exact operations, so every SIMD target (and the scalar
// one) gives the same bits, float64 and float32, vector bodies and tails.
TEST(Random, RandnHasTheSameBitsOnEveryTarget) {
  std::vector<double> ref;
  test::for_each_target([&](const std::string&) {
    manual_seed(77);
    std::vector<double> z = randn({4099}, DType::Float64).to_vector<double>();
    const std::vector<float> f = normal(1.5, 2.0, {1031}).to_vector<float>();
    z.insert(z.end(), f.begin(), f.end());
    if (ref.empty()) ref = z;
    ASSERT_EQ(z.size(), ref.size());
    EXPECT_EQ(std::memcmp(z.data(), ref.data(), z.size() * sizeof(double)), 0);
  });
}

TEST(Random, SameSeedSameNumbersAnyThreadsAndDevices) {
  auto draw = [] {
    manual_seed(99);
    std::vector<float> v = rand({300001}).to_vector<float>();
    const std::vector<float> z = randn({70001}, DType::Float32).to_vector<float>();
    const std::vector<float> d = dropout(ones({5001}), 0.3).to_vector<float>();
    v.insert(v.end(), z.begin(), z.end());
    v.insert(v.end(), d.begin(), d.end());
    return v;
  };
  std::vector<float> ref;
  for (int threads : {1, 2, 8}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const std::vector<float> v = draw();
    if (ref.empty()) ref = v;
    ASSERT_EQ(std::memcmp(v.data(), ref.data(), v.size() * 4), 0) << threads << " threads";
  }
  manual_seed(99);
  const std::vector<float> on_mps =
      rand({300001}, DType::Float32, Device::mps()).to_vector<float>();
  EXPECT_EQ(std::memcmp(on_mps.data(), ref.data(), on_mps.size() * 4), 0);
  manual_seed(100);
  EXPECT_NE(rand({16}).to_vector<float>(), std::vector<float>(ref.begin(), ref.begin() + 16));
  EXPECT_EQ(initial_seed(), 100u);
}

TEST(Random, MomentsRangesAndRates) {
  manual_seed(5);
  const std::int64_t n = 1 << 20;
  const std::vector<double> z = normal(2.0, 3.0, {n}, DType::Float64).to_vector<double>();
  double mean = 0, var = 0;
  for (double v : z) mean += v;
  mean /= n;
  for (double v : z) var += (v - mean) * (v - mean);
  var /= n;
  EXPECT_NEAR(mean, 2.0, 5 * 3.0 / std::sqrt(n));
  EXPECT_NEAR(var, 9.0, 9.0 * 5 * std::sqrt(2.0 / n));
  const std::vector<float> u = uniform({n}, -1, 3).to_vector<float>();
  for (float v : u) ASSERT_TRUE(v >= -1 && v < 3);
  const std::vector<std::int64_t> k = randint(-3, 4, {n}).to_vector<std::int64_t>();
  std::vector<int> counts(7, 0);
  for (std::int64_t v : k) {
    ASSERT_TRUE(v >= -3 && v < 4);
    ++counts[v + 3];
  }
  for (int c : counts) EXPECT_NEAR(c, n / 7.0, 5 * std::sqrt(n / 7.0));
  const std::vector<float> b = bernoulli(full({n}, 0.25)).to_vector<float>();
  double ones_count = 0;
  for (float v : b) ones_count += v;
  EXPECT_NEAR(ones_count / n, 0.25, 5 * std::sqrt(0.25 * 0.75 / n));
  // dropout: kept values are scaled by 1 / (1 - p); not training is the identity.
  const std::vector<float> d = dropout(full({n}, 2.0), 0.2).to_vector<float>();
  double kept = 0;
  for (float v : d) {
    ASSERT_TRUE(v == 0.0f || v == static_cast<float>(2.0 / 0.8));
    kept += v != 0;
  }
  EXPECT_NEAR(kept / n, 0.8, 5 * std::sqrt(0.16 / n));
  EXPECT_EQ(dropout(full({3}, 2.0), 0.9, false).to_vector<float>(), (std::vector<float>{2, 2, 2}));
}

TEST(Random, BadInputAndLinspace) {
  EXPECT_THROW(rand({2}, DType::Int32), DTypeError);
  EXPECT_THROW(randint(3, 3, {2}), InvalidArgument);
  EXPECT_THROW(bernoulli(full({2}, 1.5)), InvalidArgument);
  EXPECT_THROW(dropout(ones({2}), -0.1), InvalidArgument);
  EXPECT_THROW(normal(0, -1, {2}), InvalidArgument);
  EXPECT_EQ(rand({0}).numel(), 0);
  // torch.linspace: from both ends; steps 1 gives start; steps 0 is empty.
  const std::vector<double> l = linspace(-1, 1, 5, DType::Float64).to_vector<double>();
  EXPECT_EQ(l, (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
  const std::vector<double> l3 = linspace(0, 1, 3, DType::Float64).to_vector<double>();
  EXPECT_EQ(l3[2], 1.0);
  EXPECT_EQ(linspace(3, 9, 1).to_vector<float>(), (std::vector<float>{3}));
  EXPECT_EQ(linspace(0, 1, 0).numel(), 0);
  EXPECT_THROW(linspace(0, 1, -1), InvalidArgument);
  const std::vector<float> l7 = linspace(0.1, 0.7, 7).to_vector<float>();
  for (int i = 0; i < 7; ++i) {
    const double want = i < 3 ? 0.1 + (0.6 / 6) * i : 0.7 - (0.6 / 6) * (6 - i);
    EXPECT_EQ(l7[i], static_cast<float>(want)) << i;
  }
}

// Element i of the dense output takes philox_bits(seed, offset, i) whatever the input's layout
// and wherever the work splits: dropout of a transposed input (rows of odd length, so draws
// that start on an odd element) on 1, 2 and 8 threads, against the documented mapping.
TEST(Random, DropoutOfTransposedInputFollowsTheMapping) {
  std::vector<float> xv(257 * 131);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = 1.0f + static_cast<float>(i % 97);
  const Tensor x = from_vector(xv, {257, 131}).t();  // [131, 257], not contiguous
  for (int threads : {1, 2, 8}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    manual_seed(7);
    const std::vector<float> y = dropout(x, 0.25).to_vector<float>();
    const std::vector<float> xc = x.contiguous().to_vector<float>();
    ASSERT_EQ(y.size(), xc.size());
    for (std::uint64_t i = 0; i < y.size(); ++i) {
      const double u = static_cast<double>(philox_bits(7, 0, i) >> 11) * 0x1p-53;
      const float expected = u < 0.25 ? 0.0f : static_cast<float>(xc[i] / 0.75);
      ASSERT_EQ(y[i], expected) << i << ", " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace mpsim
