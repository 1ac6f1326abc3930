// The functors of the unary family, one per op, as vectors: the golden evaluation (in float
// for the exact ops, in double lanes for the others; Note [golden unary evaluation] in
// vec_math-inl.h) and, on AVX-512, its speculative path (Note [rounding test]). Included per
// target by unary.cc, whose row templates apply them.

// Per-target include guard (Highway's pattern: the file is included once per target).
#if defined(MPSIM_KERNELS_SIMD_UNARY_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPSIM_KERNELS_SIMD_UNARY_OPS_INL_H_
#undef MPSIM_KERNELS_SIMD_UNARY_OPS_INL_H_
#else
#define MPSIM_KERNELS_SIMD_UNARY_OPS_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels_simd/libm_special-inl.h"
#include "kernels_simd/scalar_math.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/vec_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A functor either evaluates in float (kWide = false: exact or correctly rounded in float,
// e.g. sqrt) or in double (kWide = true), flagging lanes outside its vector range as special;
// special lanes are recomputed by scalar_unary().
template <UnaryKind K>
struct NarrowOp {
  static constexpr UnaryKind kKind = K;
  static constexpr bool kWide = false;
};
template <UnaryKind K>
struct WideOp {
  static constexpr UnaryKind kKind = K;
  static constexpr bool kWide = true;
  static constexpr bool kOddAtZero = false;
  // The speculative path returns +-0 exactly for +-0 inputs (the rounding test cannot tell).
  static constexpr bool kZeroExact = false;
  // Float results near a rounding boundary are recomputed by scalar_unary_hard_f32 (Note [hard
  // lanes] in vec_math-inl.h).
  static constexpr bool kGuarded = false;
};
// f(+-0) = +-0: the result of a zero input is the input itself, which keeps the sign of zero
// that the polynomial evaluation can lose (sin(-0) = -0, log1p(-0) = -0).
template <UnaryKind K>
struct WideOddOp : WideOp<K> {
  static constexpr bool kOddAtZero = true;
};

struct OpAbs : NarrowOp<UnaryKind::Abs> {
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalF32(D, hn::Vec<D> x) {
    return hn::Abs(x);
  }
};
struct OpNeg : NarrowOp<UnaryKind::Neg> {
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalF32(D, hn::Vec<D> x) {
    return hn::Neg(x);
  }
};
struct OpSqrt : NarrowOp<UnaryKind::Sqrt> {
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalF32(D, hn::Vec<D> x) {
    return hn::Sqrt(x);
  }
};
struct OpReciprocal : NarrowOp<UnaryKind::Reciprocal> {
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalF32(D d, hn::Vec<D> x) {
    return hn::Div(hn::Set(d, 1.0f), x);
  }
};
struct OpSquare : NarrowOp<UnaryKind::Square> {
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalF32(D, hn::Vec<D> x) {
    return hn::Mul(x, x);
  }
};
struct OpRelu : NarrowOp<UnaryKind::Relu> {
  // NaN stays NaN and -0.0 stays -0.0 (-0 >= 0), as PyTorch 1.13's clamp_min(x, 0).
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalF32(D d, hn::Vec<D> x) {
    return hn::IfThenElseZero(hn::Or(hn::Ge(x, hn::Zero(d)), hn::IsNaN(x)), x);
  }
};

template <class D>
HWY_INLINE hn::Mask<D> OutsideClosed(D d, hn::Vec<D> x, double lo, double hi) {
  return hn::Not(hn::And(hn::Ge(x, hn::Set(d, lo)), hn::Le(x, hn::Set(d, hi))));
}
template <class D>
HWY_INLINE hn::Vec<D> Clamp(D d, hn::Vec<D> x, double lo, double hi) {
  return hn::Min(hn::Max(x, hn::Set(d, lo)), hn::Set(d, hi));
}

// exp: f32 results are 0 below -103.98 and inf above 88.72; lanes outside [-104, 88.5] go to
// the scalar path, so the vector path never narrows a double above FLT_MAX (which Highway's
// scalar target clamps instead of rounding to inf).
struct OpExp : WideOp<UnaryKind::Exp> {
  static constexpr bool kGuarded = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = OutsideClosed(d, x, -104.0, 88.5);
    return ExpCore(d, x);  // special lanes: garbage, recomputed by scalar_unary
  }
};
struct OpExpm1 : WideOp<UnaryKind::Expm1> {
  static constexpr bool kGuarded = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = OutsideClosed(d, x, -104.0, 88.5);
    return Expm1Core(d, x);
  }
};
struct OpLog : WideOp<UnaryKind::Log> {
  static constexpr bool kGuarded = true;
  template <class D>
  static HWY_INLINE LogReduced<D> EvalStage1(D d, hn::Vec<D> x) {
    return LogReduce(d, x);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalStage2(D d, hn::Vec<D> x, const LogReduced<D>& t,
                                          const UnaryParams&, hn::Mask<D>* special) {
    *special = OutsideClosed(d, x, 0x1p-1022, 0x1.fffffffffffffp1023);
    return LogFinish(d, t);
  }
  // The special lanes of float inputs (Eval's: no float lies between its double bounds).
  template <class D>
  static HWY_INLINE hn::Mask<D> SpecialLanes(D d, hn::Vec<D> x) {
    return hn::Not(hn::And(hn::Gt(x, hn::Zero(d)), hn::Lt(x, hn::Inf(d))));
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Special(D d, hn::Vec<D> x) {
    return LogSpecial(d, x);
  }
};
struct OpLog1p : WideOddOp<UnaryKind::Log1p> {
  static constexpr bool kGuarded = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = hn::Or(hn::Le(x, hn::Set(d, -1.0)), hn::Not(hn::IsFinite(x)));
    return Log1pCore(d, hn::IfThenZeroElse(*special, x));
  }
  // The special lanes of float inputs (Eval's: no float lies between its double bounds).
  template <class D>
  static HWY_INLINE hn::Mask<D> SpecialLanes(D d, hn::Vec<D> x) {
    return hn::Not(hn::And(hn::Gt(x, hn::Set(d, -1)), hn::Lt(x, hn::Inf(d))));
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Special(D d, hn::Vec<D> x) {
    return Log1pSpecial(d, x);
  }
};
struct OpRsqrt : WideOp<UnaryKind::Rsqrt> {
  static constexpr bool kGuarded = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = OutsideClosed(d, x, 0x1p-1022, 0x1.fffffffffffffp1023);
    const hn::Vec<D> safe_x = hn::IfThenElse(*special, hn::Set(d, 1.0), x);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    if constexpr (std::is_same_v<hn::Vec<D>, hn::Vec512<double>>) {
      // vrsqrt14pd (|e| < 2^-14) refined with e = 1 - x r^2 as
      // r (1 + e/2 + 3e^2/8 + 5e^3/16): truncation 35e^4/128 < 2^-57, relative error < 2^-52.
      // One instruction instead of a float square root and division.
      const hn::Vec<D> r{_mm512_maskz_rsqrt14_pd(0xFF, safe_x.raw)};  // maskz: no GCC warning
      const hn::Vec<D> e = hn::NegMulAdd(hn::Mul(x, r), r, hn::Set(d, 1.0));
      hn::Vec<D> q = hn::MulAdd(e, hn::Set(d, 0.3125), hn::Set(d, 0.375));
      q = hn::MulAdd(q, e, hn::Set(d, 0.5));
      return hn::MulAdd(r, hn::Mul(e, q), r);
    }
#endif
    // A float 1/sqrt r (x is a float, so exact in float) refined in double with the error
    // e = 1 - x r^2 as r (1 + e/2 + 3e^2/8); relative error < 2^-52.
    const hn::Rebind<float, D> df;
    const hn::Vec<D> r =
        hn::PromoteTo(d, hn::Div(hn::Set(df, 1.0f), hn::Sqrt(hn::DemoteTo(df, safe_x))));
    const hn::Vec<D> e = hn::NegMulAdd(hn::Mul(x, r), r, hn::Set(d, 1.0));
    return hn::MulAdd(r, hn::Mul(e, hn::MulAdd(e, hn::Set(d, 0.375), hn::Set(d, 0.5))), r);
  }
  // The special lanes of float inputs (Eval's: no float lies between its double bounds).
  template <class D>
  static HWY_INLINE hn::Mask<D> SpecialLanes(D d, hn::Vec<D> x) {
    return hn::Not(hn::And(hn::Gt(x, hn::Zero(d)), hn::Lt(x, hn::Inf(d))));
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Special(D d, hn::Vec<D> x) {
    return RsqrtSpecialLanes(d, x);
  }
};
struct OpSin : WideOddOp<UnaryKind::Sin> {
  static constexpr bool kGuarded = true;
  template <class D>
  static HWY_INLINE SinCosReduced<D> EvalStage1(D d, hn::Vec<D> x) {
    return SinCosReduceFloat(d, x, SinCosReduce(d, x));  // Note [large trig arguments]
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalStage2(D d, hn::Vec<D> x, const SinCosReduced<D>& t,
                                          const UnaryParams&, hn::Mask<D>* special) {
    *special = hn::Not(hn::IsFinite(x));
    hn::Vec<D> s, c;
    SinCosFinish(d, t, &s, &c);
    return s;
  }
};
struct OpCos : WideOp<UnaryKind::Cos> {
  static constexpr bool kGuarded = true;
  template <class D>
  static HWY_INLINE SinCosReduced<D> EvalStage1(D d, hn::Vec<D> x) {
    return SinCosReduceFloat(d, x, SinCosReduce(d, x));  // Note [large trig arguments]
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalStage2(D d, hn::Vec<D> x, const SinCosReduced<D>& t,
                                          const UnaryParams&, hn::Mask<D>* special) {
    *special = hn::Not(hn::IsFinite(x));
    hn::Vec<D> s, c;
    SinCosFinish(d, t, &s, &c);
    return c;
  }
};
// tanh(x) = e / (e + 2), e = expm1(2x): no cancellation for either sign. |x| > 20 rounds to +-1.
struct OpTanh : WideOp<UnaryKind::Tanh> {
  static constexpr bool kGuarded = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalStage1(D d, hn::Vec<D> x) {
    const hn::Vec<D> xc = Clamp(d, x, -20.0, 20.0);
    return Expm1Core(d, hn::Add(xc, xc));
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalStage2(D d, hn::Vec<D> x, hn::Vec<D> e, const UnaryParams&,
                                          hn::Mask<D>* special) {
    *special = hn::Not(hn::IsFinite(x));
    return hn::Mul(e, Recip(d, hn::Add(e, hn::Set(d, 2.0))));
  }
};
// erf: the series below |x| = 1, 1 - erfc(|x|) (erfc <= 0.16, so no cancellation) above.
struct OpErf : WideOp<UnaryKind::Erf> {
  static constexpr bool kGuarded = true;
  static constexpr bool kZeroExact = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = hn::Not(hn::IsFinite(x));
    const hn::Vec<D> ax = hn::Abs(x);
    const hn::Vec<D> y = hn::Min(hn::Max(ax, hn::Set(d, 1.0)), hn::Set(d, 26.0));
    const hn::Vec<D> large =
        hn::CopySign(hn::Sub(hn::Set(d, 1.0), ErfcCore(d, y, hn::Mul(y, y))), x);
    const hn::Vec<D> small =
        ErfSmallCore(d, hn::Min(hn::Max(x, hn::Set(d, -1.0)), hn::Set(d, 1.0)));
    return hn::IfThenElse(hn::Le(ax, hn::Set(d, 1.0)), small, large);
  }
#if MPSIM_SPECULATIVE_GOLDEN
  // x erf(a)/a on 16 intervals of [0, 4) (kErfOverX: 2^-44.03, + 3 roundings: < 2^-43.5);
  // +-1 from |x| = 4 on (1 - erf(4) = 1.5e-8 is below half an ulp of 1).
  template <class D>
  static HWY_INLINE hn::Vec<D> Fast(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* fail) {
    *fail = hn::IsNaN(x);
    const hn::Vec<D> ax = hn::Abs(x);
    hn::Vec<D> u;
    const __m512i j = IntervalOf(d, hn::Min(ax, hn::Set(d, 0x1.fffffffffffffp1)), 4.0, &u);
    const hn::Vec<D> g = IntervalPoly(d, u, j, kErfOverX);
    return hn::IfThenElse(hn::Ge(ax, hn::Set(d, 4.0)), hn::CopySignToAbs(hn::Set(d, 1.0), x),
                          hn::Mul(x, g));
  }
#endif
};
// sigmoid(x) = 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0: e^-|x| never
// overflows. Below -700 it underflows every output type (after the product with x for silu).
template <class D>
HWY_INLINE hn::Vec<D> SigmoidCore(D d, hn::Vec<D> x) {
  const hn::Vec<D> e = ExpCore(d, hn::Max(hn::Neg(hn::Abs(x)), hn::Set(d, -700.0)));
  const hn::Vec<D> num = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), e, hn::Set(d, 1.0));
  return hn::Mul(num, Recip(d, hn::Add(hn::Set(d, 1.0), e)));
}
#if MPSIM_SPECULATIVE_GOLDEN
// SigmoidCore with ExpFast (2^-39.6) and RecipFast (2^-42): e's error reaches 1 + e halved,
// so the relative error is below 1.5 * 2^-39.6 + 2^-42 + 2^-52 < 2^-38.9. In two stages
// (Note [pipelined speculative paths]): e = e^-|x|, then the quotient.
template <class D>
HWY_INLINE hn::Vec<D> SigmoidFastExp(D d, hn::Vec<D> x) {
  return ExpFast(d, hn::Max(hn::Neg(hn::Abs(x)), hn::Set(d, -700.0)));
}
template <class D>
HWY_INLINE hn::Vec<D> SigmoidFastFromExp(D d, hn::Vec<D> x, hn::Vec<D> e) {
  const hn::Vec<D> num = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), e, hn::Set(d, 1.0));
  return hn::Mul(num, RecipFast(d, hn::Add(hn::Set(d, 1.0), e)));
}
#endif
// Note [sigmoid near zero]
// sigmoid(x) = 1/2 + x/4 - x^3/48 + x^5/480 - 17 x^7/80640 + ... Near 0 the value lies close to
// 1/2 + x/4, which can be a midpoint of the float grid, and the x^3 term (2^-56.6 at |x| =
// 2^-17) decides the rounding: the double evaluation's 2^-45 cannot (sigmoid(-0x1.16p-17) is
// 2^-60 from a midpoint). For |x| < 2^-12 the kernel takes the series: 1/2 + x/4 as an exact
// pair (Fast2Sum, |1/2| >= |x/4|), c = x^3 (x^2/480 - 1/48) in double (the series' rest is
// below 2^-96, c's rounding 2^-53 |c|), and their sum rounded to odd, which the rounding to the
// output type turns into the correctly rounded value. It is correct for every input there:
// for x of exponent e (<= -13), 1/2 + x/4 and every midpoint near 1/2 are multiples of
// 2^(e-25). Where 1/2 + x/4 is a midpoint (|x| >= 2^-24 for that), the exact value lies |c| >=
// 2^-77 from it; elsewhere at least 2^(e-25) - |c| > 2^(e-26) from every midpoint. Both
// distances dwarf the pair's error (2^-53 |c| + 2^-96).
template <class D>
HWY_INLINE hn::Vec<D> SigmoidNearZero(D d, hn::Vec<D> x, hn::Vec<D> r) {
  const auto near = hn::And(hn::Lt(hn::Abs(x), hn::Set(d, 0x1p-12)), hn::Ne(x, hn::Zero(d)));
  if (hn::AllFalse(d, near)) return r;  // the common vector: no lane near 0
  const hn::RebindToSigned<D> di;
  const hn::Vec<D> half = hn::Set(d, 0.5);
  const hn::Vec<D> q = hn::Mul(x, hn::Set(d, 0.25));  // exact
  const hn::Vec<D> hi = hn::Add(half, q);
  const hn::Vec<D> e1 = hn::Sub(q, hn::Sub(hi, half));  // Fast2Sum: hi + e1 = 1/2 + x/4
  const hn::Vec<D> x2 = hn::Mul(x, x);
  const hn::Vec<D> poly =
      hn::Add(hn::Mul(x2, hn::Set(d, 1.0 / 480)), hn::Set(d, -1.0 / 48));  // no FMA: any target
  const hn::Vec<D> lo = hn::Add(e1, hn::Mul(hn::Mul(x2, x), poly));
  const hn::Vec<D> s = hn::Add(hi, lo);
  const hn::Vec<D> err = hn::Sub(lo, hn::Sub(s, hi));  // Fast2Sum: s + err = hi + lo
  // Round to odd: s > 0; where s rounded up (err < 0) the truncation is one ulp below.
  const auto bits = hn::BitCast(di, s);
  const auto down = hn::IfThenElse(hn::RebindMask(di, hn::Lt(err, hn::Zero(d))),
                                   hn::Sub(bits, hn::Set(di, 1)), bits);
  const hn::Vec<D> odd = hn::BitCast(d, hn::Or(down, hn::Set(di, 1)));
  const hn::Vec<D> rounded = hn::IfThenElse(hn::Eq(err, hn::Zero(d)), s, odd);
  return hn::IfThenElse(near, rounded, r);
}

struct OpSigmoid : WideOp<UnaryKind::Sigmoid> {
  static constexpr bool kGuarded = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = hn::Not(hn::IsFinite(x));
    return SigmoidNearZero(d, x, SigmoidCore(d, x));  // Note [sigmoid near zero]
  }
#if MPSIM_SPECULATIVE_GOLDEN
  // +-inf need no care: e^-700 gives 1 for +inf, and a subnormal (never "safe") for -inf.
  template <class D>
  static HWY_INLINE hn::Vec<D> FastStage1(D d, hn::Vec<D> x) {
    return SigmoidFastExp(d, x);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> FastStage2(D d, hn::Vec<D> x, hn::Vec<D> e, const UnaryParams&,
                                          hn::Mask<D>* fail) {
    *fail = hn::IsNaN(x);
    return SigmoidFastFromExp(d, x, e);
  }
#endif
};
// silu, gelu and gelu(tanh) are x/2 + c x^2 + O(x^3) near 0 with c > 0. Below |x| = 2^-54 the
// double evaluation returns exactly x/2, which for an odd subnormal input is a tie of the
// output grid; the exact value lies just above x/2, so step one double ulp toward +inf and
// the final rounding resolves the tie the right way.
template <class D>
HWY_INLINE hn::Vec<D> HalfXNearZero(D d, hn::Vec<D> x, hn::Vec<D> r) {
  const hn::RebindToSigned<D> di;
  const hn::Vec<D> half = hn::Mul(x, hn::Set(d, 0.5));
  const auto step =
      hn::IfThenElse(hn::RebindMask(di, hn::Gt(x, hn::Zero(d))), hn::Set(di, 1), hn::Set(di, -1));
  const hn::Vec<D> nudged = hn::BitCast(d, hn::Add(hn::BitCast(di, half), step));
  const auto tiny = hn::And(hn::Lt(hn::Abs(x), hn::Set(d, 0x1p-54)), hn::Ne(x, hn::Zero(d)));
  return hn::IfThenElse(tiny, nudged, r);
}

struct OpSilu : WideOp<UnaryKind::Silu> {
  static constexpr bool kGuarded = true;
  static constexpr bool kZeroExact = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = hn::Not(hn::IsFinite(x));
    return HalfXNearZero(d, x, hn::Mul(x, SigmoidCore(d, x)));
  }
#if MPSIM_SPECULATIVE_GOLDEN
  // One rounding more than sigmoid's speculative path: < 2^-38.8. Tiny inputs need no nudge here: a
  // subnormal result is never "safe", and a normal x/2 is the correctly rounded value.
  template <class D>
  static HWY_INLINE hn::Vec<D> FastStage1(D d, hn::Vec<D> x) {
    return SigmoidFastExp(d, x);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> FastStage2(D d, hn::Vec<D> x, hn::Vec<D> e, const UnaryParams&,
                                          hn::Mask<D>* fail) {
    *fail = hn::IsNaN(x);
    return hn::Mul(x, SigmoidFastFromExp(d, x, e));
  }
#endif
};
// gelu(x) = x/2 erfc(-x/sqrt2): erfc(y) for x < 0 and 2 - erfc(y) for x >= 0, y = |x|/sqrt2,
// never 1 + erf (which cancels for x < -5). y^2 = x^2/2 is exact for float x.
struct OpGeluErf : WideOp<UnaryKind::GeluErf> {
  static constexpr bool kGuarded = true;
  static constexpr bool kZeroExact = true;
  // The special lanes in the vector, the scalar definition's values: gelu(+inf) = +inf,
  // gelu(-inf) = -inf * 0 (the default NaN), a NaN quieted, and -0 for x <= -16 (|x Phi(x)| <
  // 2^-180): a masked row of -inf or -1e4 stays here, and Eval evaluates those lanes at 0
  // instead, whose erfc is cheap (far in the tail every lane takes its longest series).
  template <class D>
  static HWY_INLINE hn::Mask<D> SpecialLanes(D d, hn::Vec<D> x) {
    return hn::Or(hn::Not(hn::IsFinite(x)), hn::Le(x, hn::Set(d, -16.0)));
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Special(D d, hn::Vec<D> x) {
    const hn::Vec<D> inf = hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, hn::Mul(x, hn::Zero(d)));
    const hn::Vec<D> r = QuietNaNOr(x, inf);
    return hn::IfThenElse(hn::IsFinite(x), hn::Set(d, -0.0), r);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = SpecialLanes(d, x);
    x = hn::IfThenZeroElse(*special, x);
    const hn::Vec<D> y =
        hn::Min(hn::Mul(hn::Abs(x), hn::Set(d, 0.70710678118654752440)), hn::Set(d, 26.0));
    const hn::Vec<D> y2 = hn::Min(hn::Mul(hn::Mul(x, x), hn::Set(d, 0.5)), hn::Set(d, 676.0));
    const hn::Vec<D> r = ErfcCore(d, y, y2);
    const hn::Vec<D> factor =
        hn::IfThenElse(hn::Ge(x, hn::Zero(d)), hn::Sub(hn::Set(d, 2.0), r), r);
    return HalfXNearZero(d, x, hn::Mul(hn::Mul(x, hn::Set(d, 0.5)), factor));
  }
#if MPSIM_SPECULATIVE_GOLDEN
  // q = Phi(-|x|) = exp(L(|x|) - x^2/2), L the smooth part of the tail on 16 intervals of
  // [0, 8) (kGeluLogTail, 2^-40.40 absolute, so relative in q, + Horner's 2^-50); x^2/2 is
  // exact and the exponent rounds once (|arg| < 36: 2^-47.8); ExpFast 2^-39.6: q is within
  // 2^-38.9. gelu = x q for x < 0 and x (1 - q) for x >= 0 (q <= 1/2: 1 - q is no worse),
  // two roundings more: < 2^-38.8. x <= -8 takes the golden path; x >= 8 evaluates L at the
  // top of the table, which only moves q (< 7e-16, below 2^-40 relative to 1 - q).
  // Stage 1 (Note [pipelined speculative paths]): the exponent; stage 2: q and the product.
  template <class D>
  static HWY_INLINE hn::Vec<D> FastStage1(D d, hn::Vec<D> x) {
    hn::Vec<D> u;
    const __m512i j =
        IntervalOf(d, hn::Min(hn::Abs(x), hn::Set(d, 0x1.fffffffffffffp2)), 2.0, &u);
    const hn::Vec<D> tail = IntervalPoly(d, u, j, kGeluLogTail);
    return hn::MulAdd(hn::Mul(x, hn::Set(d, -0.5)), x, tail);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> FastStage2(D d, hn::Vec<D> x, hn::Vec<D> arg, const UnaryParams&,
                                          hn::Mask<D>* fail) {
    *fail = hn::Not(hn::Gt(x, hn::Set(d, -8.0)));  // also NaN
    const hn::Vec<D> q = ExpFast(d, hn::Max(arg, hn::Set(d, -700.0)));
    const hn::Vec<D> factor =
        hn::IfThenElse(hn::Lt(x, hn::Zero(d)), q, hn::Sub(hn::Set(d, 1.0), q));
    return hn::Mul(x, factor);
  }
#endif
};
// gelu(tanh) = x/2 (1 + tanh z) = x sigmoid(2z), z = sqrt(2/pi) (x + 0.044715 x^3).
struct OpGeluTanh : WideOp<UnaryKind::GeluTanh> {
  static constexpr bool kGuarded = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = hn::Not(hn::IsFinite(x));
    const hn::Vec<D> x3 = hn::Mul(hn::Mul(x, x), x);
    const hn::Vec<D> z =
        hn::Mul(hn::Set(d, 0.79788456080286535588), hn::MulAdd(x3, hn::Set(d, 0.044715), x));
    return HalfXNearZero(d, x, hn::Mul(x, SigmoidCore(d, hn::Add(z, z))));
  }
};
// softplus = (max(bx, 0) + log1p(e^{-|bx|})) / b, or x where bx > threshold (PyTorch's switch).
struct OpSoftplus : WideOp<UnaryKind::Softplus> {
  static constexpr bool kGuarded = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams& p, hn::Mask<D>* special) {
    *special = hn::Not(hn::IsFinite(x));
    const hn::Vec<D> beta = hn::Set(d, p.beta);
    const hn::Vec<D> bx = hn::Mul(x, beta);
    const hn::Vec<D> e = ExpCore(d, hn::Neg(hn::Min(hn::Abs(bx), hn::Set(d, 700.0))));
    const hn::Vec<D> sp = hn::Div(hn::Add(hn::Max(bx, hn::Zero(d)), Log1pCore(d, e)), beta);
    return hn::IfThenElse(hn::Gt(bx, hn::Set(d, p.threshold)), x, sp);
  }
};

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPSIM_KERNELS_SIMD_UNARY_OPS_INL_H_
