// The start-up environment of the mps device, set by ctest for this binary (see
// tests/device/CMakeLists.txt): MPSIM_MPS_PROFILE=m1, MPSIM_MPS_MEMORY=2G,
// MPSIM_MPS_DISABLE_OPS=exp,gelu and MPSIM_ALLOC_TRACE=<file>.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/mpsim.h"
#include "device_sim/mps.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;

TEST(MpsEnvironment, ProfileAndMemoryOverride) {
  const mps::DeviceProperties& p = mps::properties();
  EXPECT_EQ(p.profile, "M1");
  EXPECT_EQ(p.memory_bytes, std::size_t{2} << 30);
  EXPECT_EQ(p.recommended_max_memory, (std::size_t{2} << 30) / 4 * 3);  // Metal's 75%
  EXPECT_DOUBLE_EQ(p.bandwidth_bytes_per_s, 68.25e9);                   // M1's published figure
  EXPECT_EQ(mps::recommended_max_memory(), p.recommended_max_memory);
}

TEST(MpsEnvironment, DisabledOpsRaiseOrFallBack) {
  EXPECT_FALSE(mps::op_enabled(op_id("exp")));
  EXPECT_FALSE(mps::op_enabled(op_id("gelu")));
  EXPECT_TRUE(mps::op_enabled(op_id("add")));
  const Tensor x = from_vector<float>({0.5f, 1}, {2}).to(Device::mps());
  try {
    exp(x);
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[exp]"));
    EXPECT_THAT(e.what(), HasSubstr("mps:0"));
  }
  EXPECT_EQ((x + x).to_vector<float>(), (std::vector<float>{1, 2}));
  set_fallback_enabled(true);
  EXPECT_EQ(gelu(x).to_vector<float>()[1],
            static_cast<float>(0.5L * std::erfc(-1 / std::sqrt(2.0L))));
  set_fallback_enabled(false);
}

TEST(MpsEnvironment, AllocationTraceIsRecorded) {
  {
    const Tensor a = zeros({1000}, DType::Float32, Device::mps());
    const Tensor b = ones({3000}, DType::Float32, Device::mps());
  }
  mps::synchronize();
  mps::empty_cache();
  std::ifstream in(MPSIM_TEST_TRACE);
  ASSERT_TRUE(in) << MPSIM_TEST_TRACE;
  std::string line;
  int allocs = 0, frees = 0;
  bool saw_4000 = false, saw_12000 = false;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string kind;
    std::uint64_t id = 0, bytes = 0;
    fields >> kind >> id;
    if (kind == "a") {
      ++allocs;
      fields >> bytes;
      saw_4000 = saw_4000 || bytes == 4000;
      saw_12000 = saw_12000 || bytes == 12000;
    } else if (kind == "f") {
      ++frees;
    }
  }
  EXPECT_TRUE(saw_4000 && saw_12000) << "the two tensors' requests (1000 and 3000 floats)";
  EXPECT_GE(allocs, 2);
  EXPECT_GE(frees, 2);
}

}  // namespace
}  // namespace mpsim
