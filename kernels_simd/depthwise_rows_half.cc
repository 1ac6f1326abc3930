// The depthwise row kernels (depthwise_rows-inl.h) for float16 and bfloat16 x and output, per
// Highway target: x widened in registers, the sums rounded once to the 16-bit type on their
// store (Fast from the float chain, Golden from the double chain through round-to-odd).
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/depthwise_rows_half.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/highway.h"
#include "kernels_simd/depthwise_rows-inl.h"
#include "kernels_simd/depthwise_rows.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {

void DepthwiseRowsNhwcHalf(const DepthwiseArgs& a, const void* x, void* out, std::int64_t row_begin,
                           std::int64_t row_end) {
  if (a.dtype == DType::BFloat16) {
    RowsNhwc<BFloat16>(a, x, out, row_begin, row_end);
  } else {
    RowsNhwc<Half>(a, x, out, row_begin, row_end);
  }
}

void DepthwiseRowsNchwHalf(const DepthwiseArgs& a, const void* x, void* out, std::int64_t channel,
                           std::int64_t row_begin, std::int64_t row_end, void* scratch) {
  if (a.dtype == DType::BFloat16) {
    RowsNchw<BFloat16>(a, x, out, channel, row_begin, row_end, scratch);
  } else {
    RowsNchw<Half>(a, x, out, channel, row_begin, row_end, scratch);
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(DepthwiseRowsNhwcHalf);
HWY_EXPORT(DepthwiseRowsNchwHalf);

void detail::depthwise_rows_nhwc_half(const DepthwiseArgs& args, const void* x, void* out,
                                      std::int64_t row_begin, std::int64_t row_end) {
  HWY_DYNAMIC_DISPATCH(DepthwiseRowsNhwcHalf)(args, x, out, row_begin, row_end);
}

void detail::depthwise_rows_nchw_half(const DepthwiseArgs& args, const void* x, void* out,
                                      std::int64_t channel, std::int64_t row_begin,
                                      std::int64_t row_end, void* scratch) {
  HWY_DYNAMIC_DISPATCH(DepthwiseRowsNchwHalf)(args, x, out, channel, row_begin, row_end, scratch);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
