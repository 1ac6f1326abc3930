// Launch overhead of the simulated mps device: the host-side cost of one tiny op (8 float32
// elements, so the kernel itself is a few nanoseconds) from enqueue to completion, in steady
// state and as a round trip, and the cost of synchronize() on an idle and on a busy queue.
//
//   BM_MpsTinyOpSteadyState: 256 dependent `x = x + 1` per batch, one synchronize per batch;
//     the time per op is enqueue (front end, output allocation, submit) plus the worker's run
//     and free, overlapped. The target: <= 5 us per tiny op.
//   BM_MpsTinyOpRoundTrip:   one op then synchronize(): the full latency of a lone op.
//   BM_MpsSynchronizeIdle:   synchronize() with nothing queued.
//   BM_CpuTinyOp:            the same op on the cpu device, for reference.
#include <benchmark/benchmark.h>

#include "core/mpsim.h"
#include "device_sim/mps.h"

namespace {

using mpsim::Device;
using mpsim::DType;
using mpsim::Tensor;

constexpr int kBatch = 256;

void BM_MpsTinyOpSteadyState(benchmark::State& state) {
  Tensor x = mpsim::zeros({8}, DType::Float32, Device::mps());
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) x = x + 1;
    mpsim::mps::synchronize();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["us_per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kBatch) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MpsTinyOpSteadyState)->UseRealTime();

void BM_MpsTinyOpRoundTrip(benchmark::State& state) {
  Tensor x = mpsim::zeros({8}, DType::Float32, Device::mps());
  for (auto _ : state) {
    x = x + 1;
    mpsim::mps::synchronize();
  }
}
BENCHMARK(BM_MpsTinyOpRoundTrip)->UseRealTime();

void BM_MpsSynchronizeIdle(benchmark::State& state) {
  mpsim::mps::synchronize();
  for (auto _ : state) mpsim::mps::synchronize();
}
BENCHMARK(BM_MpsSynchronizeIdle)->UseRealTime();

void BM_CpuTinyOp(benchmark::State& state) {
  Tensor x = mpsim::zeros({8}, DType::Float32);
  for (auto _ : state) x = x + 1;
}
BENCHMARK(BM_CpuTinyOp)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
