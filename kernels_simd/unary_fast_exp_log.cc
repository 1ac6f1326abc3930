// Precision::Fast float32 kernels of the exp and log family (Note [fast float unary] in
// unary_fast.cc): exp, log, log1p, expm1, rsqrt and softplus (beta 1), with log1p's pair form
// that softplus shares.
#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_fast_exp_log.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/highway.h"
#include "kernels_simd/libm_special-inl.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/unary_fast-inl.h"
#include "kernels_simd/precision_fast_tables.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_NATIVE_FMA
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
  static HWY_INLINE VF Special(DF d, VF x) { return LogSpecial(d, x); }
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
  static HWY_INLINE VF Special(DF d, VF x) { return Log1pSpecial(d, x); }
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
  static HWY_INLINE VF Special(DF d, VF x) { return RsqrtSpecialLanes(d, x); }
  static HWY_INLINE MF Golden(DF d, VF x) {
    return hn::Not(hn::And(hn::Gt(x, hn::Zero(d)), hn::Lt(x, hn::Inf(d))));
  }
  template <bool kWide>
  static HWY_INLINE VF Eval(DF d, VF x) {
    VF xs = x;
    if constexpr (kWide)
      xs = hn::IfThenElse(hn::Lt(x, hn::Set(d, 0x1.0p-126f)), hn::Mul(x, hn::Set(d, 0x1.0p24f)), x);
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

bool FastExpLogRow(UnaryKind kind, const float* in, float* out, std::size_t n,
                   const UnaryParams& p) {
  switch (kind) {
    case UnaryKind::Exp:
      FastRow<FastExp>(in, out, n, p);
      return true;
    case UnaryKind::Log:
      FastRow<FastLog>(in, out, n, p);
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
#endif  // HWY_NATIVE_FMA

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
