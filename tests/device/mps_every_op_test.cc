// Every case of tests/cases/op_cases.json runs on mps and on the cpu for every dtype, and the
// results agree byte for byte (NaN payloads included), or both devices raise the same error: the
// device runs the same kernels. Every op of core/op_list.h must have a case there, and every
// dtype the device supports for it must run in one, so a new op cannot be forgotten.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/mpsim.h"
#include "device_sim/mps.h"
#include "tests/cases/op_cases.h"

namespace mpsim {
namespace {

const Device kMps = Device::mps();
const Device kCpu = Device::cpu();

// The sizes of the cases' dim "n": a small one, and one that makes the tensors span several
// kernel blocks (kElementwiseGrain = 2^15, kReduceGrain = 2^14) plus a tail. In a
// ThreadSanitizer build the tensors stay small: Debian's TBB is not instrumented.
#if defined(__SANITIZE_THREAD__)
const std::vector<std::int64_t> kSizes = {5};
#else
const std::vector<std::int64_t> kSizes = {5, 18731};
#endif

// What the device supports: everything the cpu kernels implement except float64.
constexpr DType kDTypes[] = {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,
                             DType::Int32, DType::Int64,   DType::Float16,  DType::BFloat16,
                             DType::Float32};

// Values spanning signs, zero and magnitudes up to ~8, with NaN (one with a payload), +-inf
// and -0 among the floats; converted on the cpu, so both devices see the same bytes.
Tensor input(const Shape& shape, DType dtype, int seed) {
  const std::int64_t n = shape.numel();
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    float x = 4.0f * std::sin(0.37f * static_cast<float>(i) + static_cast<float>(seed)) +
              (i % 5 == 0 ? 0.0f : 0.25f * static_cast<float>(seed));
    if (i % 7 == 3) x = std::round(x);
    if (is_floating(dtype)) {
      if (i % 97 == 11) x = std::bit_cast<float>(0x7fc12345u);  // a NaN with a payload
      if (i % 101 == 13) x = INFINITY;
      if (i % 103 == 17) x = -INFINITY;
      if (i % 107 == 19) x = -0.0f;
    }
    v[static_cast<std::size_t>(i)] = x;
  }
  return from_vector(v, shape).to(dtype);
}

// A case's tensors: input()'s values for the float kinds (special values included), [0, 1] for
// probabilities, indices in [low, high), alternating bools; seeded by the tensor's place.
Tensor case_tensor(const test::TensorSpec& spec, DType dtype) {
  const std::int64_t n = spec.shape.numel();
  switch (spec.values) {
    case test::Values::Ints: {
      std::vector<std::int64_t> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) v[i] = spec.low + (7 * i + 3) % (spec.high - spec.low);
      return from_vector(v, spec.shape);
    }
    case test::Values::Bools:
    case test::Values::Attend: {
      std::vector<std::uint8_t> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) v[i] = i % 3 != 0;
      return from_vector(v, spec.shape).to(DType::Bool);
    }
    case test::Values::Probability: {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) v[i] = std::abs(std::sin(0.7f * static_cast<float>(i)));
      return from_vector(v, spec.shape).to(dtype);
    }
    default:
      return input(spec.shape, dtype, spec.index + 1);
  }
}

TEST(MpsEveryOp, EveryOpInTheOpListHasACase) {
  std::set<std::string_view> covered;
  for (const test::OpCase& c : test::op_cases()) {
    if (const std::optional<OpId> op = test::list_op(c)) covered.insert(op->name());
  }
  for (int i = 0; i < kNumOps; ++i) {
    const OpId op(static_cast<std::uint16_t>(i));
    EXPECT_TRUE(covered.contains(op.name()))
        << "op '" << op.name() << "' has no case in tests/cases/op_cases.json";
  }
}

// The outcome of one call on one device: the outputs' bytes, or the error it raised.
struct Outcome {
  std::vector<Tensor> outputs;  // on the cpu, contiguous
  std::string error;
};

Outcome run_on(const test::OpCase& c, std::int64_t n, DType dtype, Device device) {
  Outcome o;
  try {
    test::CaseCall call = test::make_call(c, n, dtype, device, case_tensor);
    if (c.random) manual_seed(7);  // both devices draw the same numbers
    for (const Tensor& t : test::run_call(c, std::move(call))) {
      EXPECT_EQ(t.device(), device);
      o.outputs.push_back(t.to(kCpu).contiguous());  // synchronizes: queued failures surface
    }
  } catch (const Error& e) {
    o.error = e.what();
    o.outputs.clear();
  }
  return o;
}

TEST(MpsEveryOp, MpsResultsAreBitIdenticalToTheCpuForEveryDtype) {
  int outputs_compared = 0;
  std::map<std::string_view, std::set<DType>> compared;  // by op of the op list
  for (const test::OpCase& c : test::op_cases()) {
    const std::optional<OpId> op = test::list_op(c);
    for (DType dtype : kDTypes) {
      for (std::int64_t n : kSizes) {
        const std::string what =
            c.id + " " + std::string(dtype_name(dtype)) + " n=" + std::to_string(n);
        const Outcome cpu = run_on(c, n, dtype, kCpu);
        const Outcome mps = run_on(c, n, dtype, kMps);
        // A dtype the op rejects is rejected alike (same front end) on both devices.
        ASSERT_EQ(mps.error, cpu.error) << what;
        if (!cpu.error.empty()) continue;
        ASSERT_EQ(mps.outputs.size(), cpu.outputs.size()) << what;
        for (std::size_t k = 0; k < cpu.outputs.size(); ++k) {
          const Tensor& a = cpu.outputs[k];
          const Tensor& b = mps.outputs[k];
          ASSERT_EQ(a.sizes(), b.sizes()) << what << " output " << k;
          ASSERT_EQ(a.dtype(), b.dtype()) << what << " output " << k;
          EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()), 0)
              << what << " output " << k << " differs";
          ++outputs_compared;
        }
        if (op) compared[op->name()].insert(dtype);
      }
    }
  }
  // Every dtype the device's kernels take is exercised by some case (not silently rejected).
  for (int i = 0; i < kNumOps; ++i) {
    const OpId op(static_cast<std::uint16_t>(i));
    for (DType dtype : kDTypes) {
      if (mps::supports(op, dtype)) {
        EXPECT_TRUE(compared[op.name()].contains(dtype))
            << op.name() << " is supported for " << dtype_name(dtype) << " but no case ran it";
      }
    }
  }
  RecordProperty("outputs_compared", outputs_compared);
  std::printf("%d outputs compared byte for byte\n", outputs_compared);
  mps::synchronize();
}

// Every case gives the same bytes on the cpu with 1, 2 and 4 threads (the golden contract: bits
// independent of the thread count), float32 and bfloat16 at the size of several kernel blocks.
TEST(MpsEveryOp, CpuResultsAreBitIdenticalForAnyThreadCount) {
  const int threads = num_threads();
  int outputs_compared = 0;
  for (const test::OpCase& c : test::op_cases()) {
    for (DType dtype : {DType::Float32, DType::BFloat16}) {
      const std::string what = c.id + " " + std::string(dtype_name(dtype));
      set_num_threads(1);
      const Outcome one = run_on(c, kSizes.back(), dtype, kCpu);
      for (int n : {2, 4}) {
        set_num_threads(n);
        const Outcome many = run_on(c, kSizes.back(), dtype, kCpu);
        ASSERT_EQ(many.error, one.error) << what;
        ASSERT_EQ(many.outputs.size(), one.outputs.size()) << what;
        for (std::size_t k = 0; k < one.outputs.size(); ++k) {
          const Tensor& a = one.outputs[k];
          const Tensor& b = many.outputs[k];
          ASSERT_EQ(a.sizes(), b.sizes()) << what << " output " << k;
          EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()), 0)
              << what << " output " << k << " differs with " << n << " threads";
          ++outputs_compared;
        }
      }
    }
  }
  set_num_threads(threads);
  std::printf("%d outputs compared across thread counts\n", outputs_compared);
}

}  // namespace
}  // namespace mpsim
