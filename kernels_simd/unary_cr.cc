// The golden float32 unary kernels in float lanes (Note [correctly rounded float lanes] in
// unary_cr-inl.h, which holds the ops): the entry points unary_cr_row_f32 and math_cr_row_f32,
// which hand each op to unary_cr_exp.cc or unary_cr_log.cc (Note [scheduled float lanes],
// unary_cr_parts.h), and the two ops that ran slower scheduled, log and tan, for each SIMD
// target; the lane counters of unary_cr_stats.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_cr.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include <atomic>

#include "hwy/highway.h"
#include "kernels_simd/math_unary.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/unary_cr-inl.h"
#include "kernels_simd/unary_cr_parts.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {

#if HWY_NATIVE_FMA
bool UnaryCrRowF32(UnaryKind kind, const float* in, float* out, std::size_t n,
                   const UnaryParams& p) {
  if (kind != UnaryKind::Log) return false;
  CrRow<CrLog>(in, out, n, p);
  return true;
}
bool MathCrRowF32(MathKind kind, const float* in, float* out, std::size_t n) {
  if (kind != MathKind::tan) return false;
  CrRow<CrTan>(in, out, n, UnaryParams{});
  return true;
}
#else   // no FMA: the double-lane golden kernel computes every lane
bool UnaryCrRowF32(UnaryKind, const float*, float*, std::size_t, const UnaryParams&) {
  return false;
}
bool MathCrRowF32(MathKind, const float*, float*, std::size_t) { return false; }
#endif  // HWY_NATIVE_FMA

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(UnaryCrRowF32);
HWY_EXPORT(MathCrRowF32);

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
  return unary_cr_exp_row_f32(kind, in, out, n, p) || unary_cr_log_row_f32(kind, in, out, n, p) ||
         HWY_DYNAMIC_DISPATCH(UnaryCrRowF32)(kind, in, out, n, p);
}

bool math_cr_row_f32(MathKind kind, const float* in, float* out, std::size_t n) {
  return math_cr_exp_row_f32(kind, in, out, n) || math_cr_log_row_f32(kind, in, out, n) ||
         HWY_DYNAMIC_DISPATCH(MathCrRowF32)(kind, in, out, n);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
