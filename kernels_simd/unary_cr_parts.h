// The float-lane rows of unary_cr_exp.cc and unary_cr_log.cc, compiled with GCC's first
// scheduling pass (Note [scheduled float lanes]), which unary_cr_row_f32 and math_cr_row_f32
// (unary_cr.cc) hand every op but log and tan: each returns false, computing nothing, for any
// other op or a SIMD target without its float lanes.
//
// Note [scheduled float lanes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// GCC's x86 back end runs no instruction scheduling before register allocation by default, so a
// two-stage step (Note [two-stage float lanes], unary_cr-inl.h) reaches the core as its four
// chains in program order, one after another, and the core, which takes instructions into its
// scheduler in that order, fills it with operations that wait on their own chain.
// -fschedule-insns -fsched-pressure interleaves the chains where registers allow, and the values
// are the same (scheduling reorders, it does not reassociate or contract: bits_digest on every
// target). The two files build in parallel; unary_cr.cc keeps log and tan, which ran slower
// scheduled. `build/bench/ab_rows --rounds 300 UNSCHEDULED SCHEDULED UNSCHEDULED SCHEDULED`
// (both builds' libmpsim.so in one process, their rows on 64Ki floats in cache timed
// alternately, the 10th percentile of 300 calls; each build's two columns agreed within 2.5%),
// scheduled over unscheduled on AVX-512: acosh 1.28x, atanh 1.27x, softplus 1.26x, asinh and
// tanh 1.23-1.24x, gelu (erf) 1.21x, log1p 1.19x, sinh and atan 1.17x, cosh and gelu_tanh 1.15x,
// expm1 1.10x, sigmoid, silu, log2 and log10 1.06-1.07x, acos and pow 1.02-1.05x, sin, cos and
// exp2 1.03x, exp, rsqrt and asin within 0.6%; log 0.976x and tan 0.946x. AVX2
// (MPSIM_SIMD_TARGETS=avx2) agrees: tanh, softplus and gelu_tanh 1.17-1.24x, log 0.91x, tan
// 1.00x. Without -fsched-pressure the AVX2 build spilled registers: tanh 0.76x, sin 0.83x.
#ifndef MPSIM_KERNELS_SIMD_UNARY_CR_PARTS_H_
#define MPSIM_KERNELS_SIMD_UNARY_CR_PARTS_H_

#include <cstddef>

#include "kernels_simd/math_unary.h"
#include "kernels_simd/unary.h"

namespace mpsim::simd {

// unary_cr_exp.cc: the ops on exp's pair or e^x - 1's: exp, expm1, tanh, sigmoid, silu,
// gelu_tanh, gelu (erf form, AVX-512); exp2, sinh and cosh; and rsqrt. It also defines
// pow_minus_half_cr_row_f32 (unary.h): rsqrt's lanes.
bool unary_cr_exp_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                          const UnaryParams& p);
bool math_cr_exp_row_f32(MathKind kind, const float* in, float* out, std::size_t n);
// unary_cr_log.cc: the ops on log's reduction: log1p, softplus; log2, log10, asinh, acosh and
// atanh; and the trigonometric ones: sin, cos; atan, asin and acos (AVX-512). It also defines
// pow_cr_lanes_row_f32 (unary.h): e^(y log x).
bool unary_cr_log_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                          const UnaryParams& p);
bool math_cr_log_row_f32(MathKind kind, const float* in, float* out, std::size_t n);

}  // namespace mpsim::simd

#endif  // MPSIM_KERNELS_SIMD_UNARY_CR_PARTS_H_
