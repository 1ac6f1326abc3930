// conv2d against a direct long double convolution written here: every option (groups incl.
// depthwise, stride larger than the kernel, dilation, asymmetric and 'same' padding with even
// kernels, unbatched input), NCHW = channels-last bit for bit, strided inputs, float16/bfloat16,
// Fast's bound, determinism over threads, and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/mpsim.h"
#include "tests/random_inputs.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
using LD = long double;

using test::random_tensor;

struct Options {
  std::int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0,
               dil_h = 1, dil_w = 1, groups = 1;
};

struct Expected {
  Shape shape;
  std::vector<LD> exact, magnitude;  // NCHW order; magnitude = |bias| + sum |x w|
};

// The definition: out[n, o, i, j] = bias[o] + sum over the group's channels and the taps.
Expected direct_conv(const Tensor& xt, const Tensor& wt, const std::optional<Tensor>& bt,
                     const Options& o) {
  const std::vector<float> x = xt.to_vector<float>(), w = wt.to_vector<float>();
  const std::vector<float> b = bt ? bt->to_vector<float>() : std::vector<float>();
  const std::int64_t n = xt.size(0), c = xt.size(1), h = xt.size(2), wd = xt.size(3);
  const std::int64_t co = wt.size(0), cg = wt.size(1), kh = wt.size(2), kw = wt.size(3);
  const std::int64_t oh = (h + o.pad_top + o.pad_bottom - o.dil_h * (kh - 1) - 1) / o.stride_h + 1;
  const std::int64_t ow = (wd + o.pad_left + o.pad_right - o.dil_w * (kw - 1) - 1) / o.stride_w + 1;
  Expected e{Shape({n, co, oh, ow}), {}, {}};
  const std::int64_t per_group = co / o.groups;
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t oc = 0; oc < co; ++oc)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          LD sum = b.empty() ? 0 : b[static_cast<std::size_t>(oc)], mag = std::fabs(sum);
          const std::int64_t g = oc / per_group;
          for (std::int64_t ci = 0; ci < cg; ++ci)
            for (std::int64_t a = 0; a < kh; ++a)
              for (std::int64_t q = 0; q < kw; ++q) {
                const std::int64_t y = i * o.stride_h - o.pad_top + a * o.dil_h;
                const std::int64_t z = j * o.stride_w - o.pad_left + q * o.dil_w;
                if (y < 0 || y >= h || z < 0 || z >= wd) continue;
                const LD p =
                    static_cast<LD>(
                        x[static_cast<std::size_t>(((in * c + g * cg + ci) * h + y) * wd + z)]) *
                    w[static_cast<std::size_t>(((oc * cg + ci) * kh + a) * kw + q)];
                sum += p;
                mag += std::fabs(p);
              }
          e.exact.push_back(sum);
          e.magnitude.push_back(mag);
        }
  (void)c;
  return e;
}

LD ulp32(LD v) {
  int e = 0;
  std::frexp(v, &e);
  return std::ldexp(1.0L, std::max(e, -125) - 24);
}

// Golden: the double chain's error K 2^-53 sum |x w| (K <= 2^10 here, so 2^-43) plus the bias
// addition and one rounding.
void expect_golden(const Tensor& got, const Expected& want) {
  ASSERT_EQ(got.sizes(), want.shape);
  const std::vector<float> v = got.contiguous().to_vector<float>();
  for (std::size_t i = 0; i < v.size(); ++i) {
    ASSERT_LE(std::fabs(v[i] - want.exact[i]),
              0.5L * ulp32(want.exact[i]) + std::ldexp(want.magnitude[i], -43))
        << "element " << i << ": got " << v[i] << ", exact " << static_cast<double>(want.exact[i]);
  }
}

Tensor to_channels_last(const Tensor& t) {
  return t.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
}

TEST(Conv2d, EveryOptionAgainstTheDirectDefinition) {
  struct Case {
    Shape x, w;
    Options o;
    bool bias;
  };
  const Case cases[] = {
      {{2, 4, 9, 11}, {6, 4, 3, 3}, {}, true},
      {{1, 4, 9, 11},
       {6, 4, 3, 3},
       {.pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1},
       false},
      {{2, 6, 10, 7}, {6, 2, 3, 2}, {.stride_h = 2, .stride_w = 3, .groups = 3}, true},  // groups
      {{1, 5, 12, 13},
       {5, 1, 3, 3},
       {.pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .groups = 5},
       true},                                                                // depthwise
      {{2, 3, 13, 14}, {4, 3, 2, 2}, {.stride_h = 3, .stride_w = 4}, true},  // stride > kernel
      {{1, 3, 15, 12},
       {4, 3, 3, 3},
       {.pad_top = 2, .pad_left = 1, .pad_bottom = 2, .pad_right = 1, .dil_h = 2, .dil_w = 3},
       true},
      {{1, 8, 6, 6}, {16, 8, 1, 1}, {}, true},  // 1x1
      {{1, 40, 8, 9},
       {50, 40, 3, 3},
       {.pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1},
       true},  // K = 360 > one block
  };
  unsigned seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.x.to_string() + " * " + c.w.to_string());
    const Tensor x = random_tensor(c.x, seed++), w = random_tensor(c.w, seed++);
    const std::optional<Tensor> b =
        c.bias ? std::optional<Tensor>(random_tensor({c.w[0]}, seed++)) : std::nullopt;
    ASSERT_EQ(c.o.pad_top, c.o.pad_bottom);
    const Tensor got = conv2d(x, w, b, {c.o.stride_h, c.o.stride_w}, {c.o.pad_top, c.o.pad_left},
                              {c.o.dil_h, c.o.dil_w}, c.o.groups);
    expect_golden(got, direct_conv(x, w, b, c.o));
    // Channels-last input: a channels-last output with the same bits.
    const Tensor cl = conv2d(to_channels_last(x), w, b, {c.o.stride_h, c.o.stride_w},
                             {c.o.pad_top, c.o.pad_left}, {c.o.dil_h, c.o.dil_w}, c.o.groups);
    EXPECT_EQ(cl.strides(), channels_last_strides(cl.sizes()));
    EXPECT_EQ(cl.contiguous().to_vector<float>(), got.to_vector<float>());
  }
}

TEST(Conv2d, SameAndValidPaddingWithEvenKernels) {
  const Tensor x = random_tensor({2, 3, 7, 8}, 11);
  for (const Shape& ws : {Shape({4, 3, 2, 4}), Shape({4, 3, 3, 3}), Shape({4, 3, 4, 1})}) {
    const Tensor w = random_tensor(ws, 12);
    for (std::int64_t d : {1, 2}) {
      const Tensor same = conv2d(x, w, std::nullopt, {1, 1}, "same", {d, d});
      EXPECT_EQ(same.sizes(), Shape({2, 4, 7, 8}));
      // The extra row / column of an odd total padding goes to the bottom / right.
      Options o;
      o.dil_h = o.dil_w = d;
      o.pad_top = d * (ws[2] - 1) / 2;
      o.pad_bottom = d * (ws[2] - 1) - o.pad_top;
      o.pad_left = d * (ws[3] - 1) / 2;
      o.pad_right = d * (ws[3] - 1) - o.pad_left;
      expect_golden(same, direct_conv(x, w, std::nullopt, o));
    }
    expect_golden(conv2d(x, w, std::nullopt, {1, 1}, "valid"), direct_conv(x, w, std::nullopt, {}));
  }
}

TEST(Conv2d, UnbatchedStridedAndScalarArguments) {
  const Tensor base = random_tensor({5, 10, 12}, 21);
  const Tensor x = base.slice(0, 0, 5, 2).slice(2, 1, 12);  // [3, 10, 11], strided
  const Tensor w = random_tensor({2, 3, 3, 3}, 22);
  const Tensor got = conv2d(x, w, std::nullopt, {2}, {1}, {1});
  ASSERT_EQ(got.sizes(), Shape({2, 5, 6}));
  Options o;
  o.stride_h = o.stride_w = 2;
  o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = 1;
  expect_golden(got.unsqueeze(0), direct_conv(x.contiguous().unsqueeze(0), w, std::nullopt, o));
}

TEST(Conv2d, HalfBFloat16AndFast) {
  const Tensor x = random_tensor({1, 16, 9, 9}, 31), w = random_tensor({8, 16, 3, 3}, 32);
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    const Tensor xh = x.to(dt), wh = w.to(dt);
    const Expected want =
        direct_conv(xh.to(DType::Float32), wh.to(DType::Float32), std::nullopt, {});
    const std::vector<float> got = conv2d(xh, wh).to_vector<float>();
    const int mantissa = dt == DType::Float16 ? 10 : 7;
    for (std::size_t i = 0; i < got.size(); ++i) {
      int e = 0;
      std::frexp(want.exact[i], &e);
      ASSERT_LE(std::fabs(got[i] - want.exact[i]),
                std::ldexp(1.0L, e - 2 - mantissa) + std::ldexp(want.magnitude[i], -43));
    }
  }
  const Expected want = direct_conv(x, w, std::nullopt, {});
  PrecisionGuard fast(Precision::Fast);
  const std::vector<float> got = conv2d(x, w).to_vector<float>();
  const std::int64_t k = 16 * 9;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::fabs(got[i] - want.exact[i]),
              0.5L * ulp32(want.exact[i]) + k * std::ldexp(want.magnitude[i], -24));
  }
}

TEST(Conv2d, SpecialValuesAndEmptyBatch) {
  Tensor x = zeros({1, 1, 3, 3});
  x.copy_(from_vector<float>({1, 2, 3, 4, std::numeric_limits<float>::quiet_NaN(), 6, 7, 8, 9},
                             {1, 1, 3, 3}));
  const std::vector<float> got = conv2d(x, ones({1, 1, 2, 2})).to_vector<float>();
  for (float v : got) EXPECT_TRUE(std::isnan(v));  // every 2x2 window holds the NaN
  EXPECT_EQ(conv2d(zeros({0, 3, 5, 5}), zeros({2, 3, 3, 3})).sizes(), Shape({0, 2, 3, 3}));
}

TEST(Conv2d, BitIdenticalForAnyThreadCount) {
  const Tensor x = random_tensor({2, 32, 20, 20}, 41), w = random_tensor({48, 32, 3, 3}, 42);
  const Tensor b = random_tensor({48}, 43);
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    std::vector<std::vector<float>> runs;
    for (int threads : {1, 2, 8}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      runs.push_back(conv2d(x, w, b, {1, 1}, {1, 1}).to_vector<float>());
    }
    EXPECT_EQ(runs[0], runs[1]);
    EXPECT_EQ(runs[0], runs[2]);
  }
}

TEST(Conv2d, BadInputNamesOpArgumentExpectedAndGiven) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(
      message([] {
        conv2d(zeros({1, 4, 5, 5}), zeros({8, 4, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1}, 4);
      }),
      HasSubstr("expected input [1, 4, 5, 5] to have 16 channels, but got 4 channels instead"));
  EXPECT_THAT(
      message([] {
        conv2d(zeros({1, 6, 5, 5}), zeros({5, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1}, 3);
      }),
      HasSubstr("expected weight to be divisible by 3 at dimension 0"));
  EXPECT_THAT(message([] {
                conv2d(zeros({1, 1, 2, 2}), zeros({1, 1, 3, 3}));
              }),
              HasSubstr("Kernel size can't be greater than actual input size"));
  EXPECT_THAT(message([] {
                conv2d(zeros({1, 1, 5, 5}), zeros({1, 1, 3, 3}), std::nullopt, {2, 2}, "same");
              }),
              HasSubstr("padding='same' is not supported for strided convolutions"));
  EXPECT_THAT(message([] {
                conv2d(zeros({1, 1, 5, 5}), zeros({1, 1, 3, 3}), std::nullopt, {1, 1}, "full");
              }),
              HasSubstr("invalid padding string 'full'"));
  EXPECT_THAT(message([] {
                conv2d(zeros({1, 1, 5, 5}), zeros({1, 1, 3, 3}), std::nullopt, {1, 1}, {-1, 0});
              }),
              HasSubstr("negative padding"));
  EXPECT_THAT(message([] {
                conv2d(zeros({1, 1, 5, 5}), zeros({1, 1, 3, 3}), zeros({2}));
              }),
              HasSubstr("expected bias of shape [1], got [2]"));
  EXPECT_THAT(message([] {
                conv2d(zeros({1, 1, 5, 5}), zeros({1, 1, 3, 3}), std::nullopt, {1, 2, 3});
              }),
              HasSubstr("expected stride to have 1 or 2 elements"));
  EXPECT_THAT(message([] {
                conv2d(zeros({5, 5}), zeros({1, 1, 3, 3}));
              }),
              HasSubstr("3-d (unbatched) or 4-d"));
  EXPECT_THAT(message([] {
                conv2d(zeros({1, 1, 5, 5}), zeros({1, 1, 3, 3}, DType::Float16));
              }),
              HasSubstr("expected weight of dtype float32"));
}

}  // namespace
}  // namespace mpsim
