// The depthwise row kernels (depthwise_rows-inl.h) for float32 x and output, per Highway target,
// and the entry points of depthwise_rows.h, which hand float64 and the 16-bit types to their
// own files (depthwise_rows_f64.cc, depthwise_rows_f16.cc, depthwise_rows_bf16.cc).
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/depthwise_rows.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/highway.h"
#include "kernels_simd/depthwise_rows-inl.h"
#include "kernels_simd/depthwise_rows.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {

void DepthwiseRowsNhwcF32(const DepthwiseArgs& a, const void* x, void* out, std::int64_t row_begin,
                          std::int64_t row_end) {
  RowsNhwc<float>(a, x, out, row_begin, row_end);
}

void DepthwiseRowsNchwF32(const DepthwiseArgs& a, const void* x, void* out, std::int64_t channel,
                          std::int64_t row_begin, std::int64_t row_end, void* scratch) {
  RowsNchw<float>(a, x, out, channel, row_begin, row_end, scratch);
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(DepthwiseRowsNhwcF32);
HWY_EXPORT(DepthwiseRowsNchwF32);

void depthwise_rows_nhwc(const DepthwiseArgs& args, const void* x, void* out,
                         std::int64_t row_begin, std::int64_t row_end) {
  switch (args.dtype) {
    case DType::Float64:
      return detail::depthwise_rows_nhwc_f64(args, x, out, row_begin, row_end);
    case DType::Float16:
      return detail::depthwise_rows_nhwc_f16(args, x, out, row_begin, row_end);
    case DType::BFloat16:
      return detail::depthwise_rows_nhwc_bf16(args, x, out, row_begin, row_end);
    default:
      return HWY_DYNAMIC_DISPATCH(DepthwiseRowsNhwcF32)(args, x, out, row_begin, row_end);
  }
}

void depthwise_rows_nchw(const DepthwiseArgs& args, const void* x, void* out, std::int64_t channel,
                         std::int64_t row_begin, std::int64_t row_end, void* scratch) {
  switch (args.dtype) {
    case DType::Float64:
      return detail::depthwise_rows_nchw_f64(args, x, out, channel, row_begin, row_end, scratch);
    case DType::Float16:
      return detail::depthwise_rows_nchw_f16(args, x, out, channel, row_begin, row_end, scratch);
    case DType::BFloat16:
      return detail::depthwise_rows_nchw_bf16(args, x, out, channel, row_begin, row_end, scratch);
    default:
      return HWY_DYNAMIC_DISPATCH(DepthwiseRowsNchwF32)(args, x, out, channel, row_begin, row_end,
                                                        scratch);
  }
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
