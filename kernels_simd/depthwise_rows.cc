// The entry points of depthwise_rows.h: each call goes to the variant of its dtype and chain,
// compiled from depthwise_rows.cc.in into a file of its own (kernels_simd/CMakeLists.txt).
#include "kernels_simd/depthwise_rows.h"

namespace mpsim::simd {
namespace {

// Golden and float64 on the double chain, Fast on the float chain (depthwise_double_chain).
DepthwiseVariant variant_of(const DepthwiseArgs& args) {
  const bool golden = depthwise_double_chain(args);
  switch (args.dtype) {
    case DType::Float64:
      return detail::depthwise_f64();
    case DType::Float16:
      return golden ? detail::depthwise_f16_golden() : detail::depthwise_f16_fast();
    case DType::BFloat16:
      return golden ? detail::depthwise_bf16_golden() : detail::depthwise_bf16_fast();
    default:
      return golden ? detail::depthwise_f32_golden() : detail::depthwise_f32_fast();
  }
}

}  // namespace

void depthwise_rows_nhwc(const DepthwiseArgs& args, const void* x, void* out,
                         std::int64_t row_begin, std::int64_t row_end) {
  variant_of(args).nhwc(args, x, out, row_begin, row_end);
}

void depthwise_rows_nchw(const DepthwiseArgs& args, const void* x, void* out, std::int64_t channel,
                         std::int64_t row_begin, std::int64_t row_end, void* scratch) {
  variant_of(args).nchw(args, x, out, channel, row_begin, row_end, scratch);
}

}  // namespace mpsim::simd
