// layer_norm, rms_norm, group_norm and batch_norm (inference) against long double oracles.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/mpsim.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
using LD = long double;

std::vector<float> random_floats(std::size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

double ulps(float got, LD exact) {
  int e = 0;
  std::frexp(exact, &e);
  return static_cast<double>(std::fabs(got - exact) / std::ldexp(1.0L, std::max(e, -125) - 24));
}

// Oracle over groups of `g` consecutive elements; affine parameters indexed by `param(i)`.
template <class Param>
std::vector<LD> normalize(const std::vector<float>& x, std::size_t g, bool rms, double eps,
                          Param&& wb) {
  std::vector<LD> out(x.size());
  for (std::size_t s = 0; s < x.size(); s += g) {
    LD mean = 0, var = 0;
    if (!rms) {
      for (std::size_t i = 0; i < g; ++i) mean += x[s + i];
      mean /= g;
    }
    for (std::size_t i = 0; i < g; ++i) var += (x[s + i] - mean) * (x[s + i] - mean);
    var /= g;
    for (std::size_t i = 0; i < g; ++i) {
      const auto [w, b] = wb(s + i);
      out[s + i] = (x[s + i] - mean) / std::sqrt(var + static_cast<LD>(eps)) * w + b;
    }
  }
  return out;
}

TEST(LayerNorm, OneAndTwoTrailingDimsWithAffineVsOracle) {
  const std::vector<float> xv = random_floats(5 * 7 * 11, -3, 5, 1);
  const std::vector<float> wv = random_floats(7 * 11, 0.5, 2, 2),
                           bv = random_floats(7 * 11, -1, 1, 3);
  const Tensor x = from_vector(xv, {5, 7, 11});
  for (std::size_t g : {11u, 77u}) {
    const IntList shape = g == 11 ? IntList{11} : IntList{7, 11};
    const Shape ps = g == 11 ? Shape({11}) : Shape({7, 11});
    const Tensor w = from_vector(std::vector<float>(wv.begin(), wv.begin() + g), ps);
    const Tensor b = from_vector(std::vector<float>(bv.begin(), bv.begin() + g), ps);
    const std::vector<float> got = layer_norm(x, shape, w, b, 1e-5).to_vector<float>();
    const std::vector<LD> want = normalize(
        xv, g, false, 1e-5, [&](std::size_t i) { return std::pair<LD, LD>(wv[i % g], bv[i % g]); });
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_LE(ulps(got[i], want[i]), 1.0) << g << " " << i;
    // No weight or bias, and a transposed (non-contiguous) input.
    const std::vector<float> plain =
        layer_norm(x.transpose(0, 1).transpose(0, 1), shape).to_vector<float>();
    const std::vector<LD> want_plain =
        normalize(xv, g, false, 1e-5, [](std::size_t) { return std::pair<LD, LD>(1, 0); });
    for (std::size_t i = 0; i < plain.size(); ++i) EXPECT_LE(ulps(plain[i], want_plain[i]), 1.0);
  }
}

TEST(LayerNorm, LargeOffsetsAndHalfPrecision) {
  std::vector<float> xv = random_floats(4 * 320, -1, 1, 4);
  for (float& v : xv) v += 1000.0f;  // a large common offset: the two-pass variance keeps it exact
  const std::vector<float> got = layer_norm(from_vector(xv, {4, 320}), {320}).to_vector<float>();
  const std::vector<LD> want =
      normalize(xv, 320, false, 1e-5, [](std::size_t) { return std::pair<LD, LD>(1, 0); });
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_LE(ulps(got[i], want[i]), 1.0) << i;
  const Tensor h = from_vector(random_floats(3 * 64, -4, 4, 5), {3, 64}).to(DType::Float16);
  const std::vector<float> hv = h.to_vector<float>();
  const std::vector<float> hg = layer_norm(h, {64}).to_vector<float>();
  const std::vector<LD> hw =
      normalize(hv, 64, false, 1e-5, [](std::size_t) { return std::pair<LD, LD>(1, 0); });
  for (std::size_t i = 0; i < hg.size(); ++i)
    EXPECT_EQ(hg[i], static_cast<float>(Half(static_cast<double>(hw[i])))) << i;
}

// float16/bfloat16 rows dense in x and the output widen and round in vectors (norm.cc); other
// layouts convert value by value. The arithmetic is the same, so dense and strided inputs must
// give the same bits (and every value the oracle's rounding: half_norm_test), for layer_norm,
// rms_norm and group_norm with and without affine parameters.
TEST(LayerNorm, SixteenBitDenseRowsGiveTheStridedRowsBits) {
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    const Tensor x = from_vector(random_floats(6 * 40 * 70, -3, 3, 9), {6, 40, 70}).to(dt);
    const Tensor w = from_vector(random_floats(70, 0.5f, 2, 10), {70}).to(dt);
    const Tensor b = from_vector(random_floats(70, -1, 1, 11), {70}).to(dt);
    // The same values two elements apart in memory: the value-by-value path.
    const Tensor strided = x.unsqueeze(3).expand({6, 40, 70, 2}).contiguous().select(3, 1);
    ASSERT_FALSE(strided.is_contiguous());
    for (int op = 0; op < 5; ++op) {
      auto run = [&](const Tensor& in) {
        switch (op) {
          case 0:
            return layer_norm(in, {70});
          case 1:
            return layer_norm(in, {70}, w, b);
          case 2:
            return rms_norm(in, {70}, w);
          case 3:
            return group_norm(in, 2);
          default:
            return layer_norm(in, {40, 70});
        }
      };
      const std::vector<float> dense = run(x).to(DType::Float32).to_vector<float>();
      const std::vector<float> other = run(strided).to(DType::Float32).to_vector<float>();
      for (std::size_t i = 0; i < dense.size(); ++i) {
        ASSERT_EQ(std::memcmp(&dense[i], &other[i], 4), 0)
            << dtype_name(dt) << " op " << op << " at " << i << ": " << dense[i] << " vs "
            << other[i];
      }
    }
  }
}

TEST(RmsNorm, MatchesOracleWithDefaultEps) {
  const std::vector<float> xv = random_floats(6 * 40, -2, 2, 6),
                           wv = random_floats(40, 0.5, 1.5, 7);
  const std::vector<float> got =
      rms_norm(from_vector(xv, {6, 40}), {40}, from_vector(wv, {40})).to_vector<float>();
  const std::vector<LD> want =
      normalize(xv, 40, true, std::numeric_limits<float>::epsilon(),
                [&](std::size_t i) { return std::pair<LD, LD>(wv[i % 40], 0); });
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_LE(ulps(got[i], want[i]), 1.0) << i;
}

TEST(GroupNorm, NchwAndChannelsLastGiveTheOracleAndKeepTheFormat) {
  const std::int64_t n = 2, c = 6, h = 5, w = 7, g = 3;
  const std::vector<float> xv = random_floats(n * c * h * w, -2, 3, 8);
  const std::vector<float> wv = random_floats(c, 0.5, 2, 9), bv = random_floats(c, -1, 1, 10);
  const Tensor x = from_vector(xv, {n, c, h, w});
  const std::vector<LD> want =
      normalize(xv, static_cast<std::size_t>(c / g * h * w), false, 1e-5, [&](std::size_t i) {
        const std::size_t ch = (i / (h * w)) % c;
        return std::pair<LD, LD>(wv[ch], bv[ch]);
      });
  const Tensor nchw = group_norm(x, g, from_vector(wv, {c}), from_vector(bv, {c}));
  // The same values stored channels-last (NHWC memory, NCHW logical shape).
  const Tensor nhwc = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  ASSERT_EQ(nhwc.strides(), channels_last_strides(x.sizes()));
  const Tensor out_cl = group_norm(nhwc, g, from_vector(wv, {c}), from_vector(bv, {c}));
  EXPECT_EQ(out_cl.strides(), channels_last_strides(x.sizes()));
  const std::vector<float> a = nchw.to_vector<float>(), b = out_cl.to_vector<float>();
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_LE(ulps(a[i], want[i]), 1.0) << i;
    // Channels-last sums in another order (per channel over chunks of rows): the same bound.
    EXPECT_LE(ulps(b[i], want[i]), 1.0) << "channels-last " << i;
  }
  try {
    group_norm(x, 4);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(
        e.what(),
        HasSubstr(
            "[group_norm] expected the number of channels 6 to be divisible by num_groups 4"));
  }
  EXPECT_THROW(group_norm(x, 3, from_vector<float>({1, 2}, {2})), ShapeError);
}

TEST(BatchNorm, InferenceWithRunningStatistics) {
  const std::vector<float> xv = random_floats(2 * 3 * 4, -2, 2, 11);
  const std::vector<float> m = {0.5f, -1, 0}, v = {1, 4, 0.25f}, w = {2, 1, -1}, b = {0, 1, 0.5f};
  const std::vector<float> got =
      batch_norm(from_vector(xv, {2, 3, 4}), from_vector(m, {3}), from_vector(v, {3}),
                 from_vector(w, {3}), from_vector(b, {3}), false, 0.1, 1e-3)
          .to_vector<float>();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::size_t ch = (i / 4) % 3;
    const LD want =
        (xv[i] - static_cast<LD>(m[ch])) / std::sqrt(static_cast<LD>(v[ch]) + 1e-3L) * w[ch] +
        b[ch];
    EXPECT_LE(ulps(got[i], want), 0.5) << i;
  }
  EXPECT_THROW(batch_norm(from_vector(xv, {2, 3, 4}), from_vector(m, {3}), from_vector(v, {3}),
                          std::nullopt, std::nullopt, true),
               NotImplementedError);
}

// A channels-last input gives a channels-last output (PyTorch's layout) with the NCHW planes'
// bits: each output ((x - mean) * rstd) * w + b in double, rstd = 1 / sqrt(var + eps), rounded
// once (written here), for channel counts with vector tails, a float32 input in both layouts.
TEST(BatchNorm, ChannelsLastKeepsItsLayoutAndTheNchwBits) {
  for (std::int64_t c : {3, 16, 37}) {
    const std::vector<float> xv = random_floats(static_cast<std::size_t>(2 * c * 5 * 7), -3, 3, 12);
    const std::vector<float> m = random_floats(static_cast<std::size_t>(c), -1, 1, 13);
    const std::vector<float> v = random_floats(static_cast<std::size_t>(c), 0.1f, 3, 14);
    const std::vector<float> w = random_floats(static_cast<std::size_t>(c), -2, 2, 15);
    const std::vector<float> b = random_floats(static_cast<std::size_t>(c), -1, 1, 16);
    const Tensor x = from_vector(xv, {2, c, 5, 7});
    const Tensor xc = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
    auto run = [&](const Tensor& in) {
      return batch_norm(in, from_vector(m, {c}), from_vector(v, {c}), from_vector(w, {c}),
                        from_vector(b, {c}), false, 0.1, 1e-5);
    };
    const Tensor nchw = run(x), cl = run(xc);
    EXPECT_EQ(cl.strides(), xc.strides()) << c;
    const std::vector<float> a = nchw.to_vector<float>(), bits = cl.to_vector<float>();
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::size_t ch = (i / 35) % static_cast<std::size_t>(c);
      const double rstd = 1.0 / std::sqrt(static_cast<double>(v[ch]) + 1e-5);
      const double want = (static_cast<double>(xv[i]) - m[ch]) * rstd * w[ch] + b[ch];
      ASSERT_EQ(a[i], static_cast<float>(want)) << "NCHW C=" << c << " element " << i;
      ASSERT_EQ(std::memcmp(&bits[i], &a[i], 4), 0) << "channels-last C=" << c << " element " << i;
    }
  }
}

TEST(Norms, BadInputAndDeterminism) {
  const Tensor x = zeros({2, 3});
  try {
    layer_norm(x, {2});
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_THAT(
        e.what(),
        HasSubstr(
            "[layer_norm] normalized_shape [2] must be non-empty and equal the trailing dims"));
  }
  EXPECT_THROW(layer_norm(x, {3}, zeros({4})), ShapeError);
  EXPECT_THROW(layer_norm(zeros({2, 3}, DType::Int32), {3}), DTypeError);
  const Tensor big = from_vector(random_floats(64 * 4096, -5, 5, 12), {64, 4096});
  std::vector<float> ref;
  for (int threads : {1, 2, 8}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    std::vector<float> r = layer_norm(big, {4096}).to_vector<float>();
    const std::vector<float> gn = group_norm(big.reshape({4, 16, 64, 64}), 8).to_vector<float>();
    r.insert(r.end(), gn.begin(), gn.end());
    if (ref.empty()) ref = r;
    ASSERT_EQ(std::memcmp(r.data(), ref.data(), r.size() * 4), 0) << threads << " threads";
  }
}

}  // namespace
}  // namespace mpsim
