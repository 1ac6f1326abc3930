// Per-target double-precision math on SIMD lanes, the core of the golden f32/f16/bf16 unary ops.
//
// Note [golden unary evaluation]
// A float input is widened to double (exactly), the function is evaluated in double with a
// relative error below 2^-45, and the result is rounded once to the output type. The rounded
// result is therefore within 0.5 + 2^-21 ULP of the exact value, and equal to the correctly
// rounded value unless the exact value lies within 2^-45 (relative) of a rounding boundary,
// which an exhaustive sweep finds for a handful of f32 inputs per op (docs/numerics.md).
// Every routine here is only valid on a stated input range: callers route lanes outside it
// (NaN, infinities, huge arguments) to the scalar libm path, which is correct everywhere.
// Polynomials are Taylor series (exp, sin, cos, atanh) or Chebyshev interpolants computed
// with 60-digit mpmath (erf, erfc); their truncation errors are stated beside them. Double
// divisions go through Recip() (an approximate reciprocal refined in double), far cheaper.

#if defined(MPSIM_KERNELS_SIMD_VEC_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPSIM_KERNELS_SIMD_VEC_MATH_INL_H_
#undef MPSIM_KERNELS_SIMD_VEC_MATH_INL_H_
#else
#define MPSIM_KERNELS_SIMD_VEC_MATH_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels_simd/golden_speculative_tables.h"
#include "kernels_simd/trig_reduction_table.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D>
using VecD = hn::Vec<D>;

// Horner evaluation of c[0] + c[1] x + ... + c[N-1] x^(N-1).
template <std::size_t N, class D>
HWY_INLINE VecD<D> Horner(D d, VecD<D> x, const double (&c)[N]) {
  VecD<D> p = hn::Set(d, c[N - 1]);
  for (std::size_t i = N - 1; i-- > 0;) p = hn::MulAdd(p, x, hn::Set(d, c[i]));
  return p;
}

// 1/den for den in [2^-100, 2^100] (callers guarantee the range). On x86 a first
// approximation r (AVX-512: vrcp14pd, |e| < 2^-14; AVX2, SSE4: rcpps, |e| < 1.5 * 2^-12; the
// emulated targets: a float division), with e = 1 - den r, is refined in double as
// r (1 + e + e^2 + e^3 + e^4): truncation e^5 < 2^-57, so the relative error is below 2^-52
// after the roundings. No division there: a float division costs 5 cycles per vector on this
// machine, the whole refinement one. Other architectures divide: NEON's and SVE's estimates
// have 8 bits, whose refinement stops at 2^-40, too coarse for log's and log1p's hard-lane test
// (correct_rounding_test on NEON, scripts/test_arm.sh, catches it).
template <class D>
HWY_INLINE VecD<D> Recip(D d, VecD<D> den) {
#if !HWY_ARCH_X86 && HWY_TARGET != HWY_EMU128 && HWY_TARGET != HWY_SCALAR
  return hn::Div(hn::Set(d, 1.0), den);
#else
  VecD<D> r;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (std::is_same_v<VecD<D>, hn::Vec512<double>>) {
    r = VecD<D>{_mm512_maskz_rcp14_pd(0xFF, den.raw)};
  } else
#endif
  {
    const hn::Rebind<float, D> df;
    r = hn::PromoteTo(d, hn::ApproximateReciprocal(hn::DemoteTo(df, den)));
  }
  const VecD<D> e = hn::NegMulAdd(den, r, hn::Set(d, 1.0));
  const VecD<D> e2 = hn::Mul(e, e);
  const VecD<D> e_e2 = hn::MulAdd(e, e, e);
  return hn::MulAdd(r, hn::MulAdd(e2, e_e2, e_e2), r);  // (e + e^2)(1 + e^2)
#endif
}

// 2^k for integral k in [-1022, 1023] held in a double lane as kd = k + 1.5 * 2^52.
template <class D>
HWY_INLINE VecD<D> Pow2FromShifted(D d, VecD<D> kd) {
  const hn::RebindToSigned<D> di;
  const auto k = hn::Sub(hn::BitCast(di, kd), hn::BitCast(di, hn::Set(d, 0x1.8p52)));
  return hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(k, hn::Set(di, 1023))));
}

// exp(x) for x in [-708, 709]. x = k ln2 + r with |r| <= ln2/2 (ln2 split so k*kLn2Hi is
// exact for |k| < 2^21); exp(r) by its Taylor series to r^11: truncation < 2^-47 relative.
template <class D>
HWY_INLINE VecD<D> ExpCore(D d, VecD<D> x) {
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 32 significant bits
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kInvFact[12] = {1.0,         1.0,          1.0 / 2,       1.0 / 6,
                                   1.0 / 24,    1.0 / 120,    1.0 / 720,     1.0 / 5040,
                                   1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800};
  const VecD<D> shift = hn::Set(d, 0x1.8p52);
  const VecD<D> kd = hn::MulAdd(x, hn::Set(d, 1.4426950408889634), shift);  // k + shift
  const VecD<D> k = hn::Sub(kd, shift);
  VecD<D> r = hn::NegMulAdd(k, hn::Set(d, kLn2Hi), x);
  r = hn::NegMulAdd(k, hn::Set(d, kLn2Lo), r);
  return hn::Mul(Horner(d, r, kInvFact), Pow2FromShifted(d, kd));
}

// exp(x) - 1 for x in [-708, 709]. Below |x| = 0.35 the Taylor series of (e^x - 1)/x to x^12
// (truncation < 2^-52); above, e^x - 1 loses at most 2 bits to cancellation.
template <class D>
HWY_INLINE VecD<D> Expm1Core(D d, VecD<D> x) {
  constexpr double kC[13] = {1.0,
                             1.0 / 2,
                             1.0 / 6,
                             1.0 / 24,
                             1.0 / 120,
                             1.0 / 720,
                             1.0 / 5040,
                             1.0 / 40320,
                             1.0 / 362880,
                             1.0 / 3628800,
                             1.0 / 39916800,
                             1.0 / 479001600,
                             1.0 / 6227020800.0};
  const VecD<D> small = hn::Mul(x, Horner(d, x, kC));
  const VecD<D> large = hn::Sub(ExpCore(d, x), hn::Set(d, 1.0));
  return hn::IfThenElse(hn::Lt(hn::Abs(x), hn::Set(d, 0.35)), small, large);
}

// log(u) for finite, positive, normal u. u = m 2^e with m in [sqrt(1/2), sqrt(2));
// log(m) = 2 atanh(f), f = (m - 1)/(m + 1), |f| <= 0.1716, by its series to f^19
// (truncation < 2^-50 relative); m - 1 is exact. In two stages (Note [pipelined speculative paths]
// in unary.cc): LogReduce gives f and e, LogFinish the series and the sum.
template <class D>
struct LogReduced {
  VecD<D> f, e;  // e as a double
};
template <class D>
HWY_INLINE LogReduced<D> LogReduce(D d, VecD<D> u) {
  const hn::RebindToSigned<D> di;
  constexpr std::int64_t kSqrtHalfBits = 0x3fe6a09e667f3bcdLL;
  const auto bits = hn::BitCast(di, u);
  const auto e = hn::ShiftRight<52>(hn::Sub(bits, hn::Set(di, kSqrtHalfBits)));  // arithmetic
  const VecD<D> m = hn::BitCast(d, hn::Sub(bits, hn::ShiftLeft<52>(e)));
  const VecD<D> f = hn::Mul(hn::Sub(m, hn::Set(d, 1.0)), Recip(d, hn::Add(m, hn::Set(d, 1.0))));
  return {f, hn::ConvertTo(d, e)};
}
template <class D>
HWY_INLINE VecD<D> LogFinish(D d, const LogReduced<D>& t) {
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kAtanh[9] = {1.0 / 3,  1.0 / 5,  1.0 / 7,  1.0 / 9, 1.0 / 11,
                                1.0 / 13, 1.0 / 15, 1.0 / 17, 1.0 / 19};
  const VecD<D> s = hn::Mul(t.f, t.f);
  const VecD<D> two_f = hn::Add(t.f, t.f);
  const VecD<D> tail =
      hn::MulAdd(hn::Mul(two_f, s), Horner(d, s, kAtanh), hn::Mul(t.e, hn::Set(d, kLn2Lo)));
  return hn::MulAdd(t.e, hn::Set(d, kLn2Hi), hn::Add(two_f, tail));
}
template <class D>
HWY_INLINE VecD<D> LogCore(D d, VecD<D> u) {
  return LogFinish(d, LogReduce(d, u));
}

// log(1 + x) for x in (-1, 2^100]: u = 1 + x rounded, plus the first-order correction c/u
// for the rounding error c = x - (u - 1) (u - 1 is exact for u in [0.5, 2], and c = 0
// outside it). u >= 2^-24 for float x.
template <class D>
HWY_INLINE VecD<D> Log1pCore(D d, VecD<D> x) {
  const VecD<D> one = hn::Set(d, 1.0);
  const VecD<D> u = hn::Add(one, x);
  const VecD<D> c = hn::Sub(x, hn::Sub(u, one));
  return hn::MulAdd(c, Recip(d, u), LogCore(d, u));
}

// sin(x) and cos(x) for |x| <= 2^18. x = k pi/2 + r by a four-part Cody-Waite reduction
// (each part has 33 bits, so k * part is exact); r is exact to 2^-100 absolute. Taylor series
// on |r| <= pi/4 to r^17 (sin) and r^16 (cos): truncation < 2^-60. In two stages (Note
// [pipelined speculative paths] in unary.cc): SinCosReduce gives r and kd = k + 1.5 * 2^52 (the
// quadrant in its low bits), SinCosFinish the series and the quadrant's choice and sign.
template <class D>
struct SinCosReduced {
  VecD<D> r, kd;
};
template <class D>
HWY_INLINE SinCosReduced<D> SinCosReduce(D d, VecD<D> x) {
  // pi/2 = kPio2_1 + kPio2_2 + kPio2_3 + kPio2_3t within 2^-159: three 33-bit parts and the rest
  constexpr double kPio2_1 = 1.57079632673412561417e+00;   // 0x1.921fb544p+0
  constexpr double kPio2_2 = 6.07710050630396597660e-11;   // 0x1.0b4611a6p-34
  constexpr double kPio2_3 = 2.02226624871116645580e-21;   // 0x1.3198a2ep-69
  constexpr double kPio2_3t = 8.47842766036889956997e-32;  // 0x1.b839a252049c1p-104
  const VecD<D> shift = hn::Set(d, 0x1.8p52);
  const VecD<D> kd = hn::MulAdd(x, hn::Set(d, 0.63661977236758134308), shift);
  const VecD<D> k = hn::Sub(kd, shift);
  VecD<D> r = hn::NegMulAdd(k, hn::Set(d, kPio2_1), x);
  r = hn::NegMulAdd(k, hn::Set(d, kPio2_2), r);
  r = hn::NegMulAdd(k, hn::Set(d, kPio2_3), r);
  r = hn::NegMulAdd(k, hn::Set(d, kPio2_3t), r);
  return {r, kd};
}
template <class D>
HWY_INLINE void SinCosFinish(D d, const SinCosReduced<D>& t, VecD<D>* sin_out,
                             VecD<D>* cos_out) {
  constexpr double kSin[8] = {-1.0 / 6,
                              1.0 / 120,
                              -1.0 / 5040,
                              1.0 / 362880,
                              -1.0 / 39916800,
                              1.0 / 6227020800.0,
                              -1.0 / 1307674368000.0,
                              1.0 / 355687428096000.0};
  constexpr double kCos[9] = {1.0,
                              -1.0 / 2,
                              1.0 / 24,
                              -1.0 / 720,
                              1.0 / 40320,
                              -1.0 / 3628800,
                              1.0 / 479001600,
                              -1.0 / 87178291200.0,
                              1.0 / 20922789888000.0};
  const hn::RebindToUnsigned<D> du;
  const VecD<D> r = t.r, kd = t.kd;
  const VecD<D> s = hn::Mul(r, r);
  const VecD<D> sin_r = hn::MulAdd(hn::Mul(r, s), Horner(d, s, kSin), r);
  const VecD<D> cos_r = Horner(d, s, kCos);
  // Quadrant q = k mod 4 sits in the low bits of kd. sin x = [sin r, cos r, -sin r, -cos r][q];
  // cos x = [cos r, -sin r, -cos r, sin r][q].
  const auto q = hn::And(hn::BitCast(du, kd), hn::Set(du, 3));
  const auto odd = hn::RebindMask(d, hn::Eq(hn::And(q, hn::Set(du, 1)), hn::Set(du, 1)));
  const VecD<D> sign_bit = hn::Set(d, -0.0);
  // Bit 1 of q (of q + 1 for cos) moved to the sign position gives the sign.
  const auto bit1 = hn::BitCast(d, hn::ShiftLeft<62>(q));
  const auto bit1_cos = hn::BitCast(d, hn::ShiftLeft<62>(hn::Add(q, hn::Set(du, 1))));
  const VecD<D> sin_v = hn::IfThenElse(odd, cos_r, sin_r);
  const VecD<D> cos_v = hn::IfThenElse(odd, sin_r, cos_r);
  *sin_out = hn::Xor(sin_v, hn::And(bit1, sign_bit));
  *cos_out = hn::Xor(cos_v, hn::And(bit1_cos, sign_bit));
}

// Note [large trig arguments]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Beyond 2^18 the Cody-Waite parts of pi/2 no longer give exact products, so float arguments
// there are reduced exactly, Payne-Hanek style, in double lanes. A float x of exponent e is
// m 2^(e-23) with m an integer, |m| < 2^24, so x 2/pi = m A (mod 4), A = (2^(e-23) 2/pi) mod 4;
// trig_reduction_table.h (tools/gen_trig_reduction.py) holds A in windows T_i scaled by
// 2^-(e-23), C_i, so that x C_i = m T_i. Every float beyond 2^18 has |x 2/pi - k| >= 2^-29.86
// for every integer k (the header's continued-fraction bound). The reduction gives x 2/pi =
// k + f, k's low two bits the quadrant, f = fh + fl within 2^-76 relative, and r = f pi/2 (a
// double-double product rounded once) within 2^-52.9: SinCosFinish's series then keep the
// golden 2^-45. The table starts at 2^18: smaller lanes (and infinities, NaN) give values the
// callers discard.
// With FMA (kTrigReductionFma): three 53-bit windows (bits 2^1..2^-51, 2^-52..2^-104,
// 2^-105..2^-157), each product x C_i (at most 77 bits) a double h_i = RN(x C_i) and its exact
// remainder l_i. h_0 is a multiple of 2^-51 below 2^26, k = round(h_0) and f_0 = h_0 - k
// (|f_0| <= 1/2); s = f_0 + l_0 (multiples of 2^-51 below 1) is exact; s + h_1 by TwoSum =
// u + v; v (below 2^-53 |u|), l_1 and x C_2 (below 2^-79) add with two roundings (2^-106 |u| +
// 2^-133). So f (Fast2Sum of u and the rest) is within 2^-106 |f| + 2^-131 (2^-133 from the
// table's truncation): 2^-101 relative. |f| <= 1/2 + 2^-26: s + h_1 is not rounded to an
// integer again (SinCosFinish's series hold a little beyond pi/4). Three gathers per vector.
// Without FMA (kTrigReduction): five 27-bit windows, each product x C_i at most 51 bits and
// exact. p0 = x C_0 (a multiple of 2^-25 below 2^26) is k0 + f0 with k0 = round(p0),
// |f0| <= 1/2; f0 + x C_1 (multiples of 2^-52 below 1) is k1 + f1 likewise; f1 + x C_2 by
// TwoSum. x C_3 and x C_4 (below 2^-55) add with one rounding. So k = k0 + k1 and f within
// 2^-106 absolute (2^-109 from the table's truncation, 2^-107 from the last additions).
template <class D>
HWY_INLINE SinCosReduced<D> SinCosReduceLarge(D d, VecD<D> x) {
  const hn::RebindToSigned<D> di;
  const auto bits = hn::BitCast(di, x);
  auto row = hn::Sub(hn::And(hn::ShiftRight<52>(bits), hn::Set(di, 0x7ff)),
                     hn::Set(di, 1023 + kTrigReductionFirstExponent));
  row = hn::Min(hn::Max(row, hn::Zero(di)), hn::Set(di, kTrigReductionRows - 1));
  const VecD<D> shift = hn::Set(d, 0x1.8p52);
  // r = (fh + fl)(pi/2), pi/2 = kPio2Hi + kPio2Lo: the high product exact by FMA.
  constexpr double kPio2Hi = 0x1.921fb54442d18p+0;
  constexpr double kPio2Lo = 0x1.1a62633145c07p-54;
#if HWY_NATIVE_FMA
  const auto index = hn::Mul(row, hn::Set(di, 3));
  const VecD<D> c0 = hn::GatherIndex(d, kTrigReductionFma, index);
  const VecD<D> c1 = hn::GatherIndex(d, kTrigReductionFma + 1, index);
  const VecD<D> c2 = hn::GatherIndex(d, kTrigReductionFma + 2, index);
  const VecD<D> h0 = hn::Mul(x, c0);
  const VecD<D> l0 = hn::MulSub(x, c0, h0);  // exact
  const VecD<D> kd = hn::Add(h0, shift);
  const VecD<D> s = hn::Add(hn::Sub(h0, hn::Sub(kd, shift)), l0);  // f_0 + l_0, exact
  const VecD<D> h1 = hn::Mul(x, c1);
  const VecD<D> l1 = hn::MulSub(x, c1, h1);  // exact
  // TwoSum(s, h1) = u + v (either may be the larger)
  const VecD<D> u = hn::Add(s, h1);
  const VecD<D> bv = hn::Sub(u, s);
  const VecD<D> v = hn::Add(hn::Sub(s, hn::Sub(u, bv)), hn::Sub(h1, bv));
  const VecD<D> rest = hn::Add(v, hn::MulAdd(x, c2, l1));
  const VecD<D> fh = hn::Add(u, rest);
  const VecD<D> fl = hn::Sub(rest, hn::Sub(fh, u));  // Fast2Sum: |u| >= 2^-29.9 > |rest|
  const VecD<D> rh = hn::Mul(fh, hn::Set(d, kPio2Hi));
  const VecD<D> re = hn::MulSub(fh, hn::Set(d, kPio2Hi), rh);
  const VecD<D> rl = hn::MulAdd(fh, hn::Set(d, kPio2Lo), hn::MulAdd(fl, hn::Set(d, kPio2Hi), re));
  return {hn::Add(rh, rl), kd};
#else
  const auto index = hn::Mul(row, hn::Set(di, 5));
  const VecD<D> p0 = hn::Mul(x, hn::GatherIndex(d, kTrigReduction, index));
  const VecD<D> kd0 = hn::Add(p0, shift);
  const VecD<D> f0 = hn::Sub(p0, hn::Sub(kd0, shift));
  const VecD<D> s1 = hn::MulAdd(x, hn::GatherIndex(d, kTrigReduction + 1, index), f0);
  const VecD<D> kd1 = hn::Add(s1, shift);
  const VecD<D> k1 = hn::Sub(kd1, shift);
  const VecD<D> f1 = hn::Sub(s1, k1);
  const VecD<D> p2 = hn::Mul(x, hn::GatherIndex(d, kTrigReduction + 2, index));
  const VecD<D> p3 = hn::Mul(x, hn::GatherIndex(d, kTrigReduction + 3, index));
  const VecD<D> p4 = hn::Mul(x, hn::GatherIndex(d, kTrigReduction + 4, index));
  // TwoSum(f1, p2) = h + l, then l gains p3 + p4, and h + l is renormalized by TwoSum again.
  const auto two_sum = [](VecD<D> a, VecD<D> b, VecD<D>& sum, VecD<D>& err) {
    sum = hn::Add(a, b);
    const VecD<D> bv = hn::Sub(sum, a);
    err = hn::Add(hn::Sub(a, hn::Sub(sum, bv)), hn::Sub(b, bv));
  };
  VecD<D> h, l, fh, fl;
  two_sum(f1, p2, h, l);
  two_sum(h, hn::Add(l, hn::Add(p3, p4)), fh, fl);
  const VecD<D> rh = hn::Mul(fh, hn::Set(d, kPio2Hi));
  const VecD<D> re = hn::MulSub(fh, hn::Set(d, kPio2Hi), rh);
  const VecD<D> rl = hn::MulAdd(fh, hn::Set(d, kPio2Lo), hn::MulAdd(fl, hn::Set(d, kPio2Hi), re));
  return {hn::Add(rh, rl), hn::Add(kd0, k1)};
#endif
}

// The reduction of x for every finite float x: t (SinCosReduce's) where |x| <= 2^18, else
// SinCosReduceLarge's. Vectors without a large lane pay one compare.
template <class D>
HWY_INLINE SinCosReduced<D> SinCosReduceFloat(D d, VecD<D> x, const SinCosReduced<D>& t) {
  const auto large = hn::Gt(hn::Abs(x), hn::Set(d, 0x1p18));
  if (HWY_LIKELY(hn::AllFalse(d, large))) return t;
  const SinCosReduced<D> big = SinCosReduceLarge(d, x);
  return {hn::IfThenElse(large, big.r, t.r), hn::IfThenElse(large, big.kd, t.kd)};
}

template <class D>
HWY_INLINE void SinCosCore(D d, VecD<D> x, VecD<D>* sin_out, VecD<D>* cos_out) {
  SinCosFinish(d, SinCosReduce(d, x), sin_out, cos_out);
}

// erfc(y) for y in [0, 26], given y and y^2 (callers often know y^2 exactly).
// erfc(y) = exp(-y^2) R(t), t = (y - 2)/(y + 2); R is a 26-term Chebyshev interpolant of
// e^{y^2} erfc(y) in t (60-digit mpmath; truncation < 2^-51 relative on the range), converted
// to monomials (their magnitudes sum to 1.02, so Horner loses nothing to cancellation).
template <class D>
HWY_INLINE VecD<D> ErfcCore(D d, VecD<D> y, VecD<D> y2) {
  constexpr double kR[26] = {0x1.058671b52c776p-2,   -0x1.b57034efd3f75p-2,  0x1.eeea7dc8a788dp-3,
                             -0x1.437f0b68c06a1p-4,  0x1.e9471597c6d13p-9,   0x1.ca95ed527f656p-8,
                             -0x1.bc25a48e6886ap-11, -0x1.016b5cb7d673ep-10, 0x1.6d5f1051bb5c0p-15,
                             0x1.6da96a25f7a03p-13,  0x1.cdc9a37f55224p-16,  -0x1.ceb653af96b0bp-16,
                             -0x1.d470bdcaa0c4ap-17, 0x1.7575675669734p-20,  0x1.f6dd407f4a384p-19,
                             0x1.41e7b603a0ca3p-20,  -0x1.b3253b11f64a9p-22, -0x1.1333463b144a7p-21,
                             -0x1.46ac2dd8027e5p-23, 0x1.4e9aafa287e4dp-24,  0x1.85dd8f1a037d9p-24,
                             0x1.e9448e372ecdep-27,  -0x1.7459be024dff5p-26, -0x1.32b958e3fd619p-27,
                             0x1.2fd6b61fff6c4p-29,  0x1.6ed01cbd49e37p-30};
  const VecD<D> two = hn::Set(d, 2.0);
  const VecD<D> t = hn::Mul(hn::Sub(y, two), Recip(d, hn::Add(y, two)));
  return hn::Mul(ExpCore(d, hn::Neg(y2)), Horner(d, t, kR));
}

// erf(x) for |x| <= 1: x E(x^2), E the 13-term Chebyshev interpolant of erf(sqrt(s))/sqrt(s)
// on s in [0, 1] (60-digit mpmath; truncation 1.5e-19), as monomials in s (magnitudes sum to
// 1.65).
template <class D>
HWY_INLINE VecD<D> ErfSmallCore(D d, VecD<D> x) {
  constexpr double kE[13] = {0x1.20dd750429b6dp+0,   -0x1.812746b0379e6p-2,  0x1.ce2f21a042b32p-4,
                             -0x1.b82ce31284e9cp-6,  0x1.565bcd0dbc1adp-8,   -0x1.c02db3db06d60p-11,
                             0x1.f9a321dd3898cp-14,  -0x1.f4d1e3a67dc3ep-17, 0x1.b9df2954a9147p-20,
                             -0x1.5f1f0634fb062p-23, 0x1.f7b72e5bcd4ffp-27,  -0x1.38a4b8db8a7c5p-30,
                             0x1.0613987edce0dp-34};
  return hn::Mul(x, Horner(d, hn::Mul(x, x), kE));
}

// Note [rounding test]
// The golden path above evaluates to 2^-45 so that rounding once gives the correctly rounded
// float. Most inputs do not need that: a result y with relative error below eps rounds to
// the same float as the exact value unless the exact value lies within eps |y| of a rounding
// boundary (a midpoint between two floats). RoundsSafely() checks exactly that on y's bits:
// for y in [2^e, 2^(e+1)) the float midpoints are the doubles whose low 29 fraction bits are
// 2^28, and eps |y| < eps 2^(e+1) = eps 2^53 double ulps, so y is safe when its low 29 bits
// are more than kFastMarginUlps = 2^-37 2^53 (+ 1%) from 2^28, and y is a normal float
// (subnormal outputs round on a coarser grid, so they are never "safe"). The AVX-512 fast
// paths below evaluate cheaper approximations whose error bounds (stated beside each, all
// below 2^-38.9) leave a factor of 3 to the 2^-37 the test assumes; UnaryVector() stores a
// fast result only when every lane passes, and otherwise evaluates the golden path. A lane
// fails with probability 2 * 2^16 / 2^29 = 2^-12, so 1 vector in 500 takes both paths.
// Outputs are therefore the golden path's, bit for bit, on every target: a lane that passes
// is the correctly rounded value, which the golden path also returns unless the exact value
// lies within 2^-45 of a boundary, and such a lane cannot pass a 2^-37 test.
// True where y's low 29 fraction bits lie more than kMarginUlps from 2^28: y rounds to float
// exactly as every value within kMarginUlps double ulps of y's binade does, where its float is
// normal (subnormal floats round on a coarser grid). Three instructions on AVX-512.
template <std::uint64_t kMarginUlps, class D>
HWY_INLINE hn::Mask<D> FarFromFloatMidpoints(D d, VecD<D> y) {
  const hn::RebindToUnsigned<D> du;
  const auto low = hn::And(hn::BitCast(du, y), hn::Set(du, (std::uint64_t{1} << 29) - 1));
  return hn::RebindMask(d, hn::Gt(hn::Sub(low, hn::Set(du, (std::uint64_t{1} << 28) - kMarginUlps)),
                                  hn::Set(du, 2 * kMarginUlps)));
}

// True where y rounds to float exactly as every value within kMarginUlps double ulps of y's
// binade (kMarginUlps 2^-53 |y| <= eps |y|) does, and y is a normal float.
template <std::uint64_t kMarginUlps, class D>
HWY_INLINE hn::Mask<D> RoundsSafelyWithin(D d, VecD<D> y) {
  const hn::RebindToUnsigned<D> du;
  const auto bits = hn::BitCast(du, hn::Abs(y));
  constexpr std::uint64_t kMinNormal = 0x3810000000000000ULL;  // 2^-126
  constexpr std::uint64_t kFltMax = 0x47efffffe0000000ULL;     // FLT_MAX
  // Unsigned wrap-around: one compare tests kMinNormal <= |y| <= FLT_MAX (NaN fails).
  const auto normal =
      hn::Lt(hn::Sub(bits, hn::Set(du, kMinNormal)), hn::Set(du, kFltMax - kMinNormal + 1));
  return hn::And(hn::RebindMask(d, normal), FarFromFloatMidpoints<kMarginUlps>(d, y));
}

// Note [hard lanes]
// ~~~~~~~~~~~~~~~~~
// The golden double evaluation (relative error below 2^-45) rounds to the correctly rounded
// float unless the exact value lies within 2^-45 of a rounding boundary, and over all 2^32
// inputs some do: the exhaustive sweep (tests/numerics/ulp_sweep --stride 1) found exp
// misrounding 0x1.060e1ep+6 (e^x is 2^-47.5 above a midpoint) and others. The guarded ops
// (kGuarded) therefore test every float result: a lane whose double value lies within
// kHardMarginUlps = 2^10 double ulps (2^-43 relative, 4x the bound) of a boundary, or whose
// result is a float subnormal (a coarser grid the test does not see) of at least 2^-151
// (smaller results round to +-0 whatever their error), is recomputed by scalar_unary_hard_f32
// (scalar_math.h: long double, 64-bit significand, error below 2^-61), correctly rounded unless
// the exact value lies within 2^-61 of a boundary, where a table answers (hard_case_table.h).
// A lane is hard with probability 2^-18. Finite special lanes (exp beyond its vector range, ...)
// take the scalar double path under the same test (rounds_safely_to_f32). The guarded ops:
// exp, expm1, log, log1p, rsqrt, sin, cos, tanh, erf, sigmoid, silu, gelu (both forms) and
// softplus. The sweep over every float input on every target checks the result.
inline constexpr std::uint64_t kHardMarginUlps = std::uint64_t{1} << 10;

#undef MPSIM_SPECULATIVE_GOLDEN
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
#define MPSIM_SPECULATIVE_GOLDEN 1

inline constexpr std::uint64_t kFastMarginUlps = (std::uint64_t{1} << 16) + 700;

// True where y rounds to float exactly as every value within 2^-37 |y| of it does.
template <class D>
HWY_INLINE hn::Mask<D> RoundsSafely(D d, VecD<D> y) {
  return RoundsSafelyWithin<kFastMarginUlps>(d, y);
}

// e^a for a in [-708, 709]: a = k ln2 + r, |r| <= ln2/2 (one rounding: r's error comes from
// ln2 as a double, |k| 2^-54 < 2^-44 absolute), e^r by the degree-8 kFastExp (2^-39.76), 2^k
// added to the exponent field. Relative error < 2^-39.7.
template <class D>
HWY_INLINE VecD<D> ExpFast(D d, VecD<D> a) {
  const hn::RebindToUnsigned<D> du;
  const VecD<D> shift = hn::Set(d, 0x1.8p52);
  const VecD<D> kd = hn::MulAdd(a, hn::Set(d, 1.4426950408889634), shift);
  const VecD<D> r = hn::NegMulAdd(hn::Sub(kd, shift), hn::Set(d, 0.69314718055994530942), a);
  const VecD<D> p = Horner(d, r, kFastExp);
  // bits(kd) = bits(shift) + k and bits(shift) << 52 == 0, so bits(kd) << 52 == k << 52.
  return hn::BitCast(d, hn::Add(hn::BitCast(du, p), hn::ShiftLeft<52>(hn::BitCast(du, kd))));
}

// 1/den for finite den != 0: vrcp14pd (|e| < 2^-14) and r (1 + e + e^2): relative error
// below 2^-42 + 2^-52.
template <class D>
HWY_INLINE VecD<D> RecipFast(D d, VecD<D> den) {
  const VecD<D> r{_mm512_maskz_rcp14_pd(0xFF, den.raw)};
  const VecD<D> e = hn::NegMulAdd(den, r, hn::Set(d, 1.0));
  return hn::MulAdd(r, hn::MulAdd(e, e, e), r);
}

// Polynomial in u of one of 16 intervals: coefficient k of every lane's interval j (the low 4
// bits of idx's lanes) from a 16-entry row by vpermt2pd.
template <std::size_t K, class D>
HWY_INLINE VecD<D> IntervalPoly(D, VecD<D> u, __m512i idx, const double (&c)[K][16]) {
  auto row = [&](std::size_t k) {
    return VecD<D>{_mm512_permutex2var_pd(_mm512_loadu_pd(c[k]), idx, _mm512_loadu_pd(c[k] + 8))};
  };
  VecD<D> p = row(K - 1);
  for (std::size_t k = K - 1; k-- > 0;) p = hn::MulAdd(p, u, row(k));
  return p;
}

// For a in [0, 16 / scale): j = floor(a scale) in the low bits of the returned index lanes,
// and u = a scale - j - 1/2 in [-1/2, 1/2), exactly (a scale is exact for a float input).
template <class D>
HWY_INLINE __m512i IntervalOf(D d, VecD<D> a, double scale, VecD<D>* u) {
  const VecD<D> s = hn::Mul(a, hn::Set(d, scale));
  const VecD<D> j = hn::Floor(s);
  *u = hn::Sub(hn::Sub(s, j), hn::Set(d, 0.5));
  return _mm512_castpd_si512(hn::Add(j, hn::Set(d, 0x1.8p52)).raw);  // j in the low bits
}

#else
#define MPSIM_SPECULATIVE_GOLDEN 0
#endif

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPSIM_KERNELS_SIMD_VEC_MATH_INL_H_
