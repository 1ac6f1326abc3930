// What layer_norm's memory and arithmetic allow on this machine, beside mpsim's layer_norm
// in the same process (docs/performance.md, "Limits"). On [2, 4096, 320] float
// rows (10.5 MiB in, 10.5 MiB out, L3-resident), split over the threads as mpsim splits them:
// - copy_memcpy / copy_stream: the bytes alone (memcpy; AVX-512 streaming stores);
// - no_dependency: layer_norm's float64 arithmetic (one statistics pass about a shift, then
//   ((x - mean) * rstd) * w + b, streaming stores) with each row's output made from the
//   registers its statistics came from and fixed statistics: what the arithmetic and the
//   memory cost when nothing waits. Not a layer_norm: its outputs are wrong.
// - two_stage: a real layer_norm in two stages (statistics of row k about x[k][0], output
//   of row k - 2 from a ring of widened rows): the fewest stages a correct layer_norm needs;
// - three_stage: the same with mpsim's three (pass 1 the mean, pass 2 the deviations about
//   it, output of row k - 4);
// - mpsim: mpsim::layer_norm itself (its output allocated through the caching allocator).
// Threads: MPSIM_NUM_THREADS (default: all). The scratch kernels need AVX-512 (built with
// -march=native); elsewhere only copy_memcpy and mpsim run.
#include <benchmark/benchmark.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <sys/mman.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "bench/bench_main.h"
#include "core/mpsim.h"

namespace {

constexpr int kRows = 2 * 4096, kCols = 320;

struct Data {
  float *x, *y;  // 2 MiB aligned, huge pages advised: as mpsim's host allocator gives
  alignas(64) double w[kCols], b[kCols];
  Data() {
    const std::size_t bytes = (std::size_t{kRows} * kCols * sizeof(float) + kHuge - 1) / kHuge * kHuge;
    x = static_cast<float*>(std::aligned_alloc(kHuge, bytes));
    y = static_cast<float*>(std::aligned_alloc(kHuge, bytes));
    madvise(x, bytes, MADV_HUGEPAGE);
    madvise(y, bytes, MADV_HUGEPAGE);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (std::size_t i = 0; i < std::size_t{kRows} * kCols; ++i) x[i] = dist(rng), y[i] = 0;
    for (int i = 0; i < kCols; ++i) {
      w[i] = 1 + dist(rng) / 8;
      b[i] = dist(rng) / 8;
    }
  }
  float* xs() { return x; }
  float* ys() { return y; }
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
};

Data& data() {
  static Data d;
  return d;
}

// Rows [0, kRows) in mpsim::num_threads() equal parts, one task each.
template <class F>
void over_threads(F&& rows) {
  const int parts = mpsim::num_threads();
  static tbb::task_arena arena(parts);
  arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int>(0, parts, 1),
        [&](const tbb::blocked_range<int>& r) {
          for (int p = r.begin(); p < r.end(); ++p) {
            rows(kRows / parts * p, p + 1 == parts ? kRows : kRows / parts * (p + 1));
          }
        },
        tbb::simple_partitioner());
  });
}

void BM_copy_memcpy(benchmark::State& state) {
  Data& d = data();
  for (auto _ : state) {
    over_threads([&](int r0, int r1) {
      std::memcpy(d.ys() + std::size_t(r0) * kCols, d.xs() + std::size_t(r0) * kCols,
                  std::size_t(r1 - r0) * kCols * sizeof(float));
    });
  }
}
BENCHMARK(BM_copy_memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_mpsim(benchmark::State& state) {
  std::vector<float> v(data().x, data().x + std::size_t{kRows} * kCols);
  const mpsim::Tensor x = mpsim::from_vector(v, {2, 4096, kCols});
  for (auto _ : state) benchmark::DoNotOptimize(mpsim::layer_norm(x, {kCols}));
}
BENCHMARK(BM_mpsim)->Unit(benchmark::kMillisecond)->UseRealTime();

#if defined(__AVX512F__)
// ((x - mean) * rstd) * w + b for the 8 doubles at v, streamed to y as floats.
template <bool kFma = true>
inline void output8(__m512d v, __m512d mean, __m512d rstd, const double* w, const double* b,
                    float* y) {
  const __m512d t = _mm512_mul_pd(_mm512_sub_pd(v, mean), rstd);
  __m512d r;
  if constexpr (kFma) {
    r = _mm512_fmadd_pd(t, _mm512_load_pd(w), _mm512_load_pd(b));
  } else {  // mpsim's: no contraction (the same bits on targets without FMA)
    r = _mm512_add_round_pd(_mm512_mul_round_pd(t, _mm512_load_pd(w), _MM_FROUND_CUR_DIRECTION),
                            _mm512_load_pd(b), _MM_FROUND_CUR_DIRECTION);
  }
  _mm256_stream_ps(y, _mm512_cvtpd_ps(r));
}

inline __m512d widen(const float* x) { return _mm512_cvtps_pd(_mm256_load_ps(x)); }

double g_sink;

void BM_copy_stream(benchmark::State& state) {
  Data& d = data();
  for (auto _ : state) {
    over_threads([&](int r0, int r1) {
      for (std::size_t i = std::size_t(r0) * kCols; i < std::size_t(r1) * kCols; i += 16) {
        _mm512_stream_ps(d.ys() + i, _mm512_load_ps(d.xs() + i));
      }
      _mm_sfence();
    });
  }
}
BENCHMARK(BM_copy_stream)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_no_dependency(benchmark::State& state) {
  Data& d = data();
  for (auto _ : state) {
    over_threads([&](int r0, int r1) {
      const __m512d mean = _mm512_set1_pd(0.01), rstd = _mm512_set1_pd(1.7);
      double sink = 0;
      for (int r = r0; r < r1; ++r) {
        const float* x = d.xs() + std::size_t(r) * kCols;
        float* y = d.ys() + std::size_t(r) * kCols;
        const __m512d shift = _mm512_set1_pd(x[0]);
        __m512d s0 = _mm512_setzero_pd(), s1 = s0, q0 = s0, q1 = s0;
        auto step = [&](int i, __m512d& s, __m512d& q) {
          const __m512d v = widen(x + i), t = _mm512_sub_pd(v, shift);
          s = _mm512_add_pd(s, t);
          q = _mm512_fmadd_pd(t, t, q);
          output8(v, mean, rstd, d.w + i, d.b + i, y + i);
        };
        for (int i = 0; i < kCols; i += 16) {
          step(i, s0, q0);
          step(i + 8, s1, q1);
        }
        const double m = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1)) / kCols;
        sink += 1.0 / std::sqrt(_mm512_reduce_add_pd(_mm512_add_pd(q0, q1)) / kCols - m * m + 1e-5);
      }
      _mm_sfence();
      g_sink += sink;
    });
  }
}
BENCHMARK(BM_no_dependency)->Unit(benchmark::kMillisecond)->UseRealTime();

// kStages 2: statistics of row k about x[k][0] in one pass (widening into the ring), output
// of row k - 2. kStages 3: pass 1 (widen, sum) of row k, pass 2 (deviations about the mean)
// of row k - 2, output of row k - 4. One loop over the row runs every stage.
// a + b * c, fused or (kFma false) rounded twice as mpsim rounds it.
template <bool kFma>
inline __m512d mul_add(__m512d b, __m512d c, __m512d a) {
  if constexpr (kFma) return _mm512_fmadd_pd(b, c, a);
  return _mm512_add_round_pd(a, _mm512_mul_round_pd(b, c, _MM_FROUND_CUR_DIRECTION),
                             _MM_FROUND_CUR_DIRECTION);
}

template <int kStages, bool kFma>
void layer_norm_rows(Data& d, int r0, int r1) {
  constexpr int kLag = 2, kDepth = (kStages - 1) * kLag + 1;
  alignas(64) static thread_local double ring[kDepth][kCols];
  double m1[kDepth] = {}, mean[kDepth] = {}, rstd[kDepth] = {};
  for (int k = 0; k < r1 - r0 + (kStages - 1) * kLag; ++k) {
    const bool s1 = k < r1 - r0, s3 = k >= (kStages - 1) * kLag;
    const bool s2 = kStages == 3 && k >= kLag && k - kLag < r1 - r0;
    const int j1 = k % kDepth, j2 = (k + kDepth - kLag) % kDepth,
              j3 = (k + kDepth - (kStages - 1) * kLag) % kDepth;
    const float* x = d.xs() + std::size_t(r0 + k) * kCols;
    float* y = d.ys() + std::size_t(r0 + k - (kStages - 1) * kLag) * kCols;
    const __m512d shift = _mm512_set1_pd(s1 ? x[0] : 0.0), vm1 = _mm512_set1_pd(m1[j2]);
    const __m512d vmean = _mm512_set1_pd(mean[j3]), vrstd = _mm512_set1_pd(rstd[j3]);
    __m512d a = _mm512_setzero_pd(), q = a, b = a, c = a;
    for (int i = 0; i < kCols; i += 8) {
      if (s1) {
        const __m512d v = widen(x + i);
        _mm512_store_pd(ring[j1] + i, v);
        if constexpr (kStages == 2) {
          const __m512d t = _mm512_sub_pd(v, shift);
          a = _mm512_add_pd(a, t);
          q = mul_add<kFma>(t, t, q);
        } else {
          a = _mm512_add_pd(a, v);
        }
      }
      if (s2) {
        const __m512d t = _mm512_sub_pd(_mm512_load_pd(ring[j2] + i), vm1);
        b = _mm512_add_pd(b, t);
        c = mul_add<kFma>(t, t, c);
      }
      if (s3) output8<kFma>(_mm512_load_pd(ring[j3] + i), vmean, vrstd, d.w + i, d.b + i, y + i);
    }
    auto finish = [&](int j, double center, __m512d sum, __m512d sq) {
      const double e = _mm512_reduce_add_pd(sum) / kCols;
      const double var = _mm512_reduce_add_pd(sq) / kCols - e * e;
      mean[j] = center + e;
      rstd[j] = 1.0 / std::sqrt((var < 0 ? 0.0 : var) + 1e-5);
    };
    if (kStages == 2 && s1) finish(j1, x[0], a, q);
    if (kStages == 3 && s1) m1[j1] = _mm512_reduce_add_pd(a) / kCols;
    if (s2) finish(j2, m1[j2], b, c);
  }
  _mm_sfence();
}

template <int kStages, bool kFma>
void BM_layer_norm_stages(benchmark::State& state) {
  Data& d = data();
  for (auto _ : state) over_threads([&](int r0, int r1) { layer_norm_rows<kStages, kFma>(d, r0, r1); });
  // The last row against a float64 oracle: a wrong kernel is not a floor.
  const float* x = d.xs() + std::size_t(kRows - 1) * kCols;
  double m = 0, v = 0;
  for (int i = 0; i < kCols; ++i) m += x[i];
  m /= kCols;
  for (int i = 0; i < kCols; ++i) v += (x[i] - m) * (x[i] - m);
  const double rstd = 1 / std::sqrt(v / kCols + 1e-5);
  for (int i = 0; i < kCols; ++i) {
    const double want = (x[i] - m) * rstd * d.w[i] + d.b[i];
    if (std::fabs(d.ys()[std::size_t(kRows - 1) * kCols + i] - want) > 1e-5 * (1 + std::fabs(want))) {
      state.SkipWithError("wrong output");
      return;
    }
  }
}
BENCHMARK_TEMPLATE(BM_layer_norm_stages, 2, true)->Name("BM_two_stage")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_layer_norm_stages, 3, true)->Name("BM_three_stage")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_layer_norm_stages, 3, false)->Name("BM_three_stage_unfused")->Unit(benchmark::kMillisecond)->UseRealTime();
#endif

}  // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv); }
