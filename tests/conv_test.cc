// conv2d against a direct long double convolution written here: every option (groups incl.
// depthwise, stride larger than the kernel, dilation, asymmetric and 'same' padding with even
// kernels, unbatched input), NCHW = channels-last bit for bit, strided inputs, float16/bfloat16,
// Fast's bound, determinism over threads, and bad input. Depthwise (its own kernels, Note
// [depthwise] in kernels_simd/conv.cc) in float32, float64, float16 and bfloat16 on every SIMD
// target: channel counts and widths around the vector widths, both layouts, both precisions,
// special values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/mpsim.h"
#include "tests/random_inputs.h"
#include "tests/simd_targets.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
using LD = long double;

using test::random_tensor;
using test::round16;
using test::to_channels_last;

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

// Note [pointwise conv]: a 1x1, stride-1, unpadded convolution reads x as a matrix (NCHW: as
// the transposed product over its planes, with an NCHW output). With padding 1 the same
// convolution takes the gathered (Im2Col) route, and its interior pixels run the same chains:
// the same bits, in Golden and Fast, for both memory formats, groups, several K blocks (200
// channels) and a tail of rows (117 pixels).
TEST(Conv2d, PointwiseReadsXAsAMatrixWithTheGatheredBits) {
  const Tensor x = random_tensor({2, 200, 9, 13}, 41);
  const Tensor b = random_tensor({60}, 42);
  for (std::int64_t groups : {1, 2}) {
    const Tensor w = random_tensor({60, 200 / groups, 1, 1}, 43);
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
      for (Precision p : {Precision::Golden, Precision::Fast}) {
        SCOPED_TRACE(testing::Message() << "groups " << groups << " " << dtype_name(dt)
                                        << (p == Precision::Fast ? " fast" : " golden"));
        PrecisionGuard guard(p);
        const Tensor xd = x.to(dt), wd = w.to(dt), bd = b.to(dt);
        const Tensor got = conv2d(xd, wd, bd, {1, 1}, {0, 0}, {1, 1}, groups);
        EXPECT_TRUE(got.is_contiguous());
        const Tensor padded = conv2d(xd, wd, bd, {1, 1}, {1, 1}, {1, 1}, groups);
        const Tensor interior = padded.slice(2, 1, 10).slice(3, 1, 14).contiguous();
        EXPECT_EQ(got.to(DType::Float64).to_vector<double>(),
                  interior.to(DType::Float64).to_vector<double>());
        const Tensor cl = conv2d(to_channels_last(xd), wd, bd, {1, 1}, {0, 0}, {1, 1}, groups);
        EXPECT_EQ(cl.contiguous().to(DType::Float64).to_vector<double>(),
                  got.to(DType::Float64).to_vector<double>());
        if (dt == DType::Float32 && p == Precision::Golden) {
          Options o;
          o.groups = groups;
          expect_golden(got, direct_conv(x, w, b, o));
        }
      }
    }
  }
}

// A contiguous weight reaches the GEMM as its permuted view, packed tap run by tap run
// (GemmProblem::b_taps); any other weight as a dense copy. Both give the bits of the
// contiguous weight's copy, for square and non-square kernels and groups.
TEST(Conv2d, WeightViewsGiveTheBitsOfTheirCopies) {
  const Tensor x = random_tensor({2, 12, 9, 10}, 61);
  const Tensor wide = random_tensor({8, 12, 3, 2}, 62);
  // A contiguous 3 x 1 weight whose size-1 dim has a stride of 7 (contiguity ignores it).
  const Tensor column = random_tensor({8, 12, 3}, 63);
  const Tensor odd = column.as_strided({8, 12, 3, 1}, {36, 3, 1, 7}, 0);
  ASSERT_TRUE(odd.is_contiguous());
  const std::pair<Tensor, Tensor> cases[] = {{wide.slice(1, 0, 12, 2), {}},
                                             {wide.slice(1, 0, 6), {}},
                                             {wide.transpose(2, 3), {}},
                                             {odd, column.unsqueeze(3)}};
  for (const auto& [w, reference] : cases) {
    SCOPED_TRACE(w.sizes().to_string());
    const Tensor copy = reference.defined() ? reference : w.contiguous();
    const std::int64_t groups = 12 / w.size(1);
    for (Precision p : {Precision::Golden, Precision::Fast}) {
      PrecisionGuard guard(p);
      EXPECT_EQ(conv2d(x, w, std::nullopt, {1, 1}, {1, 1}, {1, 1}, groups).to_vector<float>(),
                conv2d(x, copy, std::nullopt, {1, 1}, {1, 1}, {1, 1}, groups).to_vector<float>());
    }
  }
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

// The tests of ConvOnTarget run once on each SIMD target (tests/simd_targets.h).
class ConvOnTarget : public test::OnEveryTarget {};

// Golden float16 / bfloat16 through the GEMM, bit for bit on every SIMD target and in both
// layouts: per output the double chain over (kh, kw, c) (c fastest) of the taps inside x, plus
// the bias, rounded once (round16). 40 channels: runs of x widened in vectors when packed, K
// blocks crossing taps, panels with padding rows.
TEST_P(ConvOnTarget, HalfAndBFloat16GoldenIsTheRoundedChain) {
  const std::int64_t c = 40, h = 7, wd = 9, co = 24;
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    const int mantissa = dt == DType::Float16 ? 10 : 7;
    const Tensor x = random_tensor({1, c, h, wd}, 81).to(dt);
    const Tensor w = random_tensor({co, c, 3, 3}, 82).to(dt), b = random_tensor({co}, 83).to(dt);
    const std::vector<float> xv = x.to_vector<float>(), wv = w.to_vector<float>();
    const std::vector<float> bv = b.to_vector<float>();
    std::vector<float> want;
    for (std::int64_t o = 0; o < co; ++o) {
      for (std::int64_t i = 0; i < h; ++i) {
        for (std::int64_t j = 0; j < wd; ++j) {
          double acc = 0;
          for (std::int64_t kh = 0; kh < 3; ++kh) {
            for (std::int64_t kw = 0; kw < 3; ++kw) {
              const std::int64_t y = i - 1 + kh, z = j - 1 + kw;
              if (y < 0 || y >= h || z < 0 || z >= wd) continue;
              for (std::int64_t ch = 0; ch < c; ++ch) {
                acc =
                    acc + static_cast<double>(xv[static_cast<std::size_t>((ch * h + y) * wd + z)]) *
                              wv[static_cast<std::size_t>(((o * c + ch) * 3 + kh) * 3 + kw)];
              }
            }
          }
          want.push_back(round16(acc + bv[static_cast<std::size_t>(o)], mantissa));
        }
      }
    }
    for (const Tensor& in : {x, to_channels_last(x)}) {
      EXPECT_EQ(conv2d(in, w, b, {1, 1}, {1, 1}).contiguous().to_vector<float>(), want);
    }
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
  // Pointwise (Note [pointwise conv]), large enough to be split over tiles: NCHW (the
  // transposed product over the planes) and channels-last.
  const Tensor px = random_tensor({1, 160, 48, 48}, 44), pw = random_tensor({96, 160, 1, 1}, 45);
  const Tensor pb = random_tensor({96}, 46);
  for (const Tensor& xin : {px, to_channels_last(px)}) {
    for (Precision p : {Precision::Golden, Precision::Fast}) {
      PrecisionGuard guard(p);
      std::vector<std::vector<float>> runs;
      for (int threads : {1, 2, 8}) {
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        runs.push_back(conv2d(xin, pw, pb, {1, 1}, {0, 0}).contiguous().to_vector<float>());
      }
      EXPECT_EQ(runs[0], runs[1]);
      EXPECT_EQ(runs[0], runs[2]);
    }
  }
}

// Depthwise cases: C one input and one output channel per group, around the vector widths
// (4 to 16 floats, 2 to 8 doubles) in channels (channels-last) and in width (NCHW).
struct DepthwiseCase {
  Shape x;
  std::int64_t kh, kw;
  Options o;
  bool bias;
  bool same = false;  // padding "same" (o holds its split), else o's top / left
};

std::vector<DepthwiseCase> depthwise_cases() {
  auto pad = [](std::int64_t h, std::int64_t w) {
    Options o;
    o.pad_top = o.pad_bottom = h;
    o.pad_left = o.pad_right = w;
    return o;
  };
  std::vector<DepthwiseCase> cases = {
      {{2, 37, 9, 11}, 3, 3, pad(1, 1), true},  {{1, 3, 20, 19}, 3, 3, pad(1, 1), false},
      {{1, 100, 7, 6}, 3, 3, pad(1, 1), true},  {{1, 16, 5, 40}, 5, 5, pad(2, 2), true},
      {{1, 8, 6, 3}, 3, 3, pad(1, 1), true},     // rows narrower than a vector
      {{1, 5, 4, 1}, 3, 1, pad(1, 0), true},     // width 1
      {{1, 6, 8, 9}, 3, 3, pad(3, 4), true},     // rows and columns all padding
      {{1, 12, 7, 33}, 3, 3, pad(2, 0), false},  // asymmetric: pad_h != pad_w
      {{1, 9, 12, 17}, 1, 1, pad(0, 0), true},   // 1x1
      {{1, 32, 6, 21}, 3, 3, pad(1, 1), false},  // whole vectors: blocks of pixels and a rest
      {{1, 4, 6, 17}, 3, 3, pad(0, 0), true},   // x's rows a vector wide, the output's narrower
      {{1, 4, 11, 9}, 3, 3, pad(0, 0), false},   // the same for doubles
  };
  DepthwiseCase strided{{2, 21, 13, 15}, 3, 3, pad(1, 1), true};
  strided.o.stride_h = strided.o.stride_w = 2;
  cases.push_back(strided);
  DepthwiseCase rows{{1, 18, 13, 20}, 3, 3, pad(1, 1), true};  // stride_h 2, stride_w 1
  rows.o.stride_h = 2;
  cases.push_back(rows);
  DepthwiseCase dilated{{1, 19, 15, 18}, 3, 3, pad(2, 2), false};
  dilated.o.dil_h = dilated.o.dil_w = 2;
  cases.push_back(dilated);
  DepthwiseCase wide{{1, 7, 9, 21}, 2, 3, pad(1, 0), true};
  wide.o.dil_w = 3;
  cases.push_back(wide);
  for (std::int64_t d : {1, 2}) {  // 'same' with an even kernel: the odd pad at bottom / right
    DepthwiseCase same{{1, 10, 9, 26}, 2, 4, {}, true, true};
    same.o.dil_h = same.o.dil_w = d;
    same.o.pad_top = d * (same.kh - 1) / 2;
    same.o.pad_bottom = d * (same.kh - 1) - same.o.pad_top;
    same.o.pad_left = d * (same.kw - 1) / 2;
    same.o.pad_right = d * (same.kw - 1) - same.o.pad_left;
    cases.push_back(same);
  }
  for (DepthwiseCase& c : cases) c.o.groups = c.x[1];
  return cases;
}

Tensor depthwise(const DepthwiseCase& c, const Tensor& x, const Tensor& w,
                 const std::optional<Tensor>& b) {
  if (c.same) return conv2d(x, w, b, {1, 1}, "same", {c.o.dil_h, c.o.dil_w}, c.o.groups);
  return conv2d(x, w, b, {c.o.stride_h, c.o.stride_w}, {c.o.pad_top, c.o.pad_left},
                {c.o.dil_h, c.o.dil_w}, c.o.groups);
}

std::string describe(const DepthwiseCase& c) {
  return c.x.to_string() + " k " + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " stride " +
         std::to_string(c.o.stride_h) + "," + std::to_string(c.o.stride_w) + " pad " +
         std::to_string(c.o.pad_top) + "," + std::to_string(c.o.pad_left) +
         (c.same ? " same" : "") + " dilation " + std::to_string(c.o.dil_h) + "," +
         std::to_string(c.o.dil_w) + (c.bias ? " bias" : "");
}

// Fast's bound, K 2^-24 sum |x w| + 0.5 ulp with K the taps: how many outputs break it.
std::int64_t fast_violations(const std::vector<float>& got, const Expected& want,
                             std::int64_t taps) {
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const LD bound = 0.5L * ulp32(want.exact[i]) + taps * std::ldexp(want.magnitude[i], -24);
    if (!(std::fabs(got[i] - want.exact[i]) <= bound)) ++bad;
  }
  return bad;
}

// The chain of Fast float32 and of float64 (Note [gemm numerics]), written here: per output
// acc = 0, then over the taps (kh, kw) inside x in order and the group's channels c,
// acc = fma(x, w, acc) (on targets without FMA, acc + round(x w)), then acc + bias.
template <class T>
std::vector<T> chain_conv(const Tensor& xt, const Tensor& wt, const Tensor& bt, const Options& o,
                          bool fused) {
  const std::vector<T> x = xt.contiguous().to_vector<T>(), w = wt.contiguous().to_vector<T>();
  const std::vector<T> b = bt.to_vector<T>();
  const std::int64_t n = xt.size(0), c = xt.size(1), h = xt.size(2), wd = xt.size(3);
  const std::int64_t co = wt.size(0), cg = wt.size(1), kh = wt.size(2), kw = wt.size(3);
  const std::int64_t oh = (h + o.pad_top + o.pad_bottom - o.dil_h * (kh - 1) - 1) / o.stride_h + 1;
  const std::int64_t ow = (wd + o.pad_left + o.pad_right - o.dil_w * (kw - 1) - 1) / o.stride_w + 1;
  const std::int64_t per_group = co / o.groups;
  std::vector<T> out;
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t oc = 0; oc < co; ++oc)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          T acc = 0;
          for (std::int64_t a = 0; a < kh; ++a)
            for (std::int64_t q = 0; q < kw; ++q) {
              const std::int64_t y = i * o.stride_h - o.pad_top + a * o.dil_h;
              const std::int64_t z = j * o.stride_w - o.pad_left + q * o.dil_w;
              if (y < 0 || y >= h || z < 0 || z >= wd) continue;
              for (std::int64_t ci = 0; ci < cg; ++ci) {
                const T xv = x[static_cast<std::size_t>(
                    ((in * c + oc / per_group * cg + ci) * h + y) * wd + z)];
                const T wv = w[static_cast<std::size_t>(((oc * cg + ci) * kh + a) * kw + q)];
                if (fused) {
                  acc = std::fma(xv, wv, acc);
                } else {
                  const T product = xv * wv;
                  acc = acc + product;
                }
              }
            }
          out.push_back(acc + b[static_cast<std::size_t>(oc)]);
        }
  return out;
}

// Targets whose multiply-adds are fused (Note [gemm numerics]).
bool fused_target(const std::string& target) { return target != "sse4" && target != "scalar"; }

// Note [conv in registers] (kernels_simd/gemm_engine-inl.h): Fast float32 and float64 read
// channels-last x in place, each micro-tile's sums in registers over the whole K. Bit for bit the
// chain written here on every SIMD target, in both layouts, across strides, dilations, padding
// borders (taps in the padding for some pixels of a micro-tile, and for all), panels that straddle
// output rows (width 21) and a last partial one, channel counts from 3 to 300, and output panels of
// one, two and three vectors.
TEST_P(ConvOnTarget, FastAndFloat64AreTheChainOverTapsInsideX) {
  struct Case {
    std::int64_t channels, stride, dilation, pad, cout;
  };
  const Case cases[] = {{160, 1, 1, 1, 40}, {128, 2, 1, 1, 40}, {200, 1, 2, 2, 40},
                        {300, 1, 1, 0, 40}, {16, 1, 1, 1, 100}, {17, 2, 3, 2, 20},
                        {3, 1, 1, 3, 52}};
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message()
                 << target() << ": " << c.channels << " channels, stride " << c.stride
                 << ", dilation " << c.dilation << ", pad " << c.pad << ", " << c.cout << " out");
    const Tensor x = random_tensor({1, c.channels, 11, 21}, 51);
    const Tensor w = random_tensor({c.cout, c.channels, 3, 3}, 52);
    const Tensor b = random_tensor({c.cout}, 53);
    Options o;
    o.stride_h = o.stride_w = c.stride;
    o.dil_h = o.dil_w = c.dilation;
    o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = c.pad;
    auto run = [&](const Tensor& in, DType dt) {
      return conv2d(in.to(dt), w.to(dt), b.to(dt), {c.stride, c.stride}, {c.pad, c.pad},
                    {c.dilation, c.dilation})
          .contiguous();
    };
    const bool fused = fused_target(target());
    const std::vector<float> want32 = chain_conv<float>(x, w, b, o, fused);
    const Tensor x64 = x.to(DType::Float64), w64 = w.to(DType::Float64);
    const std::vector<double> want64 = chain_conv<double>(x64, w64, b.to(DType::Float64), o, fused);
    for (const Tensor& in : {x, to_channels_last(x)}) {
      {
        PrecisionGuard fast(Precision::Fast);
        EXPECT_EQ(run(in, DType::Float32).to_vector<float>(), want32);
        EXPECT_EQ(run(in, DType::Float64).to_vector<double>(), want64);
      }
      EXPECT_EQ(run(in, DType::Float64).to_vector<double>(), want64);  // Golden
    }
  }
}

// A tap in the padding forms no product (Note [conv in registers]): an inf or NaN weight reaches
// exactly the outputs whose taps inside x meet it, as in PyTorch, where 0 x inf would spread
// NaN over the border. In every dtype and precision, both layouts, every target.
TEST_P(ConvOnTarget, NonFiniteWeightsReachTheOutputsTheyReachInPyTorch) {
  // torch 1.13: F.conv2d(torch.ones(1, 1, 3, 3), w, padding=1) with w = ones(1, 1, 3, 3),
  // w[0, 0, 0, 0] = inf: the top row and the left column stay finite.
  const float inf = std::numeric_limits<float>::infinity();
  {
    std::vector<float> wv(9, 1.0f);
    wv[0] = inf;
    const std::vector<float> torch_values = {4, 6, 4, 6, inf, inf, 4, inf, inf};
    EXPECT_EQ(conv2d(ones({1, 1, 3, 3}), from_vector<float>(wv, {1, 1, 3, 3}), std::nullopt, {1, 1},
                     {1, 1})
                  .to_vector<float>(),
              torch_values);
  }
  const std::int64_t channels = 20, cout = 24;
  const Tensor x = random_tensor({1, channels, 9, 11}, 71, 0.5f, 1.0f);  // no zero in x
  std::vector<float> wv = random_tensor({cout, channels, 3, 3}, 72).to_vector<float>();
  auto at = [](std::int64_t o, std::int64_t c, std::int64_t kh, std::int64_t kw) {
    return static_cast<std::size_t>(((o * channels + c) * 3 + kh) * 3 + kw);
  };
  wv[at(0, 3, 0, 0)] = inf;  // the top-left tap: in the padding on the top row and left column
  wv[at(5, 7, 2, 1)] = std::numeric_limits<float>::quiet_NaN();  // the bottom row's taps
  wv[at(17, 19, 1, 2)] = -inf;                                   // the right column's
  const Tensor w = from_vector<float>(wv, {cout, channels, 3, 3});
  const Tensor b = random_tensor({cout}, 73);
  for (std::int64_t stride : {1, 2}) {
    Options o;
    o.stride_h = o.stride_w = stride;
    o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = 1;
    const Expected want = direct_conv(x, w, b, o);
    std::int64_t special = 0;
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
      for (Precision p : {Precision::Golden, Precision::Fast}) {
        PrecisionGuard guard(p);
        for (const Tensor& in : {x, to_channels_last(x)}) {
          SCOPED_TRACE(testing::Message() << target() << " " << dtype_name(dt) << " stride "
                                          << stride << (p == Precision::Fast ? " fast" : ""));
          const std::vector<float> got =
              conv2d(in.to(dt), w.to(dt), b.to(dt), {stride, stride}, {1, 1})
                  .contiguous()
                  .to_vector<float>();
          ASSERT_EQ(got.size(), want.exact.size());
          for (std::size_t i = 0; i < got.size(); ++i) {
            const LD e = want.exact[i];
            if (std::isnan(e)) {
              EXPECT_TRUE(std::isnan(got[i])) << i;
              ++special;
            } else if (std::isinf(e)) {
              EXPECT_EQ(got[i], e > 0 ? inf : -inf) << i;
              ++special;
            } else {
              // finite: no special weight meets x here (2^-6 covers bfloat16's rounding)
              EXPECT_LE(std::fabs(got[i] - e), std::ldexp(want.magnitude[i], -6)) << i;
            }
          }
        }
      }
    }
    EXPECT_GT(special, 0);
  }
}

// Products that underflow keep their sign: with x = -2^-100 and w = 2^-100 (2^-600 in float64)
// every product is -0 in float arithmetic, and a fused chain from +0 stays -0; a tap in the
// padding adds no +0 that would turn it positive. Golden float32, float16 and bfloat16 sum
// exact, tiny negative products in double and round the sum to -0.
TEST_P(ConvOnTarget, UnderflowingSumsKeepTheirSignOfZero) {
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    for (Precision p : {Precision::Golden, Precision::Fast}) {
      SCOPED_TRACE(testing::Message() << target() << " " << dtype_name(dt)
                                      << (p == Precision::Fast ? " fast" : " golden"));
      PrecisionGuard guard(p);
      const double tiny = dt == DType::Float64   ? std::ldexp(1.0, -600)
                          : dt == DType::Float16 ? std::ldexp(1.0, -20)
                                                 : std::ldexp(1.0, -100);
      const Tensor x = full({1, 24, 6, 7}, Scalar(-tiny), dt);
      const Tensor w = full({16, 24, 3, 3}, Scalar(tiny), dt);
      // Fast float32 / bfloat16 and float64 multiply in the dtype: -0 products, and a chain of
      // unfused adds from +0 gives +0; everything else sums nonzero tiny products.
      const bool underflows =
          dt == DType::Float64 || (p == Precision::Fast && dt != DType::Float16);
      const bool negative = !underflows || fused_target(target());
      for (const Tensor& in : {x, to_channels_last(x)}) {
        const std::vector<double> got =
            conv2d(in, w, std::nullopt, {1, 1}, {1, 1}).to(DType::Float64).to_vector<double>();
        for (std::size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(got[i], 0.0) << i;
          ASSERT_EQ(std::signbit(got[i]), negative) << i;
        }
      }
    }
  }
}

// Golden: within its bound, the same bits for NCHW, channels-last and strided inputs, and the
// same bits on every SIMD target. Fast: within its bound (tight enough to reject a weight off
// by 2^-8), the same bits for both layouts on each target, and its own float chain (some
// outputs differ from Golden's).
TEST(Conv2d, DepthwiseAgainstTheDirectDefinitionOnEveryTarget) {
  unsigned seed = 100;
  for (const DepthwiseCase& c : depthwise_cases()) {
    SCOPED_TRACE(describe(c));
    const Tensor x = random_tensor(c.x, seed++);
    const Tensor w = random_tensor({c.x[1], 1, c.kh, c.kw}, seed++);
    const std::optional<Tensor> b =
        c.bias ? std::optional<Tensor>(random_tensor({c.x[1]}, seed++)) : std::nullopt;
    const Expected want = direct_conv(x, w, b, c.o);
    std::vector<float> perturbed_w = w.to_vector<float>();
    for (std::int64_t ch = 0; ch < c.x[1]; ++ch) {  // tap (0, 0) of every channel
      float& v = perturbed_w[static_cast<std::size_t>(ch * c.kh * c.kw)];
      v += std::ldexp(std::fabs(v), -8);
    }
    const Expected perturbed = direct_conv(x, from_vector(perturbed_w, w.sizes()), b, c.o);
    // x's values in a strided view: every other column of a wider tensor.
    Shape wider = c.x;
    wider[3] = 2 * c.x[3];
    Tensor spread = zeros(wider);
    spread.slice(3, 0, wider[3], 2).copy_(x);
    const Tensor strided = spread.slice(3, 0, wider[3], 2);
    std::vector<float> golden;
    test::for_each_target([&](const std::string&) {
      const Tensor got = depthwise(c, x, w, b);
      expect_golden(got, want);
      const std::vector<float> v = got.to_vector<float>();
      if (golden.empty()) golden = v;
      EXPECT_EQ(v, golden);  // Golden's bits do not depend on the target
      const Tensor cl = depthwise(c, to_channels_last(x), w, b);
      EXPECT_EQ(cl.strides(), channels_last_strides(cl.sizes()));
      EXPECT_EQ(cl.contiguous().to_vector<float>(), v);
      EXPECT_EQ(depthwise(c, strided, w, b).to_vector<float>(), v);

      PrecisionGuard fast(Precision::Fast);
      const std::vector<float> f = depthwise(c, x, w, b).to_vector<float>();
      EXPECT_EQ(fast_violations(f, want, c.kh * c.kw), 0);
      EXPECT_GT(fast_violations(f, perturbed, c.kh * c.kw), 0);
      EXPECT_EQ(depthwise(c, to_channels_last(x), w, b).contiguous().to_vector<float>(), f);
      if (c.kh * c.kw >= 4) {
        EXPECT_NE(f, v);
      }
    });
  }
}

// Half the spacing of a 16-bit format (10 or 7 stored mantissa bits) at v, subnormals included.
LD half_ulp16(LD v, int mantissa) {
  int e = 0;
  std::frexp(v, &e);
  const int min_e = mantissa == 10 ? -13 : -125;  // frexp's exponent of the smallest normal
  return std::ldexp(1.0L, std::max(e, min_e) - 2 - mantissa);
}

// The kernels' chain written out here, on NCHW doubles: acc = 0, acc = acc + x w (unfused)
// over the taps (kh, kw) inside x in order, then acc + bias.
std::vector<double> depthwise_chain(const DepthwiseCase& c, const std::vector<double>& x,
                                    const std::vector<double>& w, const std::vector<double>& b) {
  const std::int64_t n = c.x[0], ch = c.x[1], h = c.x[2], wd = c.x[3];
  const Options& o = c.o;
  const std::int64_t oh =
      (h + o.pad_top + o.pad_bottom - o.dil_h * (c.kh - 1) - 1) / o.stride_h + 1;
  const std::int64_t ow =
      (wd + o.pad_left + o.pad_right - o.dil_w * (c.kw - 1) - 1) / o.stride_w + 1;
  std::vector<double> out;
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t k = 0; k < ch; ++k)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          double acc = 0;
          for (std::int64_t a = 0; a < c.kh; ++a)
            for (std::int64_t q = 0; q < c.kw; ++q) {
              const std::int64_t y = i * o.stride_h - o.pad_top + a * o.dil_h;
              const std::int64_t z = j * o.stride_w - o.pad_left + q * o.dil_w;
              if (y < 0 || y >= h || z < 0 || z >= wd) continue;
              const double p = x[static_cast<std::size_t>(((in * ch + k) * h + y) * wd + z)] *
                               w[static_cast<std::size_t>((k * c.kh + a) * c.kw + q)];
              acc = acc + p;
            }
          if (!b.empty()) acc = acc + b[static_cast<std::size_t>(k)];
          out.push_back(acc);
        }
  return out;
}

std::vector<double> random_doubles(std::int64_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = d(rng);
  return v;
}

// float64, float16 and bfloat16 on the row kernels of every route (the cases above: staged and
// direct NCHW rows, held and per-pixel channels-last ones, rows narrower than a vector) and
// every SIMD target, NCHW, channels-last and strided. float64: the double chain of
// depthwise_chain bit for bit (its products round: an FMA would change bits), Fast the same.
// The 16-bit types, Golden: that chain on the widened values (products exact) rounded once to
// the type (round16). Fast: the float chain's bound plus one rounding, the same bits in every
// layout.
TEST_P(ConvOnTarget, DepthwiseFloat64AndHalfTypesOnEveryRoute) {
  unsigned seed = 300;
  for (const DepthwiseCase& c : depthwise_cases()) {
    SCOPED_TRACE(describe(c));
    const std::int64_t channels = c.x[1];
    const std::vector<double> xd = random_doubles(c.x.numel(), seed++);
    const std::vector<double> wd = random_doubles(channels * c.kh * c.kw, seed++);
    const std::vector<double> bd =
        c.bias ? random_doubles(channels, seed++) : std::vector<double>();
    for (DType dt : {DType::Float64, DType::Float16, DType::BFloat16}) {
      SCOPED_TRACE(dtype_name(dt));
      const Tensor x = from_vector(xd, c.x).to(dt);
      const Tensor w = from_vector(wd, Shape({channels, 1, c.kh, c.kw})).to(dt);
      const std::optional<Tensor> b =
          c.bias ? std::optional<Tensor>(from_vector(bd, Shape({channels})).to(dt)) : std::nullopt;
      // The values the kernels see: float64's as drawn, the 16-bit types' rounded.
      auto values = [](const Tensor& t) { return t.to(DType::Float64).to_vector<double>(); };
      const std::vector<double> chain =
          depthwise_chain(c, values(x), values(w), b ? values(*b) : std::vector<double>());
      const int mantissa = dt == DType::Float16 ? 10 : 7;
      std::vector<double> want = chain;
      if (dt != DType::Float64) {
        for (double& v : want) v = round16(v, mantissa);
      }
      Shape wider = c.x;
      wider[3] = 2 * c.x[3];
      Tensor spread = zeros(wider, dt);
      spread.slice(3, 0, wider[3], 2).copy_(x);
      const Tensor strided = spread.slice(3, 0, wider[3], 2);
      Options o = c.o;
      const Expected exact = direct_conv(x.to(DType::Float32), w.to(DType::Float32),
                                         b ? std::optional<Tensor>(b->to(DType::Float32)) : b, o);
      for (const Tensor& in : {x, to_channels_last(x), strided}) {
        const Tensor got = depthwise(c, in, w, b);
        EXPECT_EQ(got.dtype(), dt);
        EXPECT_EQ(values(got.contiguous()), want);
      }
      PrecisionGuard fast(Precision::Fast);
      if (dt == DType::Float64) {
        EXPECT_EQ(values(depthwise(c, to_channels_last(x), w, b).contiguous()), want);
        EXPECT_EQ(values(depthwise(c, x, w, b)), want);
        continue;
      }
      const std::vector<double> f = values(depthwise(c, x, w, b));
      EXPECT_EQ(values(depthwise(c, to_channels_last(x), w, b).contiguous()), f);
      const LD taps = static_cast<LD>(c.kh * c.kw + 1);  // the chain's roundings, bias's too
      for (std::size_t i = 0; i < f.size(); ++i) {
        const LD chain_error = taps * std::ldexp(exact.magnitude[i], -24);
        ASSERT_LE(std::fabs(f[i] - exact.exact[i]),
                  half_ulp16(std::fabs(exact.exact[i]) + chain_error, mantissa) + chain_error)
            << i;
      }
    }
  }
}

TEST(Conv2d, DepthwiseBitIdenticalForAnyThreadCount) {
  // Enough rows for several tasks in either layout, and on Fast's held-weights kernels
  // (channels-last, kDepthwiseHeldTaskOutputs) a task boundary inside an image (Note [depthwise]);
  // both layouts give the same bits there too.
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = random_tensor({3, 16, 100, 100}, 51).to(dt);
    const Tensor w = random_tensor({16, 1, 3, 3}, 52).to(dt), b = random_tensor({16}, 53).to(dt);
    for (Precision p : {Precision::Golden, Precision::Fast}) {
      PrecisionGuard guard(p);
      std::vector<std::vector<double>> layouts;
      for (const Tensor& in : {x, to_channels_last(x)}) {
        std::vector<std::vector<double>> runs;
        for (int threads : {1, 2, 8}) {
          tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
          runs.push_back(conv2d(in, w, b, {1, 1}, {1, 1}, {1, 1}, 16)
                             .contiguous()
                             .to(DType::Float64)
                             .to_vector<double>());
        }
        EXPECT_EQ(runs[0], runs[1]);
        EXPECT_EQ(runs[0], runs[2]);
        layouts.push_back(runs[0]);
      }
      EXPECT_EQ(layouts[0], layouts[1]);
    }
  }
}

// NaN and inf reach exactly the outputs whose taps hold them; a non-finite weight on the border
// is skipped where its tap lies in the padding (0 x inf never formed), as PyTorch; a sum past
// FLT_MAX rounds to inf (float32; float64 holds it). On every target, both layouts, both
// precisions.
TEST_P(ConvOnTarget, DepthwiseSpecialValuesAndEmptyBatch) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> xv = random_tensor({1, 20, 6, 18}, 61).to_vector<float>();
  std::vector<float> wv = random_tensor({20, 1, 3, 3}, 62).to_vector<float>();
  xv[(0 * 6 + 2) * 18 + 5] = nan;                                       // channel 0
  xv[(1 * 6 + 0) * 18 + 0] = inf;                                       // channel 1, a corner
  xv[(2 * 6 + 3) * 18 + 17] = -inf;                                     // channel 2, the right edge
  for (std::size_t i = 0; i < 18 * 6; ++i) xv[3 * 18 * 6 + i] = 3e38f;  // channel 3 overflows
  for (std::size_t i = 0; i < 9; ++i) wv[3 * 9 + i] = std::fabs(wv[3 * 9 + i]);
  wv[4 * 9 + 0] = inf;  // channel 4: top-left tap
  wv[5 * 9 + 8] = nan;  // channel 5: bottom-right tap
  const Tensor x = from_vector(xv, {1, 20, 6, 18}), w = from_vector(wv, {20, 1, 3, 3});
  Options o;
  o.pad_top = o.pad_bottom = o.pad_left = o.pad_right = 1;
  o.groups = 20;
  const Expected want = direct_conv(x, w, std::nullopt, o);
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    for (DType dt : {DType::Float32, DType::Float64}) {  // float64 holds the sums past FLT_MAX
      for (const Tensor& in : {x, to_channels_last(x)}) {
        const std::vector<double> got =
            conv2d(in.to(dt), w.to(dt), std::nullopt, {1, 1}, {1, 1}, {1, 1}, 20)
                .contiguous()
                .to(DType::Float64)
                .to_vector<double>();
        ASSERT_EQ(got.size(), want.exact.size());
        const LD max = dt == DType::Float32 ? 0x1.ffffffp127L : 0x1.fffffffffffffp1023L;
        for (std::size_t i = 0; i < got.size(); ++i) {
          const LD e = want.exact[i];
          if (std::isnan(e)) {
            EXPECT_TRUE(std::isnan(got[i])) << i;
          } else if (std::isinf(e) || std::fabs(e) > max) {
            EXPECT_EQ(got[i], e > 0 ? inf : -inf) << i;
          } else {
            EXPECT_TRUE(std::isfinite(got[i])) << i << ": " << got[i];
          }
        }
      }
    }
  }
  for (const Tensor& in : {zeros({0, 8, 5, 5}), to_channels_last(zeros({0, 8, 5, 5}))}) {
    EXPECT_EQ(conv2d(in, zeros({8, 1, 3, 3}), zeros({8}), {1, 1}, {0, 0}, {1, 1}, 8).sizes(),
              Shape({0, 8, 3, 3}));
  }
}

// float16 and bfloat16 depthwise convolutions on their row kernels (x widened in registers, the
// sums rounded on their store). Golden: the exact sum rounded once to the 16-bit type (the double
// chain is exact to far below that here), in both layouts and on every SIMD target, including
// sums just past a 16-bit midpoint by less than a float holds, which a rounding to float
// first would leave on the midpoint and tie to even. Fast: the float chain's bound plus one
// rounding. An overflowing sum rounds to inf, an inf input reaches exactly its outputs.
TEST_P(ConvOnTarget, DepthwiseHalfAndBFloat16RoundOnce) {
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    const int mantissa = dt == DType::Float16 ? 10 : 7;
    SCOPED_TRACE(dtype_name(dt));
    // Over a 1 x 3 kernel, channel 0 sums 1 + 2^-(mantissa + 1) + 2^-30 (nearest: 1 +
    // 2^-mantissa), channel 2 the same less 2^-30 (nearest: 1; the nearest float rounds up
    // onto the midpoint there), channels 1 and 3 their negations.
    const float mid = std::ldexp(1.0f, -(mantissa + 1)), tiny = std::ldexp(1.0f, -15);
    const Tensor cx =
        from_vector<float>({1, mid, tiny, -1, -mid, -tiny, 1, mid, -tiny, -1, -mid, tiny},
                           {1, 4, 1, 3})
            .to(dt);
    const Tensor cw =
        from_vector<float>({1, 1, tiny}, {1, 1, 1, 3}).expand({4, 1, 1, 3}).contiguous().to(dt);
    const float up = 1 + std::ldexp(1.0f, -mantissa);
    // [2, 24, 9, 21] with bias: rows and channels past a vector, edges on both sides.
    const Tensor x = random_tensor({2, 24, 9, 21}, 71).to(dt),
                 w = random_tensor({24, 1, 3, 3}, 72).to(dt);
    const Tensor b = random_tensor({24}, 73).to(dt);
    Options o;
    o.pad_top = o.pad_bottom = o.pad_left = o.pad_right = 1;
    o.groups = 24;
    const Expected want =
        direct_conv(x.to(DType::Float32), w.to(DType::Float32), b.to(DType::Float32), o);
    for (const Tensor& in : {cx, to_channels_last(cx)}) {
      EXPECT_EQ(conv2d(in, cw, std::nullopt, {1, 1}, {0, 0}, {1, 1}, 4).to_vector<float>(),
                std::vector<float>({up, -up, 1, -1}));
    }
    std::vector<float> golden;
    for (const Tensor& in : {x, to_channels_last(x)}) {
      const Tensor got = conv2d(in, w, b, {1, 1}, {1, 1}, {1, 1}, 24);
      EXPECT_EQ(got.dtype(), dt);
      const std::vector<float> v = got.contiguous().to_vector<float>();
      ASSERT_EQ(v.size(), want.exact.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        ASSERT_LE(std::fabs(v[i] - want.exact[i]),
                  half_ulp16(want.exact[i], mantissa) + std::ldexp(want.magnitude[i], -43))
            << i;
      }
      if (golden.empty()) golden = v;
      EXPECT_EQ(v, golden);
    }
    {
      PrecisionGuard fast(Precision::Fast);
      std::vector<float> first;
      for (const Tensor& in : {x, to_channels_last(x)}) {
        const std::vector<float> v =
            conv2d(in, w, b, {1, 1}, {1, 1}, {1, 1}, 24).contiguous().to_vector<float>();
        for (std::size_t i = 0; i < v.size(); ++i) {
          const LD chain = 10 * std::ldexp(want.magnitude[i], -24);  // K + 1 = 10 roundings
          ASSERT_LE(std::fabs(v[i] - want.exact[i]),
                    half_ulp16(std::fabs(want.exact[i]) + chain, mantissa) + chain)
              << i;
        }
        if (first.empty()) first = v;
        EXPECT_EQ(v, first);
      }
    }
    // 2^15 + 2^15 passes float16's largest finite value (65504); bfloat16 holds it. An inf in
    // the middle of a 3 x 3 image reaches all nine outputs of a 3 x 3 kernel with padding 1,
    // and nothing in the other channel.
    const float big = dt == DType::Float16 ? 32768.0f : 3e38f;
    const Tensor bx = from_vector<float>({big, big}, {1, 2, 1, 1}).to(dt);
    const Tensor bw = ones({2, 1, 1, 1}, dt) * 2.0;
    EXPECT_EQ(conv2d(bx, bw, std::nullopt, {1, 1}, {0, 0}, {1, 1}, 2).to_vector<float>(),
              std::vector<float>(2, std::numeric_limits<float>::infinity()));
    std::vector<float> iv(18, 1.0f);
    iv[4] = std::numeric_limits<float>::infinity();
    const Tensor ix = from_vector<float>(iv, {1, 2, 3, 3}).to(dt);
    const std::vector<float> got =
        conv2d(ix, ones({2, 1, 3, 3}, dt), std::nullopt, {1, 1}, {1, 1}, {1, 1}, 2)
            .to_vector<float>();
    for (std::size_t i = 0; i < 18; ++i) {
      EXPECT_EQ(std::isinf(got[i]), i < 9) << i;
    }
  }
}

MPSIM_ON_EVERY_TARGET(ConvOnTarget);

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
  // 16-bit depthwise convolutions take the same checks.
  EXPECT_THAT(message([] {
                conv2d(zeros({1, 4, 2, 2}, DType::Float16), zeros({4, 1, 3, 3}, DType::Float16),
                       std::nullopt, {1, 1}, {0, 0}, {1, 1}, 4);
              }),
              HasSubstr("Kernel size can't be greater than actual input size"));
  EXPECT_THAT(message([] {
                conv2d(zeros({1, 4, 5, 5}, DType::BFloat16), zeros({4, 1, 3, 3}), std::nullopt,
                       {1, 1}, {1, 1}, {1, 1}, 4);
              }),
              HasSubstr("expected weight of dtype bfloat16 (the input's), got float32"));
  EXPECT_THAT(message([] {
                conv2d(zeros({1, 4, 5, 5}, DType::Float16), zeros({4, 1, 3, 3}, DType::Float16),
                       zeros({3}, DType::Float16), {1, 1}, {1, 1}, {1, 1}, 4);
              }),
              HasSubstr("expected bias of shape [4], got [3]"));
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

namespace mpsim {
namespace {

// Note [checked sizes]: sizes, paddings, strides and dilations near 2^63 are ShapeErrors that
// name the op, never wrapped values (UBSan, in the sanitizer build, would report a wrap).
TEST(Conv2d, ShapeArithmeticAtTheInt64EdgesIsAShapeError) {
  const Tensor x = zeros({1, 1, 4, 4});
  const Tensor w = zeros({1, 1, 3, 3});
  const std::int64_t big = std::int64_t{1} << 62;
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const ShapeError& e) {
      return std::string(e.what());
    }
    return std::string("no ShapeError");
  };
  EXPECT_THAT(message([&] { conv2d(x, w, std::nullopt, {1}, IntList{big}); }),
              ::testing::StartsWith("[conv2d] the padded input size of spatial dim 0 overflows"));
  EXPECT_THAT(message([&] { conv2d(x, w, std::nullopt, {1}, IntList{0}, {big}); }),
              ::testing::StartsWith("[conv2d] the dilated kernel size of spatial dim 0"));
  EXPECT_THAT(message([&] { conv_transpose2d(x, w, std::nullopt, {big}); }),
              ::testing::StartsWith("[conv_transpose2d] the output size of spatial dim 0"));
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, w, std::nullopt, {big + 1}, {0}, {big});
              }),
              ::testing::StartsWith("[conv_transpose2d] the output size of spatial dim 0"));
  // Strides that large are fine: one output pixel.
  EXPECT_EQ(conv2d(x, w, std::nullopt, {big}).sizes(), Shape({1, 1, 1, 1}));
}

}  // namespace
}  // namespace mpsim
