// Precision::Fast float32 sin and cos (Note [fast float unary] in unary_fast.cc): the
// quadrant form on a three-part reduction by pi/2, and on AVX-512 the pi/16 form whose sin and
// cos tables are one permute each. |x| <= 4096; the rest goes to the golden kernel.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_fast_trig.cc"
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
  VF s = hn::Set(d, -0x1.ae6456p-26f);                  // -1/11!
  s = hn::MulAdd(s, r2, hn::Set(d, 0x1.71de3ap-19f));   //  1/9!
  s = hn::MulAdd(s, r2, hn::Set(d, -0x1.a01a02p-13f));  // -1/7!
  s = hn::MulAdd(s, r2, hn::Set(d, 0x1.111112p-7f));    //  1/5!
  s = hn::MulAdd(s, r2, hn::Set(d, -0x1.555556p-3f));   // -1/3!
  // rl cos(rh) ~ rl (1 - r2/2)
  const VF lo = hn::Mul(rl, hn::NegMulAdd(r2, hn::Set(d, 0.5f), hn::Set(d, 1.0f)));
  return hn::Add(rh, hn::MulAdd(hn::Mul(r2, rh), s, lo));
}

// cos(rh + rl) for |rh| <= pi/4 + tiny.
HWY_INLINE VF CosPair(DF d, VF rh, VF rl, VF r2) {
  VF c = hn::Set(d, 0x1.1eed8ep-29f);                   //  1/12!
  c = hn::MulAdd(c, r2, hn::Set(d, -0x1.27e4fcp-22f));  // -1/10!
  c = hn::MulAdd(c, r2, hn::Set(d, 0x1.a01a02p-16f));   //  1/8!
  c = hn::MulAdd(c, r2, hn::Set(d, -0x1.6c16c2p-10f));  // -1/6!
  c = hn::MulAdd(c, r2, hn::Set(d, 0x1.555556p-5f));    //  1/4!
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

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
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
    VF cq =
        hn::MulAdd(u2, hn::Set(d, -0x1.6c16c2p-10f), hn::Set(d, 0x1.555556p-5f));  // -1/720, 1/24
    const VF cm = hn::Mul(hn::MulAdd(cq, u2, hn::Set(d, -0.5f)), u2);              // cos u - 1
    const VF sq =
        hn::MulAdd(u2, hn::Set(d, 0x1.111112p-7f), hn::Set(d, -0x1.555556p-3f));  // 1/120, -1/6
    const VF sm = hn::Mul(sq, hn::Mul(u2, rh));                                   // sin u - u
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
template <bool kCos>
using FastSinCosOp = FastSinCos512<kCos>;
#else
template <bool kCos>
using FastSinCosOp = FastSinCos<kCos>;
#endif

bool FastTrigRow(UnaryKind kind, const float* in, float* out, std::size_t n, const UnaryParams& p) {
  switch (kind) {
    case UnaryKind::Sin:
      FastRow<FastSinCosOp<false>>(in, out, n, p);
      return true;
    case UnaryKind::Cos:
      FastRow<FastSinCosOp<true>>(in, out, n, p);
      return true;
    default:
      return false;
  }
}
#endif  // HWY_NATIVE_FMA

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
