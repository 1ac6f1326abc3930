// Every SIMD target by construction: a kernel test written against the OnEveryTarget fixture
// runs once per Highway target that this build compiled and this CPU runs (scalar, sse4, avx2,
// avx512; neon on ARM), each run restricted to its target and the restriction lifted afterwards,
// whether the test passes, fails or throws.
//
//   class PoolOnTarget : public mpsim::test::OnEveryTarget {};
//   TEST_P(PoolOnTarget, VectorChannelsGiveTheScalarDefinition) { ... }
//   MPSIM_ON_EVERY_TARGET(PoolOnTarget);
//
// ctest lists each run by its target (PoolOnTarget.VectorChannelsGiveTheScalarDefinition/avx2).
// A test that compares the targets with one another (the same bits on every target) runs them
// in turn with for_each_target.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kernels_simd/simd_target.h"

namespace mpsim::test {

class OnEveryTarget : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { simd::restrict_targets(GetParam()); }
  void TearDown() override { simd::reset_targets(); }
  const std::string& target() const { return GetParam(); }
};

// Lifts a target restriction when it goes out of scope.
struct TargetReset {
  TargetReset() = default;
  TargetReset(const TargetReset&) = delete;
  TargetReset& operator=(const TargetReset&) = delete;
  ~TargetReset() { simd::reset_targets(); }
};

// Calls fn(target) on each available target in turn (best first), restricted to it, with a
// SCOPED_TRACE naming it; the restriction is lifted afterwards, also when fn throws.
template <class Fn>
void for_each_target(Fn&& fn) {
  const TargetReset reset;
  for (const std::string& target : simd::available_targets()) {
    SCOPED_TRACE("SIMD target " + target);
    simd::restrict_targets(target);
    fn(target);
  }
}

}  // namespace mpsim::test

// Instantiates the TEST_Ps of `suite` (an OnEveryTarget fixture) once per available target,
// named by it.
#define MPSIM_ON_EVERY_TARGET(suite)                                                    \
  INSTANTIATE_TEST_SUITE_P(Simd, suite,                                                 \
                           ::testing::ValuesIn(::mpsim::simd::available_targets()),     \
                           [](const ::testing::TestParamInfo<std::string>& info) {      \
                             return info.param;                                         \
                           })
