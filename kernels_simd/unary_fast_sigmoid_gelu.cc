// Precision::Fast float32 kernels of the sigmoid family (Note [fast float unary] in
// unary_fast.cc): sigmoid, silu and gelu (tanh) on the quotient of exps (SigmoidCore), gelu
// (erf) on the normal tail's Mills ratio, and on AVX-512 the piecewise forms of sigmoid, silu
// and gelu that a 32-entry permute makes cheaper.
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_fast_sigmoid_gelu.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/highway.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/unary_fast-inl.h"
#include "kernels_simd/precision_fast_tables.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_NATIVE_FMA
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
    const VF jf =
        hn::Min(hn::MulAdd(z, hn::Set(d, 2.0f), hn::Set(d, -0.5f)), hn::Add(z, hn::Set(d, 2.5f)));
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
    rl = hn::Add(rl,
                 hn::Add(hn::Add(c1u_err, Lookup16(d, kGeluC0Lo, j)), hn::Mul(hn::Mul(u, u), s)));
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
    const VF y_tail =
        hn::Mul(hn::Mul(hn::MulAdd(x, qh, hn::Mul(x, ql)), Pow2(d, k1)), Pow2(d, hn::Sub(k, k1)));
    // Below -15 (z clamped) x Q is far below the subnormals.
    const VF y_neg = hn::IfThenElse(hn::Lt(x, hn::Set(d, -15.0f)), hn::Set(d, -0.0f), y_tail);
    const VF y_all = hn::IfThenElse(neg, y_neg, y);
    // |x| < 2^-60: gelu(x) = x/2 (x^2/sqrt(2 pi) is below its rounding), and x times the low
    // parts above would underflow coarsely.
    return hn::IfThenElse(hn::Lt(z, hn::Set(d, 0x1.0p-60f)), hn::Mul(x, hn::Set(d, 0.5f)), y_all);
  }
};

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
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
      const VF lo =
          hn::MulAdd(Lookup32(kGelu32B1Lo, m), u, hn::Add(b1u_err, Lookup32(kGelu32B0Lo, m)));
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
using FastSigmoidOp = FastSigmoid512;
using FastSiluOp = FastSilu512;
#else
using FastGeluOp = FastGelu;
using FastSigmoidOp = FastSigmoid;
using FastSiluOp = FastSilu;
#endif

bool FastSigmoidGeluRow(UnaryKind kind, const float* in, float* out, std::size_t n,
                        const UnaryParams& p) {
  switch (kind) {
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
    default:
      return false;
  }
}
#endif  // HWY_NATIVE_FMA

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
