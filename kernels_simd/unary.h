// The unary family: one kernel template applied to every elementwise math op.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/kernel_call.h"

namespace mpsim::simd {

// The functions the family computes; gelu's two forms are separate functions.
enum class UnaryKind : std::uint8_t {
  Abs,
  Neg,
  Exp,
  Log,
  Log1p,
  Expm1,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tanh,
  Erf,
  Relu,
  Sigmoid,
  Silu,
  GeluErf,
  GeluTanh,
  Softplus,
  Reciprocal,
  Square,
};
inline constexpr int kNumUnaryKinds = static_cast<int>(UnaryKind::Square) + 1;

struct UnaryParams {
  double beta = 1;        // softplus
  double threshold = 20;  // softplus
  // Float32 rows store with non-temporal stores (Note [streaming stores], elementwise.h).
  bool stream_out = false;
  // Precision::Fast: float32 rows of the ops with a fast kernel use it (unary_fast.cc).
  bool fast = false;
};

// Contiguous row kernels (dynamic dispatch to the best enabled SIMD target).
// in and out may be the same array; they may not partially overlap.
void unary_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                   const UnaryParams& p);
// As unary_row_f32 but unrounded: the double result that f16/bf16 outputs round once.
void unary_row_f32_to_f64(UnaryKind kind, const float* in, double* out, std::size_t n,
                          const UnaryParams& p);
// Dense float16 (bf16 false) or bfloat16 rows of abs, neg, relu, square, sqrt, reciprocal and
// rsqrt in float lanes, the golden row kernel's bits (Note [exact 16-bit unary rows] in
// lookup16.cc): returns false, computing nothing, for the other ops.
bool unary_exact_row_16(UnaryKind kind, bool bf16, const std::uint16_t* in, std::uint16_t* out,
                        std::size_t n);

// The Precision::Fast kernel of `kind` (Note [fast float unary] in unary_fast.cc): returns false,
// computing nothing, when the op or the SIMD target has none.
bool unary_fast_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                        const UnaryParams& p);
// The golden float32 row in float lanes (Note [correctly rounded float lanes] in unary_cr-inl.h):
// the same bits as unary_row_f32, faster; returns false, computing nothing, when the op or the
// SIMD target has none.
bool unary_cr_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                      const UnaryParams& p);
// x^-0.5 of a float32 row (pow with the scalar exponent -1/2, correctly rounded, glibc's values
// for zeros, infinities, NaN and negative x) in the rsqrt float lanes: returns false, computing
// nothing, on targets without them.
bool pow_minus_half_cr_row_f32(const float* in, float* out, std::size_t n,
                               const UnaryParams& p);
// x^y of a float32 row for a finite scalar y (Note [correctly rounded pow]) in the float lanes
// (Note [correctly rounded float lanes], pow), pow_cr_row_f32 taking the lanes they leave open:
// returns false, computing nothing, on targets without them.
bool pow_cr_lanes_row_f32(const float* in, float y, float* out, std::size_t n);
// The same row in double lanes on every target (binary.cc).
void pow_cr_row_f32(const float* in, float y, float* out, std::size_t n);
// Lanes the float-lane rows computed, and of those, the lanes the rounding test sent to the
// double path (all threads, since the last reset): the slow-lane rate of the benchmarks.
struct UnaryCrStats {
  std::uint64_t lanes = 0;
  std::uint64_t slow_lanes = 0;
};
UnaryCrStats unary_cr_stats();
void reset_unary_cr_stats();
void note_unary_cr_lanes(std::uint64_t lanes, std::uint64_t slow_lanes);
// Whether the SIMD target in use has the fast kernels (it has FMA).
bool unary_fast_available();

// The IEEE float64 rows of Note [exact float64 rows] (unary.cc): abs, neg, sqrt, rsqrt,
// reciprocal, square, relu; returns false, computing nothing, for another kind.
bool exact_rows_f64(UnaryKind kind, const double* in, double* out, std::size_t n);

// Dense float64 rows of the math ops with a vector kernel (unary_f64.cc, Note [float64 exp
// rows]: exp, within 0.57 ulp); returns false, computing nothing, for another kind.
bool math_rows_f64(UnaryKind kind, const double* in, double* out, std::size_t n);

// exp of doubles with relative error < 2^-47 (for rows that are rounded to a float dtype
// afterwards: softmax). in and out may be the same array.
void exp_row_f64(const double* in, double* out, std::size_t n);

void register_unary_kernels(KernelTable& table);

}  // namespace mpsim::simd
