// The dispatcher's device rules and its fallback hook, exercised through the simulated mps
// device with all ops but copy and fill disabled, and the out-of-memory path of the cpu device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "allocator/host_allocator.h"
#include "core/backend.h"
#include "core/env.h"
#include "core/mpsim.h"
#include "device_sim/mps.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;

// The real simulated device with every op but copy and fill disabled, so calls take the
// fallback path.
class DispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < kNumOps; ++i) {
      const OpId op(static_cast<std::uint16_t>(i));
      mps::set_op_enabled(op, op == op_id("copy") || op == op_id("fill"));
    }
    set_fallback_enabled(false);
  }
  void TearDown() override {
    for (int i = 0; i < kNumOps; ++i)
      mps::set_op_enabled(OpId(static_cast<std::uint16_t>(i)), true);
    set_fallback_enabled(false);
    mps::profiler::stop();
  }
};

TEST_F(DispatchTest, UnsupportedOpWithoutFallbackNamesOpDeviceAndRemedy) {
  const Tensor x = from_vector<float>({0.5f, 1.5f}, {2}).to(Device::mps());
  EXPECT_EQ(x.device(), Device::mps());
  mps::synchronize();  // the copy's command releases its cpu source
  const std::int64_t live = Storage::live_count();
  try {
    exp(x);
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[exp]"));
    EXPECT_THAT(e.what(), HasSubstr("mps:0"));
    EXPECT_THAT(e.what(), HasSubstr("float32"));
    EXPECT_THAT(e.what(), HasSubstr("MPSIM_ENABLE_FALLBACK=1"));
  }
  EXPECT_EQ(Storage::live_count(), live);  // the output allocated for the call was released
  EXPECT_EQ(fallback_count(op_id("exp")), 0);
}

TEST_F(DispatchTest, FallbackRunsTheCpuKernelOnTheSameMemoryAndCounts) {
  set_fallback_enabled(true);
  const Tensor x = from_vector<float>({0.5f, 1.5f, -2.0f}, {3}).to(Device::mps());
  const std::int64_t before = fallback_count(op_id("exp"));
  mps::profiler::start();
  const Tensor x2 = x.clone();  // a queued copy that the fallback must wait for
  const Tensor y = exp(x2);
  mps::profiler::stop();
  EXPECT_EQ(y.device(), Device::mps());
  EXPECT_EQ(fallback_count(op_id("exp")), before + 1);
  const std::vector<mps::OpRecord> records = mps::profiler::records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].op, "copy");
  EXPECT_FALSE(records[0].fallback);
  EXPECT_EQ(records[1].op, "exp");
  EXPECT_TRUE(records[1].fallback);
  EXPECT_LE(records[0].end_ns, records[1].start_ns);  // the device was drained first
  const std::vector<float> got = y.to_vector<float>();
  for (int i = 0; i < 3; ++i) {
    const float in = std::vector<float>{0.5f, 1.5f, -2.0f}[i];
    EXPECT_EQ(got[i], static_cast<float>(std::exp(static_cast<long double>(in))));
  }
  EXPECT_EQ(fallback_count(op_id("add")), 0);
}

TEST_F(DispatchTest, MixingDevicesIsAnErrorExceptZeroDimCpuScalars) {
  set_fallback_enabled(true);
  const Tensor m = from_vector<float>({1, 2, 3}, {3}).to(Device::mps());
  const Tensor c = from_vector<float>({1, 2, 3}, {3});
  try {
    add(c, m);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[add] expected all tensors to be on the same device"));
    EXPECT_THAT(e.what(), HasSubstr("cpu"));
    EXPECT_THAT(e.what(), HasSubstr("mps:0"));
  }
  const Tensor s = add(m, scalar_tensor(10, DType::Float32));  // a 0-dim cpu tensor is a scalar
  EXPECT_EQ(s.device(), Device::mps());
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{11, 12, 13}));
}

TEST_F(DispatchTest, InvalidDeviceIndexIsADeviceError) {
  EXPECT_THROW(zeros({2}, DType::Float32, Device::mps(1)), DeviceError);
}

TEST(OutOfMemory, CpuAllocatorLimitRaisesAndChangesNothing) {
  alloc::HostAllocator& host = alloc::host_allocator();
  const std::int64_t live = Storage::live_count();
  const std::size_t in_use = host.stats().allocated_bytes;
  host.set_limit(in_use + 4096);
  try {
    empty({1 << 20}, DType::Float32);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_THAT(e.what(), HasSubstr("out of memory"));
    EXPECT_THAT(e.what(), HasSubstr("4194304"));  // the request, in bytes
  }
  host.set_limit(0);
  EXPECT_EQ(Storage::live_count(), live);
  EXPECT_EQ(host.stats().allocated_bytes, in_use);
  EXPECT_EQ(empty({1 << 20}).numel(), 1 << 20);  // usable again once the limit is lifted
}

// Flags read from MPSIM_* variables: the spellings users write, and a malformed value keeps
// the default with a warning naming the variable (never silently).
TEST(EnvFlags, ParseSpellingsAndWarnOnGarbage) {
  for (const char* t : {"1", "true", "TRUE", "yes", "On"})
    EXPECT_EQ(detail::parse_flag(t), true) << t;
  for (const char* f : {"0", "false", "No", "OFF"}) EXPECT_EQ(detail::parse_flag(f), false) << f;
  for (const char* bad : {"", "2", "enable", "1 "})
    EXPECT_EQ(detail::parse_flag(bad), std::nullopt);
  constexpr const char* kVar = "MPSIM_TEST_FLAG";
  unsetenv(kVar);
  EXPECT_TRUE(detail::env_flag(kVar, true));
  setenv(kVar, "yes", 1);
  EXPECT_TRUE(detail::env_flag(kVar, false));
  setenv(kVar, "sure", 1);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(detail::env_flag(kVar, false));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(
      err, ::testing::HasSubstr("mpsim warning: MPSIM_TEST_FLAG='sure' ignored: expected 1, true"));
  unsetenv(kVar);
}

}  // namespace
}  // namespace mpsim
