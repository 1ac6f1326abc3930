// conv_transpose2d against its scatter definition evaluated in long double here: every option
// (stride, padding, output_padding, dilation, groups incl. depthwise, bias, stride above the
// kernel, unbatched input), NCHW = channels-last bit for bit, strided inputs,
// float16/bfloat16/float64, Fast's bound (and that it rejects a wrong result), NaN/inf as
// PyTorch, an empty batch, determinism over threads, values from PyTorch, and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/mpsim.h"
#include "tests/random_inputs.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
using LD = long double;

using test::random_tensor;
using test::to_channels_last;

struct Options {
  std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, out_pad_h = 0, out_pad_w = 0,
               dil_h = 1, dil_w = 1, groups = 1;
};

Tensor conv_t(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, const Options& o) {
  return conv_transpose2d(x, w, b, {o.stride_h, o.stride_w}, {o.pad_h, o.pad_w},
                          {o.out_pad_h, o.out_pad_w}, o.groups, {o.dil_h, o.dil_w});
}

struct Expected {
  Shape shape;
  std::vector<LD> exact, magnitude;  // NCHW order; magnitude = |bias| + sum |x w|
  std::vector<std::int64_t> terms;   // products landing on each output (its K)
};

// The definition, as a scatter: x[n, c, ih, iw] w[c, o, kh, kw] adds to output
// [n, group(c) Cout/groups + o, ih sH - pH + kh dH, iw sW - pW + kw dW] when that lies inside.
Expected scatter(const Tensor& xt, const Tensor& wt, const std::optional<Tensor>& bt,
                 const Options& o) {
  const std::vector<double> x = xt.to(DType::Float64).to_vector<double>();
  const std::vector<double> w = wt.to(DType::Float64).to_vector<double>();
  const std::int64_t n = xt.size(0), c = xt.size(1), h = xt.size(2), wd = xt.size(3);
  const std::int64_t cg = c / o.groups, og = wt.size(1), kh = wt.size(2), kw = wt.size(3);
  const std::int64_t co = og * o.groups;
  const std::int64_t oh = (h - 1) * o.stride_h - 2 * o.pad_h + o.dil_h * (kh - 1) + o.out_pad_h + 1;
  const std::int64_t ow =
      (wd - 1) * o.stride_w - 2 * o.pad_w + o.dil_w * (kw - 1) + o.out_pad_w + 1;
  Expected e{Shape({n, co, oh, ow}), {}, {}, {}};
  const std::size_t size = static_cast<std::size_t>(n * co * oh * ow);
  e.exact.assign(size, 0);
  e.magnitude.assign(size, 0);
  e.terms.assign(size, 0);
  if (bt) {
    const std::vector<double> b = bt->to(DType::Float64).to_vector<double>();
    for (std::size_t i = 0; i < size; ++i) {
      const LD v = b[i / static_cast<std::size_t>(oh * ow) % static_cast<std::size_t>(co)];
      e.exact[i] = v;
      e.magnitude[i] = std::fabs(v);
    }
  }
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t ci = 0; ci < c; ++ci)
      for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t z = 0; z < wd; ++z)
          for (std::int64_t oc = 0; oc < og; ++oc)
            for (std::int64_t a = 0; a < kh; ++a)
              for (std::int64_t q = 0; q < kw; ++q) {
                const std::int64_t i = y * o.stride_h - o.pad_h + a * o.dil_h;
                const std::int64_t j = z * o.stride_w - o.pad_w + q * o.dil_w;
                if (i < 0 || i >= oh || j < 0 || j >= ow) continue;
                const std::size_t at =
                    static_cast<std::size_t>(((in * co + ci / cg * og + oc) * oh + i) * ow + j);
                const LD p =
                    static_cast<LD>(x[static_cast<std::size_t>(((in * c + ci) * h + y) * wd + z)]) *
                    w[static_cast<std::size_t>(((ci * og + oc) * kh + a) * kw + q)];
                e.exact[at] += p;
                e.magnitude[at] += std::fabs(p);
                ++e.terms[at];
              }
  return e;
}

LD ulp(LD v, int mantissa_bits) {
  int e = 0;
  std::frexp(v, &e);
  return std::ldexp(1.0L, std::max(e, -125) - mantissa_bits);
}

// Outputs outside `bound(i)` of the exact value; NaN and inf must match the exact value's.
template <class Bound>
std::int64_t violations(const Tensor& got, const Expected& want, Bound bound) {
  EXPECT_EQ(got.sizes(), want.shape);
  const std::vector<double> v = got.to(DType::Float64).contiguous().to_vector<double>();
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const LD exact = want.exact[i];
    const bool ok = std::isnan(exact)   ? std::isnan(v[i])
                    : std::isinf(exact) ? static_cast<LD>(v[i]) == exact
                                        : std::fabs(v[i] - exact) <= bound(i);
    if (!ok && bad++ < 3) {
      ADD_FAILURE() << "element " << i << ": got " << v[i] << ", exact "
                    << static_cast<double>(exact);
    }
  }
  return bad;
}

// Golden float32: the double chain's error K 2^-53 sum |x w| (K <= 2^10 here, so 2^-43) plus
// the bias addition and one rounding.
void expect_golden(const Tensor& got, const Expected& want) {
  EXPECT_EQ(violations(got, want,
                       [&](std::size_t i) {
                         return 0.5L * ulp(want.exact[i], 24) + std::ldexp(want.magnitude[i], -43);
                       }),
            0);
}

// Fast float32: K 2^-24 sum |x w| + 0.5 ulp (docs/numerics.md, c = 1), K the output's terms.
std::int64_t fast_violations(const Tensor& got, const Expected& want) {
  return violations(got, want, [&](std::size_t i) {
    return 0.5L * ulp(want.exact[i], 24) +
           static_cast<LD>(want.terms[i]) * std::ldexp(want.magnitude[i], -24);
  });
}

TEST(ConvTranspose2d, EveryOptionAgainstTheScatterDefinition) {
  struct Case {
    Shape x, w;
    Options o;
    bool bias;
  };
  const Case cases[] = {
      {{2, 4, 5, 7}, {4, 3, 3, 3}, {}, true},
      {{1, 3, 5, 6}, {3, 4, 3, 3}, {.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1}, false},
      {{2, 3, 4, 5},
       {3, 2, 4, 4},
       {.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1, .out_pad_h = 1, .out_pad_w = 1},
       true},
      // stride above the kernel: some phases have no tap (bias only)
      {{1, 2, 3, 4},
       {2, 3, 2, 2},
       {.stride_h = 3, .stride_w = 4, .out_pad_h = 2, .out_pad_w = 3},
       true},
      // dilation sharing a factor with the stride, and one prime to it
      {{1, 3, 5, 5},
       {3, 2, 3, 3},
       {.stride_h = 2, .stride_w = 2, .pad_h = 2, .pad_w = 1, .dil_h = 2, .dil_w = 3},
       true},
      // output_padding >= stride but < dilation (PyTorch allows it)
      {{1, 2, 4, 5}, {2, 3, 3, 2}, {.out_pad_h = 1, .out_pad_w = 2, .dil_h = 2, .dil_w = 3}, true},
      {{2, 6, 5, 4}, {6, 2, 3, 3}, {.stride_h = 2, .stride_w = 1, .pad_h = 1, .groups = 3}, true},
      {{1, 5, 6, 7},
       {5, 1, 3, 3},
       {.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1, .out_pad_h = 1, .groups = 5},
       true},                                                              // depthwise
      {{1, 4, 4, 4}, {4, 3, 3, 3}, {.pad_h = 2, .pad_w = 2}, false},       // padding = k - 1
      {{1, 4, 3, 3}, {4, 2, 1, 1}, {.stride_h = 2, .stride_w = 3}, true},  // 1x1
      {{1, 40, 5, 6},
       {40, 20, 3, 3},
       {.stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1},
       true},  // K = 360 > one block
  };
  unsigned seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.x.to_string() + " * " + c.w.to_string());
    const Tensor x = random_tensor(c.x, seed++), w = random_tensor(c.w, seed++);
    const std::optional<Tensor> b =
        c.bias ? std::optional<Tensor>(random_tensor({c.w[1] * c.o.groups}, seed++)) : std::nullopt;
    const Expected want = scatter(x, w, b, c.o);
    const Tensor got = conv_t(x, w, b, c.o);
    expect_golden(got, want);
    // Channels-last input: a channels-last output with the same bits.
    const Tensor cl = conv_t(to_channels_last(x), w, b, c.o);
    EXPECT_EQ(cl.strides(), channels_last_strides(cl.sizes()));
    EXPECT_EQ(cl.contiguous().to_vector<float>(), got.to_vector<float>());
    PrecisionGuard fast(Precision::Fast);
    EXPECT_EQ(fast_violations(conv_t(x, w, b, c.o), want), 0);
  }
}

TEST(ConvTranspose2d, ValuesFromPyTorch) {
  // torch 1.13, float64, dyadic values so that every result is exact:
  //   x = torch.tensor([((i % 5) - 2) * 0.5 for i in range(12)]).reshape(1, 2, 2, 3)
  //   w = torch.tensor([((j % 3) - 1) * 0.25 + 0.125 for j in range(24)]).reshape(2, 2, 2, 3)
  //   F.conv_transpose2d(x, w, torch.tensor([0.5, -1.0]), stride=2, padding=1,
  //                      output_padding=1).flatten().tolist()
  std::vector<float> xv(12), wv(24);
  for (int i = 0; i < 12; ++i) xv[static_cast<std::size_t>(i)] = ((i % 5) - 2) * 0.5f;
  for (int j = 0; j < 24; ++j) wv[static_cast<std::size_t>(j)] = ((j % 3) - 1) * 0.25f + 0.125f;
  const std::vector<float> torch_values = {
      0.3125,  0.0,     0.4375,  0.25,    0.5625,  0.6875,  0.6875,  1.0625,  0.5,
      0.6875,  0.3125,  -0.0625, 0.6875,  1.0625,  0.5,     0.6875,  0.3125,  -0.0625,
      -1.1875, -1.5,    -1.0625, -1.25,   -0.9375, -0.8125, -0.8125, -0.4375, -1.0,
      -0.8125, -1.1875, -1.5625, -0.8125, -0.4375, -1.0,    -0.8125, -1.1875, -1.5625};
  const Tensor x = from_vector(xv, {1, 2, 2, 3}), w = from_vector(wv, {2, 2, 2, 3});
  const Tensor b = from_vector<float>({0.5f, -1.0f}, {2});
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    const Tensor got = conv_transpose2d(x, w, b, {2, 2}, {1, 1}, {1, 1});
    EXPECT_EQ(got.sizes(), Shape({1, 2, 3, 6}));
    EXPECT_EQ(got.to_vector<float>(), torch_values);
  }
}

TEST(ConvTranspose2d, UnbatchedStridedAndScalarArguments) {
  const Tensor base = random_tensor({5, 10, 12}, 21);
  const Tensor x = base.slice(0, 0, 5, 2).slice(2, 1, 12);  // [3, 10, 11], strided
  const Tensor w = random_tensor({3, 2, 3, 3}, 22);
  const Tensor got = conv_transpose2d(x, w, std::nullopt, {2}, {1}, {1}, 1, {1});
  ASSERT_EQ(got.sizes(), Shape({2, 20, 22}));
  Options o;
  o.stride_h = o.stride_w = 2;
  o.pad_h = o.pad_w = 1;
  o.out_pad_h = o.out_pad_w = 1;
  expect_golden(got.unsqueeze(0), scatter(x.contiguous().unsqueeze(0), w, std::nullopt, o));
  // A channels-last input that is itself a strided view.
  const Tensor xcl = to_channels_last(random_tensor({2, 3, 6, 9}, 23)).slice(3, 0, 9, 2);
  expect_golden(conv_transpose2d(xcl, w, std::nullopt, {2, 2}),
                scatter(xcl.contiguous(), w, std::nullopt, {.stride_h = 2, .stride_w = 2}));
}

TEST(ConvTranspose2d, HalfBFloat16AndFloat64) {
  const Tensor x = random_tensor({1, 16, 5, 5}, 31), w = random_tensor({16, 8, 3, 3}, 32);
  const Options o{.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1, .out_pad_h = 1};
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const Tensor xh = x.to(dt), wh = w.to(dt);
    const Expected want = scatter(xh, wh, std::nullopt, o);
    const int mantissa = dt == DType::Float16 ? 11 : 8;  // with the implicit bit
    // Widened exactly, summed in double, rounded once to the 16-bit type.
    EXPECT_EQ(violations(conv_t(xh, wh, std::nullopt, o), want,
                         [&](std::size_t i) {
                           return 0.5L * ulp(want.exact[i], mantissa) +
                                  std::ldexp(want.magnitude[i], -43);
                         }),
              0);
  }
  const Tensor xd = x.to(DType::Float64), wd = w.to(DType::Float64);
  const Expected want = scatter(xd, wd, std::nullopt, o);
  // A double chain of fused multiply-adds: K 2^-53 sum |x w|, K <= 144.
  EXPECT_EQ(violations(conv_t(xd, wd, std::nullopt, o), want,
                       [&](std::size_t i) { return std::ldexp(want.magnitude[i], -45); }),
            0);
}

TEST(ConvTranspose2d, FastBoundHoldsAndRejectsAWrongResult) {
  const Tensor x = random_tensor({1, 16, 6, 6}, 51), w = random_tensor({16, 8, 3, 3}, 52);
  const Options o{.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1};
  const Expected want = scatter(x, w, std::nullopt, o);
  PrecisionGuard fast(Precision::Fast);
  const Tensor got = conv_t(x, w, std::nullopt, o);
  EXPECT_EQ(fast_violations(got, want), 0);
  // A result with one weight off by 2^-8 of its value (a bfloat16 rounding) must fail: the
  // bound is K 2^-24 sum |x w| <= 2^-18 sum |x w| (K <= 16 x 4 terms here), while that weight
  // moves its outputs by 2^-8 of one of their terms.
  std::vector<float> wv = w.to_vector<float>();
  wv[40] *= 1.0f + 1.0f / 256;
  const Tensor off = conv_t(x, from_vector(wv, w.sizes()), std::nullopt, o);
  std::int64_t bad = 0;
  {
    ::testing::TestPartResultArray failures;
    ::testing::ScopedFakeTestPartResultReporter quiet(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    bad = fast_violations(off, want);
  }
  EXPECT_GT(bad, 0);
}

TEST(ConvTranspose2d, NaNAndInfPropagateAsPyTorch) {
  // An inf weight reaches only the outputs its tap lands on (torch 1.13):
  //   F.conv_transpose2d(torch.ones(1, 1, 2, 2), w) with w = ones(1, 1, 3, 3), w[0, 0, 0, 0] = inf
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> torch_values = {inf, inf, 2, 1, inf, inf, 4, 2, 2, 4, 4, 2, 1, 2, 2, 1};
  std::vector<float> wv(9, 1.0f);
  wv[0] = inf;
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    EXPECT_EQ(
        conv_transpose2d(ones({1, 1, 2, 2}), from_vector(wv, {1, 1, 3, 3})).to_vector<float>(),
        torch_values);
  }
  // NaN and inf in x and in the weight, with stride and padding: NaN / inf exactly where the
  // definition has them; every other output has the bits of the same call with finite weights
  // (Note [non-finite weights]: the same chains).
  Tensor x = random_tensor({2, 3, 5, 4}, 61);
  std::vector<float> xv = x.to_vector<float>();
  xv[7] = std::numeric_limits<float>::quiet_NaN();
  xv[30] = -inf;
  x = from_vector(xv, x.sizes());
  const Tensor w = random_tensor({3, 2, 3, 3}, 62), b = random_tensor({2}, 63);
  std::vector<float> special = w.to_vector<float>();
  special[5] = inf;
  special[22] = std::numeric_limits<float>::quiet_NaN();
  const Tensor ws = from_vector(special, w.sizes());
  const Options o{.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 0, .out_pad_h = 1};
  const Expected want = scatter(x, ws, b, o);
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    const std::vector<float> got = conv_t(x, ws, b, o).to_vector<float>();
    const std::vector<float> finite = conv_t(x, w, b, o).to_vector<float>();
    std::int64_t nan = 0, finite_outputs = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want.exact[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << i;
        ++nan;
      } else if (std::isinf(want.exact[i])) {
        EXPECT_EQ(got[i], static_cast<float>(want.exact[i])) << i;
      } else {
        // Finite here: no special weight lands on it, and neither does the NaN or inf of x.
        ++finite_outputs;
        EXPECT_EQ(std::memcmp(&got[i], &finite[i], sizeof(float)), 0) << i;
      }
    }
    EXPECT_GT(nan, 0);
    EXPECT_GT(finite_outputs, static_cast<std::int64_t>(got.size()) / 4);
  }
}

TEST(ConvTranspose2d, EmptyBatch) {
  EXPECT_EQ(conv_transpose2d(zeros({0, 3, 5, 5}), zeros({3, 2, 3, 3}), zeros({2}), {2, 2}).sizes(),
            Shape({0, 2, 11, 11}));
}

TEST(ConvTranspose2d, BitIdenticalForAnyThreadCount) {
  // Large enough that the engine spreads each problem's tiles over the threads.
  const Tensor x = random_tensor({2, 64, 16, 16}, 41), w = random_tensor({64, 48, 4, 4}, 42);
  const Tensor b = random_tensor({48}, 43);
  for (Precision p : {Precision::Golden, Precision::Fast}) {
    PrecisionGuard guard(p);
    for (std::int64_t s : {1, 2}) {
      std::vector<std::vector<float>> runs;
      for (int threads : {1, 2, 8}) {
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        runs.push_back(conv_transpose2d(x, w, b, {s, s}, {1, 1}).to_vector<float>());
      }
      EXPECT_EQ(runs[0], runs[1]);
      EXPECT_EQ(runs[0], runs[2]);
    }
  }
}

TEST(ConvTranspose2d, BadInputNamesOpArgumentExpectedAndGiven) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const Tensor x = zeros({1, 4, 5, 5}), w = zeros({4, 2, 3, 3});
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, zeros({4, 2, 3}));
              }),
              HasSubstr("[conv_transpose2d] expected a 4-d weight [in_channels, out_channels / "
                        "groups, kH, kW], got shape [4, 2, 3]"));
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, zeros({3, 2, 3, 3}));
              }),
              HasSubstr("[conv_transpose2d] given weight of size [3, 2, 3, 3], expected input "
                        "[1, 4, 5, 5] to have 3 channels, but got 4 channels instead"));
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, w, std::nullopt, {1, 1}, {0, 0}, {0, 0}, 3);
              }),
              HasSubstr("given groups=3, expected weight to be divisible by 3 at dimension 0, but "
                        "got weight of size [4, 2, 3, 3]"));
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, w, std::nullopt, {1, 1}, {0, 0}, {0, 0}, 0);
              }),
              HasSubstr("non-positive groups is not supported, got groups=0"));
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, w, std::nullopt, {2, 2}, {0, 0}, {2, 0});
              }),
              HasSubstr("expected output_padding smaller than either stride or dilation, got "
                        "output_padding [2, 0], stride [2, 2] and dilation [1, 1]"));
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, w, std::nullopt, {1, 1}, {0, 0}, {0, 1});
              }),
              HasSubstr("got output_padding [0, 1], stride [1, 1] and dilation [1, 1]"));
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, w, std::nullopt, {0, 1});
              }),
              HasSubstr("non-positive stride is not supported, got stride [0, 1]"));
  EXPECT_THAT(message([&] { conv_transpose2d(x, w, std::nullopt, {-1}); }),
              HasSubstr("non-positive stride is not supported, got stride [-1, -1]"));
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, w, std::nullopt, {1, 1}, {0, 0}, {0, 0}, 1, {1, 0});
              }),
              HasSubstr("dilation must be positive, got dilation [1, 0]"));
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, w, std::nullopt, {1, 1}, {-1, 0});
              }),
              HasSubstr("negative padding is not supported, got padding [-1, 0]"));
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, w, std::nullopt, {2, 2}, {0, 0}, {-1, 0});
              }),
              HasSubstr("negative output_padding is not supported, got output_padding [-1, 0]"));
  EXPECT_THAT(
      message([&] {
        conv_transpose2d(x, w, std::nullopt, {1, 2, 3});
      }),
      HasSubstr("[conv_transpose2d] expected stride to have 1 or 2 elements, got [1, 2, 3]"));
  EXPECT_THAT(
      message([] {
        conv_transpose2d(zeros({1, 4, 1, 1}), zeros({4, 2, 1, 1}), std::nullopt, {1, 1}, {1, 1});
      }),
      HasSubstr("given input size per channel (1 x 1), the calculated output size per "
                "channel (-1 x -1) is too small"));
  EXPECT_THAT(message([&] { conv_transpose2d(x, w, zeros({4})); }),
              HasSubstr("expected bias of shape [2] (out_channels = weight.size(1) * groups), "
                        "got [4]"));
  EXPECT_THAT(message([] {
                conv_transpose2d(zeros({5, 5}), zeros({1, 1, 3, 3}));
              }),
              HasSubstr("expected 3-d (unbatched) or 4-d (batched) input, got shape [5, 5]"));
  EXPECT_THAT(message([] {
                conv_transpose2d(zeros({1, 4, 0, 5}), zeros({4, 2, 3, 3}));
              }),
              HasSubstr("expected non-zero channels, height and width (only the batch may be "
                        "empty), got input of shape [1, 4, 0, 5]"));
  EXPECT_THAT(message([&] {
                conv_transpose2d(x, zeros({4, 2, 3, 3}, DType::Float16));
              }),
              HasSubstr("[conv_transpose2d] expected weight of dtype float32 (the input's), got "
                        "float16"));
  EXPECT_THAT(message([&] { conv_transpose2d(x, w, zeros({2}, DType::Float64)); }),
              HasSubstr("expected bias of dtype float32 (the input's), got float64"));
  EXPECT_THAT(
      message([] {
        conv_transpose2d(zeros({1, 4, 5, 5}, DType::Int64), zeros({4, 2, 3, 3}, DType::Int64));
      }),
      HasSubstr("supports floating point tensors"));
  EXPECT_THAT(message([&] { conv_transpose2d(x, w.to(Device::mps())); }),
              HasSubstr("expected all tensors to be on the same device, but found at least two "
                        "devices, cpu and mps:0"));
}

}  // namespace
}  // namespace mpsim
