// main() of the kernel test binaries (mpsim_add_kernel_test in tests/CMakeLists.txt): pins the
// process to MPSIM_TEST_TARGET when set (tests/simd_targets.h), and puts the pin back after each
// test, so a test that restricts or lifts the target itself cannot move the tests after it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels_simd/simd_target.h"
#include "tests/simd_targets.h"

namespace {

// ctest's SKIP_RETURN_CODE for these binaries: the pinned target is not one this CPU runs.
constexpr int kSkipped = 77;

class RestorePin : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& /*info*/) override { mpsim::test::restore_targets(); }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const std::string& pinned = mpsim::test::pinned_target();
  if (!pinned.empty()) {
    const std::vector<std::string> available = mpsim::simd::available_targets();
    if (std::find(available.begin(), available.end(), pinned) == available.end()) {
      std::printf("SIMD target %s: not compiled into this build or not run by this CPU; skipped\n",
                  pinned.c_str());
      return kSkipped;
    }
    mpsim::simd::restrict_targets(pinned);
    std::printf("SIMD target: %s\n", pinned.c_str());
    ::testing::UnitTest::GetInstance()->listeners().Append(new RestorePin);
  }
  return RUN_ALL_TESTS();
}
