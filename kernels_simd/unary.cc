// The unary family: every elementwise math op is one functor applied by one row template.
// Numerics: Note [golden unary evaluation] in vec_math-inl.h.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary.cc"
#include "kernels_simd/unary.h"

#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels_simd/libm_special-inl.h"
#include "kernels_simd/scalar_math.h"
#include "kernels_simd/stream_fence.h"
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
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = OutsideClosed(d, x, -104.0, 88.5);
    return ExpCore(d, x);  // special lanes: garbage, recomputed by scalar_unary
  }
};
struct OpExpm1 : WideOp<UnaryKind::Expm1> {
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = OutsideClosed(d, x, -104.0, 88.5);
    return Expm1Core(d, x);
  }
};
struct OpLog : WideOp<UnaryKind::Log> {
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
    return RsqrtSpecial(d, x);
  }
};
struct OpSin : WideOddOp<UnaryKind::Sin> {
  template <class D>
  static HWY_INLINE SinCosReduced<D> EvalStage1(D d, hn::Vec<D> x) {
    return SinCosReduce(d, x);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalStage2(D d, hn::Vec<D> x, const SinCosReduced<D>& t,
                                          const UnaryParams&, hn::Mask<D>* special) {
    *special = OutsideClosed(d, x, -0x1p18, 0x1p18);
    hn::Vec<D> s, c;
    SinCosFinish(d, t, &s, &c);
    return s;
  }
};
struct OpCos : WideOp<UnaryKind::Cos> {
  template <class D>
  static HWY_INLINE SinCosReduced<D> EvalStage1(D d, hn::Vec<D> x) {
    return SinCosReduce(d, x);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> EvalStage2(D d, hn::Vec<D> x, const SinCosReduced<D>& t,
                                          const UnaryParams&, hn::Mask<D>* special) {
    *special = OutsideClosed(d, x, -0x1p18, 0x1p18);
    hn::Vec<D> s, c;
    SinCosFinish(d, t, &s, &c);
    return c;
  }
};
// tanh(x) = e / (e + 2), e = expm1(2x): no cancellation for either sign. |x| > 20 rounds to +-1.
struct OpTanh : WideOp<UnaryKind::Tanh> {
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
struct OpSigmoid : WideOp<UnaryKind::Sigmoid> {
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = hn::Not(hn::IsFinite(x));
    return SigmoidCore(d, x);
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
  static constexpr bool kZeroExact = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Eval(D d, hn::Vec<D> x, const UnaryParams&, hn::Mask<D>* special) {
    *special = hn::Not(hn::IsFinite(x));
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

// Ops with an AVX-512 speculative path (Note [rounding test]) define Fast(d, x, params, &fail), or
// the same in two stages (FastStage1, FastStage2: Note [pipelined speculative paths]), whose result
// on lanes outside `fail` is within 2^-37 relative of the exact value.
template <class Op, class D>
concept HasOneStageFast = requires(D d, hn::Vec<D> x, const UnaryParams& p, hn::Mask<D>* fail) {
  { Op::Fast(d, x, p, fail) };
};
// Note [pipelined speculative paths]
// A speculative path is one long chain of dependent instructions per vector (sigmoid: ~95 cycles
// for ~36 uops). Out-of-order execution overlaps the chains of successive vectors only as far as
// its scheduler holds the uops still waiting for their inputs, and a long chain keeps most of its
// uops waiting: the loop ran at about half the two vector ports' rate. Ops whose speculative path
// splits in two (FastStage1: x -> t, FastStage2: (x, t) -> y) therefore run software-pipelined:
// each step issues stage 1 of the next vector and stage 2 of this one, whose input t is then
// already computed, so its uops wait little. The golden evaluations of log, sin, cos and tanh split
// the same way (EvalStage1/EvalStage2, below) and run pipelined on every target. Measured
// (bench/elementwise_bench unary_cache/, one thread, A/B against the library before): sigmoid, silu
// and gelu 10-20% less time, log, sin and tanh 14-22% (exp, whose chain is mostly one polynomial,
// gained ~5% and stays unsplit). The arithmetic of each vector, and so every output bit, is
// unchanged (test: PipelinedPathsGiveTheSameBits...).
template <class Op, class D>
concept HasFastStages = requires(D d, hn::Vec<D> x, const UnaryParams& p, hn::Mask<D>* fail) {
  { Op::FastStage2(d, x, Op::FastStage1(d, x), p, fail) };
};
template <class Op, class D>
concept HasFast = HasOneStageFast<Op, D> || HasFastStages<Op, D>;
// The golden evaluation in two stages (EvalStage1: x -> t, EvalStage2: (x, t, &special) -> r),
// pipelined the same way on every target: log, sin, cos, tanh.
template <class Op, class D>
concept HasEvalStages = requires(D d, hn::Vec<D> x, const UnaryParams& p, hn::Mask<D>* special) {
  { Op::EvalStage2(d, x, Op::EvalStage1(d, x), p, special) };
};

// A wide op whose special lanes have the scalar path's values in vectors (Note [libm special
// lanes] in libm_special-inl.h): Special(d, x) on those lanes, none left to scalar_unary.
template <class Op, class D>
concept HasVectorSpecial = requires(D d, hn::Vec<D> x) {
  {Op::Special(d, x)};
};

// The golden evaluation of a wide op: Eval, or its two stages.
template <class Op, class D>
HWY_INLINE hn::Vec<D> Evaluate(D d, hn::Vec<D> x, const UnaryParams& p, hn::Mask<D>* special) {
  if constexpr (HasEvalStages<Op, D>) {
    return Op::EvalStage2(d, x, Op::EvalStage1(d, x), p, special);
  } else {
    return Op::Eval(d, x, p, special);
  }
}

template <class Op, class D>
HWY_INLINE hn::Vec<D> FastPath(D d, hn::Vec<D> x, const UnaryParams& p, hn::Mask<D>* fail) {
  if constexpr (HasFastStages<Op, D>) {
    return Op::FastStage2(d, x, Op::FastStage1(d, x), p, fail);
  } else {
    return Op::Fast(d, x, p, fail);
  }
}

// Elements one UnaryVector call handles: a full float vector for float-only evaluation into
// float, else as many floats as a double vector has lanes (they are widened to double).
template <class Op, class TOut>
HWY_INLINE std::size_t UnaryStep() {
  if constexpr (!Op::kWide && sizeof(TOut) == 4) {
    return hn::Lanes(hn::ScalableTag<float>());
  } else {
    return hn::Lanes(hn::ScalableTag<double>());
  }
}

#if MPSIM_SPECULATIVE_GOLDEN
// Note [rounding test]: the fast result y of x is stored only if every lane passes.
template <class Op, class D>
HWY_INLINE bool FastResultStands(D d, hn::Vec<D> x, hn::Vec<D> y, hn::Mask<D> fail) {
  auto safe = RoundsSafely(d, y);
  if constexpr (Op::kZeroExact) safe = hn::Or(safe, hn::Eq(x, hn::Zero(d)));
  return hn::AllTrue(d, hn::AndNot(fail, safe));
}
#endif

// Evaluates UnaryStep() floats at `in`, writing results of type TOut (float: rounded once;
// double: unrounded) to `out`. in and out may alias.
// Stores a float vector: streaming (`out` aligned to the vector) or normal. A vector narrower
// than 16 bytes never streams (Note [streaming stores]).
template <class D>
HWY_INLINE void StoreFloats(hn::Vec<D> v, D d, float* out, bool stream) {
  constexpr bool kStreamable = hn::MaxLanes(D()) * sizeof(float) >= 16;
  if (kStreamable && stream) {
    hn::Stream(v, d, out);
  } else {
    hn::StoreU(v, d, out);
  }
}

// `stream`: float results go out through streaming stores (Note [streaming stores]); `out`
// is then aligned to the vector of results.
template <class Op, class TOut>
HWY_INLINE void UnaryVector(const float* in, TOut* out, const UnaryParams& p, bool stream) {
  if constexpr (!Op::kWide && sizeof(TOut) == 4) {
    const hn::ScalableTag<float> df;
    StoreFloats(Op::EvalF32(df, hn::LoadU(df, in)), df, out, stream);
  } else {
    const hn::ScalableTag<double> dd;
    const hn::Rebind<float, decltype(dd)> df;
    const auto v = hn::LoadU(df, in);
    if constexpr (!Op::kWide) {
      hn::StoreU(hn::PromoteTo(dd, Op::EvalF32(df, v)), dd, out);
    } else {
      hn::Mask<decltype(dd)> special;
      const auto x = hn::PromoteTo(dd, v);
      if constexpr (sizeof(TOut) == 4 && HasFast<Op, decltype(dd)>) {
        // Note [rounding test]: the cheap evaluation when every lane provably rounds right.
        hn::Mask<decltype(dd)> fail;
        const auto y = FastPath<Op>(dd, x, p, &fail);
        if (HWY_LIKELY(FastResultStands<Op>(dd, x, y, fail))) {
          StoreFloats(hn::DemoteTo(df, y), df, out, stream);
          return;
        }
      }
      auto r = Evaluate<Op>(dd, x, p, &special);
      if constexpr (Op::kOddAtZero) r = hn::IfThenElse(hn::Eq(x, hn::Zero(dd)), x, r);
      if constexpr (HasVectorSpecial<Op, decltype(dd)>) {
        // Float results take the float lanes' values: DemoteTo is no IEEE conversion of
        // infinities on every target (Highway's scalar target clamps them to +-FLT_MAX). The
        // special values cost a division: only vectors with a special lane pay it.
        if (HWY_LIKELY(hn::AllFalse(dd, special))) {
          if constexpr (sizeof(TOut) == 4) {
            StoreFloats(hn::DemoteTo(df, r), df, out, stream);
          } else {
            hn::StoreU(r, dd, out);
          }
        } else if constexpr (sizeof(TOut) == 4) {
          StoreFloats(
              hn::IfThenElse(Op::SpecialLanes(df, v), Op::Special(df, v), hn::DemoteTo(df, r)), df,
              out, stream);
        } else {
          hn::StoreU(hn::IfThenElse(special, Op::Special(dd, x), r), dd, out);
        }
        return;
      }
      const bool any_special = !hn::AllFalse(dd, special);
      HWY_ALIGN float saved[HWY_MAX_BYTES / sizeof(double)];
      hn::StoreU(v, df, saved);  // `in` may alias `out`
      if constexpr (sizeof(TOut) == 4) {
        StoreFloats(hn::DemoteTo(df, r), df, out, stream);
      } else {
        hn::StoreU(r, dd, out);
      }
      if (HWY_UNLIKELY(any_special)) {
        std::uint8_t bits[HWY_MAX_BYTES / 8 / 8 + 8] = {};
        hn::StoreMaskBits(dd, special, bits);
        for (std::size_t j = 0; j < hn::Lanes(dd); ++j) {
          if ((bits[j / 8] >> (j % 8)) & 1) {
            // A plain store after a streaming one to the same line is still ordered.
            out[j] = static_cast<TOut>(scalar_unary(Op::kKind, static_cast<double>(saved[j]), p));
          }
        }
      }
    }
  }
}

// Note [pipelined speculative paths] over the whole vectors of a float row but the last: returns
// the elements done. kFast: the speculative path's stages and the rounding test (AVX-512); else the
// golden evaluation's stages, stored when no lane is special. A vector that fails is redone by
// UnaryVector (the whole path, special lanes included). In-place rows are safe: vector i + 1 is
// loaded before vector i is stored, and the redo reads vector i before writing it.
template <class Op, bool kFast>
HWY_INLINE std::size_t UnaryPipelined(const float* in, float* out, std::size_t n,
                                      const UnaryParams& p, bool stream) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::size_t step = hn::Lanes(dd);
  if (n < 2 * step) return 0;
  auto stage1 = [dd](hn::Vec<decltype(dd)> x) {
    if constexpr (kFast) {
      return Op::FastStage1(dd, x);
    } else {
      return Op::EvalStage1(dd, x);
    }
  };
  auto x_next = hn::PromoteTo(dd, hn::LoadU(df, in));
  auto t_next = stage1(x_next);
  std::size_t i = 0;
  for (; i + 2 * step <= n; i += step) {
    const auto x = x_next;
    const auto t = t_next;
    x_next = hn::PromoteTo(dd, hn::LoadU(df, in + i + step));
    t_next = stage1(x_next);
    hn::Vec<decltype(dd)> y;
    bool ok;
    if constexpr (kFast) {
      hn::Mask<decltype(dd)> fail;
      y = Op::FastStage2(dd, x, t, p, &fail);
      ok = FastResultStands<Op>(dd, x, y, fail);
    } else {
      hn::Mask<decltype(dd)> special;
      y = Op::EvalStage2(dd, x, t, p, &special);
      if constexpr (Op::kOddAtZero) y = hn::IfThenElse(hn::Eq(x, hn::Zero(dd)), x, y);
      if constexpr (HasVectorSpecial<Op, decltype(dd)>) {
        // As UnaryVector: the float lanes' values (vector i + 1 is loaded, i not yet stored).
        if (HWY_LIKELY(hn::AllFalse(dd, special))) {
          StoreFloats(hn::DemoteTo(df, y), df, out + i, stream);
          continue;
        }
        const auto v = hn::LoadU(df, in + i);
        const auto r =
            hn::IfThenElse(Op::SpecialLanes(df, v), Op::Special(df, v), hn::DemoteTo(df, y));
        StoreFloats(r, df, out + i, stream);
        continue;
      }
      ok = hn::AllFalse(dd, special);
    }
    if (HWY_LIKELY(ok)) {
      StoreFloats(hn::DemoteTo(df, y), df, out + i, stream);
    } else {
      UnaryVector<Op>(in + i, out + i, p, stream);
    }
  }
  return i;
}

// A contiguous row of any length: whole steps, then the tail through a padded buffer so that
// every element goes through the same lane arithmetic (results do not depend on position).
template <class Op, class TOut>
void UnaryRow(const float* in, TOut* out, std::size_t n, const UnaryParams& p) {
  const std::size_t step = UnaryStep<Op, TOut>();
  const bool stream = sizeof(TOut) == 4 && p.stream_out &&
                      reinterpret_cast<std::uintptr_t>(out) % (step * sizeof(TOut)) == 0;
  std::size_t i = 0;
  if constexpr (sizeof(TOut) == 4 && HasFastStages<Op, hn::ScalableTag<double>>) {
    i = UnaryPipelined<Op, true>(in, out, n, p, stream);
  } else if constexpr (sizeof(TOut) == 4 && HasEvalStages<Op, hn::ScalableTag<double>>) {
    i = UnaryPipelined<Op, false>(in, out, n, p, stream);
  }
  for (; i + step <= n; i += step) UnaryVector<Op>(in + i, out + i, p, stream);
  if (i < n) {
    HWY_ALIGN float buf_in[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN TOut buf_out[HWY_MAX_BYTES / sizeof(float)];
    for (std::size_t j = i; j < n; ++j) buf_in[j - i] = in[j];
    UnaryVector<Op>(buf_in, buf_out, p, false);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
  if (stream) stream_fence();
}

template <class TOut>
using RowFn = void (*)(const float*, TOut*, std::size_t, const UnaryParams&);

// The row kernel of every kind, placed by the functor's own kind (no parallel list to keep in
// step with the enum).
template <class TOut, class... Ops>
constexpr auto MakeRows() {
  std::array<RowFn<TOut>, kNumUnaryKinds> rows{};
  ((rows[static_cast<int>(Ops::kKind)] = &UnaryRow<Ops, TOut>), ...);
  return rows;
}
template <class TOut>
constexpr auto kRows = MakeRows<TOut, OpAbs, OpNeg, OpExp, OpLog, OpLog1p, OpExpm1, OpSqrt, OpRsqrt,
                                OpSin, OpCos, OpTanh, OpErf, OpRelu, OpSigmoid, OpSilu, OpGeluErf,
                                OpGeluTanh, OpSoftplus, OpReciprocal, OpSquare>();

void UnaryRowF32(UnaryKind kind, const float* in, float* out, std::size_t n, const UnaryParams& p) {
  kRows<float>[static_cast<int>(kind)](in, out, n, p);
}
void UnaryRowF32ToF64(UnaryKind kind, const float* in, double* out, std::size_t n,
                      const UnaryParams& p) {
  kRows<double>[static_cast<int>(kind)](in, out, n, p);
}

// Note [exact float64 rows]
// float64 ops whose scalar definition (scalar_unary) is one or two IEEE operations or a bit
// operation: abs, neg, sqrt, rsqrt (1 / sqrt), reciprocal, square, relu. Dense rows apply the
// same operations in vectors: the same bits (NaN payloads included: each lane is the IEEE
// operation the scalar path performs). The other float64 ops are glibc's functions, value by
// value. [2^20] float64 on one thread: sqrt 1.9 -> 0.25 ms, abs 0.76 -> 0.14 (`elementwise_bench
// --benchmark_filter=unary_f64`).
template <class Op>
void ExactRowF64(const double* in, double* out, std::size_t n) {
  const hn::ScalableTag<double> d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto x = hn::LoadU(d, in + i);
    if constexpr (Op::kKind == UnaryKind::Rsqrt) {
      hn::StoreU(RsqrtSpecial(d, x), d, out + i);
    } else {
      hn::StoreU(Op::EvalF32(d, x), d, out + i);
    }
  }
  for (; i < n; ++i) out[i] = scalar_unary(Op::kKind, in[i], UnaryParams{});
}

// Whether ExactRowF64 ran (kind one of Note [exact float64 rows]'s).
bool ExactRowsF64(UnaryKind kind, const double* in, double* out, std::size_t n) {
  switch (kind) {
    case UnaryKind::Abs:
      ExactRowF64<OpAbs>(in, out, n);
      return true;
    case UnaryKind::Neg:
      ExactRowF64<OpNeg>(in, out, n);
      return true;
    case UnaryKind::Sqrt:
      ExactRowF64<OpSqrt>(in, out, n);
      return true;
    case UnaryKind::Rsqrt:
      ExactRowF64<OpRsqrt>(in, out, n);
      return true;
    case UnaryKind::Reciprocal:
      ExactRowF64<OpReciprocal>(in, out, n);
      return true;
    case UnaryKind::Square:
      ExactRowF64<OpSquare>(in, out, n);
      return true;
    case UnaryKind::Relu:
      ExactRowF64<OpRelu>(in, out, n);
      return true;
    default:
      return false;
  }
}

// exp of doubles (softmax and logsumexp rows): ExpCore on [-708, 709], glibc elsewhere.
// Relative error < 2^-47 (not a float64 result: callers round to float dtypes).
void ExpRowF64(const double* in, double* out, std::size_t n) {
  const hn::ScalableTag<double> d;
  const std::size_t lanes = hn::Lanes(d);
  auto one_vector = [&](const double* src, double* dst) {
    const auto x = hn::LoadU(d, src);
    const auto special = OutsideClosed(d, x, -708.0, 709.0);
    hn::StoreU(ExpCore(d, Clamp(d, x, -708.0, 709.0)), d, dst);
    if (HWY_UNLIKELY(!hn::AllFalse(d, special))) {
      for (std::size_t j = 0; j < lanes; ++j) {
        if (!(src[j] >= -708.0 && src[j] <= 709.0)) dst[j] = std::exp(src[j]);
      }
    }
  };
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) one_vector(in + i, out + i);
  if (i < n) {
    HWY_ALIGN double buf_in[HWY_MAX_BYTES / sizeof(double)] = {};
    HWY_ALIGN double buf_out[HWY_MAX_BYTES / sizeof(double)];
    for (std::size_t j = i; j < n; ++j) buf_in[j - i] = in[j];
    one_vector(buf_in, buf_out);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <type_traits>

#include "kernels_simd/elementwise.h"
#include "kernels_simd/transpose.h"

namespace mpsim::simd {

HWY_EXPORT(UnaryRowF32);
HWY_EXPORT(UnaryRowF32ToF64);
HWY_EXPORT(ExpRowF64);
HWY_EXPORT(ExactRowsF64);

void unary_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                   const UnaryParams& p) {
  HWY_DYNAMIC_DISPATCH(UnaryRowF32)(kind, in, out, n, p);
}
void unary_row_f32_to_f64(UnaryKind kind, const float* in, double* out, std::size_t n,
                          const UnaryParams& p) {
  HWY_DYNAMIC_DISPATCH(UnaryRowF32ToF64)(kind, in, out, n, p);
}
void exp_row_f64(const double* in, double* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(ExpRowF64)(in, out, n);
}

namespace {

// Elements per chunk when a row is strided or 16-bit: gathered into float buffers on the
// stack (3 KiB), computed by the contiguous row kernel, and scattered back.
constexpr std::int64_t kChunk = 256;

// Integer abs/neg/square wrap in two's complement, as PyTorch's (abs(INT_MIN) == INT_MIN).
template <IntegralElement T>
T integer_unary(UnaryKind kind, T v) {
  using U = std::make_unsigned_t<T>;
  const U u = static_cast<U>(v);
  switch (kind) {
    case UnaryKind::Abs:
      return v < 0 ? static_cast<T>(U(0) - u) : v;
    case UnaryKind::Neg:
      return static_cast<T>(U(0) - u);
    case UnaryKind::Square:
      return static_cast<T>(u * u);
    case UnaryKind::Relu:
      return v > 0 ? v : T(0);
    default:
      return v;  // the front end sends no other integer op here
  }
}

template <class T>
void unary_row(UnaryKind kind, const UnaryParams& p, const RowPointers<2>& r, std::int64_t n) {
  auto* out = r.ptr[0];
  const auto* in = r.ptr[1];
  const std::int64_t so = r.stride[0], si = r.stride[1];
  auto at = [](auto* base, std::int64_t stride, std::int64_t i) { return base + i * stride; };
  // float32 results: the fast kernel when asked for and there is one, else the golden one.
  auto row_f32 = [kind](const float* src, float* dst, std::size_t m, const UnaryParams& q) {
    if (!q.fast || !unary_fast_row_f32(kind, src, dst, m, q)) unary_row_f32(kind, src, dst, m, q);
  };
  if constexpr (std::is_same_v<T, float>) {
    if (so == 4 && si == 4) {
      row_f32(reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out),
              static_cast<std::size_t>(n), p);
      return;
    }
  }
  if constexpr (std::is_same_v<T, float> || Float16Like<T>) {
    UnaryParams q = p;
    q.stream_out = false;  // the results go to a buffer on the stack
    float buf_in[kChunk];
    float buf_f32[kChunk];
    double buf_f64[kChunk];
    if constexpr (Float16Like<T>) {
      // Dense 16-bit rows: the widening and the rounding of the double results in vectors,
      // with the scalar conversions' bits (transpose.h). [2, 320, 64, 64] on one thread:
      // float16 silu 28.5 -> 2.8 ms, exp 19.1 -> 1.7 ms, bfloat16 silu 6.7 -> 3.2 ms
      // (`elementwise_bench --benchmark_filter=unary16`).
      if (so == 2 && si == 2) {
        constexpr bool kBF16 = std::is_same_v<T, BFloat16>;
        const auto* in16 = reinterpret_cast<const std::uint16_t*>(in);
        auto* out16 = reinterpret_cast<std::uint16_t*>(out);
        for (std::int64_t c = 0; c < n; c += kChunk) {
          const auto m = static_cast<std::size_t>(std::min(kChunk, n - c));
          (kBF16 ? bf16_to_f32_row : f16_to_f32_row)(in16 + c, buf_in, m);
          unary_row_f32_to_f64(kind, buf_in, buf_f64, m, q);
          (kBF16 ? f64_to_bf16_row : f64_to_f16_row)(buf_f64, out16 + c, m);
        }
        return;
      }
    }
    for (std::int64_t c = 0; c < n; c += kChunk) {
      const std::int64_t m = std::min(kChunk, n - c);
      for (std::int64_t i = 0; i < m; ++i) {
        buf_in[i] = static_cast<float>(*reinterpret_cast<const T*>(at(in, si, c + i)));
      }
      if constexpr (std::is_same_v<T, float>) {
        row_f32(buf_in, buf_f32, static_cast<std::size_t>(m), q);
        for (std::int64_t i = 0; i < m; ++i) *reinterpret_cast<T*>(at(out, so, c + i)) = buf_f32[i];
      } else {
        // 16-bit outputs round the double result once (Note [16-bit float conversions]).
        unary_row_f32_to_f64(kind, buf_in, buf_f64, static_cast<std::size_t>(m), q);
        for (std::int64_t i = 0; i < m; ++i)
          *reinterpret_cast<T*>(at(out, so, c + i)) = T(buf_f64[i]);
      }
    }
  } else if constexpr (std::is_same_v<T, double>) {
    if (so == 8 && si == 8 &&
        HWY_DYNAMIC_DISPATCH(ExactRowsF64)(kind, reinterpret_cast<const double*>(in),
                                           reinterpret_cast<double*>(out),
                                           static_cast<std::size_t>(n))) {
      return;  // Note [exact float64 rows]
    }
    for (std::int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<double*>(at(out, so, i)) =
          scalar_unary(kind, *reinterpret_cast<const double*>(at(in, si, i)), p);
    }
  } else if constexpr (IntegralElement<T>) {
    for (std::int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<T*>(at(out, so, i)) =
          integer_unary(kind, *reinterpret_cast<const T*>(at(in, si, i)));
    }
  }
}

template <UnaryKind K>
KernelStatus unary_kernel(const KernelCall& call) {
  UnaryKind kind = K;
  UnaryParams p;
  if constexpr (K == UnaryKind::GeluErf) {
    if (call.params_as<GeluParams>().approximate == GeluApproximation::Tanh) {
      kind = UnaryKind::GeluTanh;
    }
  } else if constexpr (K == UnaryKind::Softplus) {
    const auto& softplus = call.params_as<SoftplusParams>();
    p.beta = softplus.beta;
    p.threshold = softplus.threshold;
  }
  p.fast = call.fast();
  const TensorView& out = call.outputs[0];
  p.stream_out = out.numel() * static_cast<std::int64_t>(dtype_size(out.dtype)) >=
                 kStreamingStoreMinBytes;
  visit_dtype(out.dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      for_each_row<2>({&out, &call.inputs[0]}, [&](const RowPointers<2>& r, std::int64_t n) {
        unary_row<T>(kind, p, r, n);
      });
    }
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_unary_kernels(KernelTable& table) {
  // Integer and float dtypes: abs, neg, relu and square keep integer dtypes (PyTorch).
  table.set(op_id("abs"), &unary_kernel<UnaryKind::Abs>, kNumericDTypes);
  table.set(op_id("neg"), &unary_kernel<UnaryKind::Neg>, kNumericDTypes);
  table.set(op_id("relu"), &unary_kernel<UnaryKind::Relu>, kNumericDTypes);
  table.set(op_id("square"), &unary_kernel<UnaryKind::Square>, kNumericDTypes);
  // Float dtypes only: the front end computes integer inputs in float32.
  table.set(op_id("exp"), &unary_kernel<UnaryKind::Exp>, kFloatDTypes);
  table.set(op_id("log"), &unary_kernel<UnaryKind::Log>, kFloatDTypes);
  table.set(op_id("log1p"), &unary_kernel<UnaryKind::Log1p>, kFloatDTypes);
  table.set(op_id("expm1"), &unary_kernel<UnaryKind::Expm1>, kFloatDTypes);
  table.set(op_id("sqrt"), &unary_kernel<UnaryKind::Sqrt>, kFloatDTypes);
  table.set(op_id("rsqrt"), &unary_kernel<UnaryKind::Rsqrt>, kFloatDTypes);
  table.set(op_id("sin"), &unary_kernel<UnaryKind::Sin>, kFloatDTypes);
  table.set(op_id("cos"), &unary_kernel<UnaryKind::Cos>, kFloatDTypes);
  table.set(op_id("tanh"), &unary_kernel<UnaryKind::Tanh>, kFloatDTypes);
  table.set(op_id("erf"), &unary_kernel<UnaryKind::Erf>, kFloatDTypes);
  table.set(op_id("sigmoid"), &unary_kernel<UnaryKind::Sigmoid>, kFloatDTypes);
  table.set(op_id("silu"), &unary_kernel<UnaryKind::Silu>, kFloatDTypes);
  table.set(op_id("gelu"), &unary_kernel<UnaryKind::GeluErf>, kFloatDTypes);
  table.set(op_id("softplus"), &unary_kernel<UnaryKind::Softplus>, kFloatDTypes);
  table.set(op_id("reciprocal"), &unary_kernel<UnaryKind::Reciprocal>, kFloatDTypes);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
