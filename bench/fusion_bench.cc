// The Stable Diffusion fusions beside their unfused compositions in mpsim, on SD 1.5 UNet
// shapes at 64x64 latents (4096 tokens, batch 2): bias_add and skip_layer_norm on
// [2, 4096, 320], bias_split_gelu on [2, 4096, 2560] (GEGLU), group_norm_nhwc on
// [2, 64, 64, 320] with 32 groups and silu, and multi_head_attention on packed QKV
// [2, 1024, 8, 3, 40]. Each reports GB/s of the fusion's own traffic (inputs read once, output
// written once), for both rows, so the composition's rate shows what the extra passes cost.
//
// Threads: MPSIM_NUM_THREADS (default: all).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "bench/bench_main.h"
#include "core/mpsim.h"

namespace {

using mpsim::Tensor;

Tensor random_tensor(const mpsim::Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> v(static_cast<std::size_t>(shape.numel()));
  for (float& x : v) x = dist(rng);
  return mpsim::from_vector(v, shape);
}

void report(benchmark::State& state, double bytes_per_iteration) {
  state.counters["GB/s"] =
      benchmark::Counter(bytes_per_iteration * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

struct Operands {
  Tensor x = random_tensor({2, 4096, 320}, 1);
  Tensor skip = random_tensor({2, 4096, 320}, 2);
  Tensor c = random_tensor({320}, 3);
  Tensor wide = random_tensor({2, 4096, 2560}, 4);
  Tensor c2 = random_tensor({2560}, 5);
  Tensor img = random_tensor({2, 64, 64, 320}, 6);
  Tensor qkv = random_tensor({2, 1024, 8, 3, 40}, 7);
};
const Operands& operands() {
  static const Operands* o = new Operands();
  return *o;
}

// fused = 0: the composition; 1: the fusion.
void BM_bias_add(benchmark::State& state) {
  const Operands& o = operands();
  for (auto _ : state) {
    benchmark::DoNotOptimize(state.range(0) ? mpsim::bias_add(o.x, o.c, o.skip)
                                            : mpsim::add(mpsim::add(o.x, o.c), o.skip));
  }
  report(state, 3.0 * static_cast<double>(o.x.nbytes()));
}
BENCHMARK(BM_bias_add)
    ->ArgName("fused")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_bias_split_gelu(benchmark::State& state) {
  const Operands& o = operands();
  for (auto _ : state) {
    if (state.range(0)) {
      benchmark::DoNotOptimize(mpsim::bias_split_gelu(o.wide, o.c2));
    } else {
      const Tensor t = mpsim::add(o.wide, o.c2);
      benchmark::DoNotOptimize(
          mpsim::mul(t.slice(-1, 0, 1280), mpsim::gelu(t.slice(-1, 1280, 2560))));
    }
  }
  report(state, 1.5 * static_cast<double>(o.wide.nbytes()));
}
BENCHMARK(BM_bias_split_gelu)
    ->ArgName("fused")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_skip_layer_norm(benchmark::State& state) {
  const Operands& o = operands();
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        state.range(0)
            ? mpsim::skip_layer_norm(o.x, o.skip, o.c, o.c, o.c)
            : mpsim::layer_norm(mpsim::add(mpsim::add(o.x, o.skip), o.c), {320}, o.c, o.c));
  }
  report(state, 3.0 * static_cast<double>(o.x.nbytes()));
}
BENCHMARK(BM_skip_layer_norm)
    ->ArgName("fused")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_group_norm_nhwc_silu(benchmark::State& state) {
  const Operands& o = operands();
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        state.range(0) ? mpsim::group_norm_nhwc(o.img, 32, o.c, o.c, 1e-5, "silu")
                       : mpsim::silu(mpsim::group_norm(o.img.permute({0, 3, 1, 2}), 32, o.c, o.c))
                             .permute({0, 2, 3, 1}));
  }
  report(state, 2.0 * static_cast<double>(o.img.nbytes()));
}
BENCHMARK(BM_group_norm_nhwc_silu)
    ->ArgName("fused")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_multi_head_attention(benchmark::State& state) {
  const Operands& o = operands();
  auto part = [&](std::int64_t i) { return o.qkv.select(3, i).permute({0, 2, 1, 3}); };
  for (auto _ : state) {
    if (state.range(0)) {
      benchmark::DoNotOptimize(mpsim::multi_head_attention(o.qkv));
    } else {
      benchmark::DoNotOptimize(mpsim::scaled_dot_product_attention(part(0), part(1), part(2))
                                   .permute({0, 2, 1, 3})
                                   .reshape({2, 1024, 320}));
    }
  }
  report(state, 4.0 / 3.0 * static_cast<double>(o.qkv.nbytes()));
}
BENCHMARK(BM_multi_head_attention)
    ->ArgName("fused")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv); }
