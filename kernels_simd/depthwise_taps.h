// The vectorized inner loop of the depthwise convolution (kernels_simd/depthwise_taps.cc).
#pragma once

#include <cstdint>

namespace mpsim::simd {

// acc[c] = 0 + x[0][c] w[0][c] + x[1][c] w[1][c] + ... over `taps` (input row, weight row) pairs
// in order, for c < channels: products exact in double, one rounding per add (the bits of the
// scalar chain on every target).
void depthwise_pixel_f32(const float* const* x, const float* const* w, std::int64_t taps,
                         double* acc, std::int64_t channels);

}  // namespace mpsim::simd
