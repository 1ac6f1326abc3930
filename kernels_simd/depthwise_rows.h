// The row kernels of the depthwise convolution for float32, float64, float16 and bfloat16
// (kernels_simd/depthwise_rows-inl.h; Note [depthwise] in conv.cc). They never thread and never
// throw; conv.cc's driver splits the work.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/dtype.h"

namespace mpsim::simd {

// One depthwise convolution (one input and one output channel per group) as the row kernels
// take it. Sizes and strides count elements; the strides are within an image (channels-last)
// or a channel's plane (NCHW).
struct DepthwiseArgs {
  std::int64_t channels = 0, height = 0, width = 0;  // x's
  std::int64_t out_w = 0;
  std::int64_t kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;  // top and left
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t x_h_stride = 0, x_w_stride = 0;      // x's row and column strides
  std::int64_t out_h_stride = 0, out_w_stride = 0;  // the output's
  // x's and the output's: Float32, Float64, Float16 or BFloat16.
  DType dtype = DType::Float32;
  // Golden (fast false) and float64: double weights and bias, the double chain; Fast: float
  // ones, the float chain. Their layout is the entry point's.
  const void* weights = nullptr;
  const void* bias = nullptr;  // [C], or null
  bool fast = false;
};

// The chains' element type: double for Golden and float64, float for Fast.
inline bool depthwise_double_chain(const DepthwiseArgs& args) {
  return !args.fast || args.dtype == DType::Float64;
}

// Whether a channels-last call runs on the held-weights kernels (Note [held weights] in
// depthwise_rows-inl.h): a 3x3 kernel, stride_w and dilation_w 1 (Golden: where the target has
// 32 vector registers).
inline bool depthwise_nhwc_held(const DepthwiseArgs& args) {
  return args.kernel_h == 3 && args.kernel_w == 3 && args.stride_w == 1 && args.dilation_w == 1;
}

// Output rows [row_begin, row_end) of one channels-last image: x and out point at the image,
// channels dense (stride 1) in both; weights [kH kW][C].
void depthwise_rows_nhwc(const DepthwiseArgs& args, const void* x, void* out,
                         std::int64_t row_begin, std::int64_t row_end);

// Output rows [row_begin, row_end) of one channel's plane, for stride_w 1: x and out point at
// the plane, columns dense (stride 1) in both; weights [C][kH kW]. scratch: at least
// depthwise_nchw_scratch(args) elements of args.dtype, used by this call alone (Note [staged
// rows] in depthwise_rows-inl.h).
void depthwise_rows_nchw(const DepthwiseArgs& args, const void* x, void* out, std::int64_t channel,
                         std::int64_t row_begin, std::int64_t row_end, void* scratch);

// The row kernels of one dtype and chain: x and the output in that dtype, the sums in double
// (golden, and float64) or float (fast) lanes.
struct DepthwiseVariant {
  void (*nhwc)(const DepthwiseArgs& args, const void* x, void* out, std::int64_t row_begin,
               std::int64_t row_end);
  void (*nchw)(const DepthwiseArgs& args, const void* x, void* out, std::int64_t channel,
               std::int64_t row_begin, std::int64_t row_end, void* scratch);
};

namespace detail {
// Each compiled from depthwise_rows.cc.in into depthwise_rows_<variant>.cc.
DepthwiseVariant depthwise_f32_golden();
DepthwiseVariant depthwise_f32_fast();
DepthwiseVariant depthwise_f64();
DepthwiseVariant depthwise_f16_golden();
DepthwiseVariant depthwise_f16_fast();
DepthwiseVariant depthwise_bf16_golden();
DepthwiseVariant depthwise_bf16_fast();
}  // namespace detail

// Output rows an NCHW call stages x's rows for at a time: the 18 x rows of a 3x3 kernel, under
// 10 KiB for rows of 64 doubles, stay in L1.
inline constexpr std::int64_t kDepthwiseChunkRows = 16;

// The most lanes of any compiled target's vectors of float (AVX-512's 64 bytes; the row
// kernels check it).
inline constexpr std::int64_t kDepthwiseMaxLanes = 16;

// A staged row: pad_w zeros, x's row, zeros up to the last column a vector of outputs reads
// (a whole vector from column 0 for rows narrower than one).
inline std::int64_t depthwise_staged_width(const DepthwiseArgs& args) {
  const std::int64_t reach = (args.kernel_w - 1) * args.dilation_w;
  return std::max({args.pad_w + args.width, args.out_w + reach, kDepthwiseMaxLanes + reach});
}

inline std::int64_t depthwise_nchw_scratch(const DepthwiseArgs& args) {
  const std::int64_t rows =
      (kDepthwiseChunkRows - 1) * args.stride_h + (args.kernel_h - 1) * args.dilation_h + 1;
  return rows * depthwise_staged_width(args);
}

}  // namespace mpsim::simd
