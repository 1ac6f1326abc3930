// Pooling and resizing (avg_pool2d, max_pool2d(+indices), adaptive_avg_pool2d, interpolate)
// against a long double oracle written here from PyTorch's definitions: every option, odd
// shapes, stride > kernel, NCHW = channels-last bit for bit (and the output's memory format),
// strided inputs, 3-d inputs, float16/bfloat16/float64, NaN/inf/-0.0, empty batches,
// determinism over thread counts, a few values recorded from PyTorch 1.13, and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/mpsim.h"
#include "tests/random_inputs.h"
#include "tests/simd_targets.h"

namespace mpsim {
namespace {

using test::to_channels_last;
using ::testing::HasSubstr;
using LD = long double;
constexpr LD kInf = std::numeric_limits<LD>::infinity();

Tensor random_tensor(const Shape& shape, unsigned seed, DType dtype = DType::Float32) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-4, 4);
  std::vector<float> v(static_cast<std::size_t>(shape.numel()));
  for (float& x : v) x = d(rng);
  return from_vector(v, shape).to(dtype);
}

// An NCHW image as long doubles (exact for every float dtype).
struct Image {
  std::int64_t n, c, h, w;
  std::vector<LD> v;
  LD at(std::int64_t i, std::int64_t j, std::int64_t y, std::int64_t x) const {
    return v[static_cast<std::size_t>(((i * c + j) * h + y) * w + x)];
  }
};

Image image_of(const Tensor& x4) {
  const std::vector<double> d = x4.contiguous().to_vector<double>();
  return {x4.size(0), x4.size(1), x4.size(2), x4.size(3), std::vector<LD>(d.begin(), d.end())};
}

// The oracle's result: values in NCHW order, the sum of |taps| of each (for bounds), and
// max indices.
struct Expected {
  std::vector<std::int64_t> sizes;
  std::vector<LD> value, magnitude;
  std::vector<std::int64_t> index;
};

// Output size from the definition: the window starts o*s - p (o >= 0) whose extent ends
// inside the padded input; in ceil mode also the one after the last when the stride leaves a
// remainder, provided it starts inside the input or its left padding.
std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p,
                      std::int64_t d, bool ceil_mode) {
  const std::int64_t extent = d * (k - 1) + 1;
  std::int64_t count = 0;
  for (std::int64_t o = 0;; ++o) {
    const std::int64_t start = o * s - p;
    const bool fits = start + extent <= in + p;
    const bool remainder = ceil_mode && start + extent < in + p + s && start < in;
    if (!fits && !remainder) break;
    ++count;
  }
  return count;
}

struct PoolOpts {
  std::int64_t kh, kw, sh, sw, ph, pw, dh = 1, dw = 1;
  bool ceil_mode = false, include_pad = true;
  std::optional<std::int64_t> divisor = std::nullopt;
};

Expected avg_oracle(const Image& im, const PoolOpts& o) {
  const std::int64_t oh = out_size(im.h, o.kh, o.sh, o.ph, 1, o.ceil_mode);
  const std::int64_t ow = out_size(im.w, o.kw, o.sw, o.pw, 1, o.ceil_mode);
  Expected e{{im.n, im.c, oh, ow}, {}, {}, {}};
  for (std::int64_t i = 0; i < im.n; ++i) {
    for (std::int64_t j = 0; j < im.c; ++j) {
      for (std::int64_t y = 0; y < oh; ++y) {
        for (std::int64_t x = 0; x < ow; ++x) {
          LD sum = 0, mag = 0;
          std::int64_t taps = 0, padded = 0;
          for (std::int64_t a = 0; a < o.kh; ++a) {
            for (std::int64_t b = 0; b < o.kw; ++b) {
              const std::int64_t iy = y * o.sh - o.ph + a, ix = x * o.sw - o.pw + b;
              // The padded input is [-p, in + p): positions past it do not count.
              if (iy >= im.h + o.ph || ix >= im.w + o.pw) continue;
              ++padded;
              if (iy < 0 || ix < 0 || iy >= im.h || ix >= im.w) continue;
              sum += im.at(i, j, iy, ix);
              mag += std::fabs(im.at(i, j, iy, ix));
              ++taps;
            }
          }
          const LD div = o.divisor ? *o.divisor : (o.include_pad ? padded : taps);
          e.value.push_back(taps == 0 ? 0 : sum / div);
          e.magnitude.push_back(taps == 0 ? 0 : mag / std::fabs(div));
        }
      }
    }
  }
  return e;
}

// PyTorch's rule: a tap replaces the maximum when greater or NaN; start -inf at the first tap.
Expected max_oracle(const Image& im, const PoolOpts& o) {
  const std::int64_t oh = out_size(im.h, o.kh, o.sh, o.ph, o.dh, o.ceil_mode);
  const std::int64_t ow = out_size(im.w, o.kw, o.sw, o.pw, o.dw, o.ceil_mode);
  Expected e{{im.n, im.c, oh, ow}, {}, {}, {}};
  for (std::int64_t i = 0; i < im.n; ++i) {
    for (std::int64_t j = 0; j < im.c; ++j) {
      for (std::int64_t y = 0; y < oh; ++y) {
        for (std::int64_t x = 0; x < ow; ++x) {
          LD best = -kInf;
          std::int64_t index = -1;
          for (std::int64_t a = 0; a < o.kh; ++a) {
            for (std::int64_t b = 0; b < o.kw; ++b) {
              const std::int64_t iy = y * o.sh - o.ph + a * o.dh, ix = x * o.sw - o.pw + b * o.dw;
              if (iy < 0 || ix < 0 || iy >= im.h || ix >= im.w) continue;
              const LD v = im.at(i, j, iy, ix);
              if (index < 0) index = iy * im.w + ix;
              if (v > best || std::isnan(v)) {
                best = v;
                index = iy * im.w + ix;
              }
            }
          }
          e.value.push_back(best);
          e.magnitude.push_back(0);
          e.index.push_back(index);
        }
      }
    }
  }
  return e;
}

Expected adaptive_oracle(const Image& im, std::int64_t oh, std::int64_t ow) {
  Expected e{{im.n, im.c, oh, ow}, {}, {}, {}};
  for (std::int64_t i = 0; i < im.n; ++i) {
    for (std::int64_t j = 0; j < im.c; ++j) {
      for (std::int64_t y = 0; y < oh; ++y) {
        for (std::int64_t x = 0; x < ow; ++x) {
          const auto y0 = static_cast<std::int64_t>(std::floor(static_cast<LD>(y) * im.h / oh));
          const auto y1 = static_cast<std::int64_t>(std::ceil(static_cast<LD>(y + 1) * im.h / oh));
          const auto x0 = static_cast<std::int64_t>(std::floor(static_cast<LD>(x) * im.w / ow));
          const auto x1 = static_cast<std::int64_t>(std::ceil(static_cast<LD>(x + 1) * im.w / ow));
          LD sum = 0, mag = 0;
          for (std::int64_t a = y0; a < y1; ++a) {
            for (std::int64_t b = x0; b < x1; ++b) {
              sum += im.at(i, j, a, b);
              mag += std::fabs(im.at(i, j, a, b));
            }
          }
          const LD count = static_cast<LD>((y1 - y0) * (x1 - x0));
          e.value.push_back(sum / count);
          e.magnitude.push_back(mag / count);
        }
      }
    }
  }
  return e;
}

// PyTorch's legacy nearest source index, in float32 as PyTorch computes it.
std::int64_t nearest_src(std::int64_t o, std::int64_t in, std::int64_t out,
                         std::optional<double> scale) {
  if (out == in) return o;
  if (out == 2 * in) return o / 2;
  const float s = scale ? static_cast<float>(1.0 / *scale) : static_cast<float>(in) / out;
  return std::min<std::int64_t>(static_cast<std::int64_t>(std::floor(static_cast<float>(o) * s)),
                                in - 1);
}

Expected nearest_oracle(const Image& im, std::int64_t oh, std::int64_t ow,
                        std::optional<double> sh = {}, std::optional<double> sw = {}) {
  Expected e{{im.n, im.c, oh, ow}, {}, {}, {}};
  for (std::int64_t i = 0; i < im.n; ++i)
    for (std::int64_t j = 0; j < im.c; ++j)
      for (std::int64_t y = 0; y < oh; ++y)
        for (std::int64_t x = 0; x < ow; ++x) {
          e.value.push_back(
              im.at(i, j, nearest_src(y, im.h, oh, sh), nearest_src(x, im.w, ow, sw)));
          e.magnitude.push_back(0);
        }
  return e;
}

// Bilinear from the definition in long double: the source coordinate, its floor and the next
// index (clamped), the fractional weight.
struct Lin {
  std::int64_t i0, i1;
  LD w1;
};
Lin lin(std::int64_t o, std::int64_t in, std::int64_t out, bool align, std::optional<double> s) {
  if (in == out) return {o, o, 0};
  LD src;
  if (align) {
    src = out > 1 ? static_cast<LD>(o) * (in - 1) / (out - 1) : 0;
  } else {
    const LD ratio = s ? 1 / static_cast<LD>(*s) : static_cast<LD>(in) / out;
    src = std::max<LD>((o + 0.5L) * ratio - 0.5L, 0);
  }
  const auto i0 = std::min<std::int64_t>(static_cast<std::int64_t>(std::floor(src)), in - 1);
  return {i0, std::min(i0 + 1, in - 1), std::min<LD>(src - i0, 1)};
}

Expected bilinear_oracle(const Image& im, std::int64_t oh, std::int64_t ow, bool align,
                         std::optional<double> sh = {}, std::optional<double> sw = {}) {
  Expected e{{im.n, im.c, oh, ow}, {}, {}, {}};
  for (std::int64_t i = 0; i < im.n; ++i)
    for (std::int64_t j = 0; j < im.c; ++j)
      for (std::int64_t y = 0; y < oh; ++y)
        for (std::int64_t x = 0; x < ow; ++x) {
          const Lin h = lin(y, im.h, oh, align, sh), w = lin(x, im.w, ow, align, sw);
          const LD a = im.at(i, j, h.i0, w.i0), b = im.at(i, j, h.i0, w.i1);
          const LD c = im.at(i, j, h.i1, w.i0), d = im.at(i, j, h.i1, w.i1);
          const LD v =
              (1 - h.w1) * ((1 - w.w1) * a + w.w1 * b) + h.w1 * ((1 - w.w1) * c + w.w1 * d);
          e.value.push_back(v);
          e.magnitude.push_back(std::fabs(a) + std::fabs(b) + std::fabs(c) + std::fabs(d));
        }
  return e;
}

// Half the spacing of `dtype`'s values at v (its binade, subnormals included).
LD half_ulp(LD v, DType dtype) {
  int bits = 24, emin = -125;
  if (dtype == DType::Float64) bits = 53, emin = -1021;
  if (dtype == DType::Float16) bits = 11, emin = -13;
  if (dtype == DType::BFloat16) bits = 8, emin = -125;
  int e = 0;
  std::frexp(v, &e);
  return std::ldexp(1.0L, std::max(e, emin) - bits - 1);
}

// got (any layout) equals the oracle: NaN where it is NaN, else within half an ulp of the
// exact value plus `rel` times the taps' magnitude (the double sum's own error).
void expect_matches(const Tensor& got, const Expected& want, LD rel = 0x1p-50L) {
  ASSERT_EQ(got.sizes(), Shape(want.sizes));
  const std::vector<double> g = got.contiguous().to_vector<double>();
  for (std::size_t i = 0; i < g.size(); ++i) {
    const LD w = want.value[i];
    if (std::isnan(w)) {
      ASSERT_TRUE(std::isnan(g[i])) << "element " << i << ": got " << g[i] << ", want NaN";
      continue;
    }
    if (std::isinf(w)) {
      ASSERT_EQ(static_cast<LD>(g[i]), w) << "element " << i;
      continue;
    }
    const LD bound = half_ulp(w, got.dtype()) + rel * want.magnitude[i];
    ASSERT_LE(std::fabs(g[i] - w), bound)
        << "element " << i << ": got " << g[i] << ", want " << static_cast<double>(w);
  }
}

bool same_bits(const Tensor& a, const Tensor& b) {
  const Tensor x = a.contiguous(), y = b.contiguous();
  return a.sizes() == b.sizes() && a.dtype() == b.dtype() &&
         std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0;
}

bool is_channels_last(const Tensor& t) { return t.strides() == channels_last_strides(t.sizes()); }

// The oracle check in NCHW, then the same call on a channels-last copy: identical bits and a
// channels-last output.
template <class Call>
void check_both_formats(const Tensor& x, const Expected& want, Call&& call) {
  const Tensor a = call(x);
  ASSERT_TRUE(a.is_contiguous());
  expect_matches(a, want);
  const Tensor b = call(to_channels_last(x));
  EXPECT_TRUE(is_channels_last(b))
      << "channels-last input, output strides " << to_string(b.strides());
  EXPECT_TRUE(same_bits(a, b)) << "NCHW and channels-last results differ";
}

IntList opt_list(std::int64_t h, std::int64_t w) { return {h, w}; }

TEST(AvgPool2d, EveryOptionMatchesTheOracleInBothMemoryFormats) {
  const Tensor x = random_tensor({5, 7, 11, 13}, 1);
  const Image im = image_of(x);
  int checked = 0;
  for (auto [kh, kw] : {std::pair{1, 1}, {2, 3}, {3, 3}, {3, 2}, {4, 5}}) {
    for (auto [sh, sw] : {std::pair{0, 0}, {1, 2}, {3, 4}, {6, 5}}) {
      for (auto [ph, pw] : {std::pair{0, 0}, {1, 1}, {1, 0}, {2, 2}}) {
        if (ph > kh / 2 || pw > kw / 2) continue;
        for (bool ceil_mode : {false, true}) {
          for (bool include : {true, false}) {
            for (std::optional<std::int64_t> div : {std::optional<std::int64_t>{}, {5}, {-3}}) {
              PoolOpts o{kh, kw, sh ? sh : kh, sw ? sw : kw, ph, pw};
              o.ceil_mode = ceil_mode;
              o.include_pad = include;
              o.divisor = div;
              SCOPED_TRACE(::testing::Message()
                           << "k " << kh << "x" << kw << " s " << sh << "x" << sw << " p " << ph
                           << "x" << pw << " ceil " << ceil_mode << " include " << include
                           << " div " << div.value_or(0));
              const IntList stride = sh ? opt_list(sh, sw) : IntList{};
              check_both_formats(x, avg_oracle(im, o), [&](const Tensor& t) {
                return avg_pool2d(t, {kh, kw}, stride, {ph, pw}, ceil_mode, include, div);
              });
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 300);
}

TEST(MaxPool2d, EveryOptionMatchesTheOracleInBothMemoryFormats) {
  const Tensor x = random_tensor({5, 7, 11, 13}, 2);
  const Image im = image_of(x);
  for (auto [kh, kw] : {std::pair{1, 1}, {2, 3}, {3, 3}, {4, 2}}) {
    for (auto [sh, sw] : {std::pair{0, 0}, {1, 2}, {5, 4}}) {
      for (auto [ph, pw] : {std::pair{0, 0}, {1, 1}, {0, 1}, {2, 1}}) {
        if (ph > kh / 2 || pw > kw / 2) continue;
        for (auto [dh, dw] : {std::pair{1, 1}, {2, 1}, {2, 3}}) {
          for (bool ceil_mode : {false, true}) {
            PoolOpts o{kh, kw, sh ? sh : kh, sw ? sw : kw, ph, pw, dh, dw};
            o.ceil_mode = ceil_mode;
            SCOPED_TRACE(::testing::Message()
                         << "k " << kh << "x" << kw << " s " << sh << "x" << sw << " p " << ph
                         << "x" << pw << " d " << dh << "x" << dw << " ceil " << ceil_mode);
            const IntList stride = sh ? opt_list(sh, sw) : IntList{};
            const Expected want = max_oracle(im, o);
            if (want.sizes[2] < 1 || want.sizes[3] < 1) {
              EXPECT_THROW(max_pool2d(x, {kh, kw}, stride, {ph, pw}, {dh, dw}, ceil_mode),
                           ShapeError);
              continue;
            }
            check_both_formats(x, want, [&](const Tensor& t) {
              return max_pool2d(t, {kh, kw}, stride, {ph, pw}, {dh, dw}, ceil_mode);
            });
            for (const Tensor& t : {x, to_channels_last(x)}) {
              auto [values, indices] =
                  max_pool2d_with_indices(t, {kh, kw}, stride, {ph, pw}, {dh, dw}, ceil_mode);
              ASSERT_EQ(indices.dtype(), DType::Int64);
              EXPECT_EQ(indices.strides(), values.strides());
              EXPECT_EQ(indices.contiguous().to_vector<std::int64_t>(), want.index);
              EXPECT_TRUE(same_bits(
                  values, max_pool2d(x, {kh, kw}, stride, {ph, pw}, {dh, dw}, ceil_mode)));
            }
          }
        }
      }
    }
  }
}

TEST(AdaptiveAvgPool2d, MatchesTheOracleInBothMemoryFormats) {
  const Tensor x = random_tensor({5, 7, 11, 13}, 3);
  const Image im = image_of(x);
  for (auto [oh, ow] : {std::pair{1, 1}, {3, 5}, {11, 13}, {4, 4}, {13, 17}, {2, 13}, {7, 1}}) {
    SCOPED_TRACE(::testing::Message() << oh << "x" << ow);
    check_both_formats(x, adaptive_oracle(im, oh, ow), [&](const Tensor& t) {
      return adaptive_avg_pool2d(t, {oh, ow});
    });
  }
  EXPECT_TRUE(same_bits(adaptive_avg_pool2d(x, {4}), adaptive_avg_pool2d(x, {4, 4})));
  EXPECT_EQ(adaptive_avg_pool2d(x, {0, 3}).sizes(), Shape({5, 7, 0, 3}));
}

TEST(Interpolate, NearestMatchesPyTorchsIndexRule) {
  const Tensor x = random_tensor({3, 7, 11, 13}, 4);
  const Image im = image_of(x);
  for (auto [oh, ow] : {std::pair{11, 13}, {22, 26}, {5, 6}, {17, 30}, {1, 1}, {33, 14}}) {
    SCOPED_TRACE(::testing::Message() << oh << "x" << ow);
    check_both_formats(x, nearest_oracle(im, oh, ow), [&](const Tensor& t) {
      return interpolate(t, IntList{oh, ow});
    });
  }
  for (std::vector<double> s : {std::vector<double>{2.0}, {1.5, 0.7}, {3.3, 2.1}, {0.5, 1.0}}) {
    const double sh = s.front(), sw = s.back();
    const auto oh = static_cast<std::int64_t>(std::floor(11 * sh));
    const auto ow = static_cast<std::int64_t>(std::floor(13 * sw));
    SCOPED_TRACE(::testing::Message() << "scale " << sh << " " << sw);
    check_both_formats(x, nearest_oracle(im, oh, ow, sh, sw),
                       [&](const Tensor& t) { return interpolate(t, std::nullopt, s); });
  }
}

TEST(Interpolate, BilinearMatchesTheOracle) {
  const Tensor x = random_tensor({3, 7, 11, 13}, 5);
  const Image im = image_of(x);
  for (bool align : {false, true}) {
    for (auto [oh, ow] : {std::pair{11, 13}, {22, 26}, {5, 6}, {17, 30}, {1, 1}, {1, 20}}) {
      SCOPED_TRACE(::testing::Message() << oh << "x" << ow << " align " << align);
      check_both_formats(x, bilinear_oracle(im, oh, ow, align), [&](const Tensor& t) {
        return interpolate(t, IntList{oh, ow}, std::nullopt, "bilinear", align);
      });
    }
    for (std::vector<double> s : {std::vector<double>{2.0}, {1.5, 0.7}, {3.3, 2.1}}) {
      const double sh = s.front(), sw = s.back();
      const auto oh = static_cast<std::int64_t>(std::floor(11 * sh));
      const auto ow = static_cast<std::int64_t>(std::floor(13 * sw));
      SCOPED_TRACE(::testing::Message() << "scale " << sh << " " << sw << " align " << align);
      check_both_formats(x, bilinear_oracle(im, oh, ow, align, sh, sw), [&](const Tensor& t) {
        return interpolate(t, std::nullopt, s, "bilinear", align);
      });
    }
  }
}

TEST(PoolAndResize, SixteenBitAndFloat64InputsMatchTheOracle) {
  for (DType dtype : {DType::Float16, DType::BFloat16, DType::Float64}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const Tensor x = random_tensor({2, 5, 9, 10}, 6, dtype);
    const Image im = image_of(x);
    // float64 sums round at each step in double: allow k * 2^-53 of the magnitude.
    const LD rel = dtype == DType::Float64 ? 0x1p-49L : 0x1p-50L;
    PoolOpts o{3, 3, 2, 2, 1, 1};
    const Tensor avg = avg_pool2d(x, {3}, {2}, {1});
    ASSERT_EQ(avg.dtype(), dtype);
    expect_matches(avg, avg_oracle(im, o), rel);
    expect_matches(max_pool2d(x, {3}, {2}, {1}), max_oracle(im, o), rel);
    expect_matches(adaptive_avg_pool2d(x, {4, 3}), adaptive_oracle(im, 4, 3), rel);
    expect_matches(interpolate(x, IntList{7, 19}), nearest_oracle(im, 7, 19), rel);
    expect_matches(interpolate(x, IntList{7, 19}, std::nullopt, "bilinear"),
                   bilinear_oracle(im, 7, 19, false), rel);
    EXPECT_TRUE(
        same_bits(avg_pool2d(x, {3}, {2}, {1}), avg_pool2d(to_channels_last(x), {3}, {2}, {1})));
  }
}

// The scalar definition of one window over an NCHW image of T (Note [pooled pixels] in
// kernels_simd/pool_rows.cc): the average is the double sum of the taps inside x in (ih, iw)
// order, divided in double and rounded once to T (0 for no tap); the maximum starts at -inf at
// the first tap and takes a tap that is greater or NaN, keeping its bits and flat index.
template <class T>
struct Window {
  const std::vector<T>& v;
  std::int64_t h, w;
  std::int64_t plane;  // (n, c)'s first element
  std::int64_t y0, x0, kh, kw, dh = 1, dw = 1;
  T average(double divisor) const {
    double sum = 0;
    bool any = false;
    each([&](std::int64_t at) {
      sum += static_cast<double>(v[static_cast<std::size_t>(plane + at)]);
      any = true;
    });
    return any ? static_cast<T>(sum / divisor) : T(0.0);
  }
  std::pair<T, std::int64_t> maximum() const {
    T best(-std::numeric_limits<float>::infinity());
    std::int64_t index = -1;
    each([&](std::int64_t at) {
      const T t = v[static_cast<std::size_t>(plane + at)];
      if (index < 0) index = at;
      if (t > best || std::isnan(t)) best = t, index = at;
    });
    return {best, index};
  }
  template <class F>
  void each(const F& f) const {
    for (std::int64_t a = 0; a < kh; ++a) {
      for (std::int64_t b = 0; b < kw; ++b) {
        const std::int64_t iy = y0 + a * dh, ix = x0 + b * dw;
        if (iy >= 0 && ix >= 0 && iy < h && ix < w) f(iy * w + ix);
      }
    }
  }
};

template <class T>
bool same_value(T got, T want) {
  return std::isnan(want) ? std::isnan(got)
                          : std::memcmp(&got, &want, sizeof(T)) == 0;  // -0.0 is not 0.0
}

template <class T>
void expect_vector_channels(const Tensor& x, bool channels_last) {
  const std::int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const std::vector<T> v = x.to_vector<T>();
  const Tensor in = channels_last ? to_channels_last(x) : x;
  // avg 3x3 stride 1 pad 1 (the pad counted), 3x3 stride 2 pad 1 ceil mode (not counted),
  // 2x2 stride 1 with divisor 3; max 3x3 stride 1 pad 1 and 2x2 stride 2 pad 1 dilation 2.
  const Tensor a1 = avg_pool2d(in, {3}, {1}, {1});
  const Tensor a2 = avg_pool2d(in, {3}, {2}, {1}, true, false);
  const Tensor a3 = avg_pool2d(in, {2}, {1}, {0}, false, true, 3);
  const auto [m1, i1] = max_pool2d_with_indices(in, {3}, {1}, {1});
  const auto [m2, i2] = max_pool2d_with_indices(in, {2}, {2}, {1}, {2});
  const Tensor m1_plain = max_pool2d(in, {3}, {1}, {1});
  for (const Tensor& t : {a1, a2, a3, m1, m2, i1, i2, m1_plain}) {
    EXPECT_EQ(t.is_contiguous(), !channels_last || c == 1);
  }
  const auto check_avg = [&](const Tensor& got, std::int64_t k, std::int64_t s, std::int64_t p,
                             bool count_pad, std::optional<double> divisor, const char* name) {
    const std::vector<T> g = got.to_vector<T>();
    const std::int64_t oh = got.size(2), ow = got.size(3);
    for (std::int64_t i = 0; i < n * c; ++i) {
      for (std::int64_t y = 0; y < oh; ++y) {
        for (std::int64_t xo = 0; xo < ow; ++xo) {
          const Window<T> win{v, h, w, i * h * w, y * s - p, xo * s - p, k, k};
          double d = 0;
          if (divisor) {
            d = *divisor;
          } else {
            std::int64_t count = 0;
            for (std::int64_t a = 0; a < k; ++a) {
              for (std::int64_t b = 0; b < k; ++b) {
                const std::int64_t iy = win.y0 + a, ix = win.x0 + b;
                const bool inside = iy >= 0 && ix >= 0 && iy < h && ix < w;
                const bool padded = iy < h + p && ix < w + p;  // within the padded input
                count += count_pad ? padded : inside;
              }
            }
            d = static_cast<double>(count);
          }
          const T want = win.average(d);
          const T have = g[static_cast<std::size_t>((i * oh + y) * ow + xo)];
          ASSERT_TRUE(same_value(have, want)) << name << " plane " << i << " at " << y << "," << xo
                                              << ": " << have << " vs " << want;
        }
      }
    }
  };
  const auto check_max = [&](const Tensor& got, const Tensor& idx, std::int64_t k, std::int64_t s,
                             std::int64_t p, std::int64_t dil, const char* name) {
    const std::vector<T> g = got.to_vector<T>();
    const std::vector<std::int64_t> gi = idx.to_vector<std::int64_t>();
    const std::int64_t oh = got.size(2), ow = got.size(3);
    for (std::int64_t i = 0; i < n * c; ++i) {
      for (std::int64_t y = 0; y < oh; ++y) {
        for (std::int64_t xo = 0; xo < ow; ++xo) {
          const Window<T> win{v, h, w, i * h * w, y * s - p, xo * s - p, k, k, dil, dil};
          const auto [want, want_index] = win.maximum();
          const std::size_t at = static_cast<std::size_t>((i * oh + y) * ow + xo);
          // A NaN keeps its bits (payload included) through the maximum.
          ASSERT_EQ(std::memcmp(&g[at], &want, sizeof(T)), 0)
              << name << " plane " << i << " at " << y << "," << xo;
          ASSERT_EQ(gi[at], want_index) << name << " plane " << i << " at " << y << "," << xo;
        }
      }
    }
  };
  check_avg(a1, 3, 1, 1, true, std::nullopt, "avg 3x3");
  check_avg(a2, 3, 2, 1, false, std::nullopt, "avg 3x3 stride 2 ceil");
  check_avg(a3, 2, 1, 0, true, 3.0, "avg 2x2 divisor 3");
  // interpolate bilinear to 11 x 13 (area-pixel rule) and 5 x 17 (align_corners): the
  // scalar definition, ((w00 t00 + w01 t01) + w10 t10) + w11 t11 in double, rounded once.
  for (const bool align : {false, true}) {
    const std::int64_t oh = align ? 5 : 11, ow = align ? 17 : 13;
    const std::vector<T> g =
        interpolate(in, IntList{oh, ow}, std::nullopt, "bilinear", align).template to_vector<T>();
    struct Tap {
      std::int64_t i0, i1;
      double w0, w1;
    };
    const auto tap = [&](std::int64_t o, std::int64_t size, std::int64_t out_size) {
      const double src = align
                             ? static_cast<double>(size - 1) / static_cast<double>(out_size - 1) *
                                   static_cast<double>(o)
                             : std::max(static_cast<double>(size) / static_cast<double>(out_size) *
                                                (static_cast<double>(o) + 0.5) -
                                            0.5,
                                        0.0);
      const std::int64_t i0 = std::min(static_cast<std::int64_t>(src), size - 1);
      const double w1 = std::clamp(src - static_cast<double>(i0), 0.0, 1.0);
      return Tap{i0, i0 + (i0 < size - 1 ? 1 : 0), 1.0 - w1, w1};
    };
    for (std::int64_t i = 0; i < n * c; ++i) {
      for (std::int64_t y = 0; y < oh; ++y) {
        for (std::int64_t xo = 0; xo < ow; ++xo) {
          const Tap th = tap(y, h, oh), tw = tap(xo, w, ow);
          const auto at = [&](std::int64_t yy, std::int64_t xx) {
            return static_cast<double>(v[static_cast<std::size_t>((i * h + yy) * w + xx)]);
          };
          const double sum = th.w0 * tw.w0 * at(th.i0, tw.i0) + th.w0 * tw.w1 * at(th.i0, tw.i1) +
                             th.w1 * tw.w0 * at(th.i1, tw.i0) + th.w1 * tw.w1 * at(th.i1, tw.i1);
          const T have = g[static_cast<std::size_t>((i * oh + y) * ow + xo)];
          ASSERT_TRUE(same_value(have, static_cast<T>(sum)))
              << "bilinear align " << align << " plane " << i << " at " << y << "," << xo;
        }
      }
    }
  }
  check_max(m1, i1, 3, 1, 1, 1, "max 3x3");
  check_max(m2, i2, 2, 2, 1, 2, "max 2x2 stride 2 dilation 2");
  EXPECT_TRUE(same_bits(m1_plain, m1));
}

// An image [2, c, 7, 9] of T: random values with NaN (one with a payload), +-inf and -0.0.
template <class T>
Tensor special_image(std::int64_t c, T payload_nan) {
  const std::vector<double> d =
      random_tensor({2, c, 7, 9}, 40 + static_cast<unsigned>(c), DType::Float64)
          .to_vector<double>();
  std::vector<T> v;
  for (double e : d) v.push_back(T(static_cast<float>(e)));
  const auto at = [&](std::int64_t i, std::int64_t j, std::int64_t y, std::int64_t x) {
    return static_cast<std::size_t>(((i * c + j) * 7 + y) * 9 + x);
  };
  v[at(0, c - 1, 3, 4)] = payload_nan;
  v[at(0, c / 2, 3, 5)] = T(std::numeric_limits<float>::quiet_NaN());
  v[at(1, 0, 2, 2)] = T(std::numeric_limits<float>::infinity());
  v[at(0, 0, 0, 0)] = T(-std::numeric_limits<float>::infinity());
  v[at(1, c / 2, 5, 5)] = T(-0.0f);
  v[at(1, c - 1, 6, 8)] = T(-0.0f);
  return from_vector(v, {2, c, 7, 9});
}

// Note [pooled pixels] and Note [NCHW pools on channels-last copies]: channels in vectors
// (whole groups of four vectors, single vectors, scalar tails: 1 to 130 channels) in both
// memory formats, every float dtype, on every SIMD target, give the scalar definition's bits
// (pools and bilinear interpolation), with NaN (a payload), +-inf and -0.0 among the taps.
class PoolOnTarget : public test::OnEveryTarget {};

TEST_P(PoolOnTarget, VectorChannelsGiveTheScalarDefinition) {
  for (std::int64_t c : {1, 7, 16, 33, 64, 71, 130}) {
    for (bool cl : {false, true}) {
      SCOPED_TRACE("C=" + std::to_string(c) + (cl ? " channels-last" : " NCHW"));
      expect_vector_channels<float>(
          special_image(c, std::bit_cast<float>(std::uint32_t{0x7fc12345})), cl);
      expect_vector_channels<double>(
          special_image(c, std::bit_cast<double>(std::uint64_t{0x7ff8000000012345})), cl);
      expect_vector_channels<Half>(special_image(c, Half::from_bits(0x7e55)), cl);
      expect_vector_channels<BFloat16>(special_image(c, BFloat16::from_bits(0x7fc5)), cl);
    }
  }
}

// A 16-bit average rounds once from the double mean: windows whose mean lies just above a
// tie of T, by less than half a float ulp, so that rounding to float first would land on the
// tie and then on the even neighbour below. The nine taps sum to 9 (1 + u / 2) + 2^-24, where
// u is T's ulp at 1: the mean is 1 + u / 2 + 2^-24 / 9 and rounds up to 1 + u. Every channel
// (20: a vector and a tail) and layout, on every SIMD target.
TEST_P(PoolOnTarget, SixteenBitAveragesRoundOnce) {
  const auto check = [](auto one, std::uint16_t want_bits, std::vector<std::uint16_t> taps) {
    using T = decltype(one);
    constexpr std::int64_t c = 20;
    std::vector<T> v;
    for (std::int64_t j = 0; j < c; ++j) {
      std::rotate(taps.begin(), taps.begin() + 1, taps.end());  // another order per channel
      for (std::uint16_t b : taps) v.push_back(T::from_bits(b));
    }
    const Tensor x = from_vector(v, {1, c, 3, 3});
    for (const Tensor& in : {x, to_channels_last(x)}) {
      const std::vector<T> got = avg_pool2d(in, {3}).template to_vector<T>();
      for (std::int64_t j = 0; j < c; ++j) {
        EXPECT_EQ(got[static_cast<std::size_t>(j)].bits, want_bits) << "channel " << j;
      }
    }
  };
  // float16: 1 + 2^-10 four times, 1.5 three times, 0.5 + 2^-11, 2^-24 -> 1 + 2^-10.
  check(Half(), 0x3c01, {0x3c01, 0x3c01, 0x3c01, 0x3c01, 0x3e00, 0x3e00, 0x3e00, 0x3801, 0x0001});
  // bfloat16: 1 + 2^-7 four times, 1.5 three times, 0.5 + 2^-8, 2^-24 -> 1 + 2^-7.
  check(BFloat16(), 0x3f81,
        {0x3f81, 0x3f81, 0x3f81, 0x3f81, 0x3fc0, 0x3fc0, 0x3fc0, 0x3f01, 0x3380});
}

MPSIM_ON_EVERY_TARGET(PoolOnTarget);

TEST(PoolAndResize, StridedAndThreeDimensionalInputs) {
  const Tensor base = random_tensor({4, 6, 15, 12}, 7);
  // A transposed view and a stepped slice: the same bits as their contiguous copies.
  for (const Tensor& v : {base.transpose(2, 3), base.slice(1, 0, 6, 2).slice(3, 1, 12, 2),
                          base.permute({1, 0, 2, 3})}) {
    const Tensor c = v.contiguous();
    EXPECT_TRUE(same_bits(avg_pool2d(v, {3, 2}, {2, 1}, {1, 1}, true, false),
                          avg_pool2d(c, {3, 2}, {2, 1}, {1, 1}, true, false)));
    EXPECT_TRUE(same_bits(max_pool2d_with_indices(v, {3}, {2}, {1}, {2}).second,
                          max_pool2d_with_indices(c, {3}, {2}, {1}, {2}).second));
    EXPECT_TRUE(same_bits(adaptive_avg_pool2d(v, {5, 4}), adaptive_avg_pool2d(c, {5, 4})));
    EXPECT_TRUE(same_bits(interpolate(v, IntList{9, 20}, std::nullopt, "bilinear", true),
                          interpolate(c, IntList{9, 20}, std::nullopt, "bilinear", true)));
    EXPECT_TRUE(same_bits(interpolate(v, std::nullopt, std::vector<double>{1.7}),
                          interpolate(c, std::nullopt, std::vector<double>{1.7})));
  }
  // [C, H, W] pools as [1, C, H, W].
  const Tensor x3 = base.select(0, 1);
  const Tensor x4 = x3.unsqueeze(0);
  const Tensor a = avg_pool2d(x3, {2}, {}, {1});
  EXPECT_EQ(a.sizes(), Shape({6, 8, 7}));
  EXPECT_TRUE(same_bits(a.unsqueeze(0), avg_pool2d(x4, {2}, {}, {1})));
  auto [v3, i3] = max_pool2d_with_indices(x3, {3, 2});
  auto [v4, i4] = max_pool2d_with_indices(x4, {3, 2});
  EXPECT_TRUE(same_bits(v3.unsqueeze(0), v4));
  EXPECT_TRUE(same_bits(i3.unsqueeze(0), i4));
  EXPECT_TRUE(same_bits(adaptive_avg_pool2d(x3, {3}).unsqueeze(0), adaptive_avg_pool2d(x4, {3})));
}

TEST(PoolAndResize, EmptyBatch) {
  const Tensor x = zeros({0, 3, 8, 8});
  EXPECT_EQ(avg_pool2d(x, {2}).sizes(), Shape({0, 3, 4, 4}));
  EXPECT_EQ(max_pool2d_with_indices(x, {3}, {2}).second.sizes(), Shape({0, 3, 3, 3}));
  EXPECT_EQ(adaptive_avg_pool2d(x, {5}).sizes(), Shape({0, 3, 5, 5}));
  EXPECT_EQ(interpolate(x, IntList{3, 5}, std::nullopt, "bilinear").sizes(), Shape({0, 3, 3, 5}));
}

TEST(PoolAndResize, SpecialValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
  const float payload = std::bit_cast<float>(0x7fc12345u);
  // One 2x4 window: NaN gives the last NaN (payload and index), as PyTorch 1.13.
  const Tensor y = from_vector<float>({1, nan, 5, payload, 7, 2, 3, 1}, {1, 1, 2, 4});
  for (const Tensor& t : {y, to_channels_last(y)}) {
    auto [v, i] = max_pool2d_with_indices(t, {2, 4});
    EXPECT_EQ(std::bit_cast<std::uint32_t>(v.item<float>()), 0x7fc12345u);
    EXPECT_EQ(i.item<std::int64_t>(), 3);
  }
  // Ties keep the first maximum; an all -inf window gives -inf at its first tap.
  const Tensor z = from_vector<float>({-0.0f, 0.0f, -inf, -inf}, {1, 1, 1, 4});
  auto [zv, zi] = max_pool2d_with_indices(z, {1, 2});
  EXPECT_EQ(zv.to_vector<float>(), (std::vector<float>{-0.0f, -inf}));
  EXPECT_TRUE(std::signbit(zv.to_vector<float>()[0]));
  EXPECT_EQ(zi.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 2}));
  // Averages: inf + -inf is NaN, NaN propagates, -0.0 sums from +0.0.
  const Tensor w = from_vector<float>({inf, -inf, nan, 1, -0.0f, -0.0f, inf, 2}, {1, 1, 1, 8});
  const std::vector<float> a = avg_pool2d(w, {1, 2}).to_vector<float>();
  EXPECT_TRUE(std::isnan(a[0]));
  EXPECT_TRUE(std::isnan(a[1]));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(a[2]), 0u);
  EXPECT_EQ(a[3], inf);
  // Bilinear multiplies every tap, so an inf beside the sample gives NaN (PyTorch 1.13 values).
  const Tensor b = from_vector<float>({1, inf, 3, 4}, {1, 1, 2, 2});
  for (const Tensor& t : {b, to_channels_last(b)}) {
    const std::vector<float> same =
        interpolate(t, IntList{2, 2}, std::nullopt, "bilinear").contiguous().to_vector<float>();
    EXPECT_EQ(same[0], 1.0f);
    EXPECT_TRUE(std::isnan(same[1]));
    const std::vector<float> up =
        interpolate(t, IntList{3, 3}, std::nullopt, "bilinear").contiguous().to_vector<float>();
    const std::vector<float> want = {nan, inf, inf, nan, inf, inf, 3.0f, 3.5f, 4.0f};
    for (std::size_t k = 0; k < want.size(); ++k) {
      if (std::isnan(want[k])) {
        EXPECT_TRUE(std::isnan(up[k])) << k;
      } else {
        EXPECT_EQ(up[k], want[k]) << k;
      }
    }
  }
  // nearest copies bits, NaN payload included.
  const Tensor n = from_vector<float>({payload, -0.0f}, {1, 1, 1, 2});
  const std::vector<float> nn = interpolate(n, IntList{2, 4}).to_vector<float>();
  EXPECT_EQ(std::bit_cast<std::uint32_t>(nn[0]), 0x7fc12345u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(nn[7]), 0x80000000u);
}

// Values recorded from PyTorch 1.13 (torch.nn.functional, float32, x = arange(30) as
// [1, 1, 5, 6]). PyTorch accumulates in float32, so its averages and bilinear values may be
// an ulp or two from mpsim's golden ones (3.7499998 for 3.75); indices and nearest are exact.
void expect_near_torch(const Tensor& got, const std::vector<float>& torch_values) {
  const std::vector<float> g = got.contiguous().to_vector<float>();
  ASSERT_EQ(g.size(), torch_values.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(g[i], torch_values[i], 0x1p-20 * std::max(1.0f, std::fabs(torch_values[i])))
        << "element " << i;
  }
}

TEST(PoolAndResize, ValuesRecordedFromPyTorch) {
  const Tensor x = arange(0, 30, 1, DType::Float32).reshape({1, 1, 5, 6});
  // avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False / True)
  expect_near_torch(avg_pool2d(x, {3}, {2}, {1}, true, false),
                    {3.5, 5.0, 7.0, 8.0, 12.5, 14.0, 16.0, 17.0, 21.5, 23.0, 25.0, 26.0});
  expect_near_torch(avg_pool2d(x, {3}, {2}, {1}, true, true),
                    {1.5555555820465088, 3.3333332538604736, 4.666666507720947, 2.6666667461395264,
                     8.333333015441895, 14.0, 16.0, 8.5, 9.55555534362793, 15.333333015441895,
                     16.66666603088379, 8.666666984558105});
  // avg_pool2d(x, (2, 4), (3, 3), (1, 2), ceil_mode=True, divisor_override=3)
  expect_near_torch(
      avg_pool2d(x, {2, 4}, {3, 3}, {1, 2}, true, true, 3),
      {0.3333333432674408, 3.3333332538604736, 3.0, 20.66666603088379, 46.66666793823242, 26.0});
  // max_pool2d(x, (2, 3), (2, 2), (1, 1), (2, 1), ceil_mode=True, return_indices=True)
  auto [v, i] = max_pool2d_with_indices(x, {2, 3}, {2, 2}, {1, 1}, {2, 1}, true);
  expect_near_torch(v, {7, 9, 11, 11, 19, 21, 23, 23, 19, 21, 23, 23});
  EXPECT_EQ(i.to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{7, 9, 11, 11, 19, 21, 23, 23, 19, 21, 23, 23}));
  expect_near_torch(adaptive_avg_pool2d(x, {3, 4}),
                    {3.5, 4.5, 6.5, 7.5, 12.5, 13.5, 15.5, 16.5, 21.5, 22.5, 24.5, 25.5});
  // interpolate(x, scale_factor=1.7): rows 0 0 1 1 2 2 3 4 (of 5), columns 0 0 1 1 2 2 3 4 4 5.
  std::vector<float> nearest;
  for (int r : {0, 0, 1, 1, 2, 2, 3, 4}) {
    for (int c : {0, 0, 1, 1, 2, 2, 3, 4, 4, 5}) nearest.push_back(static_cast<float>(r * 6 + c));
  }
  EXPECT_EQ(interpolate(x, std::nullopt, std::vector<double>{1.7}).to_vector<float>(), nearest);
  expect_near_torch(interpolate(x, IntList{3, 4}, std::nullopt, "bilinear"),
                    {2.25, 3.749999761581421, 5.25, 6.75, 12.249999046325684, 13.749999046325684,
                     15.249999046325684, 16.75, 22.25, 23.75, 25.25, 26.75});
  expect_near_torch(interpolate(x, IntList{7, 4}, std::nullopt, "bilinear", true),
                    {0.0,  1.6666666269302368, 3.3333332538604736, 5.0,
                     4.0,  5.666666507720947,  7.333333492279053,  9.0,
                     8.0,  9.666666984558105,  11.333333015441895, 13.000000953674316,
                     12.0, 13.666666984558105, 15.333333015441895, 17.0,
                     16.0, 17.666667938232422, 19.33333396911621,  21.000001907348633,
                     20.0, 21.666667938232422, 23.33333396911621,  25.000001907348633,
                     24.0, 25.666667938232422, 27.33333396911621,  29.0});
  expect_near_torch(interpolate(x, std::nullopt, std::vector<double>{1.3, 0.6}, "bilinear"),
                    {0.3333333134651184, 2.0, 3.6666665077209473, 4.256410121917725,
                     5.923076629638672, 7.589743137359619, 8.871794700622559, 10.538460731506348,
                     12.205127716064453, 13.487180709838867, 15.153846740722656, 16.820512771606445,
                     18.102563858032227, 19.76923179626465, 21.435897827148438, 22.71794891357422,
                     24.384614944458008, 26.05128288269043});
}

TEST(PoolAndResize, BitIdenticalForAnyThreadCount) {
  const Tensor x = random_tensor({2, 48, 40, 36}, 8);
  const Tensor xl = to_channels_last(x);
  auto run_all = [&] {
    std::vector<Tensor> out;
    for (const Tensor& t : {x, xl}) {
      out.push_back(avg_pool2d(t, {3}, {1}, {1}));
      auto [v, i] = max_pool2d_with_indices(t, {3, 2}, {2, 1}, {1, 1}, {1, 2}, true);
      out.push_back(v);
      out.push_back(i);
      out.push_back(adaptive_avg_pool2d(t, {7, 5}));
      out.push_back(interpolate(t, IntList{75, 81}, std::nullopt, "bilinear"));
      out.push_back(interpolate(t, std::nullopt, std::vector<double>{2.5}));
    }
    return out;
  };
  std::vector<Tensor> reference;
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    reference = run_all();
  }
  for (int threads : {2, 8}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const std::vector<Tensor> got = run_all();
    for (std::size_t k = 0; k < got.size(); ++k) {
      EXPECT_TRUE(same_bits(got[k], reference[k])) << threads << " threads, output " << k;
    }
  }
}

template <class Fn>
void expect_error(Fn&& fn, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing: " << text;
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(text));
  }
}

TEST(PoolAndResize, BadInputNamesOpArgumentAndValues) {
  const Tensor x = zeros({1, 1, 5, 5});
  expect_error([&] { max_pool2d(x, {3}, {}, {2}); },
               "[max_pool2d] pad should be at most half of effective kernel size, but got pad=2, "
               "kernel_size=3 and dilation=1");
  expect_error([&] { max_pool2d(x, {2}, {}, {2}, {3}); },
               "[max_pool2d] pad should be smaller than or equal to half of kernel size");
  expect_error([&] { avg_pool2d(x, {3}, {}, {2}); }, "[avg_pool2d] pad should be at most half");
  expect_error(
      [&] {
        avg_pool2d(zeros({1, 1, 2, 2}), {3});
      },
      "[avg_pool2d] Given input size: (1x2x2). Calculated output size: (1x0x0). Output "
      "size is too small");
  expect_error(
      [&] {
        avg_pool2d(x, {1, 2, 3});
      },
      "[avg_pool2d] kernel_size must either be a single int, or a tuple of two ints, got "
      "[1, 2, 3]");
  expect_error([&] { avg_pool2d(x, {2}, {1, 1, 1}); }, "stride must either be omitted");
  expect_error([&] { max_pool2d(x, {2}, {}, {0, 0, 0}); }, "padding must either be");
  expect_error([&] { max_pool2d(x, {2}, {}, {0}, {}); }, "dilation must either be");
  expect_error([&] { avg_pool2d(x, {2}, {}, {0}, false, true, 0); }, "divisor must be not zero");
  expect_error([&] { max_pool2d(x, {2}, {0}); }, "[max_pool2d] stride should not be zero");
  expect_error([&] { max_pool2d(x, {0}); }, "[max_pool2d] stride should not be zero");
  expect_error([&] { max_pool2d(x, {0}, {1}); },
               "kernel size should be greater than zero, but got kH: 0");
  expect_error([&] { avg_pool2d(x, {2}, {}, {-1}); }, "pad must be non-negative, but got pad: -1");
  expect_error([&] { max_pool2d(x, {2}, {}, {0}, {0}); }, "dilation should be greater than zero");
  expect_error(
      [&] {
        max_pool2d(zeros({5, 5}), {2});
      },
      "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
      "but got: [5, 5]");
  expect_error([&] { avg_pool2d(zeros({1, 0, 5, 5}), {2}); }, "but got: [1, 0, 5, 5]");
  expect_error(
      [&] {
        max_pool2d(zeros({1, 1, 4, 4}, DType::Int64), {2});
      },
      "[max_pool2d] expected a floating point input, got int64");
  expect_error(
      [&] {
        adaptive_avg_pool2d(x, {-1, 2});
      },
      "[adaptive_avg_pool2d] elements of output_size must be greater than or equal to 0, "
      "got [-1, 2]");
  expect_error([&] { adaptive_avg_pool2d(x, {1, 2, 3}); }, "output_size must either be");
  expect_error([&] { adaptive_avg_pool2d(zeros({5, 5}), {2}); }, "expected a 3D or 4D tensor");
  expect_error(
      [&] {
        adaptive_avg_pool2d(zeros({1, 1, 0, 5}), {2});
      },
      "with dimension 2 being empty");
  expect_error(
      [&] {
        interpolate(x, IntList{3, 3}, std::vector<double>{2.0});
      },
      "[interpolate] only one of size or scale_factor should be defined");
  expect_error([&] { interpolate(x); }, "either size or scale_factor should be defined");
  expect_error(
      [&] {
        interpolate(x, IntList{3, 3}, std::nullopt, "nearest", true);
      },
      "align_corners option can only be set with the interpolating modes");
  expect_error(
      [&] {
        interpolate(x, IntList{3, 3, 3});
      },
      "input and output must have the same number of spatial dimensions, but got input "
      "with spatial dimensions of [5, 5] and output size of [3, 3, 3]");
  expect_error(
      [&] {
        interpolate(x, std::nullopt, std::vector<double>{2, 2, 2});
      },
      "input and scale_factor must have the same number of spatial dimensions");
  expect_error(
      [&] {
        interpolate(zeros({1, 5, 5}), IntList{3}, std::nullopt, "bilinear");
      },
      "got 3D input, but bilinear mode needs 4D input");
  expect_error(
      [&] {
        interpolate(x, IntList{0, 3});
      },
      "input and output sizes should be greater than 0, but got input (H: 5, W: 5) "
      "output (H: 0, W: 3)");
  expect_error([&] { interpolate(x, std::nullopt, std::vector<double>{0.1}); },
               "output (H: 0, W: 0)");
  expect_error([&] { interpolate(x, IntList{3}, std::nullopt, "bicubic"); },
               "mode 'bicubic' is not implemented");
  expect_error([&] { interpolate(x, IntList{3}, std::nullopt, "cubic2"); }, "got 'cubic2'");
  EXPECT_THROW(max_pool2d(x, {3}, {}, {2}), InvalidArgument);
  EXPECT_THROW(avg_pool2d(zeros({1, 1, 2, 2}), {3}), ShapeError);
  EXPECT_THROW(interpolate(zeros({1, 5, 5}), IntList{3}), NotImplementedError);
}

// Sizes, pads, strides and dilations at the ends of int64 (pooled_size overflowed on a kernel
// of INT64_MIN: found by tests/fuzz/op_fuzz under UBSan): a clear error, computed without overflow.
TEST(Pool2d, ExtremeArgumentsAreClearErrors) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const Tensor x = zeros({1, 6, 1, 5});
  EXPECT_THROW(avg_pool2d(x, {kMin, 3}, {}, {std::int64_t{1} << 41}, false, true, kMax),
               InvalidArgument);
  EXPECT_THROW(avg_pool2d(x, {kMin, 3}), InvalidArgument);
  EXPECT_THROW(max_pool2d(x, {kMax, 1}, {kMax, 1}, {0, 0}, {kMax, 1}), Error);
  EXPECT_THROW(max_pool2d(x, {1, 1}, {kMin, 1}), InvalidArgument);
  // One window per dim: a valid [1, 6, 1, 1] (PyTorch 1.13 narrows the stride to 32 bits and
  // rejects it as -1).
  EXPECT_EQ(avg_pool2d(x, {1, 1}, {kMax, kMax}, {0, 0}, true).sizes(), Shape({1, 6, 1, 1}));
}

}  // namespace
}  // namespace mpsim

namespace mpsim {
namespace {

// Note [checked sizes] at the int64 edges: no wrapped size, no undefined float -> int cast.
TEST(Interpolate, AScaleBeyondInt64IsAShapeError) {
  const Tensor x = zeros({1, 1, 4, 4});
  EXPECT_THROW(interpolate(x, std::nullopt, std::vector<double>{1e300}), ShapeError);
  EXPECT_THROW(interpolate(x, std::nullopt, std::vector<double>{0x1p61}), ShapeError);
  const std::int64_t big = std::int64_t{1} << 62;
  EXPECT_THROW(max_pool2d(x, {3}, {1}, {0}, {big}), ShapeError);
  EXPECT_EQ(max_pool2d(x, {3}, {big}).sizes(), Shape({1, 1, 1, 1}));
}

}  // namespace
}  // namespace mpsim
