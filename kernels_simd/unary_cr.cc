// The golden float32 unary kernels in float lanes (Note [correctly rounded float lanes] in
// unary_cr-inl.h, which holds the ops): this file instantiates every op but the five of
// unary_cr_long.cc (Note [scheduled float lanes]) for each SIMD target, and the entry points
// unary_cr_row_f32, math_cr_row_f32, pow_minus_half_cr_row_f32 and pow_cr_lanes_row_f32, which
// hand those five to unary_cr_long.cc.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_cr.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include <atomic>
#include <cmath>

#include "hwy/highway.h"
#include "kernels_simd/math_unary.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/unary_cr-inl.h"
#include "kernels_simd/unary_cr_long.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {

#if HWY_NATIVE_FMA
bool UnaryCrRowF32(UnaryKind kind, const float* in, float* out, std::size_t n,
                   const UnaryParams& p) {
  switch (kind) {
    case UnaryKind::Exp:
      CrRow<CrExp>(in, out, n, p);
      return true;
    case UnaryKind::Log:
      CrRow<CrLog>(in, out, n, p);
      return true;
    case UnaryKind::Sigmoid:
      CrRow<CrSigmoid>(in, out, n, p);
      return true;
    case UnaryKind::Silu:
      CrRow<CrSilu>(in, out, n, p);
      return true;
    case UnaryKind::Rsqrt:
      CrRow<CrRsqrt>(in, out, n, p);
      return true;
    case UnaryKind::GeluTanh:
      CrRow<CrGeluTanh>(in, out, n, p);
      return true;
    case UnaryKind::Log1p:
      CrRow<CrLog1p>(in, out, n, p);
      return true;
    case UnaryKind::Expm1:
      CrRow<CrExpm1>(in, out, n, p);
      return true;
    case UnaryKind::Tanh:
      CrRow<CrTanh>(in, out, n, p);
      return true;
    case UnaryKind::Softplus: {
      // beta 1 and a threshold that is a float (x > T then compares as the double path does)
      const auto t = static_cast<float>(p.threshold);
      if (p.beta != 1.0 || static_cast<double>(t) != p.threshold) return false;
      CrRow<CrSoftplus>(in, out, n, p, CrSoftplus{.threshold = t});
      return true;
    }
    case UnaryKind::Sin:
      CrRow<CrSinCos<false>>(in, out, n, p);
      return true;
    case UnaryKind::Cos:
      CrRow<CrSinCos<true>>(in, out, n, p);
      return true;
    default:
      return false;
  }
}

bool MathCrRowF32(MathKind kind, const float* in, float* out, std::size_t n) {
  const UnaryParams p;
  switch (kind) {
    case MathKind::exp2:
      CrRow<CrExp2>(in, out, n, p);
      return true;
    case MathKind::log2:
      CrRow<CrLogBase<MathKind::log2>>(in, out, n, p);
      return true;
    case MathKind::log10:
      CrRow<CrLogBase<MathKind::log10>>(in, out, n, p);
      return true;
    case MathKind::cosh:
      CrRow<CrCosh>(in, out, n, p);
      return true;
    case MathKind::atan:
      CrRow<CrAtan>(in, out, n, p);
      return true;
    case MathKind::tan:
      CrRow<CrTan>(in, out, n, p);
      return true;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    case MathKind::asin:
      CrRow<CrAsinAcos<false>>(in, out, n, p);
      return true;
    case MathKind::acos:
      CrRow<CrAsinAcos<true>>(in, out, n, p);
      return true;
#endif
    default:
      return false;
  }
}
bool PowMinusHalfCrRowF32(const float* in, float* out, std::size_t n, const UnaryParams& p) {
  CrRow<CrPowMinusHalf>(in, out, n, p);
  return true;
}
bool PowCrLanesRowF32(const float* in, float y, float* out, std::size_t n, bool stream) {
  UnaryParams p;
  p.stream_out = stream;
  CrRow<CrPow>(in, out, n, p,
               CrPow{.y = y, .integral = std::nearbyint(y) == y, .odd = odd_integer(y)});
  return true;
}
#else   // no FMA: the double-lane golden kernel computes every lane
bool UnaryCrRowF32(UnaryKind, const float*, float*, std::size_t, const UnaryParams&) {
  return false;
}
bool MathCrRowF32(MathKind, const float*, float*, std::size_t) { return false; }
bool PowMinusHalfCrRowF32(const float*, float*, std::size_t, const UnaryParams&) { return false; }
bool PowCrLanesRowF32(const float*, float, float*, std::size_t, bool) { return false; }
#endif  // HWY_NATIVE_FMA

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(UnaryCrRowF32);
HWY_EXPORT(MathCrRowF32);
HWY_EXPORT(PowMinusHalfCrRowF32);
HWY_EXPORT(PowCrLanesRowF32);

namespace {
std::atomic<std::uint64_t> g_lanes{0}, g_slow_lanes{0};
}  // namespace

UnaryCrStats unary_cr_stats() {
  return {g_lanes.load(std::memory_order_relaxed), g_slow_lanes.load(std::memory_order_relaxed)};
}
void reset_unary_cr_stats() {
  g_lanes.store(0, std::memory_order_relaxed);
  g_slow_lanes.store(0, std::memory_order_relaxed);
}
void note_unary_cr_lanes(std::uint64_t lanes, std::uint64_t slow_lanes) {
  g_lanes.fetch_add(lanes, std::memory_order_relaxed);
  g_slow_lanes.fetch_add(slow_lanes, std::memory_order_relaxed);
}

bool unary_cr_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                      const UnaryParams& p) {
  return HWY_DYNAMIC_DISPATCH(UnaryCrRowF32)(kind, in, out, n, p) ||
         unary_cr_long_row_f32(kind, in, out, n, p);
}

bool math_cr_row_f32(MathKind kind, const float* in, float* out, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(MathCrRowF32)(kind, in, out, n) ||
         math_cr_long_row_f32(kind, in, out, n);
}

bool pow_minus_half_cr_row_f32(const float* in, float* out, std::size_t n, const UnaryParams& p) {
  return HWY_DYNAMIC_DISPATCH(PowMinusHalfCrRowF32)(in, out, n, p);
}
bool pow_cr_lanes_row_f32(const float* in, float y, float* out, std::size_t n, bool stream) {
  return HWY_DYNAMIC_DISPATCH(PowCrLanesRowF32)(in, y, out, n, stream);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
