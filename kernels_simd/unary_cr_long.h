// The float-lane rows of unary_cr_long.cc (Note [scheduled float lanes] in unary_cr_long.cc),
// which unary_cr_row_f32 and math_cr_row_f32 (unary_cr.cc) hand their five ops: each returns
// false, computing nothing, for any other op or a SIMD target without its float lanes.
#ifndef MPSIM_KERNELS_SIMD_UNARY_CR_LONG_H_
#define MPSIM_KERNELS_SIMD_UNARY_CR_LONG_H_

#include <cstddef>

#include "kernels_simd/math_unary.h"
#include "kernels_simd/unary.h"

namespace mpsim::simd {

// gelu (erf form, AVX-512).
bool unary_cr_long_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                           const UnaryParams& p);
// sinh, asinh, acosh and atanh.
bool math_cr_long_row_f32(MathKind kind, const float* in, float* out, std::size_t n);

}  // namespace mpsim::simd

#endif  // MPSIM_KERNELS_SIMD_UNARY_CR_LONG_H_
