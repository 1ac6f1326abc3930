// Every SIMD target by construction. ctest runs each kernel test binary once per Highway target
// (tests/CMakeLists.txt, mpsim_add_kernel_test: <binary>@scalar, @sse4, @avx2, @avx512; @neon,
// @sve on ARM), pinned to it by MPSIM_TEST_TARGET (tests/simd_main.cc), so every test in those
// binaries runs on every target that this build compiled and this CPU runs, without saying so;
// a run for a target the CPU lacks is reported skipped. Pinned, a test that restricts the target
// itself gets the pin back when it ends.
//
// Run by hand (no MPSIM_TEST_TARGET), a binary runs its tests on the best target, and the
// TEST_Ps of an OnEveryTarget fixture once per available target, named by it:
//
//   class PoolOnTarget : public mpsim::test::OnEveryTarget {};
//   TEST_P(PoolOnTarget, VectorChannelsGiveTheScalarDefinition) { ... }  // .../avx2, ...
//   MPSIM_ON_EVERY_TARGET(PoolOnTarget);
//
// A test that compares the targets with one another (the same bits on every target) runs them
// in turn with for_each_target; pinned, it runs in the best target's run only.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "kernels_simd/simd_target.h"

namespace mpsim::test {

// The target this process is pinned to (MPSIM_TEST_TARGET), or "" when none.
inline const std::string& pinned_target() {
  static const std::string pinned = [] {
    const char* v = std::getenv("MPSIM_TEST_TARGET");
    return std::string(v == nullptr ? "" : v);
  }();
  return pinned;
}

// Every target this build compiled and this CPU runs, best first, whatever the restriction now
// (simd::available_targets() lists the allowed ones only).
inline std::vector<std::string> all_targets() {
  simd::reset_targets();
  std::vector<std::string> all = simd::available_targets();
  if (!pinned_target().empty()) simd::restrict_targets(pinned_target());
  return all;
}

// The targets a kernel test runs on in this process: the pinned one, or every available one.
inline std::vector<std::string> targets_under_test() {
  if (!pinned_target().empty()) return {pinned_target()};
  return simd::available_targets();
}

// Back to the pinned target, or no restriction when none.
inline void restore_targets() {
  if (pinned_target().empty()) {
    simd::reset_targets();
  } else {
    simd::restrict_targets(pinned_target());
  }
}

class OnEveryTarget : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { simd::restrict_targets(GetParam()); }
  void TearDown() override { restore_targets(); }
  const std::string& target() const { return GetParam(); }
};

// Restores the targets (restore_targets) when it goes out of scope.
struct TargetReset {
  TargetReset() = default;
  TargetReset(const TargetReset&) = delete;
  TargetReset& operator=(const TargetReset&) = delete;
  ~TargetReset() { restore_targets(); }
};

// Calls fn(target) on each available target in turn (best first), restricted to it, with a
// SCOPED_TRACE naming it; the targets are restored afterwards, also when fn throws. Pinned to a
// target other than the best, it does nothing: the comparison runs in the best target's run.
template <class Fn>
void for_each_target(Fn&& fn) {
  const TargetReset reset;
  const std::vector<std::string> all = all_targets();
  if (!pinned_target().empty() && (all.empty() || pinned_target() != all.front())) return;
  for (const std::string& target : all) {
    SCOPED_TRACE("SIMD target " + target);
    simd::restrict_targets(target);
    fn(target);
  }
}

}  // namespace mpsim::test

// Instantiates the TEST_Ps of `suite` (an OnEveryTarget fixture) once per target under test,
// named by it.
#define MPSIM_ON_EVERY_TARGET(suite)                                         \
  INSTANTIATE_TEST_SUITE_P(                                                  \
      Simd, suite, ::testing::ValuesIn(::mpsim::test::targets_under_test()), \
      [](const ::testing::TestParamInfo<std::string>& info) { return info.param; })
