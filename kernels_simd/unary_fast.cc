// Precision::Fast float32 unary kernels: exp, log, sin, cos, sigmoid, silu, gelu (both forms),
// rsqrt, log1p, expm1 and softplus in float lanes (the golden ones evaluate in double, Note [golden
// unary evaluation] in vec_math-inl.h). This file holds the entry point, which hands each op to its
// group (unary_fast_exp_log.cc, unary_fast_sigmoid_gelu.cc, unary_fast_trig.cc; shared pieces in
// unary_fast-inl.h), and the Note that explains them all.

// Note [fast float unary]
// ~~~~~~~~~~~~~~~~~~~~~~~
// Float lanes carry twice the lanes of double ones, which is what PyTorch's kernels (SLEEF-style,
// float) get and the golden kernels give up. Float arithmetic alone would lose the 1 ULP bound:
// every float rounding is worth up to half an ULP, and a function of a few roundings drifts to
// 2-3 ULP. These kernels keep the error near one rounding by carrying the few quantities that
// decide the result as unevaluated float pairs hi + lo, built with FMA's exact products
// (fma(a, b, -a*b) is the rounding error of a*b) and Fast2Sum (s = a + b, e = (a - s) + b is
// exact when |a| >= |b|):
// - exp: x = (16k + j) ln2/16 + r, |r| <= ln2/32, with x - (16k + j) ln2_hi/16 exact (both
//   terms are multiples of 2^-29 and the difference is below 2^-5) and the rest of ln2/16
//   rounded once into r; e^r = 1 + p, p = r + r^2 (1/2 + r/6 + r^2/24) (truncation < 2^-34);
//   2^(j/16) is a float pair from a 16-entry table (one permute on 16-lane targets), so
//   e^x = (T_hi + (T_hi p + T_lo)) 2^k, relative error below 2^-29 before the final rounding.
//   exp rounds that sum once; outside [-87, 87] 2^k is applied as two exact powers so that
//   subnormal results round once more at most and overflow gives inf.
// - sigmoid/silu: t = e^-|x| as a normalized pair (hi + lo) 2^k, d = 1 + t as a pair, then the
//   quotient 1/d or t/d from a reciprocal estimate (AVX-512: 14 bits, used as is; AVX2: 12
//   bits and a Newton step) and its residual computed by FMA: the result is q0 + corr with
//   corr correct to ~2^-24 of itself, so sigmoid rounds once (q0 + corr) and silu rounds once
//   (fma(x, q0, x corr)). Beyond |x| = 80 t stays normal (2^k' with k' >= -100) and the rest
//   of 2^k comes at the end, so silu(-90) (a normal result of a subnormal sigmoid) keeps its
//   digits.
//   AVX-512 (FastSigmoid512, FastSilu512) does less work where a 32-entry table is one permute:
//   sigmoid itself is a degree-6 polynomial on the half-unit piece around m/2, m = round(2x) =
//   -16..15 (the last piece reaches 9), c0 and c1 as pairs, c0 + c1 u an FMA whose rounding
//   error a second FMA recovers: s + tail to 2^-30, ~31 instructions per 16 outputs against ~44.
//   Fast range [-8.25, 9]; vectors with a lane outside take the quotient form.
// - log: x = 2^e m with m in [sqrt(1/2), sqrt 2), f = m - 1 exact, log1p(f) = f + f^2 Q(f)
//   (Q: degree 9, kFastLogQ), and e ln2_hi + f summed as a pair (e ln2_hi is exact: ln2_hi
//   has 16 bits).
// - sin/cos: n = round(x 2/pi), r = x - n pi/2 with pi/2 in three floats: x - n P1 is exact (as
//   exp's), n P2 joins it as a pair (exact product by FMA, 2Sum: r1 and n P2 may cancel), n P3
//   goes into the low part; then sin/cos of the pair rh + rl by their Taylor polynomials
//   (truncation < 2^-36) with the leading terms exact (cos: 1 - rh^2/2 as a pair). |x| <= 4096
//   only; larger arguments (and non-finite ones) take the golden kernel lane by lane.
//   AVX-512 (FastSinCos512): n = round(x 16/pi), the same three-part reduction by pi/16, and
//   sin(theta + u) = S cos u + C sin u with S, C = sin, cos of n pi/16 as pairs from 32-entry
//   tables (cos: the slot n + 8): one short polynomial pair instead of both of the quadrant
//   form, ~40 instructions per 16 outputs against ~52.
// - gelu: gelu(x) = x (1 - Q(|x|)) for x >= 0 and x Q(|x|) for x < 0, Q(z) = erfc(z/sqrt2)/2 the
//   upper normal tail, computed as e^(-z^2/2) R(z): -z^2/2 is an exact pair folded into exp's
//   reduction, R (the Mills ratio Q e^(z^2/2)) a degree-7 polynomial on 16 pieces of [0, 15)
//   whose coefficients are picked per lane by a permute, with c0 + c1 u kept as a pair; Q is
//   the product of the two pairs rounded once, plus that rounding's error. |x| >= 15 clamps to
//   z = 15, where Q is far below the rounding of 1 - Q and x Q is below the subnormals.
//   AVX-512 (FastGelu512) does less work where a 32-entry table is one permute (vpermt2ps):
//   Phi = 2^(B/32) with B = 32 log2 Phi(x) (~ -23 x^2 for x < 0, ~0 for x > 3) itself a
//   degree-5 polynomial on the half-unit piece around m/2, m = round(2x) = -16..15 (x beyond
//   7.25 takes m = 15: Phi rounds to 1 in x Phi). B0 and B1 are pairs; B0's high part lies on
//   the 2^-15 grid, so with n = round(B) the reduction r = (b0 - n) + b1 u + u^2 s + low parts
//   is exact up to its last additions, and 2^(r/32) (|r| <= 0.52) is a 32-entry table of
//   2^(j/32) pairs and a degree-3 polynomial. No e^(-z^2/2) pair, no pair product, no 1 - Q: ~43
//   instructions per 16 outputs against ~75. Its fast range is -8.25 <= x < inf (the 32 pieces);
//   vectors with a lane below take FastGelu's form.
// - gelu(tanh): x sigmoid(u), u = 2 sqrt(2/pi) (x + 0.044715 x^3) as a pair (x^2 exact, the
//   constants as pairs), and sigmoid of the pair as sigmoid's (its low part joins exp's).
// - rsqrt: y0 the hardware estimate (12-14 bits on x86; NEON's 8 after one Newton step;
//   elsewhere 1/sqrt by division), e = 1 - x y0^2 from the exact pair x y0,
//   y = y0 + y0 e (1/2 + 3e/8) rounded once.
// - log1p: 1 + x = wh + wl exactly; where wh's exponent is 0 (x in ~[-0.29, 0.41]) log's
//   polynomial takes x itself (1 + x is never rounded there), elsewhere log(wh) as log's with
//   wl/wh added by a reciprocal estimate (|wl/wh| <= 2^-24 of a result >= 0.34).
// - expm1: |x| <= 0.36: x + x^2 P(x); beyond, exp's table form with S - 1 (S = 2^k T_hi) as an
//   exact 2Sum pair and 2^k lo added last (S - 1 no longer cancels the low part away).
// - softplus (beta 1): max(x, 0) + log1p(t), t = e^-|x| a normalized pair, log1p of the pair as
//   log1p's (t's low part joins wl), the sum by 2Sum; x itself above min(threshold, 20).
//
// Each op has a fast range (Wide() marks the lanes outside it, computed by the op's wide form
// only when a vector holds one); lanes no form handles (non-finite x; sin/cos beyond 4096) are
// recomputed by the golden row kernel one element at a time. Every lane's result therefore
// depends on its own input only (not on its neighbours in the vector, nor on the tensor's
// layout). Bounds, measured with tests/numerics/ulp_sweep --precision fast: docs/numerics.md
// (<= 0.84 ULP). The bits may differ between targets (the reciprocal estimates do); targets
// without FMA have no fast kernels and compute the golden result.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_fast.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/highway.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/unary_fast-inl.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_NATIVE_FMA
bool UnaryFastRowF32(UnaryKind kind, const float* in, float* out, std::size_t n,
                     const UnaryParams& p) {
  return FastExpLogRow(kind, in, out, n, p) || FastSigmoidGeluRow(kind, in, out, n, p) ||
         FastTrigRow(kind, in, out, n, p);
}
bool UnaryFastAvailable() { return true; }
#else   // no FMA: no fast kernels (the caller computes the golden result)
bool UnaryFastRowF32(UnaryKind, const float*, float*, std::size_t, const UnaryParams&) {
  return false;
}
bool UnaryFastAvailable() { return false; }
#endif  // HWY_NATIVE_FMA

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(UnaryFastRowF32);
HWY_EXPORT(UnaryFastAvailable);

bool unary_fast_available() { return HWY_DYNAMIC_DISPATCH(UnaryFastAvailable)(); }

bool unary_fast_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                        const UnaryParams& p) {
  return HWY_DYNAMIC_DISPATCH(UnaryFastRowF32)(kind, in, out, n, p);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
