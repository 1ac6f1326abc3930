// The simulated mps device's execution model: results equal the cpu's bit for bit (shared
// kernels), the queue runs in order, failures surface at synchronization, buffers outlive the
// commands that use them, events, float64 rejection, and concurrent submission.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/mpsim.h"
#include "device_sim/mps.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;

const Device kMps = Device::mps();
// Below the kernels' parallel grain (kElementwiseGrain), so every kernel runs on the queue's
// worker alone: TBB is not built with ThreadSanitizer, and its task hand-offs between threads
// would otherwise be reported as races in a -DMPSIM_SANITIZE=thread build.
constexpr std::size_t kElems = std::size_t{1} << 14;

// 37 values (an odd length, so SIMD tails run) spanning signs, zero and magnitudes up to ~8.
Tensor sample(DType dtype, int seed) {
  std::vector<float> v(37);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = 4.0f * std::sin(0.7f * static_cast<float>(i) + static_cast<float>(seed)) +
           (i % 5 == 0 ? 0.0f : 0.25f * static_cast<float>(seed));
  }
  v[3] = 0;
  return from_vector(v, {37}).to(dtype);
}

// Asserts that `mps` holds exactly the bytes of `cpu`.
void expect_same_bits(const Tensor& cpu, const Tensor& mps, const std::string& what) {
  ASSERT_EQ(mps.device(), kMps) << what;
  const Tensor a = cpu.contiguous();
  const Tensor b = mps.to(Device::cpu()).contiguous();
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()), 0) << what;
}

TEST(MpsResults, EveryOpMatchesTheCpuBitForBit) {
  using Unary = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<std::string, Unary>> unary = {
      {"abs", [](const Tensor& x) { return abs(x); }},
      {"neg", [](const Tensor& x) { return neg(x); }},
      {"exp", [](const Tensor& x) { return exp(x); }},
      {"log", [](const Tensor& x) { return log(x); }},
      {"log1p", [](const Tensor& x) { return log1p(x); }},
      {"expm1", [](const Tensor& x) { return expm1(x); }},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }},
      {"sin", [](const Tensor& x) { return sin(x); }},
      {"cos", [](const Tensor& x) { return cos(x); }},
      {"tanh", [](const Tensor& x) { return tanh(x); }},
      {"erf", [](const Tensor& x) { return erf(x); }},
      {"relu", [](const Tensor& x) { return relu(x); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }},
      {"silu", [](const Tensor& x) { return silu(x); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, "tanh"); }},
      {"softplus", [](const Tensor& x) { return softplus(x); }},
      {"reciprocal", [](const Tensor& x) { return reciprocal(x); }},
      {"square", [](const Tensor& x) { return square(x); }},
      {"clamp", [](const Tensor& x) { return clamp(x, Scalar(-1.5), Scalar(2.0)); }},
  };
  using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, Binary>> binary = {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b, 2); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }},
      {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }},
      {"pow", [](const Tensor& a, const Tensor& b) { return pow(abs(a), b); }},
      {"eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return lt(a, b); }},
      {"ge", [](const Tensor& a, const Tensor& b) { return ge(a, b); }},
      {"where", [](const Tensor& a, const Tensor& b) { return where(gt(a, 0), a, b); }},
      {"add_scalar", [](const Tensor& a, const Tensor&) { return a + 2.5; }},
  };
  for (DType dtype : {DType::Float32, DType::Float16, DType::BFloat16}) {
    const Tensor x = sample(dtype, 1), y = sample(dtype, 2);
    const Tensor xm = x.to(kMps), ym = y.to(kMps);
    for (const auto& [name, f] : unary) {
      expect_same_bits(f(x), f(xm), name + " " + std::string(dtype_name(dtype)));
    }
    for (const auto& [name, f] : binary) {
      expect_same_bits(f(x, y), f(xm, ym), name + " " + std::string(dtype_name(dtype)));
    }
    // A strided (transposed) view and a broadcast.
    const Tensor m = x.narrow(0, 0, 36).reshape({6, 6}).t();
    expect_same_bits(exp(m), exp(m.to(kMps)), "exp of a transposed view");
    expect_same_bits(add(m, y.narrow(0, 0, 6)), add(m.to(kMps), y.narrow(0, 0, 6).to(kMps)),
                     "add with broadcasting");
  }
  for (DType dtype : {DType::Int32, DType::Int64, DType::UInt8}) {
    const Tensor x = sample(DType::Float32, 3).to(dtype), y = sample(DType::Float32, 4).to(dtype);
    for (const char* name : {"add", "sub", "mul", "maximum", "eq", "where"}) {
      for (const auto& [n, f] : binary) {
        if (n == name) expect_same_bits(f(x, y), f(x.to(kMps), y.to(kMps)), n);
      }
    }
    expect_same_bits(exp(x), exp(x.to(kMps)), "exp of an integer tensor");
  }
}

TEST(MpsDevice, FactoriesTransfersAndPrintingWork) {
  EXPECT_TRUE(mps::is_available());
  EXPECT_EQ(mps::device_count(), 1);
  EXPECT_EQ(zeros({2, 3}, DType::Float32, kMps).to_vector<float>(), std::vector<float>(6, 0));
  EXPECT_EQ(ones({4}, DType::Int32, kMps).to_vector<std::int32_t>(),
            std::vector<std::int32_t>(4, 1));
  EXPECT_EQ(full({2}, 2.5, DType::Float16, kMps).to_vector<float>(),
            (std::vector<float>{2.5, 2.5}));
  EXPECT_EQ(arange(0, 5, 1, std::nullopt, kMps).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  const Tensor x = from_vector<float>({1, 2, 3}, {3}, kMps);
  EXPECT_EQ(x.device(), kMps);
  EXPECT_EQ((x * 2).to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(x.to(Device::cpu()).device(), Device::cpu());
  EXPECT_EQ(x.to_string(), "tensor([1., 2., 3.], device='mps:0')");
  EXPECT_EQ(scalar_tensor(7, DType::Int32, kMps).item<std::int32_t>(), 7);
}

TEST(MpsQueue, CommandsRunInSubmissionOrder) {
  Tensor x = zeros({64}, DType::Int32, kMps);
  for (int i = 0; i < 200; ++i) x = x * 2 + 1 - x;  // x + 1, through three dependent commands
  EXPECT_EQ(x.to_vector<std::int32_t>(), std::vector<std::int32_t>(64, 200));
}

TEST(MpsQueue, AFailureInsideACommandSurfacesAtTheNextSynchronize) {
  const Tensor a = from_vector<std::int32_t>({7, 8}, {2}, kMps);
  const Tensor b = zeros({2}, DType::Int32, kMps);
  const Tensor q = div(a, b, "floor");  // enqueued: the division by zero happens later
  EXPECT_EQ(q.device(), kMps);
  try {
    mps::synchronize();
    FAIL() << "expected the queued failure";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("[div]"));
    EXPECT_THAT(e.what(), HasSubstr("division by zero"));
  }
  EXPECT_NO_THROW(mps::synchronize());  // reported once
  const Tensor q2 = div(a, b, "trunc");
  EXPECT_THROW(q2.to_vector<std::int32_t>(), InvalidArgument);  // host reads synchronize
  EXPECT_EQ((a + 1).to_vector<std::int32_t>(), (std::vector<std::int32_t>{8, 9}));
}

TEST(MpsQueue, ABufferFreedByTheUserLivesUntilTheCommandThatUsesItCompletes) {
  mps::synchronize();
  const std::size_t base = mps::memory_allocated();
  std::vector<float> host;
  {
    Tensor x = full({kElems}, 1.0, DType::Float32, kMps);
    mps::synchronize();
    const std::size_t with_x = mps::memory_allocated();
    ASSERT_GE(with_x - base, kElems * sizeof(float));
    Tensor y;
    {
      mps::QueueHold hold;
      y = exp(x);
      x = Tensor();  // the user drops x while exp, still queued, reads it
      EXPECT_GE(mps::memory_allocated(), with_x + kElems * sizeof(float));  // x and y
    }
    mps::synchronize();
    EXPECT_EQ(mps::memory_allocated(), with_x);  // x went back once exp completed; y remains
    host = y.to_vector<float>();
  }
  EXPECT_EQ(host.front(), std::exp(1.0f));
  mps::synchronize();
  EXPECT_EQ(mps::memory_allocated(), base);
}

TEST(MpsEvents, RecordQuerySynchronizeAndElapsedTime) {
  mps::Event start, end, never;
  EXPECT_TRUE(never.query());
  start.record();
  Tensor x = ones({kElems}, DType::Float32, kMps);
  for (int i = 0; i < 20; ++i) x = exp(x) - x;
  end.record();
  end.wait();
  end.synchronize();
  EXPECT_TRUE(start.query());
  EXPECT_TRUE(end.query());
  const double ms = start.elapsed_time(end);
  EXPECT_GT(ms, 0.0);
  EXPECT_LT(ms, 60e3);
  EXPECT_THROW(start.elapsed_time(never), InvalidArgument);
  mps::Event held;
  {
    mps::QueueHold hold;
    held.record();
    EXPECT_FALSE(held.query());
    EXPECT_THROW(start.elapsed_time(held), InvalidArgument);  // not completed yet
  }
  held.synchronize();
  EXPECT_TRUE(held.query());
  EXPECT_GE(start.elapsed_time(held), ms);
}

TEST(MpsRestrictions, Float64IsRejectedAndFloat64ScalarsBecomeFloat32) {
  mps::synchronize();
  const std::int64_t live = Storage::live_count();
  const std::size_t allocated = mps::memory_allocated();
  const char* kMessage =
      "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support "
      "float64. Please use float32 instead.";
  try {
    zeros({2}, DType::Float64, kMps);
    FAIL() << "expected DTypeError";
  } catch (const DTypeError& e) {
    EXPECT_THAT(e.what(), HasSubstr(kMessage));
  }
  const Tensor x = from_vector<float>({1, 2}, {2}, kMps);
  EXPECT_THROW(x.to(DType::Float64), DTypeError);
  EXPECT_THROW(from_vector<double>({1, 2}, {2}).to(kMps), DTypeError);
  EXPECT_FALSE(mps::supports(op_id("add"), DType::Float64));
  // A float64 0-dim cpu tensor and a Python-like float join an mps op as float32 scalars.
  const Tensor y = x + scalar_tensor(0.5, DType::Float64);
  EXPECT_EQ(y.dtype(), DType::Float32);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1.5, 2.5}));
  EXPECT_EQ((x * 0.1).to_vector<float>(), (std::vector<float>{0.1f, 0.2f}));
  mps::synchronize();
  EXPECT_EQ(Storage::live_count(), live + 2);  // x and y
  EXPECT_GE(mps::memory_allocated(), allocated);
}

TEST(MpsRestrictions, MixingDevicesIsAnError) {
  const Tensor m = from_vector<float>({1, 2}, {2}, kMps);
  const Tensor c = from_vector<float>({1, 2}, {2});
  EXPECT_THROW(add(m, c), DeviceError);
  EXPECT_THROW(zeros({1}, DType::Float32, Device::mps(1)), DeviceError);
}

TEST(MpsQueue, ManyThreadsSubmitConcurrentlyWithoutLossOrLeak) {
  mps::synchronize();
  const std::size_t base = mps::memory_allocated();
  const std::int64_t live = Storage::live_count();
  constexpr int kThreads = 4, kIters = 150;
  std::vector<int> ok(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ok] {
      Tensor x = full({257}, t, DType::Int32, kMps);
      for (int i = 0; i < kIters; ++i) {
        x = x + 1;
        if (i % 50 == 49) {
          if (x.to_vector<std::int32_t>() == std::vector<std::int32_t>(257, t + i + 1)) ++ok[t];
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(ok, std::vector<int>(kThreads, kIters / 50));
  // A failure injected among concurrent submissions is reported exactly once.
  mps::fail_command(kThreads * 10);
  threads.clear();
  std::vector<int> caught(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &caught] {
      Tensor x = zeros({16}, DType::Float32, kMps);
      for (int i = 0; i < 30; ++i) {
        try {
          x = exp(x) - 1;
          if (i % 10 == 9) mps::synchronize();
        } catch (const DeviceError& e) {
          if (std::string(e.what()).find("injected") != std::string::npos) ++caught[t];
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  int total = 0;
  for (int c : caught) total += c;
  try {
    mps::synchronize();
  } catch (const DeviceError&) {
    ++total;
  }
  EXPECT_EQ(total, 1);
  threads.clear();
  mps::synchronize();
  EXPECT_EQ(Storage::live_count(), live);
  EXPECT_EQ(mps::memory_allocated(), base);
}

}  // namespace
}  // namespace mpsim
