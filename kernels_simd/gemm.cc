// The GEMM engine (gemm.h), double accumulators: Golden float32, float16 and bfloat16, and
// float64 (the engine itself: gemm_engine-inl.h; the float accumulators of Fast: gemm_f32.cc).
// Dispatches every call.
#include <span>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/gemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels_simd/gemm.h"
#include "kernels_simd/gemm_engine-inl.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {

void GemmDouble(const GemmConfig& config, const Im2Col* im2col,
                std::span<const GemmProblem> problems) {
  GemmIn<double>(config, im2col, problems);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(GemmDouble);

namespace {

void run(const GemmConfig& config, const Im2Col* im2col, std::span<const GemmProblem> problems) {
  if (problems.empty()) return;
  if (config.fast && config.dtype != DType::Float64) {
    gemm_float_engine(config, im2col, problems);
  } else {
    HWY_DYNAMIC_DISPATCH(GemmDouble)(config, im2col, problems);
  }
}

}  // namespace

void gemm(const GemmConfig& config, std::span<const GemmProblem> problems) {
  run(config, nullptr, problems);
}

void gemm_im2col(const GemmConfig& config, const Im2Col& im2col,
                 std::span<const GemmProblem> problems) {
  run(config, &im2col, problems);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
