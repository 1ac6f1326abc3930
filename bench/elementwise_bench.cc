// Elementwise benchmarks on the shapes: add with broadcasting ([2,320,64,64] +
// [320,1,1]), mul, and the unary ops on 16M float32 (64 MiB per tensor: input and output stay
// resident in this machine's 260 MiB L3 across iterations). Each reports GB/s of tensor
// traffic (bytes read + written) beside the machine's measured copy bandwidth. Eigen array
// expressions on the same data run in the same binary as a peer (Eigen::ArrayXf, with
// Eigen's own vectorized functions, single-threaded as Eigen arrays are).
//
// Threads: MPSIM_NUM_THREADS (default: all). bench/compare.py runs this beside PyTorch.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>
#include <unsupported/Eigen/SpecialFunctions>

#include "bench/bench_main.h"
#include "core/mpsim.h"
#include "kernels_simd/unary.h"

namespace {

using mpsim::Precision;
using mpsim::PrecisionGuard;
using mpsim::Tensor;

constexpr std::int64_t k16M = std::int64_t{1} << 24;

Tensor random_tensor(const mpsim::Shape& shape, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(shape.numel()));
  for (float& x : v) x = dist(rng);
  return mpsim::from_vector(v, shape);
}

void report(benchmark::State& state, double bytes_per_iteration) {
  state.counters["GB/s"] =
      benchmark::Counter(bytes_per_iteration * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

void BM_add_broadcast(benchmark::State& state) {
  const Tensor a = random_tensor({2, 320, 64, 64}, -1, 1, 1);
  const Tensor b = random_tensor({320, 1, 1}, -1, 1, 2);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::add(a, b));
  report(state, 2.0 * static_cast<double>(a.nbytes()));
}
BENCHMARK(BM_add_broadcast)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_mul(benchmark::State& state) {
  const Tensor a = random_tensor({k16M}, -1, 1, 1);
  const Tensor b = random_tensor({k16M}, -1, 1, 2);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::mul(a, b));
  report(state, 3.0 * static_cast<double>(a.nbytes()));
}
BENCHMARK(BM_mul)->Unit(benchmark::kMillisecond)->UseRealTime();

// silu and a residual add on an SD feature map [2, 320, 64, 64] kept channels-last: the
// results stay channels-last and the kernels walk them in memory order (Note [elementwise
// output layout] in core/tensor.cc).
void BM_channels_last_silu_add(benchmark::State& state) {
  const Tensor x =
      random_tensor({2, 64, 64, 320}, -4, 4, 1).permute({0, 3, 1, 2});  // channels-last view
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::add(mpsim::silu(x), x));
  report(state, 5.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_channels_last_silu_add)->Unit(benchmark::kMillisecond)->UseRealTime();

// avg_pool2d and max_pool2d, 3x3 windows, stride 1, pad 1, on [1, 320, 64, 64] channels-last
// (Note [pooled pixels] in kernels_simd/pool_rows.cc) and NCHW (Note [NCHW pools on
// channels-last copies] in core/pool_ops.cc), float32 and float16.
template <bool kMax, bool kChannelsLast, mpsim::DType kDType>
void BM_pool(benchmark::State& state) {
  Tensor x = random_tensor({1, 320, 64, 64}, -4, 4, 1).to(kDType);
  if (kChannelsLast) x = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  for (auto _ : state) {
    if (kMax) {
      benchmark::DoNotOptimize(mpsim::max_pool2d(x, {3, 3}, {1, 1}, {1, 1}));
    } else {
      benchmark::DoNotOptimize(mpsim::avg_pool2d(x, {3, 3}, {1, 1}, {1, 1}));
    }
  }
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
constexpr mpsim::DType kF32 = mpsim::DType::Float32, kF16 = mpsim::DType::Float16;
BENCHMARK(BM_pool<false, true, kF32>)
    ->Name("pool/avg_channels_last")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_pool<true, true, kF32>)
    ->Name("pool/max_channels_last")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_pool<false, false, kF32>)
    ->Name("pool/avg_nchw")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_pool<true, false, kF32>)
    ->Name("pool/max_nchw")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_pool<false, true, kF16>)
    ->Name("pool/avg_channels_last_f16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_pool<true, true, kF16>)
    ->Name("pool/max_channels_last_f16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_pool<false, false, kF16>)
    ->Name("pool/avg_nchw_f16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_pool<true, false, kF16>)
    ->Name("pool/max_nchw_f16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// interpolate bilinear, scale 2, [1, 320, 32, 32] -> [1, 320, 64, 64], channels-last and NCHW
// (Note [pooled pixels] in kernels_simd/pool_rows.cc).
template <bool kChannelsLast>
void BM_bilinear(benchmark::State& state) {
  Tensor x = random_tensor({1, 320, 32, 32}, -4, 4, 1);
  if (kChannelsLast) x = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        mpsim::interpolate(x, std::nullopt, std::vector<double>{2.0, 2.0}, "bilinear"));
  }
  report(state, 5.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_bilinear<true>)
    ->Name("resize/bilinear_channels_last")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_bilinear<false>)
    ->Name("resize/bilinear_nchw")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// pow(x, 2) of 2.6M float32 (Note [square powers] in kernels_simd/binary.cc).
void BM_pow_square(benchmark::State& state) {
  const Tensor x = random_tensor({2, 320, 64, 64}, -4, 4, 1);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::pow(x, 2.0));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_pow_square)->Name("pow_square")->Unit(benchmark::kMillisecond)->UseRealTime();

// a + b of two [2, 320, 64, 64] float16 or bfloat16 tensors (Note [16-bit binary rows] in
// kernels_simd/binary.cc).
void add16_case(benchmark::State& state, mpsim::DType dtype) {
  const Tensor a = random_tensor({2, 320, 64, 64}, -4, 4, 1).to(dtype);
  const Tensor b = random_tensor({2, 320, 64, 64}, -4, 4, 2).to(dtype);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::add(a, b));
  report(state, 3.0 * static_cast<double>(a.nbytes()));
}
BENCHMARK_CAPTURE(add16_case, f16, mpsim::DType::Float16)
    ->Name("add16/f16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(add16_case, bf16, mpsim::DType::BFloat16)
    ->Name("add16/bf16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// silu and exp of a [2, 320, 64, 64] float16 or bfloat16 tensor: one dense row, looked up in the
// op's table (Note [16-bit unary tables]).
void unary16_case(benchmark::State& state, mpsim::DType dtype, bool silu) {
  const Tensor x = random_tensor({2, 320, 64, 64}, -4, 4, 1).to(dtype);
  for (auto _ : state) benchmark::DoNotOptimize(silu ? mpsim::silu(x) : mpsim::exp(x));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK_CAPTURE(unary16_case, silu_f16, mpsim::DType::Float16, true)
    ->Name("unary16/silu_f16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(unary16_case, silu_bf16, mpsim::DType::BFloat16, true)
    ->Name("unary16/silu_bf16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(unary16_case, exp_f16, mpsim::DType::Float16, false)
    ->Name("unary16/exp_f16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// softmax and log_softmax over the last dim of a [2, 320, 64, 64] float16 tensor (the dense
// 16-bit rows of kernels_simd/softmax.cc).
void softmax16_case(benchmark::State& state, bool log) {
  const Tensor x = random_tensor({2, 320, 64, 64}, -4, 4, 1).to(mpsim::DType::Float16);
  for (auto _ : state) {
    benchmark::DoNotOptimize(log ? mpsim::log_softmax(x, -1) : mpsim::softmax(x, -1));
  }
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK_CAPTURE(softmax16_case, softmax, false)
    ->Name("softmax16/softmax")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(softmax16_case, log_softmax, true)
    ->Name("softmax16/log_softmax")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// sqrt and abs of 2^20 float64 (Note [exact float64 rows] in kernels_simd/unary.cc).
void unary_f64_case(benchmark::State& state, bool sqrt) {
  const Tensor x = random_tensor({1 << 20}, 0.01f, 8, 1).to(mpsim::DType::Float64);
  for (auto _ : state) benchmark::DoNotOptimize(sqrt ? mpsim::sqrt(x) : mpsim::abs(x));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK_CAPTURE(unary_f64_case, sqrt, true)
    ->Name("unary_f64/sqrt")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(unary_f64_case, abs, false)
    ->Name("unary_f64/abs")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// a + b of 2^21 int32 or int64 (Note [integer binary rows] in kernels_simd/binary.cc).
void int_add_case(benchmark::State& state, mpsim::DType dtype) {
  const Tensor a = random_tensor({1 << 21}, -1000, 1000, 1).to(dtype);
  const Tensor b = random_tensor({1 << 21}, -1000, 1000, 2).to(dtype);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::add(a, b));
  report(state, 3.0 * static_cast<double>(a.nbytes()));
}
BENCHMARK_CAPTURE(int_add_case, i32, mpsim::DType::Int32)
    ->Name("int_add/int32")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(int_add_case, i64, mpsim::DType::Int64)
    ->Name("int_add/int64")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// sub(a, b, alpha 2) and div(a, b, 'trunc') of two [2, 320, 64, 64] float32 (Note [float32 rows
// in double] in kernels_simd/binary.cc).
void f32_in_double_case(benchmark::State& state, bool trunc) {
  const Tensor a = random_tensor({2, 320, 64, 64}, -4, 4, 1);
  const Tensor b = random_tensor({2, 320, 64, 64}, 0.5f, 4, 2);
  for (auto _ : state) {
    benchmark::DoNotOptimize(trunc ? mpsim::div(a, b, "trunc") : mpsim::sub(a, b, 2));
  }
  report(state, 3.0 * static_cast<double>(a.nbytes()));
}
BENCHMARK_CAPTURE(f32_in_double_case, sub_alpha, false)
    ->Name("f32_in_double/sub_alpha")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(f32_in_double_case, div_trunc, true)
    ->Name("f32_in_double/div_trunc")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A [2, 320, 64, 64] float32 to int32 and int64 (kernels_simd/transpose.cc's integer casts).
void to_int_case(benchmark::State& state, mpsim::DType dtype) {
  const Tensor x = random_tensor({2, 320, 64, 64}, -1000, 1000, 1);
  for (auto _ : state) benchmark::DoNotOptimize(x.to(dtype));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK_CAPTURE(to_int_case, i32, mpsim::DType::Int32)
    ->Name("to_int/int32")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(to_int_case, i64, mpsim::DType::Int64)
    ->Name("to_int/int64")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The sum of 2^20 float64 (Note [float64 sum lanes] in kernels_simd/row_stats.h).
void BM_f64_sum(benchmark::State& state) {
  const Tensor a = random_tensor({1 << 20}, -1000, 1000, 1).to(mpsim::DType::Float64);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::sum(a));
  report(state, static_cast<double>(a.nbytes()));
}
BENCHMARK(BM_f64_sum)->Name("f64_sum")->Unit(benchmark::kMillisecond)->UseRealTime();

// The sum of 2^21 int64 (the dense integer runs of kernels_simd/reduce.cc).
void BM_int_sum(benchmark::State& state) {
  const Tensor a = random_tensor({1 << 21}, -1000, 1000, 1).to(mpsim::DType::Int64);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::sum(a));
  report(state, static_cast<double>(a.nbytes()));
}
BENCHMARK(BM_int_sum)->Name("int_sum")->Unit(benchmark::kMillisecond)->UseRealTime();

// pow(x, y) of 2.6M float32 in [0.01, 4] for the exponents of Note [exact powers]
// (kernels_simd/exact_power.h), and y = 1.5, which takes the double-lane row of Note [correctly
// rounded pow] (kernels_simd/binary.cc; unary_sd/pow_<y> runs more exponents beside PyTorch).
void pow_exponent_case(benchmark::State& state, double y) {
  const Tensor x = random_tensor({2, 320, 64, 64}, 0.01f, 4, 1);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::pow(x, y));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK_CAPTURE(pow_exponent_case, half, 0.5)
    ->Name("pow_exponent/0.5")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(pow_exponent_case, cube, 3.0)
    ->Name("pow_exponent/3")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(pow_exponent_case, inverse, -1.0)
    ->Name("pow_exponent/-1")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(pow_exponent_case, inverse_square, -2.0)
    ->Name("pow_exponent/-2")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(pow_exponent_case, general, 1.5)
    ->Name("pow_exponent/1.5")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// clamp(x, -1, 1) of 2.6M float32 (Note [clamp rows] in kernels_simd/select.cc).
void BM_clamp(benchmark::State& state) {
  const Tensor x = random_tensor({2, 320, 64, 64}, -4, 4, 1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        mpsim::clamp(x, std::optional<mpsim::Scalar>(-1), std::optional<mpsim::Scalar>(1)));
  }
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_clamp)->Name("clamp")->Unit(benchmark::kMillisecond)->UseRealTime();

// Dense fills of a [2, 320, 64, 64] float32 (Note [dense fills] in kernels_simd/copy.cc):
// zeros, full(1.5), and a [2, 320, 1, 1] time embedding broadcast by expand(...).contiguous().
void fill_case(benchmark::State& state, int which) {
  const Tensor temb = random_tensor({2, 320, 1, 1}, -4, 4, 1);
  const mpsim::Shape shape = {2, 320, 64, 64};
  for (auto _ : state) {
    if (which == 0) benchmark::DoNotOptimize(mpsim::zeros(shape));
    if (which == 1) benchmark::DoNotOptimize(mpsim::full(shape, 1.5));
    if (which == 2) benchmark::DoNotOptimize(temb.expand(shape).contiguous());
  }
  report(state, 4.0 * 2 * 320 * 64 * 64);
}
BENCHMARK_CAPTURE(fill_case, zeros, 0)
    ->Name("fill/zeros")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(fill_case, full, 1)
    ->Name("fill/full")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(fill_case, expand, 2)
    ->Name("fill/expand_contiguous")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A channels-last [2, 320, 64, 64] float32 to float16 (Note [copies keep the layout] in
// core/tensor.cc).
void BM_to_f16_channels_last(benchmark::State& state) {
  const Tensor x = random_tensor({2, 64, 64, 320}, -4, 4, 1).permute({0, 3, 1, 2});
  for (auto _ : state) benchmark::DoNotOptimize(x.to(mpsim::DType::Float16));
  report(state, 1.5 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_to_f16_channels_last)
    ->Name("to_f16_channels_last")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// batch_norm (inference) of a channels-last [2, 320, 64, 64] float32 (batch_norm_pixels_f32 in
// kernels_simd/norm.cc).
void BM_batch_norm_channels_last(benchmark::State& state) {
  const Tensor x = random_tensor({2, 64, 64, 320}, -4, 4, 1).permute({0, 3, 1, 2});
  const Tensor mean = random_tensor({320}, -1, 1, 2), var = random_tensor({320}, 0.5, 2, 3);
  for (auto _ : state) {
    benchmark::DoNotOptimize(mpsim::batch_norm(x, mean, var, std::nullopt, std::nullopt));
  }
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_batch_norm_channels_last)
    ->Name("batch_norm_channels_last")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// pad 1 on H and W of a channels-last [2, 320, 64, 64] float32 (Note [pad layout] in
// core/movement_ops.cc).
void BM_pad_channels_last(benchmark::State& state) {
  const Tensor x = random_tensor({2, 64, 64, 320}, -4, 4, 1).permute({0, 3, 1, 2});
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::pad(x, {1, 1, 1, 1}));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_pad_channels_last)
    ->Name("pad_channels_last")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// softmax over the channels of a [2, 320, 64, 64] float32, NCHW and channels-last (Note [row
// tiles] in kernels_simd/softmax.cc).
template <bool kChannelsLast>
void BM_softmax_channels(benchmark::State& state) {
  Tensor x = random_tensor({2, 320, 64, 64}, -4, 4, 1);
  if (kChannelsLast) x = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::softmax(x, 1));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_softmax_channels<false>)
    ->Name("softmax_channels/nchw")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_softmax_channels<true>)
    ->Name("softmax_channels/channels_last")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// amax, prod and logsumexp over the channels of an NCHW [2, 320, 64, 64] float32 (Note
// [strided reductions made dense] in core/reduce_ops.cc).
void reduce_channels_case(benchmark::State& state, int which) {
  const Tensor x = random_tensor({2, 320, 64, 64}, 0.5, 1.5, 1);
  for (auto _ : state) {
    if (which == 0) benchmark::DoNotOptimize(mpsim::amax(x, {1}));
    if (which == 1) benchmark::DoNotOptimize(mpsim::prod(x, {1}));
    if (which == 2) benchmark::DoNotOptimize(mpsim::logsumexp(x, {1}));
  }
  report(state, static_cast<double>(x.nbytes()));
}
BENCHMARK_CAPTURE(reduce_channels_case, amax, 0)
    ->Name("reduce_channels/amax")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(reduce_channels_case, prod, 1)
    ->Name("reduce_channels/prod")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(reduce_channels_case, logsumexp, 2)
    ->Name("reduce_channels/logsumexp")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// cat of two channels-last [2, 320, 64, 64] float32 along the channels (a UNet skip
// connection): a channels-last result, rows of one pixel's channels (kernels_simd/copy.cc).
void BM_cat_channels_last(benchmark::State& state) {
  const Tensor x = random_tensor({2, 64, 64, 320}, -4, 4, 1).permute({0, 3, 1, 2});
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::cat({x, x}, 1));
  report(state, 4.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_cat_channels_last)
    ->Name("cat_channels_last")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_copy(benchmark::State& state) {
  const Tensor a = random_tensor({k16M}, -1, 1, 1);
  for (auto _ : state) benchmark::DoNotOptimize(a.clone());
  report(state, 2.0 * static_cast<double>(a.nbytes()));
}
BENCHMARK(BM_copy)->Unit(benchmark::kMillisecond)->UseRealTime();

// Unary ops on floats in [-8, 8] (log, sqrt, rsqrt and log1p take [0.01, 8]), each at three sizes:
// unary/<op>: 16M floats, the case (GB/s of tensor traffic);
// unary_sd/<op>: [2, 320, 64, 64] (2.6M floats, 10 MiB), an SD 1.5 feature map;
// unary_cache/<op>: 64Ki floats (input and output L2-resident), the arithmetic alone: run with
// MPSIM_NUM_THREADS=1, 1e9 / items_per_second is the cost in ns per output on one core.
struct UnaryCase {
  const char* name;
  Tensor (*op)(const Tensor&);
  bool positive;
  float lo = 0, hi = 0;  // the input range where it is not [-8, 8] or [0.01, 8]
};
constexpr UnaryCase kUnaryCases[] = {
    {"exp", [](const Tensor& x) { return mpsim::exp(x); }, false},
    {"log", [](const Tensor& x) { return mpsim::log(x); }, true},
    {"tanh", [](const Tensor& x) { return mpsim::tanh(x); }, false},
    {"sigmoid", [](const Tensor& x) { return mpsim::sigmoid(x); }, false},
    {"silu", [](const Tensor& x) { return mpsim::silu(x); }, false},
    {"gelu", [](const Tensor& x) { return mpsim::gelu(x); }, false},
    {"gelu_tanh", [](const Tensor& x) { return mpsim::gelu(x, "tanh"); }, false},
    {"sqrt", [](const Tensor& x) { return mpsim::sqrt(x); }, true},
    {"relu", [](const Tensor& x) { return mpsim::relu(x); }, false},
    {"erf", [](const Tensor& x) { return mpsim::erf(x); }, false},
    {"sin", [](const Tensor& x) { return mpsim::sin(x); }, false},
    {"cos", [](const Tensor& x) { return mpsim::cos(x); }, false},
    {"abs", [](const Tensor& x) { return mpsim::abs(x); }, false},
    {"neg", [](const Tensor& x) { return mpsim::neg(x); }, false},
    {"square", [](const Tensor& x) { return mpsim::square(x); }, false},
    {"reciprocal", [](const Tensor& x) { return mpsim::reciprocal(x); }, false},
    {"rsqrt", [](const Tensor& x) { return mpsim::rsqrt(x); }, true},
    {"log1p", [](const Tensor& x) { return mpsim::log1p(x); }, true},
    {"expm1", [](const Tensor& x) { return mpsim::expm1(x); }, false},
    {"softplus", [](const Tensor& x) { return mpsim::softplus(x); }, false},
    // the math family's functions with float lanes
    {"exp2", [](const Tensor& x) { return mpsim::exp2(x); }, false},
    {"log2", [](const Tensor& x) { return mpsim::log2(x); }, true},
    {"log10", [](const Tensor& x) { return mpsim::log10(x); }, true},
    {"tan", [](const Tensor& x) { return mpsim::tan(x); }, false},
    {"sinh", [](const Tensor& x) { return mpsim::sinh(x); }, false},
    {"cosh", [](const Tensor& x) { return mpsim::cosh(x); }, false},
    {"asinh", [](const Tensor& x) { return mpsim::asinh(x); }, false},
    {"acosh", [](const Tensor& x) { return mpsim::acosh(x); }, true, 1.01f, 8},
    {"atanh", [](const Tensor& x) { return mpsim::atanh(x); }, false, -0.99f, 0.99f},
    {"atan", [](const Tensor& x) { return mpsim::atan(x); }, false},
    {"asin", [](const Tensor& x) { return mpsim::asin(x); }, false, -0.99f, 0.99f},
    {"acos", [](const Tensor& x) { return mpsim::acos(x); }, false, -0.99f, 0.99f},
    {"erfc", [](const Tensor& x) { return mpsim::erfc(x); }, false},
    // pow with scalar exponents beyond Note [exact powers] (Note [correctly rounded pow])
    {"pow_1.5", [](const Tensor& x) { return mpsim::pow(x, 1.5); }, true},
    {"pow_2.2", [](const Tensor& x) { return mpsim::pow(x, 2.2f); }, true},
    {"pow_0.4545", [](const Tensor& x) { return mpsim::pow(x, 1 / 2.2f); }, true},
    {"pow_-0.5", [](const Tensor& x) { return mpsim::pow(x, -0.5); }, true},
    {"pow_5", [](const Tensor& x) { return mpsim::pow(x, 5.0); }, true},
};

// slow_lanes: the share of the float-lane rows' lanes that the rounding test sent to the double
// path (Note [correctly rounded float lanes]); absent where no float-lane row ran.
void slow_lane_counter(benchmark::State& state) {
  const mpsim::simd::UnaryCrStats s = mpsim::simd::unary_cr_stats();
  if (s.lanes > 0)
    state.counters["slow_lanes"] = static_cast<double>(s.slow_lanes) / static_cast<double>(s.lanes);
}

void unary(benchmark::State& state, const UnaryCase& c, std::int64_t n, Precision precision) {
  const Tensor x = c.lo < c.hi ? random_tensor({n}, c.lo, c.hi, 3)
                               : random_tensor({n}, c.positive ? 0.01f : -8, 8, 3);
  const PrecisionGuard guard(precision);
  mpsim::simd::reset_unary_cr_stats();
  for (auto _ : state) benchmark::DoNotOptimize(c.op(x));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
  state.SetItemsProcessed(state.iterations() * n);
  slow_lane_counter(state);
}

// unary_cr_slow/exp: 64Ki floats of [-80, 80] whose e^x lies within 2^-33 of itself of a rounding
// boundary, so that nearly every lane fails the float-lane rounding test (Note [correctly rounded
// float lanes]) and takes the double-lane kernel: the adversarial cost of the golden path.
// unary_cache/exp is the same size with random inputs (one lane in 256 fails).
void BM_unary_cr_slow_exp(benchmark::State& state) {
  mpsim::simd::reset_unary_cr_stats();
  std::vector<float> xs;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-80.0f, 80.0f);
  while (xs.size() < (std::size_t{1} << 16)) {
    const float x = dist(rng);
    const long double v = std::exp(static_cast<long double>(x));
    int e = 0;
    std::frexp(v, &e);
    const long double units = std::ldexp(v, 24 - e);  // v in ulps of its binade: [2^23, 2^24)
    if (std::fabs(units - std::floor(units) - 0.5L) < units * 0x1p-33L) xs.push_back(x);
  }
  const Tensor x = mpsim::from_vector(xs);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::exp(x));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(xs.size()));
  slow_lane_counter(state);
}
BENCHMARK(BM_unary_cr_slow_exp)->Name("unary_cr_slow/exp")->Unit(benchmark::kMillisecond)->UseRealTime();

// The ops with a Precision::Fast kernel (Note [fast float unary]) also run as
// unary_fast/<op> and unary_fast_cache/<op>.
bool has_fast_kernel(std::string_view name) {
  for (std::string_view f : {"exp", "log", "sigmoid", "silu", "gelu", "gelu_tanh", "sin", "cos",
                             "rsqrt", "log1p", "expm1", "softplus"}) {
    if (name == f) return true;
  }
  return false;
}

const bool kUnaryRegistered = [] {
  const std::int64_t in_cache = std::int64_t{1} << 16;
  const std::int64_t sd = std::int64_t{2} * 320 * 64 * 64;  // an SD 1.5 feature map
  for (const auto& [prefix, n, precision] :
       {std::tuple{"unary/", k16M, Precision::Golden},
        std::tuple{"unary_cache/", in_cache, Precision::Golden},
        std::tuple{"unary_sd/", sd, Precision::Golden},
        std::tuple{"unary_fast/", k16M, Precision::Fast},
        std::tuple{"unary_fast_cache/", in_cache, Precision::Fast},
        std::tuple{"unary_fast_sd/", sd, Precision::Fast}}) {
    for (const UnaryCase& c : kUnaryCases) {
      if (precision == Precision::Fast && !has_fast_kernel(c.name)) continue;
      benchmark::RegisterBenchmark((std::string(prefix) + c.name).c_str(), unary, c, n, precision)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  // unary_signed/<op> and unary_fast_signed/<op>: the ops of positive inputs on [-8, 8]
  // instead, in cache: half the lanes give NaN (Note [libm special lanes]).
  for (const auto& [prefix, precision] : {std::tuple{"unary_signed/", Precision::Golden},
                                          std::tuple{"unary_fast_signed/", Precision::Fast}}) {
    for (const UnaryCase& c : kUnaryCases) {
      if (!c.positive) continue;
      const UnaryCase signed_case{c.name, c.op, false};
      benchmark::RegisterBenchmark((std::string(prefix) + c.name).c_str(), unary, signed_case,
                                   in_cache, precision)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  return true;
}();

// unary64/<op> (16M doubles) and unary64_sd/<op> ([2, 320, 64, 64] doubles): the float64 vector
// rows (Note [float64 exp rows] and after, kernels_simd/unary_f64.cc) on the float rows' ranges.
void unary64(benchmark::State& state, const UnaryCase& c, std::int64_t n) {
  const Tensor x = random_tensor({n}, c.positive ? 0.01f : -8, 8, 3).to(mpsim::DType::Float64);
  for (auto _ : state) benchmark::DoNotOptimize(c.op(x));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
  state.SetItemsProcessed(state.iterations() * n);
}

const bool kUnary64Registered = [] {
  const std::int64_t sd = std::int64_t{2} * 320 * 64 * 64;
  for (const auto& [prefix, n] : {std::pair{"unary64/", k16M}, std::pair{"unary64_sd/", sd}}) {
    for (const UnaryCase& c : kUnaryCases) {
      const std::string_view name = c.name;
      if (name != "exp" && name != "log" && name != "expm1" && name != "log1p" &&
          name != "sigmoid" && name != "tanh" && name != "erf")
        continue;
      benchmark::RegisterBenchmark((std::string(prefix) + c.name).c_str(), unary64, c, n)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  return true;
}();

// ---- Kernels II on Stable Diffusion 1.5 shapes (issue 5's list). ----
void BM_softmax_rows(benchmark::State& state) {  // [2, 8, 4096, 1024]: attention scores
  const Tensor x = random_tensor({2, 8, 4096, 1024}, -8, 8, 4);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::softmax(x, -1));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_softmax_rows)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_layer_norm(benchmark::State& state) {
  const Tensor x = random_tensor({2, 4096, 320}, -2, 2, 5);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::layer_norm(x, {320}));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_layer_norm)->Unit(benchmark::kMillisecond)->UseRealTime();
// The same in float16 and bfloat16 (the generic path of kernels_simd/norm.cc).
void layer_norm16_case(benchmark::State& state, mpsim::DType dtype) {
  const Tensor x = random_tensor({2, 4096, 320}, -2, 2, 5).to(dtype);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::layer_norm(x, {320}));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK_CAPTURE(layer_norm16_case, f16, mpsim::DType::Float16)
    ->Name("layer_norm_f16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(layer_norm16_case, bf16, mpsim::DType::BFloat16)
    ->Name("layer_norm_bf16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void group_norm_case(benchmark::State& state, bool channels_last) {
  Tensor x = random_tensor({2, 320, 64, 64}, -2, 2, 6);
  if (channels_last) x = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::group_norm(x, 32));
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK_CAPTURE(group_norm_case, nchw, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(group_norm_case, nhwc, true)->Unit(benchmark::kMillisecond)->UseRealTime();

void sum_case(benchmark::State& state, int dim) {
  const Tensor x = random_tensor({4096, 4096}, -1, 1, 7);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::sum(x, {dim}));
  report(state, static_cast<double>(x.nbytes()));
}
BENCHMARK_CAPTURE(sum_case, last, -1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(sum_case, first, 0)->Unit(benchmark::kMillisecond)->UseRealTime();
// Sums and means over short rows: the last dim of [8192, 320] (Note [row sums in row tiles]).
void short_rows_case(benchmark::State& state, bool mean) {
  const Tensor x = random_tensor({8192, 320}, -1, 1, 7);
  for (auto _ : state) benchmark::DoNotOptimize(mean ? mpsim::mean(x, {1}) : mpsim::sum(x, {1}));
  report(state, static_cast<double>(x.nbytes()));
}
BENCHMARK_CAPTURE(short_rows_case, sum, false)
    ->Name("sum_case/short_rows")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(short_rows_case, mean, true)
    ->Name("sum_case/short_rows_mean")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A whole-tensor sum and a sum over the channels of an NCHW [2, 320, 64, 64] (Note [peeled
// outer dims] in kernels_simd/reduce.cc).
void sum_map_case(benchmark::State& state, bool channels) {
  const Tensor x = random_tensor({2, 320, 64, 64}, -1, 1, 7);
  for (auto _ : state) {
    benchmark::DoNotOptimize(channels ? mpsim::sum(x, {1}) : mpsim::sum(x));
  }
  report(state, static_cast<double>(x.nbytes()));
}
BENCHMARK_CAPTURE(sum_map_case, all, false)
    ->Name("sum_case/all")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(sum_map_case, channels, true)
    ->Name("sum_case/channels")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_permute_to_channels_last(benchmark::State& state) {
  const Tensor x = random_tensor({2, 320, 64, 64}, -1, 1, 8);
  for (auto _ : state) benchmark::DoNotOptimize(x.permute({0, 2, 3, 1}).contiguous());
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_permute_to_channels_last)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_cat(benchmark::State& state) {
  const Tensor a = random_tensor({2, 320, 64, 64}, -1, 1, 9), b = random_tensor({2, 320, 64, 64}, -1, 1, 10);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::cat({a, b}, 1));
  report(state, 4.0 * static_cast<double>(a.nbytes()));
}
BENCHMARK(BM_cat)->Unit(benchmark::kMillisecond)->UseRealTime();

// The copy bandwidth of the SD shapes' footprint: one [2, 320, 64, 64] tensor (10.5 MiB, L3
// resident like the kernels above), the reference for their GB/s.
void BM_copy_sd(benchmark::State& state) {
  const Tensor x = random_tensor({2, 320, 64, 64}, -1, 1, 11);
  for (auto _ : state) benchmark::DoNotOptimize(x.clone());
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_copy_sd)->Unit(benchmark::kMillisecond)->UseRealTime();

// The reference for cat: a clone of its output's bytes ([2, 640, 64, 64], 21 MiB). Twice
// copy_sd's footprint; a copy this size can move fewer bytes per second than copy_sd
// (1.35-1.45 ms against 0.47-0.51 in one run of both on two threads).
void BM_copy_cat(benchmark::State& state) {
  const Tensor x = random_tensor({2, 640, 64, 64}, -1, 1, 12);
  for (auto _ : state) benchmark::DoNotOptimize(x.clone());
  report(state, 2.0 * static_cast<double>(x.nbytes()));
}
BENCHMARK(BM_copy_cat)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- Every other Kernels II op (ops2/<op>), beside PyTorch in compare.py: reductions over
// [4096, 4096], normalizations and data movement on SD 1.5 shapes, casts and random numbers
// on 16M elements. GB/s counts the bytes an op must move (inputs once, output once).
struct Ops2Case {
  const char* name;
  std::function<Tensor()> input;  // built once, outside the timing
  std::function<Tensor(const Tensor&)> op;
};

Tensor sq4096() { return random_tensor({4096, 4096}, -2, 2, 12); }
Tensor sd_tensor() { return random_tensor({2, 320, 64, 64}, -2, 2, 13); }
Tensor flat16m() { return random_tensor({k16M}, -8, 8, 14); }

const std::vector<Ops2Case>& ops2_cases() {
  static const std::vector<Ops2Case> cases = {
      {"mean_first", sq4096, [](const Tensor& x) { return mpsim::mean(x, {0}); }},
      {"var_last", sq4096, [](const Tensor& x) { return mpsim::var(x, {1}); }},
      {"amax_last", sq4096, [](const Tensor& x) { return mpsim::amax(x, {1}); }},
      {"argmax_last", sq4096, [](const Tensor& x) { return mpsim::argmax(x, 1); }},
      {"logsumexp_last", sq4096, [](const Tensor& x) { return mpsim::logsumexp(x, {1}); }},
      {"prod_last", [] { return random_tensor({4096, 4096}, 0.999f, 1.001f, 15); },
       [](const Tensor& x) { return mpsim::prod(x, {1}); }},
      {"log_softmax_rows", [] { return random_tensor({8192, 1024}, -8, 8, 16); },
       [](const Tensor& x) { return mpsim::log_softmax(x, -1); }},
      {"rms_norm", [] { return random_tensor({2, 4096, 320}, -2, 2, 17); },
       [](const Tensor& x) { return mpsim::rms_norm(x, {320}); }},
      {"batch_norm", sd_tensor,
       [](const Tensor& x) {
         static const Tensor mean = random_tensor({320}, -1, 1, 18);
         static const Tensor var = random_tensor({320}, 0.5f, 2, 19);
         return mpsim::batch_norm(x, mean, var);
       }},
      {"transpose_2d", sq4096, [](const Tensor& x) { return x.t().contiguous(); }},
      {"slice_step2", sd_tensor,
       [](const Tensor& x) { return x.slice(3, 0, 64, 2).contiguous(); }},
      {"stack", sd_tensor, [](const Tensor& x) { return mpsim::stack({x, x}, 0); }},
      {"flip_w", sd_tensor, [](const Tensor& x) { return mpsim::flip(x, {3}); }},
      {"repeat_h2", sd_tensor, [](const Tensor& x) { return mpsim::repeat(x, {1, 1, 2, 1}); }},
      {"pad_reflect", sd_tensor,
       [](const Tensor& x) { return mpsim::pad(x, {1, 1, 1, 1}, "reflect"); }},
      {"pad_constant", sd_tensor, [](const Tensor& x) { return mpsim::pad(x, {1, 1, 1, 1}); }},
      {"tril", sq4096, [](const Tensor& x) { return mpsim::tril(x); }},
      {"index_select_rows", [] { return random_tensor({8192, 320}, -2, 2, 20); },
       [](const Tensor& x) {
         static const Tensor index = [] {
           std::mt19937 rng(21);
           std::vector<std::int64_t> v(8192);
           for (auto& i : v) i = static_cast<std::int64_t>(rng() % 8192);
           return mpsim::from_vector(v, {8192});
         }();
         return mpsim::index_select(x, 0, index);
       }},
      {"gather_last", [] { return random_tensor({4096, 1024}, -2, 2, 22); },
       [](const Tensor& x) {
         static const Tensor index = [] {
           std::mt19937 rng(23);
           std::vector<std::int64_t> v(4096 * 1024);
           for (auto& i : v) i = static_cast<std::int64_t>(rng() % 1024);
           return mpsim::from_vector(v, {4096, 1024});
         }();
         return mpsim::gather(x, 1, index);
       }},
      {"to_f16", flat16m, [](const Tensor& x) { return x.to(mpsim::DType::Float16); }},
      {"to_bf16", flat16m, [](const Tensor& x) { return x.to(mpsim::DType::BFloat16); }},
      {"f16_to_f32", [] { return flat16m().to(mpsim::DType::Float16); },
       [](const Tensor& x) { return x.to(mpsim::DType::Float32); }},
      {"to_int32", flat16m, [](const Tensor& x) { return x.to(mpsim::DType::Int32); }},
      {"rand", flat16m, [](const Tensor&) { return mpsim::rand({k16M}); }},
      {"randn", flat16m, [](const Tensor&) { return mpsim::randn({k16M}); }},
      {"randint", flat16m, [](const Tensor&) { return mpsim::randint(0, 1000, {k16M}); }},
      {"dropout", flat16m, [](const Tensor& x) { return mpsim::dropout(x, 0.1); }},
      {"linspace", flat16m, [](const Tensor&) { return mpsim::linspace(0, 1, k16M); }},
  };
  return cases;
}

void ops2(benchmark::State& state, const Ops2Case& c) {
  const Tensor x = c.input();
  double bytes = 0;
  for (auto _ : state) {
    const Tensor y = c.op(x);
    bytes = static_cast<double>(y.nbytes());
    benchmark::DoNotOptimize(y);
  }
  const std::string_view name = c.name;
  const bool reads_input = name != "rand" && name != "randn" && name != "randint" && name != "linspace";
  report(state, bytes + (reads_input ? static_cast<double>(x.nbytes()) : 0.0));
}

const bool kOps2Registered = [] {
  for (const Ops2Case& c : ops2_cases()) {
    benchmark::RegisterBenchmark((std::string("ops2/") + c.name).c_str(), ops2, c)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  return true;
}();

// ---- Eigen arrays (the peer), on the same 16M floats; preallocated output. ----
void eigen_unary(benchmark::State& state, int which) {
  Eigen::ArrayXf x = Eigen::ArrayXf::Random(k16M) * 8.0f;
  if (which == 1) x = x.abs() + 0.01f;
  Eigen::ArrayXf y(k16M);
  Eigen::ArrayXf b = Eigen::ArrayXf::Random(k16M);
  for (auto _ : state) {
    switch (which) {
      case 0:
        y = x.exp();
        break;
      case 1:
        y = x.log();
        break;
      case 2:
        y = x.tanh();
        break;
      case 3:
        y = x.logistic();
        break;
      case 4:
        y = 0.5f * x * (1.0f + (x * 0.70710678f).erf());
        break;
      case 5:
        y = x * b;
        break;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  report(state, (which == 5 ? 3.0 : 2.0) * 4.0 * static_cast<double>(k16M));
}
BENCHMARK_CAPTURE(eigen_unary, exp, 0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(eigen_unary, log, 1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(eigen_unary, tanh, 2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(eigen_unary, sigmoid, 3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(eigen_unary, gelu, 4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(eigen_unary, mul, 5)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv); }
