// The golden float lanes of gelu (erf form), sinh, asinh, acosh and atanh (unary_cr-inl.h),
// compiled with GCC's first scheduling pass (Note [scheduled float lanes]).
//
// Note [scheduled float lanes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// GCC's x86 back end runs no instruction scheduling before register allocation by default, so a
// two-stage step (Note [two-stage float lanes]) reaches the core as the four chains in program
// order, one after another; the longest (gelu, and the log1p behind asinh, acosh and atanh, the
// two exps of sinh: 60 to 80 vector operations each) fill the scheduler with operations that
// wait on their own chain. -fschedule-insns -fsched-pressure interleaves the chains where
// registers allow, and the values are the same (scheduling reorders, it does not reassociate or
// contract: bits_digest on every target). On one AVX-512 thread, the best of 4 to 6 rounds
// alternating the two builds (`MPSIM_NUM_THREADS=1 elementwise_bench unary_cache/OP`), the
// scheduled build ran asinh 1.18-1.29x as fast, acosh 1.24x, atanh 1.13-1.16x, sinh 1.13-1.16x
// and gelu 1.10-1.12x; on AVX2 (`MPSIM_SIMD_TARGETS=avx2`) asinh 1.08x. The other ops moved
// within the machine's noise either way (cos 0.89-0.98x, log 0.90-1.09x, silu 0.81-1.04x), so
// they stay in unary_cr.cc without the flag. Without -fsched-pressure the AVX2 build spilled
// registers: tanh 0.76x, sin 0.83x.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_cr_long.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/highway.h"
#include "kernels_simd/math_unary.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/unary_cr-inl.h"
#include "kernels_simd/unary_cr_long.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {

#if HWY_NATIVE_FMA
bool UnaryCrLongRowF32(UnaryKind kind, const float* in, float* out, std::size_t n,
                       const UnaryParams& p) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if (kind == UnaryKind::GeluErf) {
    CrRow<CrGelu>(in, out, n, p);
    return true;
  }
#else
  (void)kind, (void)in, (void)out, (void)n, (void)p;
#endif
  return false;
}

bool MathCrLongRowF32(MathKind kind, const float* in, float* out, std::size_t n) {
  const UnaryParams p;
  switch (kind) {
    case MathKind::sinh:
      CrRow<CrSinh>(in, out, n, p);
      return true;
    case MathKind::atanh:
      CrRow<CrAtanh>(in, out, n, p);
      return true;
    case MathKind::acosh:
      CrRow<CrAcosh>(in, out, n, p);
      return true;
    case MathKind::asinh:
      CrRow<CrAsinh>(in, out, n, p);
      return true;
    default:
      return false;
  }
}
#else   // no FMA: the double-lane golden kernel computes every lane
bool UnaryCrLongRowF32(UnaryKind, const float*, float*, std::size_t, const UnaryParams&) {
  return false;
}
bool MathCrLongRowF32(MathKind, const float*, float*, std::size_t) { return false; }
#endif  // HWY_NATIVE_FMA

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(UnaryCrLongRowF32);
HWY_EXPORT(MathCrLongRowF32);

bool unary_cr_long_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                           const UnaryParams& p) {
  return HWY_DYNAMIC_DISPATCH(UnaryCrLongRowF32)(kind, in, out, n, p);
}

bool math_cr_long_row_f32(MathKind kind, const float* in, float* out, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(MathCrLongRowF32)(kind, in, out, n);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
