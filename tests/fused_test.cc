// The Stable Diffusion fusions against their unfused compositions in mpsim (the same bits:
// Note [fused rounding] in kernels_simd/fused.h), in Golden and Fast, on odd shapes, shapes of
// several blocks and rows longer than a block, float16/bfloat16/float64, NaN and inf; values
// against a long double oracle written here; bad input; determinism over thread counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/mpsim.h"
#include "tests/simd_targets.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
using LD = long double;

constexpr DType kDTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

// Uniform values on [lo, hi); with specials, every 37th is NaN, every 41st +inf, every 43rd
// -inf (made in float32, then rounded to dtype).
Tensor random_tensor(const Shape& shape, unsigned seed, DType dtype = DType::Float32,
                     bool specials = false, float lo = -3, float hi = 3) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(shape.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = d(rng);
    if (specials && i % 37 == 5) v[i] = std::numeric_limits<float>::quiet_NaN();
    if (specials && i % 41 == 7) v[i] = std::numeric_limits<float>::infinity();
    if (specials && i % 43 == 9) v[i] = -std::numeric_limits<float>::infinity();
  }
  return from_vector(v, shape).to(dtype);
}

// Same sizes, dtype and bytes (NaN payloads included), except that a float16/bfloat16 NaN
// matches any NaN: the binary kernel's 16-bit loop returns, from two NaN operands (NaN * NaN,
// NaN + NaN), the first one in its compiler-vectorized body and the second one in its scalar
// remainder and on strided rows, so even the composition's NaN sign depends on where its
// blocks cut a row (bfloat16 mul(+NaN, -NaN): +NaN in a dense row of 40000, -NaN in a row of 7).
::testing::AssertionResult same_bits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) {
    return ::testing::AssertionFailure()
           << a.sizes().to_string() << " " << dtype_name(a.dtype()) << " vs "
           << b.sizes().to_string() << " " << dtype_name(b.dtype());
  }
  const Tensor ac = a.contiguous(), bc = b.contiguous();
  if (std::memcmp(ac.data_ptr(), bc.data_ptr(), ac.nbytes()) == 0) {
    return ::testing::AssertionSuccess();
  }
  const bool any_nan = a.dtype() == DType::Float16 || a.dtype() == DType::BFloat16;
  const std::vector<double> x = ac.to(DType::Float64).to_vector<double>();
  const std::vector<double> y = bc.to(DType::Float64).to_vector<double>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (any_nan && std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (std::memcmp(&x[i], &y[i], sizeof(double)) != 0) {
      return ::testing::AssertionFailure()
             << "first difference at " << i << ": " << x[i] << " vs " << y[i];
    }
  }
  return any_nan ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << "bytes differ";
}

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// ---- bias_add ----

Tensor bias_add_composed(const Tensor& x, const Tensor& bias, const Tensor& skip) {
  return add(add(x, bias), skip);
}

TEST(BiasAdd, EqualsItsComposition) {
  for (DType dtype : kDTypes) {
    for (const Shape& shape : {Shape{2, 5, 7}, Shape{2, 77, 320}, Shape{1, 1, 1},
                               Shape{3, 4097, 11}, Shape{1, 2, 40001}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape.to_string());
      const Tensor x = random_tensor(shape, 1, dtype, true);
      const Tensor bias = random_tensor(Shape{shape[2]}, 2, dtype, true);
      const Tensor skip = random_tensor(shape, 3, dtype, true);
      EXPECT_TRUE(same_bits(bias_add(x, bias, skip), bias_add_composed(x, bias, skip)));
    }
  }
}

TEST(BiasAdd, NonContiguousInputs) {
  const Tensor x = random_tensor(Shape{7, 3, 5}, 4).transpose(0, 1);
  const Tensor skip = random_tensor(Shape{3, 7, 10}, 5).slice(2, 0, 10, 2);
  const Tensor bias = random_tensor(Shape{10}, 6).slice(0, 0, 10, 2);
  EXPECT_TRUE(same_bits(bias_add(x, bias, skip), bias_add_composed(x, bias, skip)));
}

// ---- bias_split_gelu ----

Tensor bias_split_gelu_composed(const Tensor& x, const Tensor& bias) {
  const Tensor t = add(x, bias);
  const std::int64_t d = x.size(-1) / 2;
  return mul(t.slice(-1, 0, d), gelu(t.slice(-1, d, 2 * d)));
}

TEST(BiasSplitGelu, EqualsItsCompositionInGoldenAndFast) {
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    for (DType dtype : kDTypes) {
      for (const Shape& shape : {Shape{2, 5, 14}, Shape{2, 3, 22}, Shape{1, 64, 2560},
                                 Shape{3, 1, 2}, Shape{1, 2, 70002}}) {
        SCOPED_TRACE(std::string(precision_name(p)) + " " + std::string(dtype_name(dtype)) + " " +
                     shape.to_string());
        const Tensor x = random_tensor(shape, 7, dtype, true, -6, 6);
        const Tensor bias = random_tensor(Shape{shape[2]}, 8, dtype, true);
        EXPECT_TRUE(same_bits(bias_split_gelu(x, bias), bias_split_gelu_composed(x, bias)));
      }
    }
  }
}

// a * gelu(b) in long double from the rounded sum t = float(x + bias): the fusion rounds gelu(b)
// (within 1 ulp) and the product (half an ulp), so it is within 2 ulp of the value.
TEST(BiasSplitGelu, WithinTwoUlpOfALongDoubleOracle) {
  const std::int64_t d = 13;
  const Tensor x = random_tensor(Shape{4, 6, 2 * d}, 9, DType::Float32, false, -6, 6);
  const Tensor bias = random_tensor(Shape{2 * d}, 10);
  const std::vector<float> y = bias_split_gelu(x, bias).to_vector<float>();
  const std::vector<float> t = add(x, bias).to_vector<float>();
  for (std::size_t r = 0; r < 24; ++r) {
    for (std::int64_t j = 0; j < d; ++j) {
      const LD a = t[r * 2 * d + j], b = t[r * 2 * d + d + j];
      const LD want = a * (b / 2 * std::erfc(-b / std::sqrt(2.0L)));
      const float got = y[r * d + static_cast<std::size_t>(j)];
      const LD ulp = std::ldexp(1.0L, std::ilogb(static_cast<float>(want)) - 23);
      EXPECT_LE(std::fabs(got - want), 2 * ulp + 0x1p-149L) << r << " " << j;
    }
  }
}

// ---- skip_layer_norm ----

TEST(SkipLayerNorm, EqualsItsCompositionWithAndWithoutBetaAndBias) {
  for (DType dtype : kDTypes) {
    for (const Shape& shape : {Shape{2, 5, 7}, Shape{2, 77, 768}, Shape{1, 300, 320},
                               Shape{3, 1, 1}, Shape{2, 1, 40000}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape.to_string());
      const std::int64_t c = shape[2];
      const Tensor x = random_tensor(shape, 11, dtype, true);
      const Tensor skip = random_tensor(shape, 12, dtype);
      const Tensor gamma = random_tensor(Shape{c}, 13, dtype);
      const Tensor beta = random_tensor(Shape{c}, 14, dtype);
      const Tensor bias = random_tensor(Shape{c}, 15, dtype);
      const Tensor s = add(add(x, skip), bias);
      const auto [y, sum] = skip_layer_norm_with_sum(x, skip, gamma, beta, bias, 1e-6);
      EXPECT_TRUE(same_bits(sum, s));
      EXPECT_TRUE(same_bits(y, layer_norm(s, {c}, gamma, beta, 1e-6)));
      EXPECT_TRUE(same_bits(skip_layer_norm(x, skip, gamma, beta, bias, 1e-6), y));
      EXPECT_TRUE(same_bits(skip_layer_norm(x, skip, gamma),
                            layer_norm(add(x, skip), {c}, gamma, std::nullopt)));
    }
  }
}

// Note [summed rows]: float32 rows form (x + skip) + bias inside layer_norm's row loop, in its
// pipelined form (targets with FMA) and its scalar one (the others): every target gives the
// composition's bits (a row of 330 leaves a tail after the vectors), and the same values on
// every target: layer_norm's NaN sign is the target's (SSE4 and scalar give -NaN where AVX-512
// gives +NaN).
TEST(SkipLayerNorm, Float32SameOnEverySimdTarget) {
  const Shape shape{2, 37, 330};
  const Tensor x = random_tensor(shape, 61, DType::Float32, true);
  const Tensor skip = random_tensor(shape, 62), gamma = random_tensor(Shape{330}, 63);
  const Tensor beta = random_tensor(Shape{330}, 64), bias = random_tensor(Shape{330}, 65);
  std::vector<Tensor> first;
  test::for_each_target([&](const std::string&) {
    const auto [y, sum] = skip_layer_norm_with_sum(x, skip, gamma, beta, bias, 1e-5);
    EXPECT_TRUE(same_bits(y, layer_norm(add(add(x, skip), bias), {330}, gamma, beta, 1e-5)));
    if (first.empty()) first = {y, sum};
    const std::vector<double> got = y.to(DType::Float64).to_vector<double>(),
                              want = first[0].to(DType::Float64).to_vector<double>();
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))) << i;
    }
    EXPECT_TRUE(same_bits(sum, first[1]));
  });
}

// ---- group_norm_nhwc ----

Tensor group_norm_nhwc_composed(const Tensor& x, std::int64_t groups, const Tensor& gamma,
                                const Tensor& beta, double eps, bool with_silu) {
  Tensor y = group_norm(x.permute({0, 3, 1, 2}), groups, gamma, beta, eps);
  if (with_silu) y = silu(y);
  return y.permute({0, 2, 3, 1});
}

TEST(GroupNormNhwc, EqualsItsCompositionWithAndWithoutSilu) {
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    for (DType dtype : kDTypes) {
      struct Case {
        Shape shape;
        std::int64_t groups;
      };
      for (const Case& c : {Case{{2, 8, 8, 64}, 32}, Case{{1, 5, 7, 6}, 3},
                            Case{{2, 16, 16, 320}, 32}, Case{{1, 1, 1, 4}, 4}}) {
        SCOPED_TRACE(std::string(precision_name(p)) + " " + std::string(dtype_name(dtype)) + " " +
                     c.shape.to_string());
        const Tensor x = random_tensor(c.shape, 21, dtype, true);
        const Tensor gamma = random_tensor(Shape{c.shape[3]}, 22, dtype);
        const Tensor beta = random_tensor(Shape{c.shape[3]}, 23, dtype);
        for (bool with_silu : {false, true}) {
          EXPECT_TRUE(same_bits(
              group_norm_nhwc(x, c.groups, gamma, beta, 1e-5, with_silu ? "silu" : "none"),
              group_norm_nhwc_composed(x, c.groups, gamma, beta, 1e-5, with_silu)));
        }
      }
    }
  }
}

// Against a long double group norm written here (no NaN: each group's statistics in long
// double): within one float32 ulp plus 2^-20 absolute.
TEST(GroupNormNhwc, MatchesALongDoubleOracle) {
  const std::int64_t n = 2, h = 3, w = 5, c = 12, g = 4, cg = c / g;
  const Tensor x = random_tensor(Shape{n, h, w, c}, 24);
  const Tensor gamma = random_tensor(Shape{c}, 25), beta = random_tensor(Shape{c}, 26);
  const std::vector<float> xv = x.to_vector<float>(), gv = gamma.to_vector<float>(),
                           bv = beta.to_vector<float>();
  const std::vector<float> y = group_norm_nhwc(x, g, gamma, beta, 1e-5, "silu").to_vector<float>();
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t grp = 0; grp < g; ++grp) {
      LD mean = 0, var = 0;
      const LD count = h * w * cg;
      auto at = [&](std::int64_t p, std::int64_t ch) {
        return static_cast<std::size_t>((b * h * w + p) * c + grp * cg + ch);
      };
      for (std::int64_t p = 0; p < h * w; ++p)
        for (std::int64_t ch = 0; ch < cg; ++ch) mean += xv[at(p, ch)];
      mean /= count;
      for (std::int64_t p = 0; p < h * w; ++p)
        for (std::int64_t ch = 0; ch < cg; ++ch)
          var += (xv[at(p, ch)] - mean) * (xv[at(p, ch)] - mean);
      var /= count;
      for (std::int64_t p = 0; p < h * w; ++p) {
        for (std::int64_t ch = 0; ch < cg; ++ch) {
          const std::size_t k = static_cast<std::size_t>(grp * cg + ch);
          const LD z = (xv[at(p, ch)] - mean) / std::sqrt(var + 1e-5L) * gv[k] + bv[k];
          const LD want = z / (1 + std::exp(-z));
          EXPECT_NEAR(y[at(p, ch)], static_cast<double>(want),
                      std::fabs(static_cast<double>(want)) * 0x1p-22 + 0x1p-20);
        }
      }
    }
  }
}

// ---- multi_head_attention ----

TEST(MultiHeadAttention, PackedQkvEqualsAttentionOnItsViews) {
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    for (DType dtype : kDTypes) {
      for (const Shape& shape : {Shape{2, 7, 3, 3, 5}, Shape{1, 300, 2, 3, 40}}) {
        SCOPED_TRACE(std::string(precision_name(p)) + " " + std::string(dtype_name(dtype)) + " " +
                     shape.to_string());
        const Tensor qkv = random_tensor(shape, 31, dtype, false, -1, 1);
        auto part = [&](std::int64_t i) { return qkv.select(3, i).permute({0, 2, 1, 3}); };
        const std::int64_t b = shape[0], s = shape[1], h = shape[2], d = shape[4];
        for (std::optional<double> scale : {std::optional<double>(), std::optional<double>(0.3)}) {
          const Tensor want = scaled_dot_product_attention(part(0), part(1), part(2), std::nullopt,
                                                           0.0, false, scale)
                                  .permute({0, 2, 1, 3})
                                  .reshape({b, s, h * d});
          EXPECT_TRUE(same_bits(multi_head_attention(qkv, std::nullopt, scale), want));
        }
      }
    }
  }
}

TEST(MultiHeadAttention, CrossAttentionWithPackedKvEqualsAttentionOnItsViews) {
  for (DType dtype : kDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::int64_t b = 2, l = 9, s = 77, h = 3, d = 8;
    const Tensor q = random_tensor(Shape{b, l, h * d}, 32, dtype, false, -1, 1);
    const Tensor kv = random_tensor(Shape{b, s, h, 2, d}, 33, dtype, false, -1, 1);
    const Tensor want =
        scaled_dot_product_attention(q.view(Shape{b, l, h, d}).permute({0, 2, 1, 3}),
                                     kv.select(3, 0).permute({0, 2, 1, 3}),
                                     kv.select(3, 1).permute({0, 2, 1, 3}))
            .permute({0, 2, 1, 3})
            .reshape({b, l, h * d});
    EXPECT_TRUE(same_bits(multi_head_attention(q, kv), want));
  }
}

// ---- special values, empty tensors, bad input, determinism ----

TEST(Fused, EmptyTensors) {
  const Tensor x = zeros({2, 0, 6});
  EXPECT_EQ(bias_add(x, zeros({6}), x).sizes(), x.sizes());
  EXPECT_EQ(bias_split_gelu(x, zeros({6})).sizes(), (Shape{2, 0, 3}));
  EXPECT_EQ(skip_layer_norm(x, x, ones({6})).sizes(), x.sizes());
  EXPECT_EQ(group_norm_nhwc(zeros({0, 2, 2, 4}), 2, ones({4}), zeros({4})).sizes(),
            (Shape{0, 2, 2, 4}));
  EXPECT_EQ(multi_head_attention(zeros({2, 0, 3, 3, 4})).sizes(), (Shape{2, 0, 12}));
}

TEST(Fused, NanAndInfPropagateAsInTheComposition) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  const Tensor x = from_vector<float>({1, nan, inf, 2, -inf, 0}, {1, 1, 6});
  const Tensor bias = from_vector<float>({0, 0, 0, 1, 1, inf}, {6});
  // halves [1, nan, inf] and [3, -inf, inf]: 1 * gelu(3), nan, inf * gelu(inf) = inf
  const std::vector<float> y = bias_split_gelu(x, bias).to_vector<float>();
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(y[2], inf);
  // x + bias + skip with inf - inf: NaN
  const std::vector<float> z =
      bias_add(x, bias, from_vector<float>({0, 0, -inf, 0, 0, 0}, {1, 1, 6})).to_vector<float>();
  EXPECT_TRUE(std::isnan(z[1]) && std::isnan(z[2]));
  EXPECT_EQ(z[5], inf);
  // A NaN in a row makes the row's layer norm NaN, as layer_norm's.
  const Tensor ln = skip_layer_norm(x, zeros({1, 1, 6}), ones({6}));
  for (float v : ln.to_vector<float>()) EXPECT_TRUE(std::isnan(v));
}

TEST(Fused, BadInputNamesOpArgumentExpectedAndGiven) {
  const Tensor x = zeros({2, 3, 4});
  EXPECT_THAT(message([&] { bias_add(x, zeros({3}), x); }),
              HasSubstr("[bias_add] expected bias of shape [4], got [3]"));
  EXPECT_THAT(message([&] {
                bias_add(x, zeros({4}), zeros({2, 3, 5}));
              }),
              HasSubstr("[bias_add] expected skip of shape [2, 3, 4], got [2, 3, 5]"));
  EXPECT_THAT(message([&] { bias_add(x, zeros({4}, DType::Float16), x); }),
              HasSubstr("[bias_add] expected bias of dtype float32 (the input's), got float16"));
  EXPECT_THAT(message([&] { bias_add(zeros({4}, DType::Int32), zeros({4}), zeros({4})); }),
              HasSubstr("[bias_add] expected input of a floating dtype"));
  EXPECT_THAT(message([&] {
                bias_split_gelu(zeros({2, 5}), zeros({5}));
              }),
              HasSubstr("[bias_split_gelu] expected the last dim of input to be even (split in "
                        "halves), got input of shape [2, 5]"));
  EXPECT_THAT(message([&] { skip_layer_norm(x, x, zeros({5})); }),
              HasSubstr("[skip_layer_norm] expected gamma of shape [4], got [5]"));
  EXPECT_THAT(message([&] { skip_layer_norm(x, x, zeros({4}), zeros({4}), zeros({2})); }),
              HasSubstr("[skip_layer_norm] expected bias of shape [4], got [2]"));
  const Tensor img = zeros({1, 2, 2, 6});
  EXPECT_THAT(message([&] { group_norm_nhwc(img, 4, zeros({6}), zeros({6})); }),
              HasSubstr("[group_norm_nhwc] expected the number of channels 6 (the last dim of "
                        "input) to be divisible by num_groups 4"));
  EXPECT_THAT(message([&] { group_norm_nhwc(img, 3, zeros({6}), zeros({6}), 1e-5, "relu"); }),
              HasSubstr("[group_norm_nhwc] expected activation 'none' or 'silu', got 'relu'"));
  EXPECT_THAT(message([&] {
                group_norm_nhwc(zeros({2, 6, 4}), 3, zeros({4}), zeros({4}));
              }),
              HasSubstr("[group_norm_nhwc] expected input of at least 4 dims, got [2, 6, 4]"));
  EXPECT_THAT(message([&] {
                multi_head_attention(zeros({2, 5, 3, 2, 4}));
              }),
              HasSubstr("[multi_head_attention] expected query to be packed QKV [B, S, H, 3, D] "
                        "when key is absent, got [2, 5, 3, 2, 4]"));
  EXPECT_THAT(message([&] {
                multi_head_attention(zeros({2, 5, 10}), zeros({2, 7, 3, 2, 4}));
              }),
              HasSubstr("[multi_head_attention] expected query of shape [B, L, H * D] = [2, L, "
                        "12] for key of shape [2, 7, 3, 2, 4], got [2, 5, 10]"));
  EXPECT_THAT(message([&] {
                multi_head_attention(zeros({2, 5, 12}), zeros({2, 7, 3, 3, 4}));
              }),
              HasSubstr("[multi_head_attention] expected key to be packed KV [B, S, H, 2, D]"));
}

TEST(Fused, BitIdenticalForOneTwoAndEightThreads) {
  const Tensor x = random_tensor(Shape{2, 1024, 640}, 41);
  const Tensor skip = random_tensor(Shape{2, 1024, 640}, 42);
  const Tensor c640 = random_tensor(Shape{640}, 43);
  const Tensor img = random_tensor(Shape{2, 32, 32, 320}, 44);
  const Tensor c320 = random_tensor(Shape{320}, 45);
  const Tensor qkv = random_tensor(Shape{1, 256, 4, 3, 40}, 46, DType::Float32, false, -1, 1);
  auto run = [&] {
    return std::vector<Tensor>{bias_add(x, c640, skip), bias_split_gelu(x, c640),
                               skip_layer_norm(x, skip, c640, c640, c640),
                               group_norm_nhwc(img, 32, c320, c320, 1e-5, "silu"),
                               multi_head_attention(qkv)};
  };
  std::vector<Tensor> first;
  for (int threads : {1, 2, 8}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const std::vector<Tensor> got = run();
    if (first.empty()) first = got;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(same_bits(got[i], first[i])) << "threads " << threads << " output " << i;
    }
  }
}

}  // namespace
}  // namespace mpsim
