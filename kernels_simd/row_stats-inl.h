// Per-target pieces shared by the row primitives of row_stats.h (row_sums.cc, row_softmax.cc,
// row_group_norm.cc, row_layer_norm.cc): the double vector of a row's floats, the rounded float
// store, and the lane accumulation of Note [sum lanes] with the sums built on it. Included
// after `hwy/foreach_target.h`; opens HWY_NAMESPACE itself.
#if defined(MPSIM_KERNELS_SIMD_ROW_STATS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPSIM_KERNELS_SIMD_ROW_STATS_INL_H_
#undef MPSIM_KERNELS_SIMD_ROW_STATS_INL_H_
#else
#define MPSIM_KERNELS_SIMD_ROW_STATS_INL_H_
#endif

#include <cmath>
#include <cstddef>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/row_stats.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DD = hn::CappedTag<double, 8>;
using DF = hn::Rebind<float, DD>;

// The doubles of the floats at x (as many as DD has lanes).
HWY_INLINE hn::Vec<DD> LoadWide(const float* x) { return hn::PromoteTo(DD(), hn::LoadU(DF(), x)); }
// A row's values as doubles: floats widened, or a row already widened (Note [widened rows]).
HWY_INLINE hn::Vec<DD> LoadWide(const double* x) { return hn::LoadU(DD(), x); }
// Row tails under a mask (count below DD's lanes), touching nothing beyond them: AVX2 and
// AVX-512 load and store under a mask; elsewhere a copy through a stack buffer. On x86 that
// copy cost a sixth of log_softmax's time over rows of 77 floats: the load waits for the copy's
// stores to retire, and GCC turns the copy back into a memmove call (`perf record` of
// bench/torch_sweep.py's "log_softmax [.,77]").
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
inline constexpr bool kMaskedTails = true;
#else
inline constexpr bool kMaskedTails = false;
#endif
// The doubles of the first `count` floats at x, zero in the other lanes.
HWY_INLINE hn::Vec<DD> LoadWideFirst(const float* x, std::size_t count) {
  if constexpr (kMaskedTails) {
    return hn::PromoteTo(DD(), hn::MaskedLoad(hn::FirstN(DF(), count), DF(), x));
  }
  HWY_ALIGN float tail[hn::MaxLanes(DF())] = {};
  for (std::size_t j = 0; j < count; ++j) tail[j] = x[j];
  return LoadWide(tail);
}
// The first `count` doubles at x, zero in the other lanes.
HWY_INLINE hn::Vec<DD> LoadFirst(const double* x, std::size_t count) {
  if constexpr (kMaskedTails) return hn::MaskedLoad(hn::FirstN(DD(), count), DD(), x);
  HWY_ALIGN double tail[hn::MaxLanes(DD())] = {};
  for (std::size_t j = 0; j < count; ++j) tail[j] = x[j];
  return hn::Load(DD(), tail);
}
// The first `count` lanes of v at p.
template <class D>
HWY_INLINE void StoreFirst(hn::Vec<D> v, D d, hn::TFromD<D>* p, std::size_t count) {
  if constexpr (kMaskedTails) {
    hn::BlendedStore(v, hn::FirstN(d, count), d, p);
    return;
  }
  HWY_ALIGN hn::TFromD<D> out[hn::MaxLanes(d)];
  hn::Store(v, d, out);
  for (std::size_t j = 0; j < count; ++j) p[j] = out[j];
}

// Stores the doubles r rounded to float at y. DemoteTo rounds in range, but Highway's scalar
// and emu128 targets clamp infinities and overflowing values to +-FLT_MAX: there, lanes at or
// beyond the overflow threshold (FLT_MAX + half an ulp), and NaN, are converted one by one.
// stream: a streaming store (y aligned to the float vector; Note [streaming stores]), for a
// float vector of at least 16 bytes.
HWY_INLINE void StoreRounded(hn::Vec<DD> r, float* y, bool stream = false) {
  const DD dd;
  constexpr bool kStreamable = hn::MaxLanes(DF()) * sizeof(float) >= 16;
  if (kStreamable && stream) {
    hn::Stream(hn::DemoteTo(DF(), r), DF(), y);
  } else {
    hn::StoreU(hn::DemoteTo(DF(), r), DF(), y);
  }
#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  // The other targets' conversion instructions (cvtpd2ps, fcvtn) round to +-inf themselves.
  return;
#endif
  const auto wide = hn::Not(hn::Lt(hn::Abs(r), hn::Set(dd, 0x1.ffffffp127)));
  if (HWY_UNLIKELY(!hn::AllFalse(dd, wide))) {
    HWY_ALIGN double v[HWY_MAX_BYTES / sizeof(double)];
    hn::Store(r, dd, v);
    for (std::size_t j = 0; j < hn::Lanes(dd); ++j) {
      y[j] = std::isnan(v[j]) || std::fabs(v[j]) < 0x1.ffffffp127
                 ? static_cast<float>(v[j])
                 : (v[j] < 0 ? -INFINITY : INFINITY);
    }
  }
}

// Neumaier::add (row_stats.h) in lanes: the same operations and selections.
HWY_INLINE void NeumaierAdd(hn::Vec<DD>& sum, hn::Vec<DD>& comp, hn::Vec<DD> x) {
  const auto t = hn::Add(sum, x);
  const auto sum_bigger = hn::Ge(hn::Abs(sum), hn::Abs(x));
  const auto c =
      hn::Add(hn::Sub(hn::IfThenElse(sum_bigger, sum, x), t), hn::IfThenElse(sum_bigger, x, sum));
  comp = hn::Add(comp, hn::IfThenElseZero(hn::IsFinite(t), c));
  sum = t;
}

// Note [sum lanes]: lanes[i % 32] += term(i) for the 32-aligned part of [0, n), where term(i)
// gives the terms i .. i + Lanes - 1 as a vector; then lanes[i % 32] += scalar(i) for the
// tail. Named accumulators (not an array: scalable vectors cannot form one), K = 32 / Lanes of
// them; targets with fewer than 4 double lanes run the scalar loop, the same additions.
// Elements ahead that a streaming pass prefetches: 8 KiB of floats. The hardware prefetcher alone
// leaves a row sum of [4096, 4096] slower (bench/: sum_case/last). Both lines of each block of 32
// floats: prefetching one of the two leaves sum_case/last slower and noisier
// (`MPSIM_NUM_THREADS=2 build-bench/bench/elementwise_bench --benchmark_filter=sum_case/last`,
// alternated; docs/measurements.md).
constexpr std::size_t kPrefetchAhead = 2048;

// Stores a lane set held in named vectors (Note [sum lanes]): v0..v3, and v4..v7 where a set
// takes eight vectors (AVX2).
template <class V>
HWY_INLINE void StoreLaneSet(double* lanes, bool eight, V v0, V v1, V v2, V v3, V v4, V v5, V v6,
                             V v7) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  hn::StoreU(v0, dd, lanes);
  hn::StoreU(v1, dd, lanes + N);
  hn::StoreU(v2, dd, lanes + 2 * N);
  hn::StoreU(v3, dd, lanes + 3 * N);
  if (eight) {
    hn::StoreU(v4, dd, lanes + 4 * N);
    hn::StoreU(v5, dd, lanes + 5 * N);
    hn::StoreU(v6, dd, lanes + 6 * N);
    hn::StoreU(v7, dd, lanes + 7 * N);
  }
}

// `stream`, when given, is the float array the terms read: prefetched kPrefetchAhead ahead
// (both lines of each block of 32).
// `next_row`, when given, is a float row prefetched at the pace the terms go (both lines of
// each block of 32), so that the next row arrives while this one computes (softmax).
template <class Term, class ScalarTerm>
HWY_INLINE void AccumulateLanes(std::size_t n, double lanes[kSumLanes], Term term,
                                ScalarTerm scalar, const float* stream = nullptr,
                                const float* next_row = nullptr) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  std::size_t i = 0;
  if (N >= 4) {
    const std::size_t K = kSumLanes / N;  // 4 or 8
    auto a0 = hn::LoadU(dd, lanes), a1 = hn::LoadU(dd, lanes + N),
         a2 = hn::LoadU(dd, lanes + 2 * N), a3 = hn::LoadU(dd, lanes + 3 * N);
    auto a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    if (K > 4) {
      a4 = hn::LoadU(dd, lanes + 4 * N);
      a5 = hn::LoadU(dd, lanes + 5 * N);
      a6 = hn::LoadU(dd, lanes + 6 * N);
      a7 = hn::LoadU(dd, lanes + 7 * N);
    }
    for (; i + kSumLanes <= n; i += kSumLanes) {
      if (stream != nullptr) {  // hints: never fault
        hwy::Prefetch(stream + i + kPrefetchAhead);
        hwy::Prefetch(stream + i + kPrefetchAhead + 16);
      }
      if (next_row != nullptr) {
        hwy::Prefetch(next_row + i);
        hwy::Prefetch(next_row + i + 16);
      }
      a0 = hn::Add(a0, term(i));
      a1 = hn::Add(a1, term(i + N));
      a2 = hn::Add(a2, term(i + 2 * N));
      a3 = hn::Add(a3, term(i + 3 * N));
      if (K > 4) {
        a4 = hn::Add(a4, term(i + 4 * N));
        a5 = hn::Add(a5, term(i + 5 * N));
        a6 = hn::Add(a6, term(i + 6 * N));
        a7 = hn::Add(a7, term(i + 7 * N));
      }
    }
    StoreLaneSet(lanes, K > 4, a0, a1, a2, a3, a4, a5, a6, a7);
  }
  for (; i < n; ++i) lanes[i % kSumLanes] += scalar(i);
}

// lanes[i % 32] += x[i] (or x[i]^2 when squares): sum_lanes_f32's body, also the first pass
// of the normalizations' rows.
HWY_INLINE void SumLanes(const float* x, std::size_t n, bool squares, double lanes[kSumLanes]) {
  if (squares) {
    AccumulateLanes(
        n, lanes,
        [x](std::size_t i) {
          const auto v = LoadWide(x + i);
          return hn::Mul(v, v);
        },
        [x](std::size_t i) { return static_cast<double>(x[i]) * x[i]; }, x);
  } else {
    AccumulateLanes(
        n, lanes, [x](std::size_t i) { return LoadWide(x + i); },
        [x](std::size_t i) { return static_cast<double>(x[i]); }, x);
  }
}

// lanes_d[i % 32] += d and lanes_q[i % 32] += d^2, d = x[i] - center, in one pass (the corrected
// two-pass statistics of the normalizations, Note [normalization statistics]). The same lane
// rule as AccumulateLanes (Note [sum lanes]): vectors of 4 or 8 double lanes, else a plain loop.
template <class T>
HWY_INLINE void CenteredMomentsLanes(const T* x, std::size_t n, double center,
                                     double lanes_d[kSumLanes], double lanes_q[kSumLanes]) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  const auto c = hn::Set(dd, center);
  std::size_t i = 0;
  if (N >= 4) {
    const bool eight = kSumLanes / N == 8;  // AVX2: 8 vectors per lane set
    auto d0 = hn::LoadU(dd, lanes_d), d1 = hn::LoadU(dd, lanes_d + N),
         d2 = hn::LoadU(dd, lanes_d + 2 * N), d3 = hn::LoadU(dd, lanes_d + 3 * N);
    auto q0 = hn::LoadU(dd, lanes_q), q1 = hn::LoadU(dd, lanes_q + N),
         q2 = hn::LoadU(dd, lanes_q + 2 * N), q3 = hn::LoadU(dd, lanes_q + 3 * N);
    auto d4 = d0, d5 = d0, d6 = d0, d7 = d0, q4 = q0, q5 = q0, q6 = q0, q7 = q0;
    if (eight) {
      d4 = hn::LoadU(dd, lanes_d + 4 * N);
      d5 = hn::LoadU(dd, lanes_d + 5 * N);
      d6 = hn::LoadU(dd, lanes_d + 6 * N);
      d7 = hn::LoadU(dd, lanes_d + 7 * N);
      q4 = hn::LoadU(dd, lanes_q + 4 * N);
      q5 = hn::LoadU(dd, lanes_q + 5 * N);
      q6 = hn::LoadU(dd, lanes_q + 6 * N);
      q7 = hn::LoadU(dd, lanes_q + 7 * N);
    }
    auto step = [&](hn::Vec<DD>& acc_d, hn::Vec<DD>& acc_q, std::size_t at) {
      const auto v = hn::Sub(LoadWide(x + at), c);
      acc_d = hn::Add(acc_d, v);
      acc_q = hn::Add(acc_q, hn::Mul(v, v));
    };
    for (; i + kSumLanes <= n; i += kSumLanes) {
      step(d0, q0, i);
      step(d1, q1, i + N);
      step(d2, q2, i + 2 * N);
      step(d3, q3, i + 3 * N);
      if (eight) {
        step(d4, q4, i + 4 * N);
        step(d5, q5, i + 5 * N);
        step(d6, q6, i + 6 * N);
        step(d7, q7, i + 7 * N);
      }
    }
    StoreLaneSet(lanes_d, eight, d0, d1, d2, d3, d4, d5, d6, d7);
    StoreLaneSet(lanes_q, eight, q0, q1, q2, q3, q4, q5, q6, q7);
  }
  for (; i < n; ++i) {
    const double v = static_cast<double>(x[i]) - center;
    lanes_d[i % kSumLanes] += v;
    lanes_q[i % kSumLanes] += v * v;
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPSIM_KERNELS_SIMD_ROW_STATS_INL_H_
