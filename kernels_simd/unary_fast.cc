// Precision::Fast float32 unary kernels: exp, log, sin, cos, sigmoid, silu, gelu (both forms),
// rsqrt, log1p, expm1 and softplus in float lanes (the golden ones evaluate in double, Note [golden unary
// evaluation] in vec_math-inl.h).

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
//   2^(j/32) pairs and a degree-3 polynomial. No e^(-z^2/2) pair, no pair product, no 1 - Q: ~43 instructions
//   per 16 outputs against ~75. Its fast range is -8.25 <= x < inf (the 32 pieces); vectors
//   with a lane below take FastGelu's form.
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

#include <algorithm>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_fast.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/stream_fence.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/unary_fast_tables.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_NATIVE_FMA
using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
using MF = hn::Mask<DF>;
using DI = hn::RebindToSigned<DF>;
using VI = hn::Vec<DI>;

// Round to an integer by the magic number 1.5 2^23: a + kMagic rounds a (|a| < 2^22) to an
// integer n, and the low bits of the sum's representation are n in two's complement
// (kMagic's own low 22 bits are zero).
constexpr float kMagic = 0x1.8p23f;
constexpr std::int32_t kMagicBits = 0x4b400000;

// 2^k for integer lanes k in [-126, 127], exactly.
HWY_INLINE VF Pow2(DF d, VI k) {
  const DI di;
  return hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(k, hn::Set(di, 127))));
}
// 2^k for k in [-126, 127] from the bits of k + kMagic: the shift drops kMagic's bits.
HWY_INLINE VF Pow2FromMagic(DF d, VI kbits) {
  const DI di;
  return hn::BitCast(d, hn::Add(hn::ShiftLeft<23>(kbits), hn::Set(di, 127 << 23)));
}
HWY_INLINE VI IntFromMagic(VI kbits) { return hn::Sub(kbits, hn::Set(DI(), kMagicBits)); }

// s + e == a + b exactly, given |a| >= |b| (or a == 0).
HWY_INLINE void Fast2Sum(VF a, VF b, VF& s, VF& e) {
  s = hn::Add(a, b);
  e = hn::Add(hn::Sub(a, s), b);
}

// s + e == a + b exactly, any magnitudes (Knuth's 2Sum).
HWY_INLINE void TwoSum(VF a, VF b, VF& s, VF& e) {
  s = hn::Add(a, b);
  const VF bb = hn::Sub(s, a);
  e = hn::Add(hn::Sub(a, hn::Sub(s, bb)), hn::Sub(b, bb));
}

// One value per lane from a 16-entry table at the lanes' indices (the low 4 bits of j): one
// permute on 16-lane targets, two and a blend on 8-lane ones, a gather elsewhere.
HWY_INLINE VF Lookup16(DF d, const float* table, VI j) {
  const DI di;
  if constexpr (hn::MaxLanes(DF()) == 16) {
    return hn::TableLookupLanes(hn::Load(d, table), hn::IndicesFromVec(d, hn::And(j, hn::Set(di, 15))));
  } else if constexpr (hn::MaxLanes(DF()) == 8) {
    const auto idx = hn::IndicesFromVec(d, hn::And(j, hn::Set(di, 7)));
    const MF upper = hn::RebindMask(d, hn::Ne(hn::And(j, hn::Set(di, 8)), hn::Zero(di)));
    return hn::IfThenElse(upper, hn::TableLookupLanes(hn::Load(d, table + 8), idx),
                          hn::TableLookupLanes(hn::Load(d, table), idx));
  } else {
    return hn::GatherIndex(d, table, hn::And(j, hn::Set(di, 15)));
  }
}

// e^(a + a_lo) = (hi + lo) 2^k for a in [-232, 89], |a_lo| <= 2^-17, relative error below
// 2^-29; hi + lo is not normalized (|lo| < 0.023 hi). a = (16 k + j) ln2/16 + r with
// |r| <= ln2/32: r1 = a - (16 k + j) ln2_hi/16 is exact (both terms are multiples of 2^-29 and
// |r1| < 2^-5), the rest of ln2/16 and a_lo round once (2^-30 of r). e^r = 1 + p,
// p = r + r^2 (1/2 + r/6 + r^2/24) (truncation < 2^-34), and 2^(j/16) is a float pair from a
// 16-entry table (Lookup16): hi = 2^(j/16)_hi, lo = 2^(j/16)_hi p + 2^(j/16)_lo.
// kbits: the bits of 16 k + j + kMagic.
// The structs of vectors here are built whole ({...}), never default-constructed and then
// filled: GCC's implicit constructor of such a struct lacks the target attribute on NEON
// ("inlining failed ... target specific option mismatch").
struct ExpParts {
  VF hi, lo;
  VI kbits;
};
HWY_INLINE ExpParts ExpReduce(DF d, VF a, VF a_lo) {
  const VF t = hn::MulAdd(a, hn::Set(d, 0x1.715476p+4f), hn::Set(d, kMagic));
  const VF kf = hn::Sub(t, hn::Set(d, kMagic));
  const VF r1 = hn::NegMulAdd(kf, hn::Set(d, 0x1.62e430p-5f), a);  // exact
  const VF r = hn::Add(r1, hn::NegMulAdd(kf, hn::Set(d, -0x1.05c610p-33f), a_lo));
  VF q = hn::MulAdd(r, hn::Set(d, 0x1.555556p-5f), hn::Set(d, 0x1.555556p-3f));  // 1/24, 1/6
  q = hn::MulAdd(q, r, hn::Set(d, 0.5f));
  const VF p = hn::MulAdd(hn::Mul(r, r), q, r);
  const VI kbits = hn::BitCast(DI(), t);
  const VF hi = Lookup16(d, kExp2Hi, kbits);
  return {hi, hn::MulAdd(hi, p, Lookup16(d, kExp2Lo, kbits)), kbits};
}
// 2^k of ExpParts' kbits (k in [-126, 127]) and k itself.
HWY_INLINE VF ExpScale(DF d, VI kbits) {
  return Pow2FromMagic(d, hn::ShiftRight<4>(kbits));
}
HWY_INLINE VI ExpK(VI kbits) { return hn::ShiftRight<4>(IntFromMagic(kbits)); }

// Each op has a fast range: Wide(x) marks the lanes outside it, which Eval<true> (the full range,
// rarer, slower) computes instead of Eval<false>; of those, Golden(x) marks the lanes left to the
// golden kernel (non-finite inputs, mostly).
struct FastExp {
  static constexpr UnaryKind kKind = UnaryKind::Exp;
  // e^x is normal and finite on [-87, 87].
  static HWY_INLINE MF Wide(DF d, VF x) { return hn::Not(hn::Le(hn::Abs(x), hn::Set(d, 87.0f))); }
  static HWY_INLINE MF Golden(DF d, VF x) { return hn::IsNaN(x); }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    if constexpr (!kWide) {
      const ExpParts e = ExpReduce(d, x, hn::Zero(d));
      return hn::Mul(hn::Add(e.hi, e.lo), ExpScale(d, e.kbits));
    } else {
      const VF a = hn::Min(hn::Max(x, hn::Set(d, -104.0f)), hn::Set(d, 89.0f));
      const ExpParts e = ExpReduce(d, a, hn::Zero(d));
      // k in [-151, 128]: two exact powers, the second rounds (subnormal results) or overflows.
      const VI k = ExpK(e.kbits);
      const VI k1 = hn::ShiftRight<1>(k);
      return hn::Mul(hn::Mul(hn::Add(e.hi, e.lo), Pow2(d, k1)), Pow2(d, hn::Sub(k, k1)));
    }
  }
};

struct FastLog {
  static constexpr UnaryKind kKind = UnaryKind::Log;
  // Normal positive finite x.
  static HWY_INLINE MF Wide(DF d, VF x) {
    return hn::Not(hn::And(hn::Ge(x, hn::Set(d, 0x1.0p-126f)), hn::Lt(x, hn::Inf(d))));
  }
  static HWY_INLINE MF Golden(DF d, VF x) {
    return hn::Not(hn::And(hn::Gt(x, hn::Zero(d)), hn::Lt(x, hn::Inf(d))));
  }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    const DI di;
    // Subnormal x: scale by 2^23 first.
    VF xs = x, ef_bias = hn::Zero(d);
    if constexpr (kWide) {
      const MF tiny = hn::Lt(x, hn::Set(d, 0x1.0p-126f));
      xs = hn::IfThenElse(tiny, hn::Mul(x, hn::Set(d, 0x1.0p23f)), x);
      ef_bias = hn::IfThenElseZero(tiny, hn::Set(d, 23.0f));
    }
    const VI bits = hn::BitCast(di, xs);
    const VI e = hn::ShiftRight<23>(hn::Sub(bits, hn::Set(di, 0x3f3504f3)));  // m >= sqrt(1/2)
    const VF m = hn::BitCast(d, hn::Sub(bits, hn::ShiftLeft<23>(e)));
    const VF f = hn::Sub(m, hn::Set(d, 1.0f));  // exact
    const VF ef = hn::Sub(hn::ConvertTo(d, e), ef_bias);
    VF q = hn::Set(d, kFastLogQ[9]);
    for (int j = 8; j >= 0; --j) q = hn::MulAdd(q, f, hn::Set(d, kFastLogQ[j]));
    const VF tail = hn::MulAdd(hn::Mul(f, f), q, hn::Mul(ef, hn::Set(d, 0x1.7f7d1cp-20f)));
    VF s, sl;
    Fast2Sum(hn::Mul(ef, hn::Set(d, 0x1.62e4p-1f)), f, s, sl);  // |e ln2_hi| >= |f| or e == 0
    return hn::Add(s, hn::Add(sl, tail));
  }
};

// 1/v to 2^-14 or better: the quotients below correct their residual with it, so its error
// enters squared. AVX-512's estimate has 14 bits; AVX2's 12 take a Newton step; elsewhere the
// estimate may be coarser and a division is safe.
HWY_INLINE VF Reciprocal(DF d, VF v) {
#if HWY_TARGET <= HWY_AVX3 && HWY_ARCH_X86
  (void)d;
  return hn::ApproximateReciprocal(v);
#elif HWY_TARGET == HWY_AVX2
  const VF r = hn::ApproximateReciprocal(v);
  return hn::MulAdd(r, hn::NegMulAdd(v, r, hn::Set(d, 1.0f)), r);
#else
  return hn::Div(hn::Set(d, 1.0f), v);
#endif
}

// log1p(uh + ul) = hi + lo (unrounded pair, relative error ~2^-27) for uh in (-1, FLT_MAX],
// |ul| <= 2^-24 |uh|. w = 1 + uh = wh + wl exactly (Fast2Sum of max and min), wh = 2^e m with
// m in [sqrt(1/2), sqrt 2). e == 0 (uh near 0): log1p(uh) = f + f^2 Q(f) with f = uh itself,
// no rounding of 1 + uh; else f = m - 1 (exact) and log(m) + e ln2 as FastLog's, the rest of w
// entering as (wl + ul)/wh by a reciprocal estimate (|that| <= 2^-23 of a result >= 0.34).
struct Log1pParts {
  VF hi, lo;
};
HWY_INLINE Log1pParts Log1pPair(DF d, VF uh, VF ul) {
  const DI di;
  const VF one = hn::Set(d, 1.0f);
  VF wh, wl;
  Fast2Sum(hn::Max(uh, one), hn::Min(uh, one), wh, wl);
  const VI bits = hn::BitCast(di, wh);
  const VI e = hn::ShiftRight<23>(hn::Sub(bits, hn::Set(di, 0x3f3504f3)));  // m >= sqrt(1/2)
  const MF near0 = hn::RebindMask(d, hn::Eq(e, hn::Zero(di)));
  const VF m = hn::BitCast(d, hn::Sub(bits, hn::ShiftLeft<23>(e)));
  const VF f = hn::IfThenElse(near0, uh, hn::Sub(m, one));
  const VF c = hn::Mul(hn::IfThenElse(near0, ul, hn::Add(wl, ul)), Reciprocal(d, wh));
  const VF ef = hn::ConvertTo(d, e);
  VF q = hn::Set(d, kFastLogQ[9]);
  for (int j = 8; j >= 0; --j) q = hn::MulAdd(q, f, hn::Set(d, kFastLogQ[j]));
  const VF tail = hn::MulAdd(hn::Mul(f, f), q, hn::MulAdd(ef, hn::Set(d, 0x1.7f7d1cp-20f), c));
  VF hi, sl;
  Fast2Sum(hn::Mul(ef, hn::Set(d, 0x1.62e4p-1f)), f, hi, sl);  // |e ln2_hi| >= |f| or e == 0
  return {hi, hn::Add(sl, tail)};
}

struct FastLog1p {
  static constexpr UnaryKind kKind = UnaryKind::Log1p;
  // -1 < x < inf; the rest (and NaN) is the golden kernel's.
  static HWY_INLINE MF Wide(DF d, VF x) { return Golden(d, x); }
  static HWY_INLINE MF Golden(DF d, VF x) {
    return hn::Not(hn::And(hn::Gt(x, hn::Set(d, -1.0f)), hn::Lt(x, hn::Inf(d))));
  }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    const Log1pParts l = Log1pPair(d, x, hn::Zero(d));
    return hn::CopySign(hn::Add(l.hi, l.lo), x);  // log1p(-0) = -0
  }
};

struct FastExpm1 {
  static constexpr UnaryKind kKind = UnaryKind::Expm1;
  // -87 <= x <= 88: 2^k T stays normal and finite. Below, expm1 rounds to -1; above 88 it is
  // e^x (FastExp's wide form).
  static HWY_INLINE MF Wide(DF d, VF x) {
    return hn::Not(hn::And(hn::Ge(x, hn::Set(d, -87.0f)), hn::Le(x, hn::Set(d, 88.0f))));
  }
  static HWY_INLINE MF Golden(DF d, VF x) { return hn::Not(hn::IsFinite(x)); }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    if constexpr (kWide) {
      return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), FastExp::Eval<true>(d, x), hn::Set(d, -1.0f));
    } else {
      // |x| <= 0.36: x + x^2 P(x), one rounding and P's (the table path would cancel here).
      VF q = hn::Set(d, kFastExpm1P[7]);
      for (int j = 6; j >= 0; --j) q = hn::MulAdd(q, x, hn::Set(d, kFastExpm1P[j]));
      const VF small = hn::MulAdd(hn::Mul(x, x), q, x);
      // Else e^x - 1 = (S - 1) + L with S = 2^k T_hi, L = 2^k lo: S - 1 = s + err exactly
      // (2Sum); |x| > 0.36 keeps L's rounding below 2^-29 of the result.
      const ExpParts e = ExpReduce(d, x, hn::Zero(d));
      const VF sc = ExpScale(d, e.kbits);
      VF s, err;
      TwoSum(hn::Mul(e.hi, sc), hn::Set(d, -1.0f), s, err);
      const VF big = hn::Add(s, hn::MulAdd(e.lo, sc, err));
      const VF y = hn::IfThenElse(hn::Le(hn::Abs(x), hn::Set(d, kFastExpm1Small)), small, big);
      return hn::CopySign(y, x);  // expm1(-0) = -0
    }
  }
};

struct FastRsqrt {
  static constexpr UnaryKind kKind = UnaryKind::Rsqrt;
  // Normal positive finite x; subnormal x is scaled by 2^24 first (wide form).
  static HWY_INLINE MF Wide(DF d, VF x) {
    return hn::Not(hn::And(hn::Ge(x, hn::Set(d, 0x1.0p-126f)), hn::Lt(x, hn::Inf(d))));
  }
  static HWY_INLINE MF Golden(DF d, VF x) {
    return hn::Not(hn::And(hn::Gt(x, hn::Zero(d)), hn::Lt(x, hn::Inf(d))));
  }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    VF xs = x;
    if constexpr (kWide) xs = hn::IfThenElse(hn::Lt(x, hn::Set(d, 0x1.0p-126f)), hn::Mul(x, hn::Set(d, 0x1.0p24f)), x);
    // y0 to 2^-11 or better (AVX-512 14 bits, AVX2 12; NEON's FRSQRTE gives 8, and one
    // Newton step y0 (3/2 - x y0^2 / 2) ~16; elsewhere the estimate may be coarser and 1/sqrt
    // by division is ~1 ULP), e = 1 - x y0^2 with x y0 an exact pair, and
    // y = y0 + y0 e (1/2 + 3e/8) rounded once: truncation 5e^3/16 < 2^-33.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    const VF y0 = hn::ApproximateReciprocalSqrt(xs);
#elif HWY_ARCH_ARM_A64 && HWY_TARGET == HWY_NEON
    const VF est = hn::ApproximateReciprocalSqrt(xs);
    const VF half_x_est = hn::Mul(hn::Mul(xs, hn::Set(d, 0.5f)), est);
    const VF y0 = hn::Mul(est, hn::NegMulAdd(half_x_est, est, hn::Set(d, 1.5f)));
#else
    const VF y0 = hn::Div(hn::Set(d, 1.0f), hn::Sqrt(xs));
#endif
    const VF pr = hn::Mul(xs, y0);
    const VF pe = hn::MulSub(xs, y0, pr);
    const VF e = hn::NegMulAdd(pe, y0, hn::NegMulAdd(pr, y0, hn::Set(d, 1.0f)));
    const VF c = hn::Mul(e, hn::MulAdd(e, hn::Set(d, 0.375f), hn::Set(d, 0.5f)));
    const VF y = hn::MulAdd(y0, c, y0);
    if constexpr (!kWide) return y;
    return hn::IfThenElse(hn::Lt(x, hn::Set(d, 0x1.0p-126f)), hn::Mul(y, hn::Set(d, 0x1.0p12f)), y);
  }
};

// softplus(x) = max(x, 0) + log1p(e^-|x|) for beta 1: e^-|x| as a normalized pair (|x| <= 87
// keeps it normal), log1p of the pair (Log1pPair), and max(x, 0) + that summed by 2Sum. Above
// min(threshold, 20) the result is x (PyTorch's threshold; beyond 20 e^-x is below x's
// rounding anyway). Below -87 (subnormal results) the golden kernel takes the lane.
struct FastSoftplus {
  static constexpr UnaryKind kKind = UnaryKind::Softplus;
  static HWY_INLINE MF Wide(DF d, VF x) { return Golden(d, x); }
  static HWY_INLINE MF Golden(DF d, VF x) {
    return hn::Not(hn::And(hn::Ge(x, hn::Set(d, -87.0f)), hn::Lt(x, hn::Inf(d))));
  }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x, const UnaryParams& p) {
    const float cut = static_cast<float>(std::min(p.threshold, 20.0));
    const VF a = hn::Max(hn::Or(x, hn::Set(d, -0.0f)), hn::Set(d, -87.0f));  // -|x|, clamped
    const ExpParts e = ExpReduce(d, a, hn::Zero(d));
    const VF sc = ExpScale(d, e.kbits);
    VF th, tl;
    Fast2Sum(e.hi, e.lo, th, tl);  // |lo| < 0.023 hi
    const Log1pParts l = Log1pPair(d, hn::Mul(th, sc), hn::Mul(tl, sc));
    VF s, err;
    TwoSum(hn::Max(x, hn::Zero(d)), l.hi, s, err);
    const VF y = hn::Add(s, hn::Add(err, l.lo));
    return hn::IfThenElse(hn::Gt(x, hn::Set(d, cut)), x, y);
  }
};

// sigmoid(x) = (q0 + corr) * scale, unrounded: q0 + corr is 1/(1 + t) (x >= 0) or t/(1 + t)
// (x < 0), t = e^-|x|, to ~2^-26 relative; scale is 1 or (kWide) the power of two that keeps t
// normal. The fast range |x| <= 80 keeps t and its low part normal.
struct SigmoidParts {
  VF q0, corr, scale;
};
// kPair: the argument is the pair x + x_lo (|x_lo| <= 2^-20 |x|), for gelu(tanh).
template <bool kWide, bool kPair = false>
HWY_INLINE SigmoidParts SigmoidCore(DF d, VF x, VF x_lo = VF()) {
  const DI di;
  const VF one = hn::Set(d, 1.0f);
  VF a = hn::Or(x, hn::Set(d, -0.0f));  // -|x|
  if constexpr (kWide) a = hn::Max(a, hn::Set(d, -150.0f));
  VF a_lo = hn::Zero(d);
  // -|x + x_lo| = a + x_lo's value with x's sign flipped where x >= 0 (clamped a: no matter).
  if constexpr (kPair) a_lo = hn::Xor(x_lo, hn::AndNot(x, hn::Set(d, -0.0f)));
  // k in [-217, 0]; hi <= 1 when k == 0 (a <= 0), so th <= 1 below.
  const ExpParts e = ExpReduce(d, a, a_lo);
  VF eh, el;
  Fast2Sum(e.hi, e.lo, eh, el);
  VF s, extra = one;
  if constexpr (kWide) {
    const VI k = ExpK(e.kbits);
    const VI kn = hn::Max(k, hn::Set(di, -100));
    s = Pow2(d, kn);
    extra = Pow2(d, hn::Sub(k, kn));
  } else {
    s = ExpScale(d, e.kbits);
  }
  const VF th = hn::Mul(eh, s);  // exact: normal
  const VF tl = hn::Mul(el, s);
  VF dh, dl;
  Fast2Sum(one, th, dh, dl);  // t <= 1
  dl = hn::Add(dl, tl);
  const MF neg = hn::Lt(x, hn::Zero(d));
  const VF num = hn::IfThenElse(neg, th, one);
  const VF num_lo = hn::IfThenElseZero(neg, tl);
  const VF r = Reciprocal(d, dh);
  const VF q0 = hn::Mul(num, r);
  // num + num_lo - q0 (dh + dl): the first difference is exact (FMA), the rest is small.
  const VF res = hn::Add(hn::NegMulAdd(q0, dh, num), hn::NegMulAdd(q0, dl, num_lo));
  return {q0, hn::Mul(res, r), kWide ? hn::IfThenElse(neg, extra, one) : one};
}

struct FastSigmoid {
  static constexpr UnaryKind kKind = UnaryKind::Sigmoid;
  static HWY_INLINE MF Wide(DF d, VF x) { return hn::Not(hn::Le(hn::Abs(x), hn::Set(d, 80.0f))); }
  static HWY_INLINE MF Golden(DF d, VF x) { return hn::Not(hn::IsFinite(x)); }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    const SigmoidParts p = SigmoidCore<kWide>(d, x);
    const VF y = hn::Add(p.q0, p.corr);
    return kWide ? hn::Mul(y, p.scale) : y;
  }
};

struct FastSilu {
  static constexpr UnaryKind kKind = UnaryKind::Silu;
  static HWY_INLINE MF Wide(DF d, VF x) { return FastSigmoid::Wide(d, x); }
  static HWY_INLINE MF Golden(DF d, VF x) { return hn::Not(hn::IsFinite(x)); }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    const SigmoidParts p = SigmoidCore<kWide>(d, x);
    const VF y = hn::MulAdd(x, p.q0, hn::Mul(x, p.corr));
    if constexpr (!kWide) return y;
    // Below -150 the core saw -150; x e^x is far below the subnormals there.
    return hn::IfThenElse(hn::Lt(x, hn::Set(d, -150.0f)), hn::Set(d, -0.0f), hn::Mul(y, p.scale));
  }
};

// gelu(tanh) = x sigmoid(u), u = 2 sqrt(2/pi) (x + 0.044715 x^3) = x (c1 + c2 x^2) with the real
// constants as float pairs and u itself a pair (x^2 exact by FMA, the sum by Fast2Sum, the
// product by FMA): sigmoid(u) ~ e^u needs u to ~2^-32 absolute where u ~ -70. |x| <= 9 keeps
// |u| <= 66 (SigmoidCore's fast range); beyond, x clamps to +-100 for u (overflow), and below
// u = -150 the result is -0 as silu's.
struct FastGeluTanh {
  static constexpr UnaryKind kKind = UnaryKind::GeluTanh;
  static HWY_INLINE MF Wide(DF d, VF x) { return hn::Not(hn::Le(hn::Abs(x), hn::Set(d, 9.0f))); }
  static HWY_INLINE MF Golden(DF d, VF x) { return hn::Not(hn::IsFinite(x)); }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    VF xc = x;
    if constexpr (kWide) xc = hn::Min(hn::Max(x, hn::Set(d, -100.0f)), hn::Set(d, 100.0f));
    const VF c1h = hn::Set(d, 0x1.988454p+0f), c1l = hn::Set(d, -0x1.857936p-25f);
    const VF c2h = hn::Set(d, 0x1.2444f2p-4f), c2l = hn::Set(d, 0x1.49b16ap-29f);
    const VF x2 = hn::Mul(xc, xc);
    const VF x2e = hn::MulSub(xc, xc, x2);
    const VF t = hn::Mul(c2h, x2);
    const VF te = hn::MulSub(c2h, x2, t);
    VF ih, il;
    Fast2Sum(hn::Max(c1h, t), hn::Min(c1h, t), ih, il);  // both positive
    il = hn::Add(il, hn::Add(te, hn::MulAdd(c2h, x2e, hn::MulAdd(c2l, x2, c1l))));
    const VF uh = hn::Mul(xc, ih);
    const VF ul = hn::MulAdd(xc, il, hn::MulSub(xc, ih, uh));
    const SigmoidParts p = SigmoidCore<kWide, true>(d, uh, ul);
    const VF y = hn::MulAdd(x, p.q0, hn::Mul(x, p.corr));
    if constexpr (!kWide) return y;
    return hn::IfThenElse(hn::Lt(uh, hn::Set(d, -150.0f)), hn::Set(d, -0.0f), hn::Mul(y, p.scale));
  }
};

// x = n pi/2 + rh + rl (|x| <= 4096): nbits (n + kMagic's bits) and the pair.
struct Reduced {
  VI nbits;
  VF rh, rl;
};
HWY_INLINE Reduced ReduceHalfPi(DF d, VF x) {
  const VF t = hn::MulAdd(x, hn::Set(d, 0x1.45f306p-1f), hn::Set(d, kMagic));
  const VF nf = hn::Sub(t, hn::Set(d, kMagic));
  const VF r1 = hn::NegMulAdd(nf, hn::Set(d, 0x1.921fb6p+0f), x);  // exact
  const VF p2 = hn::Set(d, -0x1.777a5cp-25f);
  const VF p = hn::Mul(nf, p2);
  const VF pe = hn::MulSub(nf, p2, p);  // n P2 == p + pe exactly
  VF rh, se;
  TwoSum(r1, hn::Neg(p), rh, se);  // r1 and p may cancel: no ordering to rely on
  // |se - pe - n P3| stays within about half an ULP of rh: no renormalizing.
  const VF rl = hn::NegMulAdd(nf, hn::Set(d, -0x1.ee59dap-50f), hn::Sub(se, pe));
  return {hn::BitCast(DI(), t), rh, rl};
}

// sin(rh + rl) for |rh| <= pi/4 + tiny.
HWY_INLINE VF SinPair(DF d, VF rh, VF rl, VF r2) {
  VF s = hn::Set(d, -0x1.ae6456p-26f);                 // -1/11!
  s = hn::MulAdd(s, r2, hn::Set(d, 0x1.71de3ap-19f));  //  1/9!
  s = hn::MulAdd(s, r2, hn::Set(d, -0x1.a01a02p-13f)); // -1/7!
  s = hn::MulAdd(s, r2, hn::Set(d, 0x1.111112p-7f));   //  1/5!
  s = hn::MulAdd(s, r2, hn::Set(d, -0x1.555556p-3f));  // -1/3!
  // rl cos(rh) ~ rl (1 - r2/2)
  const VF lo = hn::Mul(rl, hn::NegMulAdd(r2, hn::Set(d, 0.5f), hn::Set(d, 1.0f)));
  return hn::Add(rh, hn::MulAdd(hn::Mul(r2, rh), s, lo));
}

// cos(rh + rl) for |rh| <= pi/4 + tiny.
HWY_INLINE VF CosPair(DF d, VF rh, VF rl, VF r2) {
  VF c = hn::Set(d, 0x1.1eed8ep-29f);                  //  1/12!
  c = hn::MulAdd(c, r2, hn::Set(d, -0x1.27e4fcp-22f)); // -1/10!
  c = hn::MulAdd(c, r2, hn::Set(d, 0x1.a01a02p-16f));  //  1/8!
  c = hn::MulAdd(c, r2, hn::Set(d, -0x1.6c16c2p-10f)); // -1/6!
  c = hn::MulAdd(c, r2, hn::Set(d, 0x1.555556p-5f));   //  1/4!
  const VF half_rh = hn::Mul(rh, hn::Set(d, 0.5f));
  const VF h = hn::Mul(half_rh, rh);
  const VF hl = hn::MulSub(half_rh, rh, h);  // rh^2/2 == h + hl exactly
  VF t, tl;
  Fast2Sum(hn::Set(d, 1.0f), hn::Neg(h), t, tl);
  // tl - hl - rl sin(rh) + r2^2 c
  const VF lo = hn::NegMulAdd(rl, rh, hn::Sub(tl, hl));
  return hn::Add(t, hn::MulAdd(hn::Mul(r2, r2), c, lo));
}

// sin (kCos = false) or cos of x, |x| <= 4096; larger |x| and non-finite x go to the golden
// kernel (no wide form).
template <bool kCos>
struct FastSinCos {
  static constexpr UnaryKind kKind = kCos ? UnaryKind::Cos : UnaryKind::Sin;
  static HWY_INLINE MF Wide(DF d, VF x) {
    return hn::Not(hn::Le(hn::Abs(x), hn::Set(d, 4096.0f)));  // NaN included
  }
  static HWY_INLINE MF Golden(DF d, VF x) { return Wide(d, x); }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    const DI di;
    const Reduced red = ReduceHalfPi(d, x);
    const VF r2 = hn::Mul(red.rh, red.rh);
    const VF sn = SinPair(d, red.rh, red.rl, r2);
    const VF cs = CosPair(d, red.rh, red.rl, r2);
    // sin(x): quadrant 0..3 gives sin r, cos r, -sin r, -cos r; cos(x) is sin(x + pi/2).
    const VI q = kCos ? hn::Add(red.nbits, hn::Set(di, 1)) : red.nbits;
    const MF odd = hn::RebindMask(d, hn::Ne(hn::And(q, hn::Set(di, 1)), hn::Zero(di)));
    const VF v = hn::IfThenElse(odd, cs, sn);
    const VF y = hn::Xor(v, hn::BitCast(d, hn::ShiftLeft<30>(hn::And(q, hn::Set(di, 2)))));
    if constexpr (kCos) {
      return y;
    } else {
      return hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, y);  // sin(-0) = -0
    }
  }
};

struct FastGelu {
  static constexpr UnaryKind kKind = UnaryKind::GeluErf;
  // 2^-60 <= |x| <= 12: z^2/2 <= 72, so e^(-z^2/2) and Q stay normal, and x times the low
  // parts does not underflow (zeros keep their sign in the wide form).
  static HWY_INLINE MF Wide(DF d, VF x) {
    const VF z = hn::Abs(x);
    return hn::Not(hn::And(hn::Le(z, hn::Set(d, 12.0f)), hn::Ge(z, hn::Set(d, 0x1.0p-60f))));
  }
  static HWY_INLINE MF Golden(DF d, VF x) { return hn::Not(hn::IsFinite(x)); }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    const DI di;
    VF z = hn::Abs(x);
    if constexpr (kWide) z = hn::Min(z, hn::Set(d, 15.0f));
    // -z^2/2 == h + l exactly; e^(h + l) = (hi + lo) 2^k.
    const VF neg_half_z = hn::Mul(z, hn::Set(d, -0.5f));
    const VF h = hn::Mul(neg_half_z, z);
    const VF l = hn::MulSub(neg_half_z, z, h);
    const ExpParts e = ExpReduce(d, h, l);
    // The piece: floor(2z) on [0, 3), floor(z) + 3 on [3, 12), 15 from 12 (2z - 1/2 < z + 5/2
    // exactly when z < 3; rounding may pick the piece below at an exact edge, where either
    // polynomial holds).
    const VF jf = hn::Min(hn::MulAdd(z, hn::Set(d, 2.0f), hn::Set(d, -0.5f)),
                          hn::Add(z, hn::Set(d, 2.5f)));
    const VI j = hn::BitCast(di, hn::Add(hn::Min(jf, hn::Set(d, 15.0f)), hn::Set(d, kMagic)));
    const VF u = hn::Sub(z, Lookup16(d, kGeluMid, j));
    // R = c0 + c1 u + u^2 (c2 + ... + c7 u^5), c0 + c1 u as an exact pair.
    VF s = Lookup16(d, kGeluC7, j);
    s = hn::MulAdd(s, u, Lookup16(d, kGeluC6, j));
    s = hn::MulAdd(s, u, Lookup16(d, kGeluC5, j));
    s = hn::MulAdd(s, u, Lookup16(d, kGeluC4, j));
    s = hn::MulAdd(s, u, Lookup16(d, kGeluC3, j));
    s = hn::MulAdd(s, u, Lookup16(d, kGeluC2, j));
    const VF c1 = Lookup16(d, kGeluC1, j);
    const VF c1u = hn::Mul(c1, u);
    const VF c1u_err = hn::MulSub(c1, u, c1u);
    VF rh, rl;
    Fast2Sum(Lookup16(d, kGeluC0Hi, j), c1u, rh, rl);  // |c1 u| < 0.34 R
    rl = hn::Add(rl, hn::Add(hn::Add(c1u_err, Lookup16(d, kGeluC0Lo, j)),
                             hn::Mul(hn::Mul(u, u), s)));
    // Q 2^-k = (hi + lo)(rh + rl), rounded once: qh + ql with ql the rounding's error. Neither
    // pair is normalized (lo < 0.023 hi, rl < 0.02 rh): lo rl counts.
    const VF lo_terms = hn::MulAdd(e.hi, rl, hn::MulAdd(e.lo, rh, hn::Mul(e.lo, rl)));
    const VF qh = hn::MulAdd(e.hi, rh, lo_terms);
    const VF ql = hn::Add(hn::MulSub(e.hi, rh, qh), lo_terms);
    VF sc;
    if constexpr (!kWide) {
      sc = ExpScale(d, e.kbits);  // k in [-104, 0]: Q 2^k normal
    } else {
      // k in [-163, 0]: below 2^-126 Q no longer reaches 1 - Q's rounding, and x Q takes the
      // rest of 2^k after the product.
      sc = Pow2(d, hn::Max(ExpK(e.kbits), hn::Set(di, -126)));
    }
    const VF qs = hn::Mul(qh, sc), qs_lo = hn::Mul(ql, sc);
    // x < 0: x Q; x >= 0: x (1 - Q) = x - x Q.
    VF ph, pl;
    Fast2Sum(hn::Set(d, 1.0f), hn::Neg(qs), ph, pl);
    pl = hn::Sub(pl, qs_lo);
    const MF neg = hn::Lt(x, hn::Zero(d));
    const VF ah = hn::IfThenElse(neg, qs, ph);
    const VF al = hn::IfThenElse(neg, qs_lo, pl);
    const VF y = hn::MulAdd(x, ah, hn::Mul(x, al));
    if constexpr (!kWide) return y;
    // x Q for x < 0: the product first, then 2^k as two exact powers (Q 2^k may be subnormal
    // where x Q is not).
    const VI k = ExpK(e.kbits);
    const VI k1 = hn::ShiftRight<1>(k);
    const VF y_tail = hn::Mul(hn::Mul(hn::MulAdd(x, qh, hn::Mul(x, ql)), Pow2(d, k1)),
                              Pow2(d, hn::Sub(k, k1)));
    // Below -15 (z clamped) x Q is far below the subnormals.
    const VF y_neg = hn::IfThenElse(hn::Lt(x, hn::Set(d, -15.0f)), hn::Set(d, -0.0f), y_tail);
    const VF y_all = hn::IfThenElse(neg, y_neg, y);
    // |x| < 2^-60: gelu(x) = x/2 (x^2/sqrt(2 pi) is below its rounding), and x times the low
    // parts above would underflow coarsely.
    return hn::IfThenElse(hn::Lt(z, hn::Set(d, 0x1.0p-60f)), hn::Mul(x, hn::Set(d, 0.5f)), y_all);
  }
};

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// One value per lane from a 32-entry table at the low 5 bits of idx's lanes: one vpermt2ps.
HWY_INLINE VF Lookup32(const float* table, VI idx) {
  return VF{_mm512_permutex2var_ps(_mm512_load_ps(table), idx.raw, _mm512_load_ps(table + 16))};
}

// gelu on AVX-512, where a 32-entry table costs one permute: gelu(x) = x Phi(x) with
// Phi(x) = 2^(B/32), B = 32 log2 Phi a degree-5 polynomial on half-unit pieces around
// round(2x)/2 (kGelu32*, one permute per coefficient), so that one exp and no pair product
// remain (Note [fast float unary]). Fast range -8.25 <= x < inf; the rest is FastGelu's.
struct FastGelu512 {
  static constexpr UnaryKind kKind = UnaryKind::GeluErf;
  static HWY_INLINE MF Wide(DF d, VF x) {
    return hn::Not(hn::And(hn::Ge(x, hn::Set(d, -8.25f)),
                           hn::Le(x, hn::Set(d, std::numeric_limits<float>::max()))));
  }
  static HWY_INLINE MF Golden(DF d, VF x) { return FastGelu::Golden(d, x); }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    if constexpr (kWide) {
      return FastGelu::Eval<true>(d, x);
    } else {
      const DI di;
      const VF magic = hn::Set(d, kMagic);
      // Beyond 7.25, Phi rounds to 1 in x Phi; the last piece is m = 15 (7.5).
      const VF xc = hn::Min(x, hn::Set(d, 7.5f));
      const VF t = hn::MulAdd(xc, hn::Set(d, 2.0f), magic);
      const VI m = hn::BitCast(di, t);  // round(2 xc) in the low bits: the slot
      const VF u = hn::MulAdd(hn::Sub(t, magic), hn::Set(d, -0.5f), xc);  // exact, |u| <= 1/4
      VF s = Lookup32(kGelu32B5, m);
      s = hn::MulAdd(s, u, Lookup32(kGelu32B4, m));
      s = hn::MulAdd(s, u, Lookup32(kGelu32B3, m));
      s = hn::MulAdd(s, u, Lookup32(kGelu32B2, m));
      // B = b0 + b1 u + u^2 s (+ the pairs' low parts): b1 u is an exact pair.
      const VF b1 = Lookup32(kGelu32B1Hi, m);
      const VF b1u = hn::Mul(b1, u);
      const VF b1u_err = hn::MulSub(b1, u, b1u);
      const VF u2 = hn::Mul(u, u);
      const VF b0 = Lookup32(kGelu32B0Hi, m);
      // n = round(B), from B to ~2^-12; then r = B - n, |r| <= 0.52: b0 - n is exact (both on
      // the 2^-15 grid, |b0 - n| < 2^9), adding b1 u is exact where |b1 u| >= 1 (Sterbenz:
      // there |u^2 s| < |b1 u| / 3) and rounds below 2^-25 where not, and the rest sums to |r|.
      const VF te = hn::Add(hn::Add(hn::MulAdd(u2, s, b1u), b0), magic);
      const VF n = hn::Sub(te, magic);
      const VF r2 = hn::Add(hn::Sub(b0, n), b1u);
      const VF lo = hn::MulAdd(Lookup32(kGelu32B1Lo, m), u,
                               hn::Add(b1u_err, Lookup32(kGelu32B0Lo, m)));
      const VF r = hn::Add(hn::MulAdd(u2, s, r2), lo);
      // Phi = 2^(n/32) 2^(r/32): 2^(j/32) a pair from the table (j = n mod 32), 2^k exact.
      VF p = hn::MulAdd(hn::Set(d, kExp2x32Poly[2]), r, hn::Set(d, kExp2x32Poly[1]));
      p = hn::Mul(hn::MulAdd(p, r, hn::Set(d, kExp2x32Poly[0])), r);
      const VI nbits = hn::BitCast(di, te);
      const VF th = Lookup32(kExp2x32Hi, nbits);
      const VF tl = hn::MulAdd(th, p, Lookup32(kExp2x32Lo, nbits));
      // k = n >> 5 in [-54, 0]: x Phi 2^-k rounds once, the scaling is exact (normal results;
      // x -> 0: Phi -> 1/2 and x 2^-1 rounds as the golden x/2).
      const VF scale = Pow2FromMagic(d, hn::ShiftRight<5>(nbits));
      return hn::Mul(hn::MulAdd(x, th, hn::Mul(x, tl)), scale);
    }
  }
};
using FastGeluOp = FastGelu512;

// sigmoid on AVX-512 as a piecewise polynomial: degree 6 on the half-unit pieces around
// m/2, m = round(2x) = -16..15 (kSig32*, one permute per coefficient; the last piece reaches
// x = 9, where sigmoid is within 2^-13 of 1 and smooth), c0 and c1 as pairs: the sum
// c0 + c1 u is an FMA with its rounding error recovered by a second FMA (c0 - s is exact:
// |c1 u| <= c0 / 4), and the rest (~2^-5 of c0 at most) is a float tail. The result is
// s + tail, unrounded, to 2^-30 relative. ~31 instructions per 16 outputs against ~44 for the
// quotient of exps; fast range -8.25 <= x <= 9, the rest takes FastSigmoid's (Wide) form.
struct Sigmoid32Parts {
  VF s, tail;
};
HWY_INLINE Sigmoid32Parts Sigmoid32(DF d, VF x) {
  const DI di;
  const VF magic = hn::Set(d, kMagic);
  const VF t = hn::MulAdd(hn::Min(x, hn::Set(d, 7.5f)), hn::Set(d, 2.0f), magic);
  const VI m = hn::BitCast(di, t);  // round(2x) in the low bits: the slot
  const VF u = hn::MulAdd(hn::Sub(t, magic), hn::Set(d, -0.5f), x);  // exact
  VF p = Lookup32(kSig32C6, m);
  p = hn::MulAdd(p, u, Lookup32(kSig32C5, m));
  p = hn::MulAdd(p, u, Lookup32(kSig32C4, m));
  p = hn::MulAdd(p, u, Lookup32(kSig32C3, m));
  p = hn::MulAdd(p, u, Lookup32(kSig32C2, m));
  const VF c0 = Lookup32(kSig32C0Hi, m);
  const VF c1 = Lookup32(kSig32C1Hi, m);
  const VF sum = hn::MulAdd(c1, u, c0);
  const VF s_err = hn::MulAdd(c1, u, hn::Sub(c0, sum));
  const VF lo = hn::MulAdd(Lookup32(kSig32C1Lo, m), u, hn::Add(Lookup32(kSig32C0Lo, m), s_err));
  return {sum, hn::MulAdd(hn::Mul(u, u), p, lo)};
}
HWY_INLINE MF Sigmoid32Wide(DF d, VF x) {
  return hn::Not(hn::And(hn::Ge(x, hn::Set(d, -8.25f)), hn::Le(x, hn::Set(d, 9.0f))));
}

struct FastSigmoid512 {
  static constexpr UnaryKind kKind = UnaryKind::Sigmoid;
  static HWY_INLINE MF Wide(DF d, VF x) { return Sigmoid32Wide(d, x); }
  static HWY_INLINE MF Golden(DF d, VF x) { return FastSigmoid::Golden(d, x); }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    if constexpr (kWide) return FastSigmoid::Eval<true>(d, x);
    const Sigmoid32Parts r = Sigmoid32(d, x);
    return hn::Add(r.s, r.tail);
  }
};

// silu = x sigmoid(x) = x s + x tail, rounded once (x s exact inside the FMA).
struct FastSilu512 {
  static constexpr UnaryKind kKind = UnaryKind::Silu;
  static HWY_INLINE MF Wide(DF d, VF x) { return Sigmoid32Wide(d, x); }
  static HWY_INLINE MF Golden(DF d, VF x) { return FastSilu::Golden(d, x); }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    if constexpr (kWide) return FastSilu::Eval<true>(d, x);
    const Sigmoid32Parts r = Sigmoid32(d, x);
    return hn::MulAdd(x, r.s, hn::Mul(x, r.tail));
  }
};

// sin (kCos = false) or cos on AVX-512, where a 32-entry table costs one permute: x = n pi/16 +
// rh + rl with |rh| <= pi/32 (pi/16 in three floats, as ReduceHalfPi's pi/2), then
// sin(theta + u) = S cos u + C sin u with S + C i = e^(i theta), theta = n pi/16, from 32-entry
// pair tables (cos: theta + pi/2, the slot n + 8). S + C u is an FMA with its rounding error
// recovered by a second (S - s is exact: |C u| < |S|/2 where S != 0), and the rest, below 2^-7
// of the result (S (cos u - 1), C (sin u - u), C rl and the tables' low parts), is a float
// tail. One polynomial pair of degree 6 and 5 in u instead of sin and cos of the reduced
// argument, ~40 instructions per 16 outputs against ~52. Fast range |x| <= 4096 as FastSinCos.
template <bool kCos>
struct FastSinCos512 {
  static constexpr UnaryKind kKind = kCos ? UnaryKind::Cos : UnaryKind::Sin;
  static HWY_INLINE MF Wide(DF d, VF x) { return FastSinCos<kCos>::Wide(d, x); }
  static HWY_INLINE MF Golden(DF d, VF x) { return FastSinCos<kCos>::Golden(d, x); }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    const DI di;
    const VF t = hn::MulAdd(x, hn::Set(d, 0x1.45f306p+2f), hn::Set(d, kMagic));  // 16/pi
    const VF nf = hn::Sub(t, hn::Set(d, kMagic));
    const VF r1 = hn::NegMulAdd(nf, hn::Set(d, 0x1.921fb6p-3f), x);  // exact (|x| <= 4096)
    const VF p2 = hn::Set(d, -0x1.777a5cp-28f);
    const VF p = hn::Mul(nf, p2);
    const VF pe = hn::MulSub(nf, p2, p);  // n P2 == p + pe exactly
    VF rh, se;
    TwoSum(r1, hn::Neg(p), rh, se);  // r1 and p may cancel
    const VF rl = hn::NegMulAdd(nf, hn::Set(d, -0x1.ee59dap-53f), hn::Sub(se, pe));
    VI m = hn::BitCast(di, t);  // n in the low bits: the slot
    if constexpr (kCos) m = hn::Add(m, hn::Set(di, 8));
    const VF sh = Lookup32(kSinPi16Hi, m);
    const VF ch = Lookup32(kCosPi16Hi, m);
    const VF u2 = hn::Mul(rh, rh);
    VF cq = hn::MulAdd(u2, hn::Set(d, -0x1.6c16c2p-10f), hn::Set(d, 0x1.555556p-5f));  // -1/720, 1/24
    const VF cm = hn::Mul(hn::MulAdd(cq, u2, hn::Set(d, -0.5f)), u2);                   // cos u - 1
    const VF sq = hn::MulAdd(u2, hn::Set(d, 0x1.111112p-7f), hn::Set(d, -0x1.555556p-3f));  // 1/120, -1/6
    const VF sm = hn::Mul(sq, hn::Mul(u2, rh));                                            // sin u - u
    const VF s = hn::MulAdd(ch, rh, sh);
    const VF s_err = hn::MulAdd(ch, rh, hn::Sub(sh, s));
    VF tail = hn::MulAdd(ch, rl, Lookup32(kSinPi16Lo, m));
    tail = hn::MulAdd(Lookup32(kCosPi16Lo, m), rh, tail);
    tail = hn::MulAdd(sh, cm, tail);
    tail = hn::MulAdd(ch, sm, tail);
    const VF y = hn::Add(s, hn::Add(tail, s_err));
    if constexpr (kCos) {
      return y;
    } else {
      return hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, y);  // sin(-0) = -0
    }
  }
};
using FastSigmoidOp = FastSigmoid512;
using FastSiluOp = FastSilu512;
template <bool kCos>
using FastSinCosOp = FastSinCos512<kCos>;
#else
using FastGeluOp = FastGelu;
using FastSigmoidOp = FastSigmoid;
using FastSiluOp = FastSilu;
template <bool kCos>
using FastSinCosOp = FastSinCos<kCos>;
#endif

// Stores a float vector: streaming (`out` aligned to the vector) or normal.
HWY_INLINE void StoreOut(VF v, DF d, float* out, bool stream) {
  if (stream) {
    hn::Stream(v, d, out);
  } else {
    hn::StoreU(v, d, out);
  }
}

// Op::Eval<kWide>(d, x), or Op::Eval<kWide>(d, x, p) for the ops with parameters (softplus).
template <class Op, bool kWide>
HWY_INLINE VF EvalOp(DF d, VF x, const UnaryParams& p) {
  if constexpr (requires { Op::template Eval<kWide>(d, x, p); }) {
    return Op::template Eval<kWide>(d, x, p);
  } else {
    return Op::template Eval<kWide>(d, x);
  }
}

template <class Op>
HWY_INLINE void FastVector(const float* in, float* out, const UnaryParams& p, bool stream) {
  const DF d;
  const VF x = hn::LoadU(d, in);
  const MF wide = Op::Wide(d, x);
  if (HWY_LIKELY(hn::AllFalse(d, wide))) {
    StoreOut(EvalOp<Op, false>(d, x, p), d, out, stream);
    return;
  }
  const VF y = hn::IfThenElse(wide, EvalOp<Op, true>(d, x, p), EvalOp<Op, false>(d, x, p));
  const MF golden = Op::Golden(d, x);
  if (HWY_LIKELY(hn::AllFalse(d, golden))) {
    StoreOut(y, d, out, stream);
    return;
  }
  HWY_ALIGN float xs[hn::MaxLanes(DF())];
  hn::Store(x, d, xs);  // `in` may alias `out`
  StoreOut(y, d, out, stream);
  std::uint8_t bits[(hn::MaxLanes(DF()) + 7) / 8 + 8] = {};
  hn::StoreMaskBits(d, golden, bits);
  UnaryParams one = p;
  one.stream_out = false;
  one.fast = false;
  for (std::size_t j = 0; j < hn::Lanes(d); ++j) {
    if ((bits[j / 8] >> (j % 8)) & 1) unary_row_f32(Op::kKind, &xs[j], &out[j], 1, one);
  }
}

template <class Op>
void FastRow(const float* in, float* out, std::size_t n, const UnaryParams& p) {
  const DF d;
  const std::size_t step = hn::Lanes(d);
  const bool stream =
      p.stream_out && reinterpret_cast<std::uintptr_t>(out) % (step * sizeof(float)) == 0;
  std::size_t i = 0;
  for (; i + step <= n; i += step) {
    hwy::Prefetch(in + i + 1024);  // 4 KiB ahead
    FastVector<Op>(in + i, out + i, p, stream);
  }
  if (i < n) {
    HWY_ALIGN float buf_in[hn::MaxLanes(DF())] = {};
    HWY_ALIGN float buf_out[hn::MaxLanes(DF())];
    for (std::size_t j = i; j < n; ++j) buf_in[j - i] = in[j];
    FastVector<Op>(buf_in, buf_out, p, false);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
  if (stream) stream_fence();
}

bool UnaryFastRowF32(UnaryKind kind, const float* in, float* out, std::size_t n,
                     const UnaryParams& p) {
  switch (kind) {
    case UnaryKind::Exp:
      FastRow<FastExp>(in, out, n, p);
      return true;
    case UnaryKind::Log:
      FastRow<FastLog>(in, out, n, p);
      return true;
    case UnaryKind::Sin:
      FastRow<FastSinCosOp<false>>(in, out, n, p);
      return true;
    case UnaryKind::Cos:
      FastRow<FastSinCosOp<true>>(in, out, n, p);
      return true;
    case UnaryKind::Sigmoid:
      FastRow<FastSigmoidOp>(in, out, n, p);
      return true;
    case UnaryKind::Silu:
      FastRow<FastSiluOp>(in, out, n, p);
      return true;
    case UnaryKind::GeluErf:
      FastRow<FastGeluOp>(in, out, n, p);
      return true;
    case UnaryKind::GeluTanh:
      FastRow<FastGeluTanh>(in, out, n, p);
      return true;
    case UnaryKind::Log1p:
      FastRow<FastLog1p>(in, out, n, p);
      return true;
    case UnaryKind::Expm1:
      FastRow<FastExpm1>(in, out, n, p);
      return true;
    case UnaryKind::Rsqrt:
      FastRow<FastRsqrt>(in, out, n, p);
      return true;
    case UnaryKind::Softplus:
      if (p.beta != 1) return false;  // x beta rounds: the golden kernel
      FastRow<FastSoftplus>(in, out, n, p);
      return true;
    default:
      return false;
  }
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
