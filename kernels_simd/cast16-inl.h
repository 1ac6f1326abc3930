// Per-target casts between float lanes and the bits of the 16-bit floats (uint16_t lanes), and from
// double lanes to float ones, each bit-identical to its scalar function (core/dtype.h, the C++
// conversion) on every target: the row casts of transpose.cc, the 16-bit loads and stores of the
// depthwise row kernels (depthwise_rows-inl.h) and the GEMM's packing and output (gemm-inl.h,
// gemm_engine-inl.h). Included after `hwy/foreach_target.h`; opens HWY_NAMESPACE itself.
#if defined(MPSIM_KERNELS_SIMD_CAST16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPSIM_KERNELS_SIMD_CAST16_INL_H_
#undef MPSIM_KERNELS_SIMD_CAST16_INL_H_
#else
#define MPSIM_KERNELS_SIMD_CAST16_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// detail::f32_to_f16_bits lane by lane. x86 targets with F16C convert in one instruction
// (vcvtps2ph to nearest even), which gives the function's bits for all 2^32 inputs, NaNs
// included (compared exhaustively on this machine's AVX-512 CPU); the others take the same
// integer steps as the function (the exponent rebiased by one wrapping add, ties to even by the
// mantissa's last kept bit, subnormals rounded by the float add of 0.5, NaN quieted with its
// payload's top bits, +-inf from 65520 up).
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::uint16_t, DF>> F32ToF16Bits(DF df, hn::Vec<DF> v) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
  const hn::Rebind<hwy::float16_t, DF> dh;
  (void)df;
  return hn::BitCast(hn::RebindToUnsigned<decltype(dh)>(), hn::DemoteTo(dh, v));
#else
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto x = hn::BitCast(du, v);
  const auto sign = hn::And(hn::ShiftRight<16>(x), hn::Set(du, 0x8000u));
  const auto a = hn::And(x, hn::Set(du, 0x7fffffffu));
  const auto ai = hn::BitCast(di, a);  // non-negative: signed compares order it
  const auto nan =
      hn::Or(hn::Set(du, 0x7e00u), hn::And(hn::ShiftRight<13>(a), hn::Set(du, 0x3ffu)));
  const auto subnormal = hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(df, a), hn::Set(df, 0.5f))),
                                 hn::Set(du, 0x3f000000u));
  const auto normal = hn::ShiftRight<13>(hn::Add(hn::Add(a, hn::Set(du, 0xc8000fffu)),
                                                 hn::And(hn::ShiftRight<13>(a), hn::Set(du, 1u))));
  auto r =
      hn::IfThenElse(hn::RebindMask(du, hn::Lt(ai, hn::Set(di, 0x38800000))), subnormal, normal);
  r = hn::IfThenElse(hn::RebindMask(du, hn::Gt(ai, hn::Set(di, 0x477fefff))), hn::Set(du, 0x7c00u),
                     r);
  r = hn::IfThenElse(hn::RebindMask(du, hn::Gt(ai, hn::Set(di, 0x7f800000))), nan, r);
  // Every lane is now below 2^16: the saturating narrowing is exact.
  return hn::DemoteTo(hn::Rebind<std::uint16_t, DF>(), hn::BitCast(di, hn::Or(r, sign)));
#endif
}

// detail::f16_bits_to_f32 lane by lane: the half's fields shifted into a float's times 2^112
// (exact, subnormals included), infinities and NaNs (payload kept, not quieted) with the top
// exponent instead.
template <class DF>
HWY_INLINE hn::Vec<DF> F16BitsToF32(DF df, hn::Vec<hn::Rebind<std::uint16_t, DF>> bits) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto h = hn::PromoteTo(du, bits);
  const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
  const auto fields = hn::ShiftLeft<13>(hn::And(h, hn::Set(du, 0x7fffu)));
  const auto finite = hn::BitCast(du, hn::Mul(hn::BitCast(df, fields), hn::Set(df, 0x1p112f)));
  const auto special = hn::Or(fields, hn::Set(du, 0x7f800000u));
  // fields < 2^28: signed compares order them
  const auto r =
      hn::IfThenElse(hn::RebindMask(du, hn::Gt(hn::BitCast(di, fields), hn::Set(di, 0x0f7fffff))),
                     special, finite);
  return hn::BitCast(df, hn::Or(r, sign));
}

// float16 bits as float lanes for arithmetic: F16C's conversion where the target has it, whose
// one difference from F16BitsToF32 is a signalling NaN coming out quiet, as any arithmetic on it
// would make it anyway (the depthwise kernels' loads, the GEMM's packing).
template <class DF>
HWY_INLINE hn::Vec<DF> F16BitsToF32ForArithmetic(DF df,
                                                 hn::Vec<hn::Rebind<std::uint16_t, DF>> bits) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
  return hn::PromoteTo(df, hn::BitCast(hn::Rebind<hwy::float16_t, DF>(), bits));
#else
  return F16BitsToF32(df, bits);
#endif
}

// detail::bf16_bits_to_f32 lane by lane: the bits shifted up by 16.
template <class DF>
HWY_INLINE hn::Vec<DF> BF16BitsToF32(DF df, hn::Vec<hn::Rebind<std::uint16_t, DF>> bits) {
  return hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(hn::RebindToUnsigned<DF>(), bits)));
}

// detail::f32_to_bf16_bits lane by lane: ties to even by adding 0x7fff and the last kept bit,
// NaN quieted (bit 6 of the result set) with its top payload bits.
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<std::uint16_t, DF>> F32ToBF16Bits(DF /*df*/, hn::Vec<DF> v) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto x = hn::BitCast(du, v);
  const auto magnitude = hn::BitCast(di, hn::And(x, hn::Set(du, 0x7fffffffu)));
  const auto rounded = hn::ShiftRight<16>(
      hn::Add(hn::Add(x, hn::Set(du, 0x7fffu)), hn::And(hn::ShiftRight<16>(x), hn::Set(du, 1u))));
  const auto nan = hn::Or(hn::ShiftRight<16>(x), hn::Set(du, 0x40u));
  const auto r =
      hn::IfThenElse(hn::RebindMask(du, hn::Gt(magnitude, hn::Set(di, 0x7f800000))), nan, rounded);
  // Every lane is below 2^16: the saturating narrowing is exact.
  return hn::DemoteTo(hn::Rebind<std::uint16_t, DF>(), hn::BitCast(di, r));
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// Note [zipped bfloat16 lanes]
// On AVX2 and AVX-512 a full vector of bfloat16 bits widens to two float vectors by interleaving
// zeros below each value within 128-bit blocks (ZipLower, ZipUpper: exact), and two float vectors
// narrow back by the saturating pack that undoes that interleave (ReorderDemote2To of int32: the
// arithmetic shift of the rounded bits lies in int16's range), with no lane-crossing permute
// either way: fewer instructions than a vector of 16-bit lanes per float vector. The rounding is
// F32ToBF16Bits's to nearest even without its NaN case: callers pass only floats whose NaNs are
// quiet with their low 16 bits clear (a widened bfloat16's, or the default NaN, from IEEE
// arithmetic on widened values), which adding 0x7fff and the last kept bit leaves as they are.
template <class DF>
HWY_INLINE void BF16BitsToF32Zipped(DF df, hn::Vec<hn::Repartition<std::uint16_t, DF>> bits,
                                    hn::Vec<DF>& lo, hn::Vec<DF>& hi) {
  const hn::RebindToUnsigned<DF> du;
  const auto zero = hn::Zero(hn::Repartition<std::uint16_t, DF>());
  lo = hn::BitCast(df, hn::ZipLower(du, zero, bits));
  hi = hn::BitCast(df, hn::ZipUpper(du, zero, bits));
}
template <class DF>
HWY_INLINE hn::Vec<hn::Repartition<std::uint16_t, DF>> F32ToBF16BitsZipped(DF /*df*/,
                                                                           hn::Vec<DF> lo,
                                                                           hn::Vec<DF> hi) {
  const hn::RebindToSigned<DF> di;
  auto round = [&](hn::Vec<DF> y) {  // to nearest even, as the value's top 16 bits, signed
    const auto v = hn::BitCast(di, y);
    const auto last = hn::And(hn::ShiftRight<16>(v), hn::Set(di, 1));
    return hn::ShiftRight<16>(hn::Add(hn::Add(v, hn::Set(di, 0x7fff)), last));
  };
  const hn::Repartition<std::int16_t, DF> di16;
  return hn::BitCast(hn::Repartition<std::uint16_t, DF>(),
                     hn::ReorderDemote2To(di16, round(lo), round(hi)));
}
#endif

#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
// one(v[i]) for each double lane, as float lanes: the emulated targets' casts from double, whose
// DemoteTo clamps infinities and overflowing values to +-FLT_MAX.
template <class DD, class One>
HWY_INLINE hn::Vec<hn::Rebind<float, DD>> EachLaneToF32(DD dd, hn::Vec<DD> v, const One& one) {
  HWY_ALIGN double in[HWY_MAX_BYTES / sizeof(double)];
  HWY_ALIGN float out[HWY_MAX_BYTES / sizeof(double)];
  hn::Store(v, dd, in);
  for (std::size_t i = 0; i < hn::Lanes(dd); ++i) out[i] = one(in[i]);
  return hn::Load(hn::Rebind<float, DD>(), out);
}
#endif

// Double lanes rounded to float to nearest even, past FLT_MAX to +-inf, as the C++ conversion
// (cvtpd2ps, fcvtn).
template <class DD>
HWY_INLINE hn::Vec<hn::Rebind<float, DD>> F64ToF32(DD dd, hn::Vec<DD> v) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  return EachLaneToF32(dd, v, [](double x) { return static_cast<float>(x); });
#else
  (void)dd;
  return hn::DemoteTo(hn::Rebind<float, DD>(), v);
#endif
}

// Double lanes rounded to float by round-to-odd (detail::f64_to_f32_round_odd), so that
// rounding the float to nearest for a 16-bit type gives the double's correctly rounded 16-bit
// value, as one rounding would (Boldo and Melquiond, IEEE Trans. Computers 57(4), 2008).
template <class DD>
HWY_INLINE hn::Vec<hn::Rebind<float, DD>> F64ToF32RoundOdd(DD dd, hn::Vec<DD> v) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  return EachLaneToF32(dd, v, ::mpsim::detail::f64_to_f32_round_odd);
#else
  const hn::Rebind<float, DD> df;
  // The nearest float, stepped toward zero where it lies farther out than v and its last bit
  // set where it differs from v: the steps arrive as -1, 0, 1 in float's lanes.
  const hn::Rebind<std::int32_t, DD> di;
  const auto r = hn::DemoteTo(df, v);
  const auto back = hn::PromoteTo(dd, r);
  const auto down =
      hn::DemoteTo(di, hn::IfThenElseZero(hn::Gt(hn::Abs(back), hn::Abs(v)), hn::Set(dd, -1.0)));
  const auto last = hn::DemoteTo(di, hn::IfThenElseZero(hn::Ne(back, v), hn::Set(dd, 1.0)));
  return hn::BitCast(df, hn::Or(hn::Add(hn::BitCast(di, r), down), last));
#endif
}

// F64ToF32RoundOdd's float wherever rounding it to float16 can tell: the double's significand cut
// to float's 24 bits, the cut bits' OR kept in the last one (round to odd, exact where the float
// is normal), then converted. Below 2^-126 (where the conversion may round again) the float16
// result is +-0 either way, and beyond float's range +-inf; NaNs keep their top payload bits.
// Four operations against F64ToF32RoundOdd's ten or so.
template <class DD>
HWY_INLINE hn::Vec<hn::Rebind<float, DD>> F64ToF32RoundOddForF16(DD dd, hn::Vec<DD> v) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  return F64ToF32RoundOdd(dd, v);
#else
  const hn::RebindToUnsigned<DD> du;
  const auto bits = hn::BitCast(du, v);
  const auto cut = hn::Set(du, (std::uint64_t{1} << 29) - 1);
  const auto sticky = hn::RebindMask(du, hn::Ne(hn::And(bits, cut), hn::Zero(du)));
  const auto kept = hn::AndNot(cut, bits);
  return hn::DemoteTo(
      hn::Rebind<float, DD>(),
      hn::BitCast(dd,
                  hn::IfThenElse(sticky, hn::Or(kept, hn::Set(du, std::uint64_t{1} << 29)), kept)));
#endif
}

// F64ToF32RoundOdd's float, by the cut of F64ToF32RoundOddForF16 where every lane is 0 or at least
// 2^-126 in magnitude (the float is normal, infinite or beyond float's range, where both give
// floats that round alike: FLT_MAX and +-inf both round to +-inf in bfloat16), else by
// F64ToF32RoundOdd itself (subnormal floats, NaNs).
template <class DD>
HWY_INLINE hn::Vec<hn::Rebind<float, DD>> F64ToF32RoundOddForBF16(DD dd, hn::Vec<DD> v) {
  const auto plain = hn::Or(hn::Ge(hn::Abs(v), hn::Set(dd, 0x1p-126)), hn::Eq(v, hn::Zero(dd)));
  if (HWY_LIKELY(hn::AllTrue(dd, plain))) return F64ToF32RoundOddForF16(dd, v);
  return F64ToF32RoundOdd(dd, v);
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPSIM_KERNELS_SIMD_CAST16_INL_H_
