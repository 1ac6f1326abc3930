// Random numbers: Philox known answers, the documented bit-to-value mappings recomputed here,
// reproducibility across seeds, threads and devices, and the distributions' moments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <numbers>

#include "core/mpsim.h"
#include "kernels_simd/philox.h"

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

TEST(Random, RandAndRandnFollowTheDocumentedMappings) {
  manual_seed(1234);
  const std::vector<float> u = rand({1001}).to_vector<float>();
  const std::vector<double> n = randn({1001}, DType::Float64).to_vector<double>();  // blocks 501..
  for (std::uint64_t i = 0; i < 1001; ++i) {
    const std::uint64_t r = philox_bits(1234, 0, i);
    EXPECT_EQ(u[i], static_cast<float>(static_cast<double>(r >> 40) * 0x1p-24)) << i;
    const std::uint64_t q = philox_bits(1234, 501, i);
    const double u1 = (static_cast<double>(q >> 32) + 1) * 0x1p-32,
                 u2 = static_cast<double>(q & 0xffffffffu) * 0x1p-32;
    EXPECT_EQ(n[i], std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2)) << i;
  }
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
