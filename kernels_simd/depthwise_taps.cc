// The inner loop of the depthwise convolution (Note [depthwise] in conv.cc), vectorized per
// Highway target: one output pixel's sums over its taps, for a run of channels. A float product
// is exact in double, so each multiply-add (fused where the target has FMA) rounds once, as the
// scalar `acc + x * w` does: the same bits on every target.
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/depthwise_taps.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/highway.h"
#include "kernels_simd/depthwise_taps.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// acc[c] = sum over t < taps, in order, of double(x[t][c]) * double(w[t][c]), from 0; the
// vector of sums stays in a register across the taps.
void DepthwisePixelF32(const float* const* HWY_RESTRICT x, const float* const* HWY_RESTRICT w,
                       std::int64_t taps, double* HWY_RESTRICT acc, std::int64_t channels) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<float, decltype(d)> df;  // half as many floats as a full float vector
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t c = 0;
  for (; c + n <= channels; c += n) {
    auto sum = hn::Zero(d);
    for (std::int64_t t = 0; t < taps; ++t) {
      const auto xv = hn::PromoteTo(d, hn::LoadU(df, x[t] + c));
      const auto wv = hn::PromoteTo(d, hn::LoadU(df, w[t] + c));
      sum = hn::MulAdd(xv, wv, sum);
    }
    hn::StoreU(sum, d, acc + c);
  }
  for (; c < channels; ++c) {
    double sum = 0;
    for (std::int64_t t = 0; t < taps; ++t) {
      sum += static_cast<double>(x[t][c]) * static_cast<double>(w[t][c]);
    }
    acc[c] = sum;
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(DepthwisePixelF32);

void depthwise_pixel_f32(const float* const* x, const float* const* w, std::int64_t taps,
                         double* acc, std::int64_t channels) {
  HWY_DYNAMIC_DISPATCH(DepthwisePixelF32)(x, w, taps, acc, channels);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
