// The dense float16/bfloat16 unary rows that skip the double row kernel: lookups in a 65536-entry
// table (Note [16-bit unary tables], table16.h) and the float-lane rows of the ops whose float
// result rounds to the correctly rounded 16-bit value (Note [exact 16-bit unary rows]).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/lookup16.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/dtype.h"
#include "hwy/highway.h"
#include "kernels_simd/cast16-inl.h"
#include "kernels_simd/float_pair-inl.h"
#include "kernels_simd/table16.h"
#include "kernels_simd/unary.h"

// Note [exact 16-bit unary rows]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// abs, neg, relu, square, sqrt, reciprocal and rsqrt of a dense float16 or bfloat16 row skip the
// double row kernel and give its bits (NaNs quieted as there) at the cost of a cast or less
// (docs/performance.md, float16 and bfloat16 unary ops):
// - abs, neg and relu change no magnitude: they act on the 16-bit lanes' bits (sign, and the
//   quiet bit of a NaN).
// - square, sqrt and reciprocal widen exactly to float, apply one float operation and round to
//   the 16-bit type, and that float is the correctly rounded 16-bit value's only candidate:
//   x^2 has at most 2p bits (p = 11 or 8) and is exact in float wherever its quantum is at
//   least 2^-149, so for every float16 x and for bfloat16 |x| >= 2^-67 (below, x^2 < 2^-134
//   and its float, at most 2^-134, both round to +0). sqrt and division are IEEE's correctly
//   rounded float, and a second rounding to p bits keeps the correctly rounded p-bit value when
//   the float has at least 2p + 2 bits (24 against 24 and 18: Figueroa, "When is double
//   rounding innocuous?", SIGNUM Newsletter 30(3), 1995). Subnormal bfloat16 quotients
//   (|x| > 2^126) fall outside that argument: a float rounding could land on a midpoint
//   M = (2j+1) 2^-134 only from within 2^-150, and |1/x - M| = |1 - M x|/x is 0 or at least
//   2^(e-134)/2^(e+8) = 2^-142 (x = m 2^e, m < 2^8). On x86 sqrt takes rsqrt's way below
//   (bfloat16 on every SIMD target, float16 on AVX-512).
// - rsqrt and sqrt: the root lies between two neighbours of the 16-bit type and is never their
//   midpoint: a midpoint M has p + 1 bits and an odd significand, so M^2 has an odd
//   significand of 2p + 1 or 2p + 2 bits and is no 16-bit x (sqrt), and x M^2 = N 2^E with N <
//   2^(3p + 2) odd is 1 only if M is a power of two, which a midpoint is not (rsqrt). An
//   estimate y within 2^-(p + 2) of the root, relative (AVX-512's x^-1/2 to 2^-14; x86's to 1.5
//   2^-12 for bfloat16; RsqrtEstimate's 2^-20.5, float_pair-inl.h, elsewhere; x times it for
//   sqrt), truncated to p bits gives t, whose neighbour above is the other candidate (the root
//   is within a quarter of t's unit of [t, t + unit]), and the midpoint above it m = t + half
//   t's unit: the result is t + unit if the root exceeds m and t if not. m^2 has 2p + 2 bits,
//   exact, and sqrt compares it with x. For rsqrt, with FMA the sign of RN(m^2 x - 1) is the
//   exact one, and without it m^2 = h + l, h its upper 12 bits, makes x h (at most 23 bits), x
//   h - 1 (Sterbenz: x h is within 2^-7 of 1) and x l exact and their rounded sum's sign the
//   exact one: the same decisions on every target. bfloat16's subnormals scale by 2^64 into
//   float's normals and their results by 2^32 (rsqrt) or 2^-32 (sqrt) back, exactly; 0,
//   negative numbers, inf and NaN take float's 1/sqrt(x) or sqrt(x), whose results (+-inf, NaN,
//   +-0) need no rounding, in a branch taken only by vectors that hold them. The results are
//   16-bit values already: bfloat16's narrow by truncation. [2, 320, 64, 64] bfloat16, one
//   thread: rsqrt 0.20 ms against the 0.43 ms of an estimate rounded to bfloat16 with the lanes
//   near a midpoint sent to the double row kernel, sqrt 0.21 ms against the square root
//   instruction's 0.235 (`bench/torch_sweep.py --filter "bf16 rsqrt"`, likewise "bf16 sqrt").
// On AVX2 and AVX-512, bfloat16 rows widen and narrow a full vector of 16-bit lanes at a time
// (Note [zipped bfloat16 lanes] in cast16-inl.h: these operations' NaNs are quiet with their
// low 16 bits clear). Every one of the 65536 inputs of both types gives the oracle's value and the
// row kernel's bits on every target (unary_accuracy_test's ExactRowsExhaustive tests).

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using D16 = hn::Rebind<std::uint16_t, DF>;

// abs, neg and relu on the bits, a full vector of 16-bit lanes at a time.
template <bool kBF16, UnaryKind K>
void Bits16Row(const std::uint16_t* HWY_RESTRICT in, std::uint16_t* HWY_RESTRICT out,
               std::size_t n) {
  const hn::ScalableTag<std::int16_t> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const auto magnitude_bits = hn::Set(d, 0x7fff);
  const auto inf = hn::Set(d, kBF16 ? 0x7f80 : 0x7c00);
  const auto quiet = hn::Set(d, kBF16 ? 0x0040 : 0x0200);
  auto one = [&](hn::Vec<decltype(d)> b) {
    const auto magnitude = hn::And(b, magnitude_bits);
    const auto nan = hn::Gt(magnitude, inf);
    hn::Vec<decltype(d)> r;
    if constexpr (K == UnaryKind::Abs) {
      r = magnitude;
    } else if constexpr (K == UnaryKind::Neg) {
      r = hn::Xor(b, hn::Set(d, static_cast<std::int16_t>(0x8000)));
    } else {
      static_assert(K == UnaryKind::Relu);
      // Negative numbers (not -0, not NaN) give +0.
      const auto negative = hn::And(hn::Lt(b, hn::Zero(d)), hn::Gt(magnitude, hn::Zero(d)));
      r = hn::IfThenZeroElse(hn::AndNot(nan, negative), b);
    }
    return hn::IfThenElse(nan, hn::Or(r, quiet), r);
  };
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::BitCast(du, one(hn::BitCast(d, hn::LoadU(du, in + i)))), du, out + i);
  }
  if (i < n) {  // the tail through padded buffers
    HWY_ALIGN std::uint16_t buf[hn::MaxLanes(d)] = {};
    for (std::size_t j = i; j < n; ++j) buf[j - i] = in[j];
    hn::Store(hn::BitCast(du, one(hn::BitCast(d, hn::Load(du, buf)))), du, buf);
    for (std::size_t j = i; j < n; ++j) out[j] = buf[j - i];
  }
}

// Whether this target rounds sqrt of the 16-bit type by the midpoint test (x86's estimates: for
// bfloat16 on SSE4 and up, for float16 on AVX-512) rather than with the square root instruction.
template <bool kBF16>
constexpr bool kSqrtByMidpoint =
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    true;
#elif HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
    kBF16;
#else
    false;
#endif

// x^-1/2 within 2^-(p + 2) relative (Note [exact 16-bit unary rows], rsqrt and sqrt): AVX-512's
// estimate (2^-14), other x86 targets' for bfloat16 (1.5 2^-12), RsqrtEstimate's 2^-20.5
// elsewhere.
template <bool kBF16>
HWY_INLINE hn::Vec<DF> Rsqrt16Estimate(DF df, hn::Vec<DF> x) {
  if constexpr (kSqrtByMidpoint<kBF16>) {
    (void)df;
    return hn::ApproximateReciprocalSqrt(x);
  } else {
    return RsqrtEstimate(df, x);
  }
}

// x^-1/2 or x^1/2 rounded to the 16-bit type (Note [exact 16-bit unary rows], rsqrt and sqrt)
// for normal positive finite x: t is the estimate truncated to p bits, m the midpoint above t,
// and the result t or the value above.
template <UnaryKind K, bool kBF16>
HWY_INLINE hn::Vec<DF> RoundedRoot16(DF df, hn::Vec<DF> x) {
  const hn::RebindToSigned<DF> di;
  constexpr std::int32_t kUnit = kBF16 ? 0x10000 : 0x2000;  // the 16-bit type's last place
  auto y = Rsqrt16Estimate<kBF16>(df, x);
  if constexpr (K == UnaryKind::Sqrt) y = hn::Mul(x, y);
  const auto t = hn::And(hn::BitCast(di, y), hn::Set(di, -kUnit));
  const auto m = hn::BitCast(df, hn::Or(t, hn::Set(di, kUnit / 2)));
  const auto m2 = hn::Mul(m, m);  // exact
  hn::Mask<DF> up;                // the root lies above m
  if constexpr (K == UnaryKind::Sqrt) {
    up = hn::Gt(x, m2);
  } else {
#if HWY_NATIVE_FMA
    const auto excess = hn::MulSub(m2, x, hn::Set(df, 1.0f));  // x m^2 - 1, its sign exact
#else
    const auto h = hn::BitCast(df, hn::And(hn::BitCast(di, m2), hn::Set(di, -0x1000)));
    const auto excess = hn::Add(hn::MulSub(x, h, hn::Set(df, 1.0f)), hn::Mul(x, hn::Sub(m2, h)));
#endif
    up = hn::Lt(excess, hn::Zero(df));
  }
  return hn::BitCast(df, hn::IfThenElse(hn::RebindMask(di, up), hn::Add(t, hn::Set(di, kUnit)), t));
}

HWY_INLINE hn::Mask<DF> NormalPositive(DF df, hn::Vec<DF> x) {
  return hn::And(hn::Ge(x, hn::Set(df, 0x1p-126f)), hn::Lt(x, hn::Inf(df)));
}

// The vectors with a lane that is not a normal positive finite number: bfloat16's subnormals
// scaled, the special values from float's sqrt(x) or 1/sqrt(x).
template <UnaryKind K, bool kBF16>
HWY_NOINLINE hn::Vec<DF> Root16Special(DF df, hn::Vec<DF> x) {
  const auto subnormal = hn::And(hn::Gt(x, hn::Zero(df)), hn::Lt(x, hn::Set(df, 0x1p-126f)));
  const auto xs = hn::IfThenElse(subnormal, hn::Mul(x, hn::Set(df, 0x1p64f)), x);
  auto r = RoundedRoot16<K, kBF16>(df, xs);
  const float back = K == UnaryKind::Sqrt ? 0x1p-32f : 0x1p32f;
  r = hn::IfThenElse(subnormal, hn::Mul(r, hn::Set(df, back)), r);
  auto special = hn::Sqrt(x);
  if constexpr (K == UnaryKind::Rsqrt) special = hn::Div(hn::Set(df, 1.0f), special);
  return hn::IfThenElse(hn::Or(NormalPositive(df, x), subnormal), r, special);
}

// sqrt or rsqrt of widened 16-bit values, rounded to the 16-bit type (exact in float).
template <UnaryKind K, bool kBF16>
HWY_INLINE hn::Vec<DF> Root16(DF df, hn::Vec<DF> x) {
  if (HWY_LIKELY(hn::AllTrue(df, NormalPositive(df, x)))) return RoundedRoot16<K, kBF16>(df, x);
  return Root16Special<K, kBF16>(df, x);
}

// The float result of square, sqrt, reciprocal or rsqrt of x (rsqrt, and sqrt where
// kSqrtByMidpoint, already rounded to the 16-bit type).
template <UnaryKind K, bool kBF16>
HWY_INLINE hn::Vec<DF> FloatOp(DF df, hn::Vec<DF> x) {
  if constexpr (K == UnaryKind::Square) {
    return hn::Mul(x, x);
  } else if constexpr (K == UnaryKind::Sqrt) {
    if constexpr (kSqrtByMidpoint<kBF16>) return Root16<K, kBF16>(df, x);
    return hn::Sqrt(x);
  } else if constexpr (K == UnaryKind::Reciprocal) {
    return hn::Div(hn::Set(df, 1.0f), x);
  } else {
    static_assert(K == UnaryKind::Rsqrt);
    return Root16<K, kBF16>(df, x);
  }
}

// One vector of float lanes (`lanes` values) from in to out: widened, the op, rounded.
template <bool kBF16, UnaryKind K>
HWY_INLINE void Float16Vector(const std::uint16_t* HWY_RESTRICT in,
                              std::uint16_t* HWY_RESTRICT out) {
  const DF df;
  const D16 d16;
  const auto bits = hn::LoadU(d16, in);
  const auto x = kBF16 ? BF16BitsToF32(df, bits) : F16BitsToF32ForArithmetic(df, bits);
  const auto y = FloatOp<K, kBF16>(df, x);
  hn::StoreU(kBF16 ? F32ToBF16Bits(df, y) : F32ToF16Bits(df, y), d16, out);
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// bfloat16 on AVX2 and AVX-512: a full vector of 16-bit lanes at a time (Note [zipped bfloat16
// lanes] in cast16-inl.h).
template <UnaryKind K>
HWY_INLINE void BF16WideVector(const std::uint16_t* HWY_RESTRICT in,
                               std::uint16_t* HWY_RESTRICT out) {
  const hn::ScalableTag<std::uint16_t> du16;
  const DF df;
  const auto bits = hn::LoadU(du16, in);
  hn::Vec<DF> x_lo, x_hi;
  BF16BitsToF32Zipped(df, bits, x_lo, x_hi);
  if constexpr (K == UnaryKind::Rsqrt || K == UnaryKind::Sqrt) {
    // The results are bfloat16 values already: their upper halves, tested on the bits for
    // normal positive finite inputs (0x0080 to 0x7f7f) 32 lanes at a time.
    const hn::RebindToSigned<DF> di;
    const hn::Repartition<std::int16_t, DF> di16;
    const auto b = hn::BitCast(di16, bits);
    hn::Vec<DF> y_lo, y_hi;
    if (HWY_LIKELY(hn::AllTrue(di16, hn::And(hn::Gt(b, hn::Set(di16, 0x007f)),
                                             hn::Lt(b, hn::Set(di16, 0x7f80)))))) {
      y_lo = RoundedRoot16<K, true>(df, x_lo);
      y_hi = RoundedRoot16<K, true>(df, x_hi);
    } else {
      y_lo = Root16Special<K, true>(df, x_lo);
      y_hi = Root16Special<K, true>(df, x_hi);
    }
    const auto upper_lo = hn::ShiftRight<16>(hn::BitCast(di, y_lo));
    const auto upper_hi = hn::ShiftRight<16>(hn::BitCast(di, y_hi));
    hn::StoreU(hn::BitCast(du16, hn::ReorderDemote2To(di16, upper_lo, upper_hi)), du16, out);
  } else {
    const auto y_lo = FloatOp<K, true>(df, x_lo);
    const auto y_hi = FloatOp<K, true>(df, x_hi);
    hn::StoreU(F32ToBF16BitsZipped(df, y_lo, y_hi), du16, out);
  }
}
#endif

template <bool kBF16, UnaryKind K>
void Float16Row(const std::uint16_t* HWY_RESTRICT in, std::uint16_t* HWY_RESTRICT out,
                std::size_t n) {
  std::size_t i = 0;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kBF16) {
    const std::size_t wide = hn::Lanes(hn::ScalableTag<std::uint16_t>());
    for (; i + wide <= n; i += wide) BF16WideVector<K>(in + i, out + i);
  }
#endif
  const std::size_t lanes = hn::Lanes(DF());
  for (; i + lanes <= n; i += lanes) Float16Vector<kBF16, K>(in + i, out + i);
  if (i < n) {  // the tail through padded buffers
    HWY_ALIGN std::uint16_t buf_in[hn::MaxLanes(DF())] = {};
    HWY_ALIGN std::uint16_t buf_out[hn::MaxLanes(DF())];
    for (std::size_t j = i; j < n; ++j) buf_in[j - i] = in[j];
    Float16Vector<kBF16, K>(buf_in, buf_out);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
}

template <bool kBF16>
bool Exact16RowFor(UnaryKind kind, const std::uint16_t* in, std::uint16_t* out, std::size_t n) {
  switch (kind) {
    case UnaryKind::Abs:
      Bits16Row<kBF16, UnaryKind::Abs>(in, out, n);
      return true;
    case UnaryKind::Neg:
      Bits16Row<kBF16, UnaryKind::Neg>(in, out, n);
      return true;
    case UnaryKind::Relu:
      Bits16Row<kBF16, UnaryKind::Relu>(in, out, n);
      return true;
    case UnaryKind::Square:
      Float16Row<kBF16, UnaryKind::Square>(in, out, n);
      return true;
    case UnaryKind::Sqrt:
      Float16Row<kBF16, UnaryKind::Sqrt>(in, out, n);
      return true;
    case UnaryKind::Reciprocal:
      Float16Row<kBF16, UnaryKind::Reciprocal>(in, out, n);
      return true;
    case UnaryKind::Rsqrt:
      Float16Row<kBF16, UnaryKind::Rsqrt>(in, out, n);
      return true;
    default:
      return false;
  }
}

bool Exact16Row(UnaryKind kind, bool bf16, const std::uint16_t* in, std::uint16_t* out,
                std::size_t n) {
  return bf16 ? Exact16RowFor<true>(kind, in, out, n) : Exact16RowFor<false>(kind, in, out, n);
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(Exact16Row);

// Scalar loads, eight inputs read before their eight results are written (so `in` may be
// `out`). On one AVX-512 thread they take bfloat16 exp of [2, 320, 64, 64] from 1.17 ms (16-lane
// gathers of 32-bit entries) to 0.72 ms (`bench/torch_sweep.py --filter "bf16 exp"`).
void lookup16_row(const std::uint16_t* table, const std::uint16_t* in, std::uint16_t* out,
                  std::size_t n) {
  constexpr std::size_t kBlock = 8;
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    std::uint16_t r[kBlock];
    for (std::size_t k = 0; k < kBlock; ++k) r[k] = table[in[i + k]];
    std::memcpy(out + i, r, sizeof(r));
  }
  for (; i < n; ++i) out[i] = table[in[i]];
}

bool unary_exact_row_16(UnaryKind kind, bool bf16, const std::uint16_t* in, std::uint16_t* out,
                        std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(Exact16Row)(kind, bf16, in, out, n);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
