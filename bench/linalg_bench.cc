// matmul, conv2d and attention beside their peers, in one process, with one thread count:
// mpsim (Golden and Fast), OpenBLAS (cblas_sgemm/dgemm), oneDNN (dnnl_sgemm) and Eigen, plus
// this machine's measured FMA peak. Prints one JSON object per line for bench/linalg_compare.py
// (which adds PyTorch in the same run; bench/report.py writes docs/performance.md from it).
//
// Usage: linalg_bench [--threads N] [--rounds R] [--filter SUBSTRING] [--attention-memory]
// Each case runs R rounds (after one warm-up call), alternating the implementations inside a
// round, and reports the best round: the least disturbed by the other processes. The peers'
// threads sleep between calls (Note [idle peers]).
#include <cblas.h>
#include <dnnl.h>
#include <immintrin.h>
#include <sys/resource.h>
#include <tbb/global_control.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/mpsim.h"

extern "C" void openblas_set_num_threads(int);

namespace {

using namespace mpsim;
using Clock = std::chrono::steady_clock;

double seconds(const std::function<void()>& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Impl {
  std::string name;
  std::function<void()> run;
};

// Runs every implementation `rounds` times, interleaved, and prints the best time of each.
void report(const std::string& case_name, double flops, std::vector<Impl> impls, int rounds,
            int threads) {
  std::vector<double> best(impls.size(), 1e30);
  for (Impl& i : impls) i.run();  // warm-up: page faults, packing buffers, JIT (oneDNN)
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < impls.size(); ++i)
      best[i] = std::min(best[i], seconds(impls[i].run));
  }
  for (std::size_t i = 0; i < impls.size(); ++i) {
    std::printf(
        "{\"case\": \"%s\", \"impl\": \"%s\", \"threads\": %d, \"ms\": %.4f, \"gflops\": %.2f}\n",
        case_name.c_str(), impls[i].name.c_str(), threads, best[i] * 1e3, flops / best[i] * 1e-9);
    std::fflush(stdout);
  }
}

// The machine's FMA peak on `threads` cores: 12 independent FMA chains per thread (more than
// latency x ports = 4 x 2 needs in flight), each a named local that an empty asm takes in and
// out every iteration, so all 12 stay in registers and none can be dropped or folded (an array
// of accumulators with only one of them passed through the asm compiles to a single chain
// through memory, well under half the peak).
template <class V, class Fma>
double fma_peak(int threads, int lanes, Fma fma, V a, V b) {
  constexpr int kChains = 12;
  auto one = [&] {
    V c0 = a, c1 = a, c2 = a, c3 = a, c4 = a, c5 = a, c6 = a, c7 = a, c8 = a, c9 = a, c10 = a,
      c11 = a;
    for (long it = 0; it < 4'000'000; ++it) {
      c0 = fma(c0, b, a), c1 = fma(c1, b, a), c2 = fma(c2, b, a), c3 = fma(c3, b, a);
      c4 = fma(c4, b, a), c5 = fma(c5, b, a), c6 = fma(c6, b, a), c7 = fma(c7, b, a);
      c8 = fma(c8, b, a), c9 = fma(c9, b, a), c10 = fma(c10, b, a), c11 = fma(c11, b, a);
      asm volatile(""
                   : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5), "+v"(c6), "+v"(c7),
                     "+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11));
    }
    volatile V sink = c0;
    (void)sink;
  };
  // A try takes a few ms; the best of 20 is one that no other process interrupted.
  double best = 1e30;
  for (int r = 0; r < 20; ++r) {
    best = std::min(best, seconds([&] {
                      std::vector<std::thread> pool;
                      for (int t = 0; t < threads; ++t) pool.emplace_back(one);
                      for (auto& t : pool) t.join();
                    }));
  }
  return 4'000'000.0 * kChains * 2 * lanes * threads / best * 1e-9;
}

void gemm_case(std::int64_t m, std::int64_t n, std::int64_t k, int rounds, int threads) {
  const Tensor a = randn({m, k}), b = randn({k, n});
  const Tensor a64 = a.to(DType::Float64), b64 = b.to(DType::Float64);
  std::vector<float> c(static_cast<std::size_t>(m * n));
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> ea(pa, m,
                                                                                             k),
      eb(pb, k, n);
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> ec(m, n);
  const std::string name =
      "mm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  report(name, 2.0 * m * n * k,
         {{"mpsim golden", [&] { mm(a, b); }},
          {"mpsim fast",
           [&] {
             PrecisionGuard g(Precision::Fast);
             mm(a, b);
           }},
          {"openblas",
           [&] {
             cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m),
                         static_cast<int>(n), static_cast<int>(k), 1.0f, pa, static_cast<int>(k),
                         pb, static_cast<int>(n), 0.0f, c.data(), static_cast<int>(n));
           }},
          {"onednn", [&] { dnnl_sgemm('N', 'N', m, n, k, 1.0f, pa, k, pb, n, 0.0f, c.data(), n); }},
          {"eigen", [&] { ec.noalias() = ea * eb; }},
          {"openblas dgemm",
           [&] {
             std::vector<double> c64(static_cast<std::size_t>(m * n));
             cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m),
                         static_cast<int>(n), static_cast<int>(k), 1.0, a64.data_ptr<double>(),
                         static_cast<int>(k), b64.data_ptr<double>(), static_cast<int>(n), 0.0,
                         c64.data(), static_cast<int>(n));
           }}},
         rounds, threads);
}

void conv_case(const std::string& name, const Shape& xs, const Shape& ws, std::int64_t pad,
               std::int64_t groups, bool channels_last, int rounds, int threads,
               DType dtype = DType::Float32, std::int64_t stride = 1) {
  Tensor x = randn(xs).to(dtype);
  if (channels_last) x = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  const Tensor w = randn(ws).to(dtype), b = randn({ws[0]}).to(dtype);
  const double oh = static_cast<double>((xs[2] + 2 * pad - ws[2]) / stride + 1);
  const double ow = static_cast<double>((xs[3] + 2 * pad - ws[3]) / stride + 1);
  const double flops = 2.0 * xs[0] * ws[0] * oh * ow * ws[1] * ws[2] * ws[3];
  report(name + (channels_last ? " nhwc" : " nchw"), flops,
         {{"mpsim golden",
           [&] {
             conv2d(x, w, b, {stride, stride}, {pad, pad}, {1, 1}, groups);
           }},
          {"mpsim fast",
           [&] {
             PrecisionGuard g(Precision::Fast);
             conv2d(x, w, b, {stride, stride}, {pad, pad}, {1, 1}, groups);
           }}},
         rounds, threads);
}

void attention_case(int rounds, int threads) {
  const Tensor q = randn({2, 8, 4096, 40}), k = randn({2, 8, 4096, 40}),
               v = randn({2, 8, 4096, 40});
  report("attention 2x8x4096x40", 4.0 * 16 * 4096.0 * 4096.0 * 40,
         {{"mpsim golden", [&] { scaled_dot_product_attention(q, k, v); }},
          {"mpsim fast",
           [&] {
             PrecisionGuard g(Precision::Fast);
             scaled_dot_product_attention(q, k, v);
           }}},
         rounds, threads);
}

// Peak resident memory added by one Fast attention call beyond its inputs and output.
void attention_memory() {
  const Tensor q = randn({2, 8, 4096, 40}), k = randn({2, 8, 4096, 40}),
               v = randn({2, 8, 4096, 40});
  Tensor out = empty({2, 8, 4096, 40});
  out.copy_(q);  // touch the output's pages before measuring
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  {
    PrecisionGuard g(Precision::Fast);
    out = scaled_dot_product_attention(q, k, v);
  }
  getrusage(RUSAGE_SELF, &after);
  std::printf(
      "{\"case\": \"attention 2x8x4096x40 extra memory\", \"impl\": \"mpsim fast\", \"mib\": "
      "%.1f}\n",
      static_cast<double>(after.ru_maxrss - before.ru_maxrss) / 1024.0);
}

}  // namespace

// Note [idle peers]
// OpenBLAS's threads spin for about 2^28 cycles after a call, and libgomp's (oneDNN, Eigen)
// spin before they sleep; on 2 cores whatever runs next in a round shares them with the
// spinners, so an implementation is slowed by the one before it. At 1024^3 float32 on 2
// threads, `OPENBLAS_THREAD_TIMEOUT=28 OMP_WAIT_POLICY=active linalg_bench --filter "mm 1024x"`
// gives mpsim Fast 226 GFLOP/s and OpenBLAS 231, against 417 and 412 with idle peers (oneDNN
// about 420 either way). So the benchmark re-executes itself with OPENBLAS_THREAD_TIMEOUT=4
// (2^4 cycles) and OMP_WAIT_POLICY=passive, which both libraries read when they load (each unless
// the caller set it); each call then wakes its threads, a few microseconds.
void make_peers_sleep_when_idle(char** argv) {
  bool set = false;
  auto set_default = [&set](const char* name, const char* value) {
    if (std::getenv(name) != nullptr) return;
    setenv(name, value, 1);
    set = true;
  };
  set_default("OPENBLAS_THREAD_TIMEOUT", "4");
  set_default("OMP_WAIT_POLICY", "passive");
  if (!set) return;
  execv("/proc/self/exe", argv);
  std::perror("linalg_bench: re-executing with idle peers");  // runs on with spinning peers
}

int main(int argc, char** argv) {
  make_peers_sleep_when_idle(argv);
  int threads = 2, rounds = 3;
  std::string filter;
  bool memory = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (arg == "--rounds" && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (arg == "--filter" && i + 1 < argc)
      filter = argv[++i];
    else if (arg == "--attention-memory")
      memory = true;
    else {
      std::fprintf(
          stderr,
          "usage: linalg_bench [--threads N] [--rounds R] [--filter S] [--attention-memory]\n");
      return 2;
    }
  }
  if (memory) {
    attention_memory();
    return 0;
  }
  set_num_threads(threads);
  openblas_set_num_threads(threads);
  Eigen::setNbThreads(threads);
  auto want = [&](const std::string& name) {
    return filter.empty() || name.find(filter) != std::string::npos;
  };
#if defined(__AVX512F__)
  if (want("peak")) {
    const double f32 = fma_peak(
        threads, 16, [](__m512 x, __m512 y, __m512 z) { return _mm512_fmadd_ps(x, y, z); },
        _mm512_set1_ps(1.0f), _mm512_set1_ps(0.999999f));
    const double f64 = fma_peak(
        threads, 8, [](__m512d x, __m512d y, __m512d z) { return _mm512_fmadd_pd(x, y, z); },
        _mm512_set1_pd(1.0), _mm512_set1_pd(0.999999));
    std::printf("{\"case\": \"peak\", \"impl\": \"fma f32\", \"threads\": %d, \"gflops\": %.1f}\n",
                threads, f32);
    std::printf("{\"case\": \"peak\", \"impl\": \"fma f64\", \"threads\": %d, \"gflops\": %.1f}\n",
                threads, f64);
  }
#endif
  const std::int64_t shapes[][3] = {{256, 256, 256},    {512, 512, 512},    {1024, 1024, 1024},
                                    {2048, 2048, 2048}, {4096, 4096, 1024}, {4096, 4096, 40},
                                    {4096, 40, 4096}};
  for (const auto& s : shapes) {
    const std::string name =
        "mm " + std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
    if (want(name)) gemm_case(s[0], s[1], s[2], rounds, threads);
  }
  // float32 convolutions in both memory formats. The depthwise ones after SD's: MobileNet's
  // shapes, rows narrower than a vector and a strided 5x5 kernel (the staged NCHW route; Note
  // [staged rows] in kernels_simd/depthwise_rows-inl.h).
  struct ConvCase {
    const char* name;
    Shape x, w;
    std::int64_t pad, groups, stride;
  };
  const ConvCase convs[] = {
      {"conv3x3 320->320 [1,320,64,64]", {1, 320, 64, 64}, {320, 320, 3, 3}, 1, 1, 1},
      {"conv1x1 320->320 [2,320,64,64]", {2, 320, 64, 64}, {320, 320, 1, 1}, 0, 1, 1},
      {"depthwise3x3 320 [2,320,64,64]", {2, 320, 64, 64}, {320, 1, 3, 3}, 1, 320, 1},
      {"depthwise3x3 1024 [8,1024,7,7]", {8, 1024, 7, 7}, {1024, 1, 3, 3}, 1, 1024, 1},
      {"depthwise3x3 512 [8,512,14,14]", {8, 512, 14, 14}, {512, 1, 3, 3}, 1, 512, 1},
      {"depthwise5x5 s2 240 [8,240,28,28]", {8, 240, 28, 28}, {240, 1, 5, 5}, 2, 240, 2}};
  for (bool cl : {false, true}) {
    for (const ConvCase& c : convs) {
      if (want(c.name)) {
        conv_case(c.name, c.x, c.w, c.pad, c.groups, cl, rounds, threads, DType::Float32,
                  c.stride);
      }
    }
  }
  // float16 through the GEMM (its packing widens every element, core/dtype.h); PyTorch 1.13 has
  // no float16 convolution on the CPU.
  if (want("f16 conv3x3")) {
    conv_case("f16 conv3x3 320->320 [1,320,64,64]", {1, 320, 64, 64}, {320, 320, 3, 3}, 1, 1, true,
              rounds, threads, DType::Float16);
  }
  // Depthwise in the other dtypes, on the same row kernels (Note [depthwise] in
  // kernels_simd/conv.cc).
  for (DType dt : {DType::BFloat16, DType::Float16, DType::Float64}) {
    const char* tag = dt == DType::BFloat16 ? "bf16" : dt == DType::Float16 ? "f16" : "f64";
    const std::string name = std::string(tag) + " depthwise3x3 320 [2,320,64,64]";
    for (bool cl : {false, true}) {
      if (want(name)) {
        conv_case(name, {2, 320, 64, 64}, {320, 1, 3, 3}, 1, 320, cl, rounds, threads, dt);
      }
    }
  }
  if (want("attention")) attention_case(rounds, threads);
  return 0;
}
