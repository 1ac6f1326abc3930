// Faults and concurrency (docs/reliability.md): every allocation of a representative op
// sequence made to fail in turn, on the cpu and the mps device; every queued command of it made
// to fail in turn; and eight threads issuing cpu and mps ops, allocations, frees,
// synchronizations and events at once. Each must end in the documented error or the serial
// result, bit for bit, with no storage or device memory left behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "allocator/host_allocator.h"
#include "core/mpsim.h"
#include "device_sim/mps.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;

std::vector<float> ramp(std::int64_t n, float scale, float offset) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = scale * static_cast<float>((i * 37) % 101) / 101.0f + offset;
  }
  return v;
}

struct Inputs {
  Tensor x, w, b, img, kernel, q;
};

Inputs make_inputs(Device device) {
  Inputs in;
  in.x = from_vector(ramp(6 * 8, 2, -1), {6, 8}).to(device);
  in.w = from_vector(ramp(8 * 5, 1, -0.5f), {8, 5}).to(device);
  in.b = from_vector(ramp(5, 1, 0), {5}).to(device);
  in.img = from_vector(ramp(2 * 3 * 6 * 6, 2, -1), {2, 3, 6, 6}).to(device);
  in.kernel = from_vector(ramp(4 * 3 * 3 * 3, 1, -0.5f), {4, 3, 3, 3}).to(device);
  in.q = from_vector(ramp(2 * 2 * 7 * 4, 2, -1), {2, 2, 7, 4}).to(device);
  return in;
}

// A representative sequence: products, norms, softmax, data movement, reductions, conv,
// attention, casts, a copy of a transposed view. Results come back to the cpu.
std::vector<Tensor> run_sequence(const Inputs& in) {
  const Tensor h = layer_norm(matmul(in.x, in.w) + in.b, {5});
  const Tensor p = softmax(h, -1);
  const Tensor c = cat({p, in.x.slice(1, 0, 5)}, 0);
  const Tensor s = sum(c, std::vector<std::int64_t>{1});
  const Tensor y = gelu(conv2d(in.img, in.kernel, std::nullopt, {1, 1}, {1, 1}));
  const Tensor a = scaled_dot_product_attention(in.q, in.q, in.q, std::nullopt, 0.0, true);
  const Tensor half = y.to(DType::Float16).transpose(2, 3).contiguous();
  std::vector<Tensor> out;
  for (const Tensor& t : {p, s, y, a, half}) out.push_back(t.to(Device::cpu()));
  return out;
}

bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].sizes() != b[i].sizes() || a[i].dtype() != b[i].dtype()) return false;
    const Tensor x = a[i].contiguous(), y = b[i].contiguous();
    if (std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) != 0) return false;
  }
  return true;
}

void sync_quietly() {
  try {
    mps::synchronize();
  } catch (const Error&) {
  }
}

// Arms a failure of the n-th allocation of `device`'s allocator (0 disarms).
void fail_allocation(Device device, std::int64_t n) {
  if (device.is_mps()) {
    mps::fail_allocation(n);
  } else {
    alloc::host_allocator().fail_allocation(n);
  }
}

std::size_t allocated(Device device) {
  return device.is_mps() ? mps::memory_allocated()
                         : alloc::host_allocator().stats().allocated_bytes;
}

class FaultSweep : public ::testing::TestWithParam<bool> {};

TEST_P(FaultSweep, EveryAllocationOfASequenceFailsCleanly) {
  const Device device = GetParam() ? Device::mps() : Device::cpu();
  const Inputs in = make_inputs(device);
  const std::vector<Tensor> expected = run_sequence(in);
  sync_quietly();
  const std::int64_t live = Storage::live_count();
  const std::size_t bytes = allocated(device);
  int failures = 0;
  for (std::int64_t n = 1; n < 1000; ++n) {
    SCOPED_TRACE("allocation " + std::to_string(n));
    fail_allocation(device, n);
    bool fired = false;
    try {
      const std::vector<Tensor> got = run_sequence(in);
      EXPECT_TRUE(same_bits(got, expected));  // the fault came after the last allocation
    } catch (const OutOfMemoryError& e) {
      fired = true;
      EXPECT_THAT(e.what(), HasSubstr("injected"));
    }
    fail_allocation(device, 0);
    sync_quietly();
    EXPECT_EQ(Storage::live_count(), live) << "a failed sequence left a storage alive";
    EXPECT_EQ(allocated(device), bytes) << "a failed sequence left memory allocated";
    if (!fired) break;
    ++failures;
  }
  std::printf("%d allocations failed in turn\n", failures);
  EXPECT_GE(failures, 10) << "the sequence allocates more than this";
  EXPECT_TRUE(same_bits(run_sequence(in), expected)) << "the device is usable afterwards";
}

INSTANTIATE_TEST_SUITE_P(Devices, FaultSweep, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "mps" : "cpu"; });

// Every command of the sequence made to fail when it runs: the failure surfaces at the next
// synchronization (here, the copy back to the cpu) as a DeviceError naming the op; the commands
// after it still run; memory returns to where it was; a rerun gives the same bits.
TEST(QueuedFaults, EveryCommandOfASequenceFailsCleanly) {
  const Inputs in = make_inputs(Device::mps());
  const std::vector<Tensor> expected = run_sequence(in);
  mps::synchronize();
  const std::int64_t live = Storage::live_count();
  const std::size_t bytes = mps::memory_allocated();
  int failures = 0;
  for (std::int64_t n = 1; n < 1000; ++n) {
    SCOPED_TRACE("command " + std::to_string(n));
    mps::fail_command(n);
    bool fired = false;
    try {
      const std::vector<Tensor> got = run_sequence(in);
      mps::synchronize();
    } catch (const DeviceError& e) {
      fired = true;
      EXPECT_THAT(e.what(), HasSubstr("] injected command failure"));
      EXPECT_EQ(e.what()[0], '[');  // "[op] ...": the op that failed
    }
    mps::fail_command(0);
    sync_quietly();
    EXPECT_EQ(Storage::live_count(), live);
    EXPECT_EQ(mps::memory_allocated(), bytes);
    if (!fired) break;
    ++failures;
  }
  std::printf("%d commands failed in turn\n", failures);
  EXPECT_GE(failures, 10);
  EXPECT_TRUE(same_bits(run_sequence(in), expected));
}

// Eight threads, half on the cpu and half on the mps device, each running the sequence on its
// own inputs with allocations, frees, events and synchronizations in between: every result is
// the serial one, bit for bit, and nothing is left behind.
TEST(Concurrency, EightThreadsOfCpuAndMpsWorkGiveTheSerialBits) {
  constexpr int kThreads = 8, kRounds = 6;
  std::vector<Inputs> inputs;
  std::vector<std::vector<Tensor>> serial;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(make_inputs(t % 2 == 0 ? Device::cpu() : Device::mps()));
    serial.push_back(run_sequence(inputs.back()));
  }
  mps::synchronize();
  const std::int64_t live = Storage::live_count();
  const std::size_t bytes = mps::memory_allocated();
  std::vector<int> matches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const Tensor scratch = empty({1024 * (r + 1)}, DType::Float32, Device::mps());
        mps::Event event;
        event.record();
        if (same_bits(run_sequence(inputs[t]), serial[t])) ++matches[t];
        event.synchronize();
        if (r % 2 == 1) mps::synchronize();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  mps::synchronize();
  EXPECT_EQ(matches, std::vector<int>(kThreads, kRounds));
  EXPECT_EQ(Storage::live_count(), live);
  EXPECT_EQ(mps::memory_allocated(), bytes);
}

// NaN attributes: a probability, std, range or scale factor that must be finite is an
// InvalidArgument naming the op; an eps or scale that PyTorch accepts gives NaN, as PyTorch.
TEST(BadInput, NanAttributesAreErrorsOrPropagateAsPyTorch) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = from_vector<float>({1, 2, 3}, {1, 3});
  const std::int64_t live = Storage::live_count();
  auto expect_invalid = [](const std::function<void()>& f, const char* op) {
    try {
      f();
      ADD_FAILURE() << op << ": no error";
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr(op));
      EXPECT_THAT(e.what(), HasSubstr("nan"));
    }
  };
  expect_invalid([&] { dropout(x, nan); }, "[dropout]");
  expect_invalid([&] { bernoulli(full({3}, nan)); }, "[bernoulli]");
  expect_invalid([&] { normal(0.0, nan, {3}); }, "[normal]");
  expect_invalid([&] { arange(0, nan, 1); }, "[arange]");
  expect_invalid(
      [&] {
        interpolate(x.reshape({1, 1, 1, 3}), std::nullopt, std::vector<double>{nan});
      },
      "[interpolate]");
  EXPECT_EQ(Storage::live_count(), live);
  for (float v : layer_norm(x, {3}, std::nullopt, std::nullopt, nan).to_vector<float>()) {
    EXPECT_TRUE(std::isnan(v));  // torch.layer_norm(eps=nan): NaN
  }
}

}  // namespace
}  // namespace mpsim
