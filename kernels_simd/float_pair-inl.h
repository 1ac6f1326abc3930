// Per-target float-lane pieces shared by the Precision::Fast kernels (unary_fast-inl.h) and the
// correctly rounded float lanes of the golden path (unary_cr-inl.h): the vector types, the magic
// number that rounds to an integer, and exact float pair sums, which only targets with FMA use;
// and the x^-1/2 estimate, which every target has (the 16-bit rsqrt rows of lookup16.cc).
// Included after `hwy/foreach_target.h`; opens HWY_NAMESPACE itself.
#if defined(MPSIM_KERNELS_SIMD_FLOAT_PAIR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPSIM_KERNELS_SIMD_FLOAT_PAIR_INL_H_
#undef MPSIM_KERNELS_SIMD_FLOAT_PAIR_INL_H_
#else
#define MPSIM_KERNELS_SIMD_FLOAT_PAIR_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

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
// The same pairs for a - b, without negating b: Fast2Sum(a, -b) and TwoSum(a, -b) bit for bit
// (x + (-y) is x - y, and RN(-v) = -RN(v)), one operation fewer.
HWY_INLINE void Fast2Diff(VF a, VF b, VF& s, VF& e) {
  s = hn::Sub(a, b);
  e = hn::Sub(hn::Sub(a, s), b);
}
HWY_INLINE void TwoDiff(VF a, VF b, VF& s, VF& e) {
  s = hn::Sub(a, b);
  const VF bb = hn::Sub(s, a);  // ~ -b
  e = hn::Sub(hn::Sub(a, hn::Sub(s, bb)), hn::Add(b, bb));
}
#endif  // HWY_NATIVE_FMA

// x^-1/2 within 2^-20.5 relative for normal positive x. AVX-512's 2^-14 and AVX2's 1.5 2^-12
// estimates y0 take a Newton step y0 + y0 (1 - x y0 y0)/2: its truncation 1.5 e0^2 <= 2^-22.2,
// the rounding of x y0 carried at half weight (2^-25) and the last one (2^-24) sum to 2^-21.5.
// Elsewhere a square root and a division: two roundings, 2^-23.
template <class D>
HWY_INLINE hn::Vec<D> RsqrtEstimate(D d, hn::Vec<D> x) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  const auto y0 = hn::ApproximateReciprocalSqrt(x);
  const auto t = hn::NegMulAdd(hn::Mul(x, y0), y0, hn::Set(d, 1.0f));
  return hn::MulAdd(hn::Mul(y0, t), hn::Set(d, 0.5f), y0);
#else
  return hn::Div(hn::Set(d, 1.0f), hn::Sqrt(x));
#endif
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPSIM_KERNELS_SIMD_FLOAT_PAIR_INL_H_
