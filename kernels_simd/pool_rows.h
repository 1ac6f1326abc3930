// The pooling and resizing kernels' vector rows (kernels_simd/pool.cc and resize.cc, Note
// [pooled pixels] in pool_rows.cc): one output pixel of a channels-last float32, float64,
// float16 or bfloat16 image, its channels in vectors. They never thread and never throw.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace mpsim::simd {

// The input positions one output position reads along one dim: begin, begin + step, ... < end
// (empty when begin >= end), and that dim's factor of the average's divisor.
struct Span {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t step = 1;
  std::int64_t count = 0;
};

// One output pixel: x points at its image (channels dense), h_stride and w_stride are x's row
// and column strides in elements; out points at the pixel's first channel (channels dense).
struct PooledPixel {
  DType dtype = DType::Float32;  // x's and out's: a float dtype
  const void* x = nullptr;
  std::int64_t h_stride = 0, w_stride = 0, channels = 0;
  Span h, w;
  void* out = nullptr;
};

// The average over the window h x w of every channel: the taps summed in double in (ih, iw)
// order, divided by `divisor` in double and rounded once; 0 where the window is empty.
void pool_average_pixel(const PooledPixel& p, double divisor);

// The maximum over the window (Note [max pool NaN] in pool.cc): a tap replaces the running
// maximum (from -inf) when it is greater or NaN. indices: null, or the pixel's first index
// (channels dense), each the flat ih * in_w + iw of its maximum (the window's first tap when
// none replaced -inf).
void pool_max_pixel(const PooledPixel& p, std::int64_t in_w, std::int64_t* indices);

// One output pixel of interpolate's bilinear mode (kernels_simd/resize.cc): x points at the
// image (channels dense), offset[k] at its four taps (top-left, top-right, bottom-left,
// bottom-right) in elements, weight[k] their products of weights in double; every channel is
// ((w0 t0 + w1 t1) + w2 t2) + w3 t3 in double, each product and sum rounded, rounded once to
// the dtype.
struct BilinearPixel {
  DType dtype = DType::Float32;  // x's and out's: a float dtype
  const void* x = nullptr;
  std::int64_t offset[4] = {};
  double weight[4] = {};
  std::int64_t channels = 0;
  void* out = nullptr;
};

void bilinear_pixel(const BilinearPixel& p);

}  // namespace mpsim::simd
