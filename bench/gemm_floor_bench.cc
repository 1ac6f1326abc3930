// What the float32 GEMM's and the depthwise convolution's arithmetic allow on one core of this
// machine, beside mpsim's kernels on one thread in the same process (docs/performance.md,
// "Limits"). Each GEMM case runs the engine's AVX-512 micro-tile (8 rows x 3 vectors of 16
// columns, one a value broadcast per row and step, Note [gemm tile] in
// kernels_simd/gemm-inl.h), written here with intrinsics:
// - fma_registers: 24 independent chains of FMAs on registers, no loads: the FMA peak;
// - kernel_l1: the micro-kernel over K = 128 with both packed panels in L1, its 24
//   accumulators loaded before and stored after, as the engine's K blocks do;
// - tile_hot: the engine's cache blocking with its packed operands already in cache: a tile
//   of 12 row panels x 12 column panels (96 x 576), K = 1024 in blocks of 128, the row panel
//   outer and the column panels streaming, the accumulator tile in memory between blocks;
// - mpsim_mm: mpsim::mm at 1024^3, Fast: the same arithmetic plus packing b, reading a, the
//   first touch of every operand and writing the output;
// - mpsim_conv3x3: mpsim::conv2d 3x3 320 -> 320 on a channels-last [1, 320, 64, 64], Fast,
//   with bias: the implicit GEMM reading x in place at each tap, each micro-tile's sums in
//   registers over the whole K (Note [conv in registers] in kernels_simd/gemm_engine-inl.h).
// The same for the depthwise 3x3 convolution, 320 channels of 64 x 64, channels-last, one
// image (Note [depthwise] in kernels_simd/conv.cc), every kernel keeping 8 adjacent outputs of
// one vector of channels in registers and reading each x vector once for its taps:
// - dw_l1: the arithmetic on 3 dense rows of one vector of channels in L1;
// - dw_in_place: x read in place (channels-last, zero-padded to 66 x 66), weights in
//   registers, one vector of channels at a time across the image;
// - dw_staged: the same, each x row's vector of channels first copied to a dense ring of 3
//   rows in L1 and read from there;
// - dw_same_layout: dw_in_place on an unpadded x and an out of one layout, both starting a
//   2 MiB page (as mpsim's tensors), the interior outputs; dw_same_layout_out_shifted: out
//   128 bytes further on;
// - mpsim_depthwise: mpsim::conv2d with groups 320 on a channels-last [1, 320, 64, 64], Fast,
//   with bias.
// Run with MPSIM_NUM_THREADS=1 (bench/report.py does): the floors are one core's. The scratch
// kernels need AVX-512 (built with -march=native); elsewhere only the mpsim cases run.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "bench/bench_main.h"
#include "core/mpsim.h"

namespace {

// Floating-point operations per second, from the iteration's count.
void count_flops(benchmark::State& state, double flops) {
  state.counters["FLOP/s"] = benchmark::Counter(
      flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void BM_mpsim_mm(benchmark::State& state) {
  const mpsim::Tensor a = mpsim::randn({1024, 1024}), b = mpsim::randn({1024, 1024});
  mpsim::PrecisionGuard fast(mpsim::Precision::Fast);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::mm(a, b));
  count_flops(state, 2.0 * 1024 * 1024 * 1024);
}
BENCHMARK(BM_mpsim_mm)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_mpsim_conv3x3(benchmark::State& state) {
  const mpsim::Tensor x =
      mpsim::randn({1, 320, 64, 64}).permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  const mpsim::Tensor w = mpsim::randn({320, 320, 3, 3}), b = mpsim::randn({320});
  mpsim::PrecisionGuard fast(mpsim::Precision::Fast);
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::conv2d(x, w, b, {1, 1}, {1, 1}));
  count_flops(state, 2.0 * 4096 * 320 * 320 * 9);
}
BENCHMARK(BM_mpsim_conv3x3)->Unit(benchmark::kMillisecond)->UseRealTime();

constexpr int kDwSize = 64, kDwChannels = 320;
constexpr double kDwFlops = 2.0 * 9 * kDwSize * kDwSize * kDwChannels;

void BM_mpsim_depthwise(benchmark::State& state) {
  const mpsim::Tensor x = mpsim::randn({1, kDwChannels, kDwSize, kDwSize})
                              .permute({0, 2, 3, 1})
                              .contiguous()
                              .permute({0, 3, 1, 2});
  const mpsim::Tensor w = mpsim::randn({kDwChannels, 1, 3, 3}), b = mpsim::randn({kDwChannels});
  mpsim::PrecisionGuard fast(mpsim::Precision::Fast);
  for (auto _ : state) {
    benchmark::DoNotOptimize(mpsim::conv2d(x, w, b, {1, 1}, {1, 1}, {1, 1}, kDwChannels));
  }
  count_flops(state, kDwFlops);
}
BENCHMARK(BM_mpsim_depthwise)->Unit(benchmark::kMillisecond)->UseRealTime();

#if defined(__AVX512F__)
constexpr int kRows = 8, kVecs = 3, kNr = 16 * kVecs, kKc = 128;

// acc (kRows x kNr) = (load ? acc : 0) + a @ b over kc steps: the engine's micro-kernel.
__attribute__((noinline)) void micro_kernel(const float* __restrict a, const float* __restrict b,
                                            int kc, float* __restrict acc, bool load) {
  __m512 c[kRows][kVecs];
#pragma GCC unroll 32
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      c[r][v] = load ? _mm512_loadu_ps(acc + r * kNr + v * 16) : _mm512_setzero_ps();
    }
  }
  for (int k = 0; k < kc; ++k) {
    __m512 bv[kVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      _mm_prefetch(reinterpret_cast<const char*>(b + 16 * kNr + v * 16), _MM_HINT_T0);
      bv[v] = _mm512_load_ps(b + v * 16);
    }
#pragma GCC unroll 32
    for (int r = 0; r < kRows; ++r) {
      const __m512 ar = _mm512_set1_ps(a[r]);
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) c[r][v] = _mm512_fmadd_ps(ar, bv[v], c[r][v]);
    }
    a += kRows;
    b += kNr;
  }
#pragma GCC unroll 32
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) _mm512_storeu_ps(acc + r * kNr + v * 16, c[r][v]);
  }
}

float* filled(std::size_t n, float value) {
  auto* p = static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64));
  for (std::size_t i = 0; i < n; ++i) p[i] = value;
  return p;
}

void BM_fma_registers(benchmark::State& state) {
  const __m512 x = _mm512_set1_ps(1e-7f), y = _mm512_set1_ps(0.999f);
  for (auto _ : state) {
    __m512 c[24];
    for (auto& v : c) v = _mm512_setzero_ps();
    for (int i = 0; i < 4096; ++i) {
#pragma GCC unroll 24
      for (auto& v : c) v = _mm512_fmadd_ps(v, y, x);
    }
    for (auto& v : c) benchmark::DoNotOptimize(v);
  }
  count_flops(state, 2.0 * 16 * 24 * 4096);
}
BENCHMARK(BM_fma_registers)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_kernel_l1(benchmark::State& state) {
  float* a = filled(kRows * kKc, 1e-3f);
  float* b = filled(std::size_t{kNr} * kKc + 16 * kNr, 1e-3f);
  float* acc = filled(kRows * kNr, 0);
  for (auto _ : state) {
    for (int i = 0; i < 64; ++i) micro_kernel(a, b, kKc, acc, true);
    benchmark::DoNotOptimize(acc);
  }
  count_flops(state, 2.0 * kRows * kNr * kKc * 64);
  std::free(a), std::free(b), std::free(acc);
}
BENCHMARK(BM_kernel_l1)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_tile_hot(benchmark::State& state) {
  constexpr int kRowPanels = 12, kColPanels = 12, kK = 1024, kBlocks = kK / kKc;
  float* a = filled(std::size_t{kRowPanels} * kRows * kK, 1e-3f);
  float* b = filled(std::size_t{kColPanels} * kNr * kK + 16 * kNr, 1e-3f);
  float* acc = filled(std::size_t{kRowPanels} * kColPanels * kRows * kNr, 0);
  for (auto _ : state) {
    for (int blk = 0; blk < kBlocks; ++blk) {
      for (int ip = 0; ip < kRowPanels; ++ip) {
        for (int jp = 0; jp < kColPanels; ++jp) {
          micro_kernel(a + (static_cast<std::size_t>(blk) * kRowPanels + ip) * kRows * kKc,
                       b + (static_cast<std::size_t>(blk) * kColPanels + jp) * kNr * kKc, kKc,
                       acc + (static_cast<std::size_t>(ip) * kColPanels + jp) * kRows * kNr,
                       blk > 0);
        }
      }
    }
    benchmark::DoNotOptimize(acc);
  }
  count_flops(state, 2.0 * kRowPanels * kRows * kColPanels * kNr * kK);
  std::free(a), std::free(b), std::free(acc);
}
BENCHMARK(BM_tile_hot)->Unit(benchmark::kMillisecond)->UseRealTime();

constexpr int kDwPixels = 8, kDwPadded = kDwSize + 2;

// Outputs j .. j + 7 of one vector of channels: rows[kh] points at the x vector under tap
// (kh, 0) of output j; `step` floats from one column to the next. Each x vector is read once
// and feeds the (up to) three outputs whose taps lie on it.
template <int kStep>
inline void dw_pixels(const float* const (&rows)[3], const __m512 (&w)[9], float* out,
                      int out_step) {
  __m512 acc[kDwPixels];
#pragma GCC unroll 8
  for (auto& v : acc) v = _mm512_setzero_ps();
#pragma GCC unroll 3
  for (int kh = 0; kh < 3; ++kh) {
#pragma GCC unroll 10
    for (int t = 0; t < kDwPixels + 2; ++t) {
      const __m512 xv = _mm512_loadu_ps(rows[kh] + t * kStep);
#pragma GCC unroll 8
      for (int b = 0; b < kDwPixels; ++b) {
        if (t >= b && t - b < 3) acc[b] = _mm512_fmadd_ps(xv, w[kh * 3 + t - b], acc[b]);
      }
    }
  }
#pragma GCC unroll 8
  for (int b = 0; b < kDwPixels; ++b) _mm512_storeu_ps(out + b * out_step, acc[b]);
}

void load_weights(const float* w, int c, __m512 (&v)[9]) {
  for (int t = 0; t < 9; ++t) v[t] = _mm512_loadu_ps(w + t * kDwChannels + c);
}

void BM_dw_l1(benchmark::State& state) {
  float* ring = filled(3 * kDwPadded * 16, 1e-2f);
  float* out = filled(kDwSize * 16, 0);
  float* w = filled(9 * kDwChannels, 0.5f);
  __m512 wv[9];
  load_weights(w, 0, wv);
  for (auto _ : state) {
    for (int rep = 0; rep < kDwSize * kDwChannels / 16; ++rep) {
      for (int j = 0; j < kDwSize; j += kDwPixels) {
        const float* rows[3] = {ring + j * 16, ring + (kDwPadded + j) * 16,
                                ring + (2 * kDwPadded + j) * 16};
        dw_pixels<16>(rows, wv, out + j * 16, 16);
      }
    }
    benchmark::DoNotOptimize(out);
  }
  count_flops(state, kDwFlops);
  std::free(ring), std::free(out), std::free(w);
}
BENCHMARK(BM_dw_l1)->Unit(benchmark::kMillisecond)->UseRealTime();

constexpr int kDwRow = kDwPadded * kDwChannels;  // floats in a row of the padded image

// The benchmark over one padded channels-last image x [66, 66, 320] into out [64, 64, 320]:
// each iteration calls per_vector(x, out, weights, c) for every vector of 16 channels from c,
// with that vector's 9 weights.
template <class PerVector>
void dw_image(benchmark::State& state, PerVector per_vector) {
  float* x = filled(std::size_t{kDwPadded} * kDwRow, 1e-2f);
  float* out = filled(std::size_t{kDwSize} * kDwSize * kDwChannels, 0);
  float* w = filled(9 * kDwChannels, 0.5f);
  for (auto _ : state) {
    for (int c = 0; c < kDwChannels; c += 16) {
      __m512 wv[9];
      load_weights(w, c, wv);
      per_vector(x, out, wv, c);
    }
    benchmark::DoNotOptimize(out);
  }
  count_flops(state, kDwFlops);
  std::free(x), std::free(out), std::free(w);
}

void BM_dw_in_place(benchmark::State& state) {
  dw_image(state, [](const float* x, float* out, const __m512(&wv)[9], int c) {
    for (int i = 0; i < kDwSize; ++i) {
      for (int j = 0; j < kDwSize; j += kDwPixels) {
        const float* at = x + i * kDwRow + j * kDwChannels + c;
        const float* rows[3] = {at, at + kDwRow, at + 2 * kDwRow};
        dw_pixels<kDwChannels>(rows, wv, out + (i * kDwSize + j) * kDwChannels + c, kDwChannels);
      }
    }
  });
}
BENCHMARK(BM_dw_in_place)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_dw_staged(benchmark::State& state) {
  float* ring = filled(3 * kDwPadded * 16, 0);
  dw_image(state, [ring](const float* x, float* out, const __m512(&wv)[9], int c) {
    const auto stage = [&](int ih) {
      float* dst = ring + (ih % 3) * kDwPadded * 16;
      for (int col = 0; col < kDwPadded; ++col) {
        _mm512_store_ps(dst + col * 16, _mm512_loadu_ps(x + ih * kDwRow + col * kDwChannels + c));
      }
    };
    stage(0), stage(1);
    for (int i = 0; i < kDwSize; ++i) {
      stage(i + 2);
      for (int j = 0; j < kDwSize; j += kDwPixels) {
        const float* rows[3] = {ring + ((i % 3) * kDwPadded + j) * 16,
                                ring + (((i + 1) % 3) * kDwPadded + j) * 16,
                                ring + (((i + 2) % 3) * kDwPadded + j) * 16};
        dw_pixels<16>(rows, wv, out + (i * kDwSize + j) * kDwChannels + c, kDwChannels);
      }
    }
  });
  std::free(ring);
}
BENCHMARK(BM_dw_staged)->Unit(benchmark::kMillisecond)->UseRealTime();

// dw_in_place on x and out in one layout, unpadded [64, 64, 320] each, both starting a 2 MiB
// page as mpsim's allocator places them (out `shift` bytes on): the interior outputs, rows 1
// to 62 and columns 1 to 56 (8-pixel blocks), whose taps all lie in x. A load of x then falls
// 4 KiB multiples away from the out stores just issued for the same pixel, and waits for them
// (AMD's and Intel's "4K aliasing"); out 128 bytes on, none does.
void dw_same_layout(benchmark::State& state, std::size_t shift) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  constexpr int kRow = kDwSize * kDwChannels;
  const std::size_t bytes =
      (std::size_t{kDwSize} * kRow * sizeof(float) + shift + kHuge - 1) / kHuge * kHuge;
  auto* x = static_cast<float*>(std::aligned_alloc(kHuge, bytes));
  auto* raw = static_cast<char*>(std::aligned_alloc(kHuge, bytes));
  float* out = reinterpret_cast<float*>(raw + shift);
  for (std::size_t i = 0; i < std::size_t{kDwSize} * kRow; ++i) x[i] = 1e-2f, out[i] = 0;
  float* w = filled(9 * kDwChannels, 0.5f);
  for (auto _ : state) {
    for (int c = 0; c < kDwChannels; c += 16) {
      __m512 wv[9];
      load_weights(w, c, wv);
      for (int i = 1; i < kDwSize - 1; ++i) {
        for (int j = 1; j + kDwPixels <= kDwSize - 1; j += kDwPixels) {
          const float* at = x + (i - 1) * kRow + (j - 1) * kDwChannels + c;
          const float* rows[3] = {at, at + kRow, at + 2 * kRow};
          dw_pixels<kDwChannels>(rows, wv, out + (i * kDwSize + j) * kDwChannels + c, kDwChannels);
        }
      }
    }
    benchmark::DoNotOptimize(out);
  }
  count_flops(state, 2.0 * 9 * (kDwSize - 2) * 56 * kDwChannels);
  std::free(x), std::free(raw), std::free(w);
}

void BM_dw_same_layout(benchmark::State& state) { dw_same_layout(state, 0); }
BENCHMARK(BM_dw_same_layout)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_dw_same_layout_out_shifted(benchmark::State& state) { dw_same_layout(state, 128); }
BENCHMARK(BM_dw_same_layout_out_shifted)->Unit(benchmark::kMillisecond)->UseRealTime();
#endif

}  // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv); }
