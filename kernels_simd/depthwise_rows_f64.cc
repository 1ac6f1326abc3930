// The depthwise row kernels (depthwise_rows-inl.h) for float64 x and output, per Highway target:
// the double chain, unfused, in both precisions.
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/depthwise_rows_f64.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/highway.h"
#include "kernels_simd/depthwise_rows-inl.h"
#include "kernels_simd/depthwise_rows.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {

void DepthwiseRowsNhwcF64(const DepthwiseArgs& a, const void* x, void* out, std::int64_t row_begin,
                          std::int64_t row_end) {
  RowsNhwc<double>(a, x, out, row_begin, row_end);
}

void DepthwiseRowsNchwF64(const DepthwiseArgs& a, const void* x, void* out, std::int64_t channel,
                          std::int64_t row_begin, std::int64_t row_end, void* scratch) {
  RowsNchw<double>(a, x, out, channel, row_begin, row_end, scratch);
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(DepthwiseRowsNhwcF64);
HWY_EXPORT(DepthwiseRowsNchwF64);

void detail::depthwise_rows_nhwc_f64(const DepthwiseArgs& args, const void* x, void* out,
                                     std::int64_t row_begin, std::int64_t row_end) {
  HWY_DYNAMIC_DISPATCH(DepthwiseRowsNhwcF64)(args, x, out, row_begin, row_end);
}

void detail::depthwise_rows_nchw_f64(const DepthwiseArgs& args, const void* x, void* out,
                                     std::int64_t channel, std::int64_t row_begin,
                                     std::int64_t row_end, void* scratch) {
  HWY_DYNAMIC_DISPATCH(DepthwiseRowsNchwF64)(args, x, out, channel, row_begin, row_end, scratch);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
