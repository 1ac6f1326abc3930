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
//   2^(e-134)/2^(e+8) = 2^-142 (x = m 2^e, m < 2^8).
// - rsqrt: y rounded to the 16-bit type, y = RsqrtEstimate for bfloat16 (float_pair-inl.h,
//   within 2^-20.5 relative: under 12 units of y's last place) and 1/sqrt(x) for float16 (two
//   roundings, under 2.01 units), but for the lanes whose y lies within 16 (bfloat16) or 3
//   (float16) units of a 16-bit midpoint, or whose x is not a normal positive number (one
//   random lane in 2114 and 1638: 31 of 2^16 and 5 of 2^13 patterns; special values always):
//   those take the golden row kernel (1/sqrt in double, 2^-52, rounded once). sqrt keeps the square root instruction: x times
//   the estimate, tested the same way, took 0.86 ms against 0.48 on [2, 320, 64, 64] bfloat16
//   (`bench/torch_sweep.py --filter "bf16 sqrt"`). No exact value is near a midpoint M (p + 1
//   bits, odd significand k): x M^2 = N 2^E with N < 2^(3p + 2) odd is 1 only if M is a power
//   of two, which a midpoint is not, so |x M^2 - 1| >= 2^E > 2^-(3p + 2) and M lies over
//   2^-(3p + 3) from x^-1/2, relative (2^-27 for bfloat16, 2^-36 for float16).
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

// The float result of square, sqrt, reciprocal or rsqrt of x (rsqrt: bfloat16's estimate within
// 12 units of its last place, float16's two roundings within 2.01).
template <UnaryKind K, bool kBF16>
HWY_INLINE hn::Vec<DF> FloatOp(DF df, hn::Vec<DF> x) {
  if constexpr (K == UnaryKind::Square) {
    return hn::Mul(x, x);
  } else if constexpr (K == UnaryKind::Sqrt) {
    return hn::Sqrt(x);
  } else if constexpr (K == UnaryKind::Reciprocal) {
    return hn::Div(hn::Set(df, 1.0f), x);
  } else {
    static_assert(K == UnaryKind::Rsqrt);
    // float16 tests 2^-13 of its lanes' bits against the midpoint: the estimate's wider margin
    // would send 0.4% of them to the row kernel, and the two roundings are faster than that.
    if constexpr (kBF16) return RsqrtEstimate(df, x);
    return hn::Div(hn::Set(df, 1.0f), hn::Sqrt(x));
  }
}

// rsqrt's lanes for the row kernel: y within 16 (bfloat16) or 3 (float16) units of its last
// place of a 16-bit midpoint (16 bits below bfloat16's last place, 13 below float16's), or x
// not normal positive.
template <bool kBF16>
HWY_INLINE hn::Mask<DF> RsqrtRecompute(DF df, hn::Vec<DF> x, hn::Vec<DF> y) {
  const hn::RebindToSigned<DF> di;
  constexpr std::int32_t kHalf = kBF16 ? 0x8000 : 0x1000;
  const auto low = hn::And(hn::BitCast(di, y), hn::Set(di, 2 * kHalf - 1));
  const auto near = hn::Lt(hn::Abs(hn::Sub(low, hn::Set(di, kHalf))), hn::Set(di, kBF16 ? 16 : 3));
  const auto normal = hn::And(hn::Ge(x, hn::Set(df, 0x1p-126f)), hn::Lt(x, hn::Inf(df)));
  return hn::Or(hn::RebindMask(df, near), hn::Not(normal));
}

// in[j] for the j < n with flags[j] != 0, recomputed by the golden row kernel (rsqrt's lanes
// near a midpoint and its special values).
template <bool kBF16>
HWY_NOINLINE void RsqrtByRowKernel(const std::uint16_t* in, std::uint16_t* out,
                                   const std::int16_t* flags, std::size_t n) {
  float xs[HWY_MAX_BYTES / 2] = {};
  double ys[HWY_MAX_BYTES / 2];
  std::size_t at[HWY_MAX_BYTES / 2];
  std::size_t m = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (flags[j] == 0) continue;
    xs[m] =
        kBF16 ? ::mpsim::detail::bf16_bits_to_f32(in[j]) : ::mpsim::detail::f16_bits_to_f32(in[j]);
    at[m++] = j;
  }
  unary_row_f32_to_f64(UnaryKind::Rsqrt, xs, ys, m, UnaryParams{});
  for (std::size_t k = 0; k < m; ++k) {
    out[at[k]] = kBF16 ? BFloat16(ys[k]).bits : Half(ys[k]).bits;
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
  if constexpr (K == UnaryKind::Rsqrt) {
    const auto redo = RsqrtRecompute<kBF16>(df, x, y);
    if (HWY_UNLIKELY(!hn::AllFalse(df, redo))) {
      const hn::RebindToSigned<DF> di;
      HWY_ALIGN std::int16_t flags[hn::MaxLanes(df)];
      hn::Store(hn::DemoteTo(hn::Rebind<std::int16_t, DF>(),
                             hn::VecFromMask(di, hn::RebindMask(di, redo))),
                hn::Rebind<std::int16_t, DF>(), flags);
      RsqrtByRowKernel<kBF16>(in, out, flags, hn::Lanes(df));
    }
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// bfloat16 on AVX2 and AVX-512: a full vector of 16-bit lanes at a time (Note [zipped bfloat16
// lanes] in cast16-inl.h).
template <UnaryKind K>
HWY_INLINE void BF16WideVector(const std::uint16_t* HWY_RESTRICT in,
                               std::uint16_t* HWY_RESTRICT out) {
  const hn::ScalableTag<std::uint16_t> du16;
  const DF df;
  hn::Vec<DF> x_lo, x_hi;
  BF16BitsToF32Zipped(df, hn::LoadU(du16, in), x_lo, x_hi);
  const auto y_lo = FloatOp<K, true>(df, x_lo);
  const auto y_hi = FloatOp<K, true>(df, x_hi);
  hn::StoreU(F32ToBF16BitsZipped(df, y_lo, y_hi), du16, out);
  if constexpr (K == UnaryKind::Rsqrt) {
    const auto redo_lo = RsqrtRecompute<true>(df, x_lo, y_lo);
    const auto redo_hi = RsqrtRecompute<true>(df, x_hi, y_hi);
    if (HWY_UNLIKELY(!hn::AllFalse(df, hn::Or(redo_lo, redo_hi)))) {
      const hn::ScalableTag<std::int16_t> di16;
      const hn::RebindToSigned<DF> di;
      HWY_ALIGN std::int16_t flags[hn::MaxLanes(di16)];
      hn::Store(hn::ReorderDemote2To(di16, hn::VecFromMask(di, hn::RebindMask(di, redo_lo)),
                                     hn::VecFromMask(di, hn::RebindMask(di, redo_hi))),
                di16, flags);
      RsqrtByRowKernel<true>(in, out, flags, hn::Lanes(di16));
    }
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
  if (i < n) {  // the tail through padded buffers (zeros: rsqrt recomputes them, harmlessly)
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
