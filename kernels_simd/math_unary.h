// The math family's kernels (core/math_op_list.h): each element evaluated in double and
// rounded once to the output dtype.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/kernel_call.h"
#include "core/math_op_list.h"

namespace mpsim::simd {

enum class MathKind : std::uint8_t {
#define MPSIM_MATH_KIND(name, rule) name,
#define MPSIM_MATH_DOC_KIND(name, doc, rule) name,
  MPSIM_MATH_OPS(MPSIM_MATH_DOC_KIND) MPSIM_MATH_OPS_WITH_PARAMS(MPSIM_MATH_KIND)
#undef MPSIM_MATH_DOC_KIND
#undef MPSIM_MATH_KIND
};
#define MPSIM_MATH_COUNT(...) +1
inline constexpr int kNumMathKinds =
    0 MPSIM_MATH_OPS(MPSIM_MATH_COUNT) MPSIM_MATH_OPS_WITH_PARAMS(MPSIM_MATH_COUNT);
#undef MPSIM_MATH_COUNT

enum class BinaryMathKind : std::uint8_t {
#define MPSIM_BINARY_MATH_KIND(name, doc, rule) name,
  MPSIM_BINARY_MATH_OPS(MPSIM_BINARY_MATH_KIND)
#undef MPSIM_BINARY_MATH_KIND
};

// f(x) in double (Note [math family accuracy], math_unary.cc).
double math_f64(MathKind kind, double x, const MathParams& p);
// f(a, b) in double, for float operands (nextafter steps in the operands' own dtype instead).
double binary_math_f64(BinaryMathKind kind, double a, double b);

// The float32 results of a contiguous row of a function without parameters, value by value: the
// double result rounded once, and for the guarded functions the long double slow path near a
// boundary (Note [math family hard lanes], math_hard.h). in and out may be the same array.
void math_row_f32(MathKind kind, const float* in, float* out, std::size_t n);
// The same bits in float lanes (Note [correctly rounded float lanes] in unary_cr-inl.h) for exp2,
// log2, log10, sinh, cosh, asinh, acosh, atanh, atan and tan on targets with FMA, and asin and
// acos on AVX-512; returns false, computing nothing, otherwise.
bool math_cr_row_f32(MathKind kind, const float* in, float* out, std::size_t n);
// The same bits in double lanes on every target for erfc, tan, asin and acos (Notes [erfc in
// double lanes], [tan in double lanes] and [asin and acos in double lanes], math_lanes.cc; the
// rows of asin and acos on targets without their float lanes, and those lanes' slow path);
// returns false, computing nothing, for the other functions.
bool math_lanes_row_f32(MathKind kind, const float* in, float* out, std::size_t n);

void register_math_kernels(KernelTable& table);

}  // namespace mpsim::simd
