// The depthwise row kernels (depthwise_rows-inl.h) for bfloat16 x and output, per Highway
// target: x widened in registers, the sums rounded once to bfloat16 on their store (Fast from the
// float chain, Golden from the double chain through round-to-odd). float16 has a file of its
// own (depthwise_rows_f16.cc), so that the two compile in parallel.
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/depthwise_rows_bf16.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/highway.h"
#include "kernels_simd/depthwise_rows-inl.h"
#include "kernels_simd/depthwise_rows.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {

void DepthwiseRowsNhwcBF16(const DepthwiseArgs& a, const void* x, void* out, std::int64_t row_begin,
                           std::int64_t row_end) {
  RowsNhwc<BFloat16>(a, x, out, row_begin, row_end);
}

void DepthwiseRowsNchwBF16(const DepthwiseArgs& a, const void* x, void* out, std::int64_t channel,
                           std::int64_t row_begin, std::int64_t row_end, void* scratch) {
  RowsNchw<BFloat16>(a, x, out, channel, row_begin, row_end, scratch);
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(DepthwiseRowsNhwcBF16);
HWY_EXPORT(DepthwiseRowsNchwBF16);

void detail::depthwise_rows_nhwc_bf16(const DepthwiseArgs& args, const void* x, void* out,
                                      std::int64_t row_begin, std::int64_t row_end) {
  HWY_DYNAMIC_DISPATCH(DepthwiseRowsNhwcBF16)(args, x, out, row_begin, row_end);
}

void detail::depthwise_rows_nchw_bf16(const DepthwiseArgs& args, const void* x, void* out,
                                      std::int64_t channel, std::int64_t row_begin,
                                      std::int64_t row_end, void* scratch) {
  HWY_DYNAMIC_DISPATCH(DepthwiseRowsNchwBF16)(args, x, out, channel, row_begin, row_end, scratch);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
