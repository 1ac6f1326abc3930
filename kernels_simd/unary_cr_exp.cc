// The golden float lanes (unary_cr-inl.h) of the ops on exp's pair or e^x - 1's, and rsqrt,
// compiled with GCC's first scheduling pass (Note [scheduled float lanes], unary_cr_parts.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_cr_exp.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on

#include "hwy/highway.h"
#include "kernels_simd/math_unary.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/unary_cr-inl.h"
#include "kernels_simd/unary_cr_parts.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {

#if HWY_NATIVE_FMA
bool UnaryCrExpRowF32(UnaryKind kind, const float* in, float* out, std::size_t n,
                      const UnaryParams& p) {
  switch (kind) {
    case UnaryKind::Exp:
      CrRow<CrExp>(in, out, n, p);
      return true;
    case UnaryKind::Expm1:
      CrRow<CrExpm1>(in, out, n, p);
      return true;
    case UnaryKind::Tanh:
      CrRow<CrTanh>(in, out, n, p);
      return true;
    case UnaryKind::Sigmoid:
      CrRow<CrSigmoid>(in, out, n, p);
      return true;
    case UnaryKind::Silu:
      CrRow<CrSilu>(in, out, n, p);
      return true;
    case UnaryKind::GeluTanh:
      CrRow<CrGeluTanh>(in, out, n, p);
      return true;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    case UnaryKind::GeluErf:
      CrRow<CrGelu>(in, out, n, p);
      return true;
#endif
    case UnaryKind::Rsqrt:
      CrRow<CrRsqrt>(in, out, n, p);
      return true;
    default:
      return false;
  }
}
bool MathCrExpRowF32(MathKind kind, const float* in, float* out, std::size_t n) {
  const UnaryParams p;
  switch (kind) {
    case MathKind::exp2:
      CrRow<CrExp2>(in, out, n, p);
      return true;
    case MathKind::sinh:
      CrRow<CrSinh>(in, out, n, p);
      return true;
    case MathKind::cosh:
      CrRow<CrCosh>(in, out, n, p);
      return true;
    default:
      return false;
  }
}
bool PowMinusHalfCrRowF32(const float* in, float* out, std::size_t n, const UnaryParams& p) {
  CrRow<CrPowMinusHalf>(in, out, n, p);
  return true;
}
#else   // no FMA: the double-lane golden kernel computes every lane
bool UnaryCrExpRowF32(UnaryKind, const float*, float*, std::size_t, const UnaryParams&) {
  return false;
}
bool MathCrExpRowF32(MathKind, const float*, float*, std::size_t) { return false; }
bool PowMinusHalfCrRowF32(const float*, float*, std::size_t, const UnaryParams&) { return false; }
#endif  // HWY_NATIVE_FMA

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(UnaryCrExpRowF32);
HWY_EXPORT(MathCrExpRowF32);
HWY_EXPORT(PowMinusHalfCrRowF32);

bool unary_cr_exp_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                          const UnaryParams& p) {
  return HWY_DYNAMIC_DISPATCH(UnaryCrExpRowF32)(kind, in, out, n, p);
}
bool math_cr_exp_row_f32(MathKind kind, const float* in, float* out, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(MathCrExpRowF32)(kind, in, out, n);
}
bool pow_minus_half_cr_row_f32(const float* in, float* out, std::size_t n, const UnaryParams& p) {
  return HWY_DYNAMIC_DISPATCH(PowMinusHalfCrRowF32)(in, out, n, p);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
