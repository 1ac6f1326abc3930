// The golden float lanes (unary_cr-inl.h) of the ops on log's reduction and the trigonometric
// ones, compiled with GCC's first scheduling pass (Note [scheduled float lanes],
// unary_cr_parts.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_cr_log.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include <cmath>

#include "hwy/highway.h"
#include "kernels_simd/math_unary.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/unary_cr-inl.h"
#include "kernels_simd/unary_cr_parts.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {

#if HWY_NATIVE_FMA
bool UnaryCrLogRowF32(UnaryKind kind, const float* in, float* out, std::size_t n,
                      const UnaryParams& p) {
  switch (kind) {
    case UnaryKind::Log1p:
      CrRow<CrLog1p>(in, out, n, p);
      return true;
    case UnaryKind::Softplus: {
      // beta 1 and a threshold that is a float (x > T then compares as the double path does)
      const auto t = static_cast<float>(p.threshold);
      if (p.beta != 1.0 || static_cast<double>(t) != p.threshold) return false;
      CrSoftplus op;
      op.threshold = t;
      CrRow<CrSoftplus>(in, out, n, p, op);
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
bool MathCrLogRowF32(MathKind kind, const float* in, float* out, std::size_t n) {
  const UnaryParams p;
  switch (kind) {
    case MathKind::log2:
      CrRow<CrLogBase<MathKind::log2>>(in, out, n, p);
      return true;
    case MathKind::log10:
      CrRow<CrLogBase<MathKind::log10>>(in, out, n, p);
      return true;
    case MathKind::asinh:
      CrRow<CrAsinh>(in, out, n, p);
      return true;
    case MathKind::acosh:
      CrRow<CrAcosh>(in, out, n, p);
      return true;
    case MathKind::atanh:
      CrRow<CrAtanh>(in, out, n, p);
      return true;
    case MathKind::atan:
      CrRow<CrAtan>(in, out, n, p);
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
bool PowCrLanesRowF32(const float* in, float y, float* out, std::size_t n) {
  const UnaryParams p;
  CrRow<CrPow>(in, out, n, p,
               CrPow{.y = y, .integral = std::nearbyint(y) == y, .odd = odd_integer(y)});
  return true;
}
#else   // no FMA: the double-lane golden kernel computes every lane
bool UnaryCrLogRowF32(UnaryKind, const float*, float*, std::size_t, const UnaryParams&) {
  return false;
}
bool MathCrLogRowF32(MathKind, const float*, float*, std::size_t) { return false; }
bool PowCrLanesRowF32(const float*, float, float*, std::size_t) { return false; }
#endif  // HWY_NATIVE_FMA

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(UnaryCrLogRowF32);
HWY_EXPORT(MathCrLogRowF32);
HWY_EXPORT(PowCrLanesRowF32);

bool unary_cr_log_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                          const UnaryParams& p) {
  return HWY_DYNAMIC_DISPATCH(UnaryCrLogRowF32)(kind, in, out, n, p);
}
bool math_cr_log_row_f32(MathKind kind, const float* in, float* out, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(MathCrLogRowF32)(kind, in, out, n);
}
bool pow_cr_lanes_row_f32(const float* in, float y, float* out, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(PowCrLanesRowF32)(in, y, out, n);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
