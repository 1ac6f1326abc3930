// Math-family functions of float32 rows in double lanes (math_lanes_row_f32, math_unary.h):
// erfc, tan, asin and acos. The same bits as the value-by-value row (math_row_f32), faster.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/math_lanes.cc"
#include <cstddef>
#include <cstdint>
#include <limits>

#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/cast16-inl.h"
#include "kernels_simd/libm_special-inl.h"
#include "kernels_simd/math_unary.h"
#include "kernels_simd/vec_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A float32 row in double lanes: eval(x, &ok) gives each lane's double result and marks the
// lanes where it rounds to the correctly rounded float; the other lanes, and the tail, take
// math_row_f32 (the value-by-value row, long double near a boundary).
template <MathKind K, class Eval>
HWY_INLINE void LanesRow(const float* in, float* out, std::size_t n, const Eval& eval) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::size_t lanes = hn::Lanes(dd);
  // Stores one vector's results; the lanes not `ok` from math_row_f32 (x from `src`, which
  // `out` may alias: read before the store).
  auto store = [&](auto rf, auto ok, const float* src, float* dst) {
    if (HWY_LIKELY(hn::AllTrue(dd, ok))) {
      hn::StoreU(rf, df, dst);
      return;
    }
    HWY_ALIGN float result[HWY_MAX_BYTES / 8];
    std::uint8_t passed[8 + HWY_MAX_BYTES / 64] = {};
    hn::Store(rf, df, result);
    hn::StoreMaskBits(dd, ok, passed);
    for (std::size_t j = 0; j < lanes; ++j) {
      if (((passed[j / 8] >> (j % 8)) & 1) == 0) math_row_f32(K, src + j, result + j, 1);
    }
    for (std::size_t j = 0; j < lanes; ++j) dst[j] = result[j];
  };
  std::size_t i = 0;
  // Two vectors per iteration: their long dependency chains overlap (tan beyond 2^18:
  // 5.2 -> 4.x ns a value).
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    hwy::Prefetch(in + i + 1024);  // 4 KiB ahead (as the pow rows: 16M values 52 -> 44 ms)
    const auto x0 = hn::PromoteTo(dd, hn::LoadU(df, in + i));
    const auto x1 = hn::PromoteTo(dd, hn::LoadU(df, in + i + lanes));
    hn::Mask<decltype(dd)> ok0, ok1;
    const auto r0 = F64ToF32(dd, eval(dd, x0, &ok0));
    const auto r1 = F64ToF32(dd, eval(dd, x1, &ok1));
    store(r0, ok0, in + i, out + i);
    store(r1, ok1, in + i + lanes, out + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) {
    const auto x = hn::PromoteTo(dd, hn::LoadU(df, in + i));
    hn::Mask<decltype(dd)> ok;
    const auto r = F64ToF32(dd, eval(dd, x, &ok));
    store(r, ok, in + i, out + i);
  }
  if (i < n) math_row_f32(K, in + i, out + i, n - i);
}

// Note [erfc in double lanes]
// erfc(x) of a float32 x: e = erfc(|x|) = ErfcCore(|x|, x^2) (vec_math-inl.h; R's truncation
// 2^-51, exp's 2^-47 and the roundings: below 2^-46.4 relative, x^2 exact for a float x) for
// |x| <= 26, and erfc(x) = 2 - e for x < 0 (e <= 1 <= 2 - e, so the error stays below 2^-46.4
// relative, with one rounding more). x >= 10.1 gives +0 for certain (erfc(10.06) is below half
// the smallest subnormal, 2^-150). The double rounds once to float under the hard-lane test
// (Note [hard lanes], vec_math-inl.h: kHardMarginUlps, 2^-43 relative, 8x the bound); the
// lanes it leaves open (2^-18 of random inputs, and the subnormal results, 9.2 < x < 10.06) and
// NaN take math_row_f32 (glibc's erfc, long double near a boundary): the same bits as that row
// for every input. 2.6M floats, one thread: 3.9 ms against 17.8 ms value by value
// (`elementwise_bench --benchmark_filter=unary_sd/erfc`).
void ErfcRow(const float* in, float* out, std::size_t n) {
  LanesRow<MathKind::erfc>(in, out, n, [](auto dd, auto x, auto* ok) {
    const auto y = hn::Min(hn::Abs(x), hn::Set(dd, 26.0));
    const auto e = ErfcCore(dd, y, hn::Mul(y, y));
    const auto zero = hn::Ge(x, hn::Set(dd, 10.1));
    auto r = hn::IfThenElse(hn::Lt(x, hn::Zero(dd)), hn::Sub(hn::Set(dd, 2.0), e), e);
    r = hn::IfThenZeroElse(zero, r);
    *ok = hn::And(hn::Eq(x, x), hn::Or(zero, RoundsSafelyWithin<kHardMarginUlps>(dd, r)));
    return r;
  });
}

// Note [tan in double lanes]
// tan x = sin x / cos x from one reduction (SinCosReduce to 2^18, exact beyond: Note [large
// trig arguments]) and SinCosFinish's series, each within 2^-50 relative: the quotient within
// 2^-48.9, rounded once to float under the hard-lane test (2^-43, Note [hard lanes]). Zeros,
// subnormal results, infinities and NaN fail the test and take math_row_f32 (glibc's tan, long
// double near a boundary): the same bits as that row. Every target, every contiguous row: on
// AVX-512, [2, 320, 64, 64] uniform on [-8, 8] takes 2/3 of the time that sin and cos as float
// pairs and their quotient take.
void TanRow(const float* in, float* out, std::size_t n) {
  LanesRow<MathKind::tan>(in, out, n, [](auto dd, auto x, auto* ok) {
    hn::Vec<decltype(dd)> s, c;
    SinCosFinish(dd, SinCosReduceFloat(dd, x, SinCosReduce(dd, x)), &s, &c);
    const auto r = hn::Div(s, c);
    *ok = hn::And(hn::IsFinite(x), RoundsSafelyWithin<kHardMarginUlps>(dd, r));
    return r;
  });
}

// Note [asin and acos in double lanes]
// asin(a), a = |x| <= 1/2: a + a z Q(z), z = a^2 (exact: a is a float); above: z = (1 - a)/2
// (exact), s = sqrt(z) (one rounding), asin(s) = s + s z Q(z) and asin(a) = pi/2 - 2 asin(s).
// Q(z) = (asin(sqrt z) - sqrt z) / z^(3/2) on [0, 1/4]: a degree-9 Chebyshev interpolant
// (tools/gen_asin_lanes.py 9, 2^-41.6 relative; its coefficients' magnitudes, scaled by 4^-j,
// sum to 0.19, so Horner adds a few ulps of Q). The Q term is at most 4.5% of asin(s)
// (z <= 1/4), so r = asin(a) or asin(s) is within 2^-46.1 relative (with the last addition's
// rounding and s's). acos(x) = pi/2 - asin(x) (|x| <= 1/2), 2 asin(s) (x > 1/2), pi - 2 asin(s)
// (x < -1/2); pi/2 and pi as double pairs. Each combination loses at most a factor 2 to
// cancellation (pi/2 - 2r >= pi/6 with 2r <= pi/3; acos >= pi/3 where it subtracts): results
// within 2^-45 relative, rounded once to float under the hard-lane test (2^-43, Note [hard
// lanes]; degree 10 took 5% more time). |x| > 1 and NaN take math_row_f32's NaN in the vector
// (the row's quiet NaN, or x quieted); zeros, subnormal results and acos(1) = 0 fail the test
// and take math_row_f32 (glibc, long double near a boundary): the same bits as that row. On
// AVX-512 the float lanes (unary_cr-inl.h) run these rows and send their open lanes here.
constexpr double kAsinQ[10] = {
    0x1.5555555554f05p-3, 0x1.33333335a9cd6p-4, 0x1.6db6d8e71341bp-5, 0x1.f1c81c59ea536p-6,
    0x1.6e72146fda29ep-6, 0x1.1dc2ef640046fp-6, 0x1.b02442413f6bap-7, 0x1.00d47e7966d94p-6,
    -0x1.815314c864b09p-9, 0x1.c93a92d53b4f1p-6};
template <bool kAcos>
void AsinAcosRow(const float* in, float* out, std::size_t n) {
  LanesRow<kAcos ? MathKind::acos : MathKind::asin>(in, out, n, [](auto dd, auto x, auto* ok) {
    constexpr double kPio2Hi = 0x1.921fb54442d18p+0, kPio2Lo = 0x1.1a62633145c07p-54;
    const auto one = hn::Set(dd, 1.0), half = hn::Set(dd, 0.5);
    const auto a = hn::Abs(x);
    const auto big = hn::Gt(a, half);
    const auto z = hn::IfThenElse(big, hn::Mul(hn::Sub(one, a), half), hn::Mul(a, a));
    const auto s = hn::IfThenElse(big, hn::Sqrt(z), a);
    const auto r = hn::MulAdd(hn::Mul(s, z), Horner(dd, z, kAsinQ), s);
    const auto two_r = hn::Add(r, r);
    hn::Vec<decltype(dd)> y;
    if constexpr (kAcos) {
      const auto small = hn::Add(hn::Sub(hn::Set(dd, kPio2Hi), hn::CopySign(r, x)),
                                 hn::Set(dd, kPio2Lo));
      const auto neg = hn::Add(hn::Sub(hn::Set(dd, 2 * kPio2Hi), two_r), hn::Set(dd, 2 * kPio2Lo));
      y = hn::IfThenElse(big, hn::IfThenElse(hn::Lt(x, hn::Zero(dd)), neg, two_r), small);
    } else {
      const auto large = hn::Add(hn::Sub(hn::Set(dd, kPio2Hi), two_r), hn::Set(dd, kPio2Lo));
      y = hn::CopySign(hn::IfThenElse(big, large, r), x);
    }
    // Outside [-1, 1] the value-by-value row's quiet NaN (0x7fc00000), a NaN x quieted: in
    // the vector (a row of which a third lies outside took 8x the time one by one).
    const auto outside = hn::Not(hn::Le(a, one));  // NaN included
    y = hn::IfThenElse(outside,
                       QuietNaNOr(x, hn::Set(dd, std::numeric_limits<double>::quiet_NaN())),
                       y);
    *ok = hn::Or(RoundsSafelyWithin<kHardMarginUlps>(dd, y), outside);
    return y;
  });
}

bool MathLanesRowF32(MathKind kind, const float* in, float* out, std::size_t n) {
  switch (kind) {
    case MathKind::erfc:
      ErfcRow(in, out, n);
      return true;
    case MathKind::tan:
      TanRow(in, out, n);
      return true;
    case MathKind::asin:
      AsinAcosRow<false>(in, out, n);
      return true;
    case MathKind::acos:
      AsinAcosRow<true>(in, out, n);
      return true;
    default:
      return false;
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(MathLanesRowF32);

bool math_lanes_row_f32(MathKind kind, const float* in, float* out, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(MathLanesRowF32)(kind, in, out, n);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
