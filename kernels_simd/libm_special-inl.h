// Per-target results of the scalar libm path (scalar_unary in scalar_math.h) on the lanes that
// the vector evaluations leave to it, for the ops whose values there are IEEE operations.
// Included inside HWY_NAMESPACE after `namespace hn = hwy::HWY_NAMESPACE;`; D is float or
// double lanes.
//
// Note [libm special lanes]
// log, log1p and rsqrt of a negative input (NaN), a zero (an infinity) or a non-finite one
// are the golden kernels' "special" lanes, which went lane by lane to glibc: with half the
// inputs negative (log or rsqrt of a standard normal tensor) nearly every vector took that
// path, 30-50 times the vector cost. glibc computes these results with IEEE operations
// (glibc's log: log(+-0) = -1/0, log(+inf) = +inf, else __math_invalid(x) = (x - x) / (x -
// x); log1p: log1p(-1) = -2^54/0, log1p(+inf) = inf + inf, x < -1 and NaN (x - x) / (x - x);
// rsqrt = 1 / sqrt(x) is itself the scalar definition), and the same operations on the lanes
// give the same bits, NaN payloads and the default NaN's sign included, on every target
// (each target's vector arithmetic is the IEEE arithmetic of its scalar unit). rsqrt's special
// lanes select the values those operations give (RsqrtSpecialLanes), without the divider. A
// float lane gives the float rounding of the double result: these values round exactly, and a
// NaN keeps the float's payload bits through double and back. Tested bit for bit against glibc
// (unary_test's SpecialLanesGiveGlibcBits).
#if defined(MPSIM_KERNELS_SIMD_LIBM_SPECIAL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPSIM_KERNELS_SIMD_LIBM_SPECIAL_INL_H_
#undef MPSIM_KERNELS_SIMD_LIBM_SPECIAL_INL_H_
#else
#define MPSIM_KERNELS_SIMD_LIBM_SPECIAL_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// glibc's __math_invalid(x): (x - x) / (x - x), the default NaN for a non-NaN x, x quieted
// for a NaN. Computed as (x - x) inf, the same bits (0 inf is the default NaN as 0 / 0 is, and
// x - x's NaN propagates through either) without the division: log of a row of negative
// inputs 1.77 -> 1.72 ms on [2, 320, 64, 64], one thread.
template <class D>
HWY_INLINE hn::Vec<D> LibmInvalid(D d, hn::Vec<D> x) {
  return hn::Mul(hn::Sub(x, x), hn::Inf(d));
}

// x quieted (x + x: its payload and sign, the quiet bit set) where x is a NaN, else v: the slow
// paths' NaN for the ops that pass a NaN input through their arithmetic (Note [special lanes
// in vectors], unary_cr-inl.h).
template <class V>
HWY_INLINE V QuietNaNOr(V x, V v) {
  return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, x), v);
}

// log(x) for x <= 0, +inf or NaN (Note [libm special lanes]).
template <class D>
HWY_INLINE hn::Vec<D> LogSpecial(D d, hn::Vec<D> x) {
  const hn::Vec<D> r = hn::IfThenElse(hn::Eq(x, hn::Inf(d)), x, LibmInvalid(d, x));
  return hn::IfThenElse(hn::Eq(x, hn::Zero(d)), hn::Neg(hn::Inf(d)), r);
}

// log1p(x) for x <= -1, +inf or NaN (Note [libm special lanes]).
template <class D>
HWY_INLINE hn::Vec<D> Log1pSpecial(D d, hn::Vec<D> x) {
  const hn::Vec<D> r = hn::IfThenElse(hn::Eq(x, hn::Inf(d)), x, LibmInvalid(d, x));
  return hn::IfThenElse(hn::Eq(x, hn::Set(d, -1)), hn::Neg(hn::Inf(d)), r);
}

// 1 / sqrt(x) for every x: the scalar definition's two IEEE operations (float64's exact rows).
template <class D>
HWY_INLINE hn::Vec<D> RsqrtSpecial(D d, hn::Vec<D> x) {
  return hn::Div(hn::Set(d, 1), hn::Sqrt(x));
}

// 1 / sqrt(x) on rsqrt's special lanes (x <= 0, +inf or NaN), the same bits selected: +-inf at
// +-0, +0 at +inf, and LibmInvalid's NaN elsewhere (sqrt of a negative x is the default NaN,
// as (x - x) inf is; either quiets a NaN x, and 1 / NaN keeps it). Without the divider, which
// sqrt and div share: on [2, 320, 64, 64] standard normal inputs (half negative), one AVX-512
// thread, CrRow<CrRsqrt> spent a third of its time behind them.
template <class D>
HWY_INLINE hn::Vec<D> RsqrtSpecialLanes(D d, hn::Vec<D> x) {
  const hn::Vec<D> inf = hn::Inf(d);
  const hn::Vec<D> r = hn::IfThenZeroElse(hn::Eq(x, inf), LibmInvalid(d, x));
  return hn::IfThenElse(hn::Eq(x, hn::Zero(d)), hn::CopySign(inf, x), r);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPSIM_KERNELS_SIMD_LIBM_SPECIAL_INL_H_
