// float64 unary rows in vectors (Note [float64 exp rows], Note [float64 log rows], Note [float64
// tanh rows], Note [float64 erf rows]): exp, expm1, log, log1p, sigmoid, tanh and erf.
// The other float64 math ops are glibc's functions value by value (scalar_math.h), or the exact
// rows of unary.cc.

// Note [float64 exp rows]
// ~~~~~~~~~~~~~~~~~~~~~~~
// x = N ln2/16 + r, N = round(16 x / ln2) = 16 k + j, j in [0, 16): r1 = x - N L1 is exact (L1 =
// ln2/16 to 38 bits, so N L1 has at most 53 and the difference, below 2^-5.5, sits on x's grid
// or L1's), r = r1 - N L2 rounded once (the rest of ln2/16 is below 2^-106). e^r - 1 = p =
// r + r^2 (1/2 + r/6 + ... + r^5/5040) (truncation below 2^-59 for |r| <= ln2/32), and
// e^x = 2^k (T + (T p + T_lo)) with T = 2^(j/16) as a double pair (kF64Exp2Hi/Lo, 2^-107).
// Roundings: r's 2^-53 |r| (2^-58.5 of the result), p's and the FMA's (2^-58.5 each), then the
// final addition's half ulp: within 0.57 ulp, and correctly rounded except near a midpoint.
// 2^k is added to the exponent field, so the vector range is where the result is normal and
// k in [-1020, 1023]: -707 <= x <= 709; other lanes (NaN, infinities, overflow, subnormal and
// zero results) take glibc's exp, lane by lane, and the row's tail runs through a padded vector:
// every lane's bits depend on its own input only. Targets without FMA round the polynomial's
// products apart: within 1 ulp there too, and their last bits may differ from FMA targets'.
// Tested against long double (unary_accuracy_test: Float64ExpRowsWithinHalfAnUlpAndABit);
// speed: bench/torch_sweep.py ("f64 exp").

// Note [float64 log rows]
// ~~~~~~~~~~~~~~~~~~~~~~~
// x = 2^E m, m in [0.6953125, 1.390625): x's bits minus kF64LogOff give E (the top 12 bits)
// and m's slot i (the next 5: 32 slots of equal bit width, 2^-6 wide below 1 and 2^-5 above,
// 1 the centre of slot 19); c = kF64LogC[i] ~ 1/(slot centre), 1 on slot 19, and
// log x = E ln2 + log(1/c) + log1p(r), r = m c - 1 = rh + pl exactly (m c as an FMA pair, ph - 1
// by Sterbenz), |rh| <= 2^-6 (the generator prints the bound). log1p(r) = rh + Log1pTail(rh) +
// pl (1 - rh), every term past rh at most rh/2 of it, so their roundings cost 2^-60 of the
// result. E ln2_hi (exact: 42 bits) + log(1/c)_hi, then + rh, are exact Fast2Sum pairs
// (|E ln2| >= 0.69 > |log c| unless E = 0; |log c| >= 2^-5.99 > 2^-6.04 >= |rh| unless c = 1),
// the small terms sum apart, and the one rounding that matters is the last: within 0.52 ulp.
// Vector range: normal positive finite x. Zeros, negative x, NaN and +inf get glibc's results
// from its own IEEE operations in the vector (Note [libm special lanes]: a standard normal row
// is half negative), subnormal x glibc's log lane by lane. The three tables sit in registers on
// AVX-512 (Lookup32; three gathers of 128-entry tables, |r| <= 2^-7, held the row at 1.06x
// PyTorch's time) and are gathered elsewhere: the same values, the same bits. Targets without
// FMA (SSE4, scalar) would lose pl, up to 2^-54 absolute on results of 2^-7, so they keep
// glibc's log value by value. Tested against long double
// (unary_accuracy_test: Float64LogRowsWithinHalfAnUlpAndABit).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_f64.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include <cmath>
#include <cstdint>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/cr_tables.h"
#include "kernels_simd/libm_special-inl.h"
#include "kernels_simd/scalar_math.h"
#include "kernels_simd/unary.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

using DD = hn::ScalableTag<double>;
using VD = hn::Vec<DD>;
using DI64 = hn::RebindToSigned<DD>;
using VI64 = hn::Vec<DI64>;

// One value per lane from a 16-entry double table at the low 4 bits of idx: one vpermt2pd on
// AVX-512, a gather elsewhere.
HWY_INLINE VD Lookup16(DD d, const double* table, VI64 idx) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  (void)d;
  return VD{_mm512_permutex2var_pd(_mm512_load_pd(table), idx.raw, _mm512_load_pd(table + 8))};
#else
  return hn::GatherIndex(d, table, hn::And(idx, hn::Set(DI64(), 15)));
#endif
}

// One value per lane from a 32-entry double table at the low 5 bits of idx: two vpermt2pd and
// a blend on AVX-512 (the table in four registers), a gather elsewhere. (Three gathers of
// 128-entry tables held the log rows at 1.06x PyTorch's time.)
HWY_INLINE VD Lookup32(DD d, const double* table, VI64 idx) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  (void)d;
  const __m512d lo =
      _mm512_permutex2var_pd(_mm512_load_pd(table), idx.raw, _mm512_load_pd(table + 8));
  const __m512d hi =
      _mm512_permutex2var_pd(_mm512_load_pd(table + 16), idx.raw, _mm512_load_pd(table + 24));
  const __mmask8 upper = _mm512_test_epi64_mask(idx.raw, _mm512_set1_epi64(16));
  return VD{_mm512_mask_blend_pd(upper, lo, hi)};
#else
  return hn::GatherIndex(d, table, hn::And(idx, hn::Set(DI64(), 31)));
#endif
}

// 1/v for positive normal v to 2^-27.9 relative: AVX-512's vrcp14pd (2^-14) and one Newton step,
// no division (a 512-bit vdivpd issues once per 16 cycles, which held the sigmoid row at 1.34x
// PyTorch's time); elsewhere the quotient, correctly rounded. The caller's correction step
// q (s + s^2), s = 1 - v q, then leaves q s^3 < 2^-83.
HWY_INLINE VD Reciprocal28(DD d, VD v) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const VD q{_mm512_rcp14_pd(v.raw)};
  return hn::MulAdd(q, hn::NegMulAdd(v, q, hn::Set(d, 1.0)), q);
#else
  return hn::Div(hn::Set(d, 1.0), v);
#endif
}

// The lanes of `redo` take f(x) value by value (glibc's bits outside a vector range: NaN
// payloads, infinities, overflow and underflow).
template <class F>
HWY_INLINE void RedoLanes(DD d, VD x, hn::Mask<DD> redo, double* out, F f) {
  if (HWY_LIKELY(hn::AllFalse(d, redo))) return;
  HWY_ALIGN double xs[hn::MaxLanes(DD())];
  hn::Store(x, d, xs);  // `in` may alias `out`
  std::uint8_t bits[HWY_MAX_BYTES / 8 / 8 + 8] = {};
  hn::StoreMaskBits(d, redo, bits);
  for (std::size_t j = 0; j < hn::Lanes(d); ++j) {
    if ((bits[j / 8] >> (j % 8)) & 1) out[j] = f(xs[j]);
  }
}

// e^x = (th + w) 2^k for x in [-707, 709] (Note [float64 exp rows]): th = 2^(j/16)'s high
// part, w = th p + tl, and k52 = k << 52 (to add to a double's bits).
struct ExpF64Parts {
  VD th, w;
  VI64 k52;
};
HWY_INLINE ExpF64Parts ExpCoreF64(DD d, VD x) {
  const DI64 di;
  const VD magic = hn::Set(d, 0x1.8p52);
  const VD t = hn::MulAdd(x, hn::Set(d, 0x1.71547652b82fep+4), magic);  // 16/ln2
  const VD kf = hn::Sub(t, magic);
  const VD r1 = hn::NegMulAdd(kf, hn::Set(d, 0x1.62e42fefa0000p-5), x);  // exact
  const VD r = hn::NegMulAdd(kf, hn::Set(d, 0x1.cf79abc9e3b3ap-44), r1);
  VD c = hn::MulAdd(r, hn::Set(d, 1.0 / 5040), hn::Set(d, 1.0 / 720));
  c = hn::MulAdd(r, c, hn::Set(d, 1.0 / 120));
  c = hn::MulAdd(r, c, hn::Set(d, 1.0 / 24));
  c = hn::MulAdd(r, c, hn::Set(d, 1.0 / 6));
  c = hn::MulAdd(r, c, hn::Set(d, 0.5));
  const VD p = hn::MulAdd(hn::Mul(r, r), c, r);
  const VI64 kbits = hn::BitCast(di, t);
  const VD th = Lookup16(d, kF64Exp2Hi, kbits);
  // 2^k with k = N >> 4: (t's bits with j cleared) << 48 is k << 52 (kMagic's bits leave).
  return {th, hn::MulAdd(th, p, Lookup16(d, kF64Exp2Lo, kbits)),
          hn::ShiftLeft<48>(hn::And(kbits, hn::Set(di, ~std::int64_t{15})))};
}
HWY_INLINE VD ScaleByK(DD d, VD v, VI64 k52) {
  const DI64 di;
  return hn::BitCast(d, hn::Add(hn::BitCast(di, v), k52));
}

// Note [float64 exp rows].
// glibc's saturated results stay in the vector: +0 up to x = -746 (-inf included: below half
// the least subnormal), +inf from x = 710 on (a masked row of -inf).
HWY_INLINE void ExpVectorF64(const double* in, double* out) {
  const DD d;
  const VD x = hn::LoadU(d, in);
  const ExpF64Parts e = ExpCoreF64(d, x);
  VD y = ScaleByK(d, hn::Add(e.th, e.w), e.k52);
  auto special = hn::Not(hn::And(hn::Ge(x, hn::Set(d, -707.0)), hn::Le(x, hn::Set(d, 709.0))));
  if (HWY_UNLIKELY(!hn::AllFalse(d, special))) {
    const auto saturated = hn::Or(hn::Le(x, hn::Set(d, -746.0)), hn::Ge(x, hn::Set(d, 710.0)));
    y = hn::IfThenElse(saturated, hn::IfThenElseZero(hn::Gt(x, hn::Zero(d)), hn::Inf(d)), y);
    special = hn::AndNot(saturated, special);
  }
  hn::StoreU(y, d, out);
  RedoLanes(d, x, special, out, [](double v) { return std::exp(v); });
}

// e^x - 1 = (S - 1) + 2^k (th r + th rl + th q + tl (1 + r)), S = 2^k th, q = r^2 c(r)
// (ExpCoreF64's reduction, with r's rounding error rl and tl r kept: the result can be 2^-5,
// where either is worth 0.3 ulp): S - 1 = s + err exactly (Fast2Sum of the larger and the smaller
// of S and -1 in magnitude), th r = ph + pl exactly (FMA), s + 2^k ph = u + ue exactly (|S - 1| >=
// 0.042 > |th r| unless N = 0, where s = 0), and the rest, below 2^-11 of the result, is summed
// apart: one rounding that matters, within 0.52 ulp (measured). x < -40: -1 (e^x is below half an
// ulp of 1); NaN, x > 709: glibc's expm1; expm1(-0) = -0. Without FMA the th r pair loses its low
// part: glibc's expm1 there.
HWY_INLINE void Expm1VectorF64(const double* in, double* out) {
  const DD d;
  const DI64 di;
  const VD one = hn::Set(d, 1.0);
  const VD x = hn::LoadU(d, in);
  const VD xc = hn::Max(x, hn::Set(d, -40.0));  // NaN lanes are redone below
  const VD magic = hn::Set(d, 0x1.8p52);
  const VD t = hn::MulAdd(xc, hn::Set(d, 0x1.71547652b82fep+4), magic);  // 16/ln2
  const VD kf = hn::Sub(t, magic);
  const VD r1 = hn::NegMulAdd(kf, hn::Set(d, 0x1.62e42fefa0000p-5), xc);  // exact
  // r = r1 - N L2 as a pair r + rl: the result can be 2^-5 where r's rounding is 2^-59.
  const VD l2 = hn::Set(d, 0x1.cf79abc9e3b3ap-44);
  const VD pr = hn::Mul(kf, l2);
  const VD pe = hn::MulSub(kf, l2, pr);  // N L2 = pr + pe exactly
  const VD r = hn::Sub(r1, pr);
  const VD rl = hn::Sub(hn::Sub(hn::Sub(r1, r), pr), pe);  // |pr| < 2^-29 << |r1| or r1 = 0
  // To r^9/9!: the result can be 2^-5, where exp's truncation at r^8 (2^-59.5) would be 0.25 ulp.
  VD c = hn::MulAdd(r, hn::Set(d, 1.0 / 362880), hn::Set(d, 1.0 / 40320));
  c = hn::MulAdd(r, c, hn::Set(d, 1.0 / 5040));
  c = hn::MulAdd(r, c, hn::Set(d, 1.0 / 720));
  c = hn::MulAdd(r, c, hn::Set(d, 1.0 / 120));
  c = hn::MulAdd(r, c, hn::Set(d, 1.0 / 24));
  c = hn::MulAdd(r, c, hn::Set(d, 1.0 / 6));
  c = hn::MulAdd(r, c, hn::Set(d, 0.5));
  const VD q = hn::Mul(hn::Mul(r, r), c);
  const VI64 kbits = hn::BitCast(di, t);
  const VD th = Lookup16(d, kF64Exp2Hi, kbits);
  const VD tl = Lookup16(d, kF64Exp2Lo, kbits);
  const VI64 k52 = hn::ShiftLeft<48>(hn::And(kbits, hn::Set(di, ~std::int64_t{15})));
  const VD big_s = ScaleByK(d, th, k52);
  const auto s_large = hn::Ge(big_s, one);
  const VD a = hn::IfThenElse(s_large, big_s, hn::Neg(one));
  const VD b = hn::IfThenElse(s_large, hn::Neg(one), big_s);
  const VD s = hn::Add(a, b);
  const VD err = hn::Add(hn::Sub(a, s), b);
  const VD ph = hn::Mul(th, r);
  const VD pl = hn::MulSub(th, r, ph);
  const VD ph_k = ScaleByK(d, ph, k52);
  const VD u = hn::Add(s, ph_k);
  const VD ue = hn::Add(hn::Sub(s, u), ph_k);
  const VD rest =
      ScaleByK(d, hn::Add(hn::MulAdd(th, rl, pl), hn::MulAdd(th, q, hn::MulAdd(tl, r, tl))), k52);
  VD y = hn::Add(u, hn::Add(hn::Add(ue, err), rest));
  y = hn::IfThenElse(hn::Lt(x, hn::Set(d, -40.0)), hn::Neg(one), y);
  y = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, y);
  hn::StoreU(y, d, out);
  const auto special = hn::Not(hn::Le(x, hn::Set(d, 709.0)));  // NaN, x > 709
  RedoLanes(d, x, special, out, [](double v) { return std::expm1(v); });
}

// sigmoid(x) = 1/d, d = 1 + t, t = e^-x = (th + w) 2^k (ExpCoreF64) for both signs: th + w =
// eh + el by Fast2Sum, T = eh 2^k exactly and W = el 2^k (|x| <= 700: W is below 2^-1062 only
// where T < 2^-1000), d = dh + dl by Fast2Sum of max(T, 1) and min(T, 1) with W joining dl
// (|dl| <= 1.5 ulp(dh): a q that must also absorb an unnormalized w's 2^-5 dh would need ten
// more terms), q ~ 1/dh to 2^-27.9
// (Reciprocal28), s = (1 - dh q) - dl q by FMAs (their roundings 2^-80 of the result), and
// 1/d = q + q (s + s^2) with q s^3 < 2^-83 dropped: one rounding that matters, plus exp's own
// 2^-57 in t (carried whole where x << 0 and the result is ~1/t): within 0.54 ulp (measured).
// No quotient of t by d: the one form serves both signs (1.26 -> 1.11 ms for 1M doubles, one
// thread, `bench/torch_sweep.py --filter "f64 sigmoid"`). |x| > 700 and NaN: the scalar
// definition (scalar_math.h).
HWY_INLINE void SigmoidVectorF64(const double* in, double* out) {
  const DD d;
  const VD one = hn::Set(d, 1.0);
  const VD x = hn::LoadU(d, in);
  const ExpF64Parts e = ExpCoreF64(d, hn::Neg(x));  // lanes beyond 700 are redone below
  const VD eh = hn::Add(e.th, e.w);
  const VD el = hn::Add(hn::Sub(e.th, eh), e.w);  // |w| < th: th + w = eh + el exactly
  const VD t_hi = ScaleByK(d, eh, e.k52);
  const VD t_lo = hn::Mul(el, ScaleByK(d, one, e.k52));  // el may be 0: scale by multiplying
  const VD big = hn::Max(t_hi, one), little = hn::Min(t_hi, one);
  const VD dh = hn::Add(big, little);
  const VD dl = hn::Add(hn::Add(hn::Sub(big, dh), little), t_lo);
  const VD q = Reciprocal28(d, dh);
  const VD s = hn::NegMulAdd(dl, q, hn::NegMulAdd(dh, q, one));
  VD y = hn::MulAdd(q, hn::MulAdd(s, s, s), q);
  auto special = hn::Not(hn::Le(hn::Abs(x), hn::Set(d, 700.0)));  // NaN, |x| > 700
  if (HWY_UNLIKELY(!hn::AllFalse(d, special))) {
    // The scalar definition's saturated results in the vector: +0 up to x = -746 (e^x is 0),
    // 1 from x = 40 on (1 + e^-x rounds to 1); -inf and +inf included.
    const auto saturated = hn::Or(hn::Le(x, hn::Set(d, -746.0)), hn::Ge(x, hn::Set(d, 40.0)));
    y = hn::IfThenElse(saturated, hn::IfThenElseZero(hn::Gt(x, hn::Zero(d)), one), y);
    special = hn::AndNot(saturated, special);
  }
  hn::StoreU(y, d, out);
  RedoLanes(d, x, special, out, [](double v) { return sigmoid_f64(v); });
}

// Note [float64 tanh rows]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// |x| < 1/8: x + x^3 P(x^2), P tanh's Taylor series from x^3 to x^19 (truncation 2^-67 of the
// result at 1/8; P's roundings are scaled by x^2/3 < 2^-7.5): one rounding that matters.
// Else tanh|x| = (1 - t) / (1 + t), t = e^{-2|x|} as an exact pair th + tl from ExpCoreF64
// (2|x| is exact; t within 2^-57.5), n = 1 - t and d = 1 + t as Fast2Sum pairs, q = RN(1/dh),
// 1/d = q (1 + s) with s = (1 - dh q) - dl q (FMA), and n/d = nh q + (nh q s + nl q + e), e the
// FMA low part of nh q: one rounding that matters, plus t's error over 1 - t >= 0.22, 2^-55.7
// relative: within 0.66 ulp (measured 0.565). |x| is clamped to 353 (t stays normal; tanh is 1
// from 19.1); the sign is x's, and tanh(+-0) = +-0; NaN takes glibc's tanh. FMA targets only (the
// exact products); elsewhere glibc's tanh, value by value. Tested against long double
// (unary_accuracy_test: Float64TanhRowsWithinTwoThirdsOfAnUlp).
HWY_INLINE void TanhVectorF64(const double* in, double* out) {
  const DD d;
  const VD one = hn::Set(d, 1.0);
  const VD x = hn::LoadU(d, in);
  const VD ax = hn::Min(hn::Abs(x), hn::Set(d, 353.0));  // NaN lanes are redone below
  const VD x2 = hn::Mul(x, x);
  VD c = hn::MulAdd(x2, hn::Set(d, -0x1.f57d7734d1664p-13), hn::Set(d, 0x1.3558248036744p-11));
  c = hn::MulAdd(x2, c, hn::Set(d, -0x1.7da36452b75e3p-10));
  c = hn::MulAdd(x2, c, hn::Set(d, 0x1.d6d3d0e157de0p-9));
  c = hn::MulAdd(x2, c, hn::Set(d, -0x1.226e355e6c23dp-7));
  c = hn::MulAdd(x2, c, hn::Set(d, 0x1.664f4882c10fap-6));
  c = hn::MulAdd(x2, c, hn::Set(d, -0x1.ba1ba1ba1ba1cp-5));
  c = hn::MulAdd(x2, c, hn::Set(d, 0x1.1111111111111p-3));
  c = hn::MulAdd(x2, c, hn::Set(d, -0x1.5555555555555p-2));
  const VD series = hn::MulAdd(hn::Mul(x, x2), c, x);  // keeps -0
  const ExpF64Parts e = ExpCoreF64(d, hn::Mul(ax, hn::Set(d, -2.0)));
  const VD eh = hn::Add(e.th, e.w);
  const VD el = hn::Add(hn::Sub(e.th, eh), e.w);
  const VD th = ScaleByK(d, eh, e.k52);
  const VD tl = hn::Mul(el, ScaleByK(d, one, e.k52));
  const VD nh = hn::Sub(one, th);
  const VD nl = hn::Sub(hn::Sub(hn::Sub(one, nh), th), tl);
  const VD dh = hn::Add(one, th);
  const VD dl = hn::Add(hn::Add(hn::Sub(one, dh), th), tl);
  const VD q = hn::Div(one, dh);
  const VD sv = hn::NegMulAdd(dl, q, hn::NegMulAdd(dh, q, one));
  const VD ph = hn::Mul(nh, q);
  const VD pl = hn::MulSub(nh, q, ph);
  const VD y = hn::Add(ph, hn::MulAdd(ph, sv, hn::MulAdd(nl, q, pl)));
  VD r = hn::IfThenElse(hn::Lt(ax, hn::Set(d, 0.125)), series, hn::CopySign(y, x));
  r = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, r);  // tanh(-0) = -0
  hn::StoreU(r, d, out);
  const auto special = hn::IsNaN(x);
  RedoLanes(d, x, special, out, [](double v) { return std::tanh(v); });
}

// Note [float64 erf rows]
// ~~~~~~~~~~~~~~~~~~~~~~~
// |x| < 1: erf(x) = x S(u), u = x^2 (rounded: S' u / S < 0.2, so 2^-53 of u costs 2^-55 of
// the result), S(u) = erf(sqrt u)/sqrt u as a degree-12 Chebyshev interpolant about u = 1/2
// (tools/gen_erf_f64.py: 2^-62.6): S = a0 + v P1(v), v = u - 1/2, taken as a pair (a0 in two
// parts, v P1 an FMA pair, Fast2Sum), then x S as an FMA pair: one rounding that matters, plus
// P1's Horner error scaled by |v P1| / S < 0.18. 1 <= |x| < 6: erf = 1 - erfc(|x|), erfc =
// e^{-x^2} R(t), R = e^{x^2} erfc(x) in t = (x - 2)/(x + 2) in [-1/3, 1/2], a degree-18
// interpolant about t = 1/12 (2^-60.8); x^2 = h + l exactly (FMA) and e^{-x^2} = e^{-h} (1 - l)
// (ExpCoreF64's pair, 2^-57), erfc = e^{-x^2} R as a pair and 1 - erfc by Fast2Sum: one rounding
// that matters, plus R's Horner error, worth at most erfc(1)/erf(1) = 0.19 of it. Measured:
// within 0.75 ulp, the worst near |x| = 1/4 and 1. |x| >= 6: +-1 (erfc(6) < 2^-55). erf(+-0) = +-0;
// NaN takes glibc's erf. FMA targets only; elsewhere glibc's erf, value by value. Tested against
// long double (unary_accuracy_test: Float64ErfRowsWithinAnUlp).
HWY_INLINE void ErfVectorF64(const double* in, double* out) {
  const DD d;
  const VD one = hn::Set(d, 1.0);
  const VD x = hn::LoadU(d, in);
  const VD ax = hn::Abs(x);
  // |x| < 1
  const VD v = hn::MulAdd(x, x, hn::Set(d, -0.5));
  VD p = hn::MulAdd(v, hn::Set(d, 0x1.05ffd737fb32ep-34), hn::Set(d, -0x1.acbabce2865e7p-31));
  p = hn::MulAdd(v, p, hn::Set(d, 0x1.428e938efe043p-27));
  p = hn::MulAdd(v, p, hn::Set(d, -0x1.bf8d2c72b9b8cp-24));
  p = hn::MulAdd(v, p, hn::Set(d, 0x1.1ad5edf90dd80p-20));
  p = hn::MulAdd(v, p, hn::Set(d, -0x1.429e93e668f24p-17));
  p = hn::MulAdd(v, p, hn::Set(d, 0x1.486638bc9befep-14));
  p = hn::MulAdd(v, p, hn::Set(d, -0x1.263991b802ee6p-11));
  p = hn::MulAdd(v, p, hn::Set(d, 0x1.c82aa249df460p-9));
  p = hn::MulAdd(v, p, hn::Set(d, -0x1.2b902b7b2f28ep-6));
  p = hn::MulAdd(v, p, hn::Set(d, 0x1.454368017b042p-4));
  p = hn::MulAdd(v, p, hn::Set(d, -0x1.1fd16292151fdp-2));
  const VD a0h = hn::Set(d, 0x1.ee51eb23cb7eap-1);
  const VD mh = hn::Mul(v, p);
  const VD ml = hn::MulSub(v, p, mh);
  const VD sh = hn::Add(a0h, mh);  // |a0| = 0.97 > |v p| < 0.18
  const VD sl =
      hn::Add(hn::Add(hn::Sub(a0h, sh), mh), hn::Add(ml, hn::Set(d, 0x1.889c029995b06p-55)));
  const VD ph = hn::Mul(x, sh);
  const VD small = hn::Add(ph, hn::MulAdd(x, sl, hn::MulSub(x, sh, ph)));
  // 1 <= |x| < 6
  const VD ac = hn::Min(hn::Max(ax, one), hn::Set(d, 6.0));  // NaN lanes are redone below
  const VD t = hn::Div(hn::Sub(ac, hn::Set(d, 2.0)), hn::Add(ac, hn::Set(d, 2.0)));
  const VD w = hn::Sub(t, hn::Set(d, 0x1.5555555555555p-4));
  VD r = hn::MulAdd(w, hn::Set(d, 0x1.1ff3ece6f55cfp-23), hn::Set(d, -0x1.bbcb288472e4bp-22));
  r = hn::MulAdd(w, r, hn::Set(d, -0x1.4b4607134d369p-20));
  r = hn::MulAdd(w, r, hn::Set(d, 0x1.13c66c551fb62p-24));
  r = hn::MulAdd(w, r, hn::Set(d, 0x1.3a7fc98103617p-18));
  r = hn::MulAdd(w, r, hn::Set(d, 0x1.b113c8b44d4e9p-18));
  r = hn::MulAdd(w, r, hn::Set(d, -0x1.496e2f90bb599p-17));
  r = hn::MulAdd(w, r, hn::Set(d, -0x1.4ef367c71707dp-15));
  r = hn::MulAdd(w, r, hn::Set(d, -0x1.f4d5da54e7305p-19));
  r = hn::MulAdd(w, r, hn::Set(d, 0x1.841d1f2bf7c82p-13));
  r = hn::MulAdd(w, r, hn::Set(d, 0x1.796df5f0d72d0p-13));
  r = hn::MulAdd(w, r, hn::Set(d, -0x1.dc03026c334c9p-11));
  r = hn::MulAdd(w, r, hn::Set(d, -0x1.6fbbf78c02687p-10));
  r = hn::MulAdd(w, r, hn::Set(d, 0x1.a59ad7554ad0ap-8));
  r = hn::MulAdd(w, r, hn::Set(d, 0x1.aca523a392b36p-8));
  r = hn::MulAdd(w, r, hn::Set(d, -0x1.3c74c4a51a176p-4));
  r = hn::MulAdd(w, r, hn::Set(d, 0x1.c6e106001c02ap-3));
  r = hn::MulAdd(w, r, hn::Set(d, -0x1.8ddea0419f381p-2));
  r = hn::MulAdd(w, r, hn::Set(d, 0x1.c57cd9cd3f3a9p-3));
  const VD h = hn::Mul(ac, ac);
  const VD l = hn::MulSub(ac, ac, h);
  const ExpF64Parts e = ExpCoreF64(d, hn::Neg(h));
  // e^{-h} (1 - l) = eh + el' as a pair; erfc = ch + cl with ch = eh R (FMA pair); then
  // 1 - ch by Fast2Sum (ch < 0.16) and the small terms: one rounding that matters
  const VD e0 = hn::Add(e.th, e.w);
  const VD eh = ScaleByK(d, e0, e.k52);
  const VD el = hn::Mul(hn::Add(hn::Sub(e.th, e0), e.w), ScaleByK(d, one, e.k52));
  const VD ch = hn::Mul(eh, r);
  const VD cl = hn::MulAdd(hn::NegMulAdd(eh, l, el), r, hn::MulSub(eh, r, ch));
  const VD s1 = hn::Sub(one, ch);
  const VD large = hn::CopySign(hn::Add(s1, hn::Sub(hn::Sub(hn::Sub(one, s1), ch), cl)), x);
  VD y = hn::IfThenElse(hn::Lt(ax, one), small, large);
  y = hn::IfThenElse(hn::Ge(ax, hn::Set(d, 6.0)), hn::CopySign(one, x), y);
  y = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, y);  // erf(-0) = -0
  hn::StoreU(y, d, out);
  const auto special = hn::IsNaN(x);
  RedoLanes(d, x, special, out, [](double v) { return std::erf(v); });
}

// log1p(r) - r = -r^2/2 + r^3 q(r) for |r| <= 2^-6, q to r^8/11 (truncation 2^-68 of r: with q
// only to r^6/9, 2^-57 cost 0.04 ulp near x = 1.0156 in log).
HWY_INLINE VD Log1pTail(DD d, VD r) {
  const VD r2 = hn::Mul(r, r);
  VD q = hn::MulAdd(r, hn::Set(d, 1.0 / 11), hn::Set(d, -1.0 / 10));
  q = hn::MulAdd(r, q, hn::Set(d, 1.0 / 9));
  q = hn::MulAdd(r, q, hn::Set(d, -1.0 / 8));
  q = hn::MulAdd(r, q, hn::Set(d, 1.0 / 7));
  q = hn::MulAdd(r, q, hn::Set(d, -1.0 / 6));
  q = hn::MulAdd(r, q, hn::Set(d, 1.0 / 5));
  q = hn::MulAdd(r, q, hn::Set(d, -0.25));
  q = hn::MulAdd(r, q, hn::Set(d, 1.0 / 3));
  return hn::MulAdd(hn::Mul(r2, r), q, hn::Mul(r2, hn::Set(d, -0.5)));
}

// Note [float64 log rows]: log(x + xl) for normal positive finite x, |xl| <= ulp(x)/2 (kPair;
// else xl is ignored): xl/x joins the small terms (log1p(xl/x) - xl/x < 2^-107).
template <bool kPair>
HWY_INLINE VD LogCore(DD d, VD x, VD xl) {
  const DI64 di;
  const VD one = hn::Set(d, 1.0);
  const VI64 bits = hn::BitCast(di, x);
  const VI64 tmp = hn::Sub(bits, hn::Set(di, kF64LogOff));
  const VI64 ei = hn::ShiftRight<52>(tmp);
  const VD m = hn::BitCast(d, hn::Sub(bits, hn::ShiftLeft<52>(ei)));
  const VI64 idx = hn::ShiftRight<47>(tmp);  // the slot in its low 5 bits
  const VD c = Lookup32(d, kF64LogC, idx);
  const VD lh = Lookup32(d, kF64LogLHi, idx);
  const VD ll = Lookup32(d, kF64LogLLo, idx);
  const VD ef = hn::ConvertTo(d, ei);
  const VD ph = hn::Mul(m, c);
  const VD pl = hn::MulSub(m, c, ph);  // exact where FMA is (m c = ph + pl)
  const VD rh = hn::Sub(ph, one);      // exact (Sterbenz)
  const VD tail = Log1pTail(d, rh);
  // E ln2_hi + lh (E ln2_hi exact: ln2_hi has 42 bits), then + rh: exact Fast2Sum pairs.
  const VD e_ln2 = hn::Mul(ef, hn::Set(d, 0x1.62e42fefa3800p-1));
  const VD a_hi = hn::Add(e_ln2, lh);
  const VD a_lo = hn::Add(hn::Sub(e_ln2, a_hi), lh);
  const VD s1 = hn::Add(a_hi, rh);
  const VD e1 = hn::Add(hn::Sub(a_hi, s1), rh);
  VD small = hn::Add(tail, hn::NegMulAdd(pl, rh, pl));
  if constexpr (kPair) small = hn::Add(small, hn::Div(xl, x));
  const VD lo = hn::Add(
      hn::Add(hn::MulAdd(ef, hn::Set(d, 0x1.ef35793c7673p-45), ll), hn::Add(a_lo, e1)), small);
  return hn::Add(s1, lo);
}

HWY_INLINE void LogVectorF64(const double* in, double* out) {
  const DD d;
  const VD x = hn::LoadU(d, in);
  const VD y = LogCore<false>(d, x, x);
  const auto special = hn::Not(hn::And(hn::Ge(x, hn::Set(d, 0x1p-1022)), hn::Lt(x, hn::Inf(d))));
  if (HWY_LIKELY(hn::AllFalse(d, special))) {
    hn::StoreU(y, d, out);
    return;
  }
  // x <= 0, +inf and NaN: glibc's values by its IEEE operations, in the vector (Note [libm
  // special lanes]); subnormal x: glibc's log, lane by lane.
  const auto libm = hn::Not(hn::And(hn::Gt(x, hn::Zero(d)), hn::Lt(x, hn::Inf(d))));
  hn::StoreU(hn::IfThenElse(libm, LogSpecial(d, x), y), d, out);
  const auto subnormal = hn::AndNot(libm, special);
  if (HWY_UNLIKELY(!hn::AllFalse(d, subnormal))) {
    HWY_ALIGN double xs[hn::MaxLanes(DD())];
    hn::Store(x, d, xs);  // `in` may alias `out`
    for (std::size_t j = 0; j < hn::Lanes(d); ++j) {
      if (xs[j] > 0 && xs[j] < 0x1p-1022) out[j] = std::log(xs[j]);
    }
  }
}

// log1p(x) = log(w), w = 1 + x = wh + wl exactly (Fast2Sum of max(x, 1) and min(x, 1)), by
// LogCore's pair form for |x| >= 2^-7, x + Log1pTail(x) below: within the log rows' bound for
// every x > -1. log1p(-0) = -0; x <= -1, +inf and NaN get glibc's results by its IEEE
// operations (Note [libm special lanes]): no lane leaves the vector.
// Each form runs only where a lane needs it: a vector of x all at least 2^-7 in magnitude (or all
// below) computes one, a mixed vector both (the same bits either way).
HWY_INLINE void Log1pVectorF64(const double* in, double* out) {
  const DD d;
  const VD one = hn::Set(d, 1.0);
  const VD x = hn::LoadU(d, in);
  // |x| < 2^-7: x + Log1pTail(x) directly (the pair form's small terms, of 1 + x's ulp, would
  // round on a grid coarser than the result's); log1p(+-0) = +-0.
  const auto near0 = hn::Lt(hn::Abs(x), hn::Set(d, 0x1p-7));
  VD y;
  if (HWY_UNLIKELY(hn::AllTrue(d, near0))) {
    y = hn::Add(x, Log1pTail(d, x));
  } else {
    const VD big = hn::Max(x, one), little = hn::Min(x, one);
    const VD wh = hn::Add(big, little);
    const VD wl = hn::Add(hn::Sub(big, wh), little);
    y = LogCore<true>(d, wh, wl);
    if (!hn::AllFalse(d, near0)) y = hn::IfThenElse(near0, hn::Add(x, Log1pTail(d, x)), y);
  }
  y = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, y);
  const auto special = hn::Not(hn::And(hn::Gt(x, hn::Set(d, -1.0)), hn::Lt(x, hn::Inf(d))));
  if (HWY_UNLIKELY(!hn::AllFalse(d, special))) y = hn::IfThenElse(special, Log1pSpecial(d, x), y);
  hn::StoreU(y, d, out);
}

// A dense row through Vector, four vectors per iteration (each vector's chain of dependent
// operations is long: one at a time, 1M doubles of sigmoid took 1.48 ms, four 1.21; log 1.67
// and 1.50; `bench/torch_sweep.py --filter f64`), the tail through a padded vector. Each
// iteration prefetches its lines 4 KiB ahead: the hardware prefetcher alone falls behind these
// long bodies (one AVX-512 thread, `elementwise_bench --benchmark_filter='^unary64(_sd)?/'`:
// sigmoid 4.38 -> 3.45 ms on [2, 320, 64, 64], 29.7 -> 25.6 on 16M; exp 2.32 -> 1.91 and 23.0
// -> 21.4; 8 KiB ahead was no better).
template <void (*Vector)(const double*, double*)>
void RowF64(const double* in, double* out, std::size_t n) {
  const DD d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    for (std::size_t j = 0; j < 4 * lanes; j += 8) hwy::Prefetch(in + i + 512 + j);
    Vector(in + i, out + i);
    Vector(in + i + lanes, out + i + lanes);
    Vector(in + i + 2 * lanes, out + i + 2 * lanes);
    Vector(in + i + 3 * lanes, out + i + 3 * lanes);
  }
  for (; i + lanes <= n; i += lanes) Vector(in + i, out + i);
  if (i < n) {
    HWY_ALIGN double buf_in[hn::MaxLanes(DD())];
    HWY_ALIGN double buf_out[hn::MaxLanes(DD())];
    for (std::size_t j = 0; j < lanes; ++j) buf_in[j] = 1.0;
    for (std::size_t j = i; j < n; ++j) buf_in[j - i] = in[j];
    Vector(buf_in, buf_out);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
}

}  // namespace

bool MathRowsF64(UnaryKind kind, const double* in, double* out, std::size_t n) {
  switch (kind) {
    case UnaryKind::Exp:
      RowF64<ExpVectorF64>(in, out, n);
      return true;
#if HWY_NATIVE_FMA  // m c's exact low part needs FMA: elsewhere glibc's, value by value
    case UnaryKind::Log:
      RowF64<LogVectorF64>(in, out, n);
      return true;
    case UnaryKind::Log1p:
      RowF64<Log1pVectorF64>(in, out, n);
      return true;
    case UnaryKind::Expm1:
      RowF64<Expm1VectorF64>(in, out, n);
      return true;
    case UnaryKind::Sigmoid:
      RowF64<SigmoidVectorF64>(in, out, n);
      return true;
    case UnaryKind::Tanh:
      RowF64<TanhVectorF64>(in, out, n);
      return true;
    case UnaryKind::Erf:
      RowF64<ErfVectorF64>(in, out, n);
      return true;
#endif
    default:
      return false;
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(MathRowsF64);

bool math_rows_f64(UnaryKind kind, const double* in, double* out, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(MathRowsF64)(kind, in, out, n);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
