// The GEMM engine (gemm.h), float accumulators: Fast float32, float16 and bfloat16 (the engine
// itself: gemm_engine-inl.h; gemm.cc dispatches every call).
#include <span>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/gemm_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels_simd/gemm.h"
#include "kernels_simd/gemm_engine-inl.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {

void GemmFloat(const GemmConfig& config, const Im2Col* im2col,
               std::span<const GemmProblem> problems) {
  GemmIn<float>(config, im2col, problems);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(GemmFloat);

void gemm_float_engine(const GemmConfig& config, const Im2Col* im2col,
                       std::span<const GemmProblem> problems) {
  HWY_DYNAMIC_DISPATCH(GemmFloat)(config, im2col, problems);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
