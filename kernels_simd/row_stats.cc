// SIMD row primitives of the reductions, softmax and normalization kernels (row_stats.h).
// Sums follow Note [sum lanes]; every other result is evaluated in double with separate
// multiplies and adds (never a fused multiply-add, which only some targets have), so the bits
// do not depend on the target. softmax's exp is the one exception (Note [softmax exp]): it
// fuses where the target can, which moves the double result by an ulp or two, far below the
// float rounding.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/row_stats.cc"
#include "kernels_simd/row_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/aligned_vector.h"
#include "kernels_simd/stream_fence.h"
#include "kernels_simd/vec_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DD = hn::CappedTag<double, 8>;
using DF = hn::Rebind<float, DD>;

// The doubles of the floats at x (as many as DD has lanes).
HWY_INLINE hn::Vec<DD> LoadWide(const float* x) {
  return hn::PromoteTo(DD(), hn::LoadU(DF(), x));
}
// A row's values as doubles: floats widened, or a row already widened (Note [widened rows]).
HWY_INLINE hn::Vec<DD> LoadWide(const double* x) { return hn::LoadU(DD(), x); }

// Stores the doubles r rounded to float at y. DemoteTo rounds in range, but Highway's scalar
// and emu128 targets clamp infinities and overflowing values to +-FLT_MAX: there, lanes at or
// beyond the overflow threshold (FLT_MAX + half an ulp), and NaN, are converted one by one.
// stream: a streaming store (y aligned to the float vector; Note [streaming stores]).
HWY_INLINE void StoreRounded(hn::Vec<DD> r, float* y, bool stream = false) {
  const DD dd;
  if (stream) {
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

// Note [sum lanes]: lanes[i % 32] += term(i) for the 32-aligned part of [0, n), where term(i)
// gives the terms i .. i + Lanes - 1 as a vector; then lanes[i % 32] += scalar(i) for the
// tail. Named accumulators (not an array: scalable vectors cannot form one), K = 32 / Lanes of
// them; targets with fewer than 4 double lanes run the scalar loop, the same additions.
// Elements ahead that a streaming pass prefetches: 8 KiB of floats. The hardware prefetcher
// alone left a row sum of [4096, 4096] 10-20% slower (bench/: sum_case/last). Both lines of
// each block of 32 floats: one of the two leaves sum_case/last at 4.45-6.75 ms against
// 4.15-4.29 (four alternations of `MPSIM_NUM_THREADS=2 build-bench/bench/elementwise_bench
// --benchmark_filter=sum_case/last`).
constexpr std::size_t kPrefetchAhead = 2048;

// Stores a lane set held in named vectors (Note [sum lanes]): v0..v3, and v4..v7 where a set
// takes eight vectors (AVX2).
template <class V>
HWY_INLINE void StoreLaneSet(double* lanes, bool eight, V v0, V v1, V v2, V v3, V v4, V v5,
                             V v6, V v7) {
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

void SumLanesF32(const float* x, std::size_t n, bool squares, double lanes[kSumLanes]) {
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

// Scales finite nonzero lanes of m to [1, 2) and adds the powers removed to e (Note [product
// lanes]): m times 2^(1023 - field), field its biased exponent, which is exact for the normal
// lanes here (never subnormal: at most kProductBlocks float factors since the last scaling).
// A zero lane stays 0 and an infinite or NaN one stays itself (field clamped to 2045 keeps the
// scale finite); their exponents are never used.
HWY_INLINE void TakeExponents(hn::Vec<DD>& m, hn::Vec<hn::RebindToSigned<DD>>& e) {
  const DD dd;
  const hn::RebindToSigned<DD> di;
  const auto field = hn::Min(hn::And(hn::ShiftRight<52>(hn::BitCast(di, m)), hn::Set(di, 0x7ff)),
                             hn::Set(di, 2045));
  m = hn::Mul(m, hn::BitCast(dd, hn::ShiftLeft<52>(hn::Sub(hn::Set(di, 2046), field))));
  e = hn::Add(e, hn::Sub(field, hn::Set(di, 1023)));
}

// Float factors lie in [2^-149, 2^128): a lane in [1, 2) stays normal and finite for 6 of
// them ([2^-894, 2^774)), so the vector rows scale every 6 blocks of 32.
constexpr std::size_t kProductBlocks = 6;

void ProductLanesF32(const float* x, std::size_t n, double lanes[kSumLanes],
                     std::int64_t exps[kSumLanes]) {
  const DD dd;
  const hn::RebindToSigned<DD> di;
  const std::size_t N = hn::Lanes(dd);
  std::size_t i = 0;
  if (N >= 4) {
    const std::size_t K = kSumLanes / N;  // 4 or 8 vectors of lanes
    hn::Vec<DD> m[8];
    hn::Vec<decltype(di)> e[8];
    for (std::size_t k = 0; k < K; ++k) {
      m[k] = hn::LoadU(dd, lanes + k * N);
      e[k] = hn::LoadU(di, exps + k * N);
    }
    auto block = [&](std::size_t at) {
      hwy::Prefetch(x + at + kPrefetchAhead);  // both lines of the block, as the sums
      hwy::Prefetch(x + at + kPrefetchAhead + 16);
      for (std::size_t k = 0; k < K; ++k) m[k] = hn::Mul(m[k], LoadWide(x + at + k * N));
    };
    for (; i + kProductBlocks * kSumLanes <= n; i += kProductBlocks * kSumLanes) {
      for (std::size_t b = 0; b < kProductBlocks; ++b) block(i + b * kSumLanes);
      for (std::size_t k = 0; k < K; ++k) TakeExponents(m[k], e[k]);
    }
    for (; i + kSumLanes <= n; i += kSumLanes) block(i);
    for (std::size_t k = 0; k < K; ++k) {
      TakeExponents(m[k], e[k]);
      hn::StoreU(m[k], dd, lanes + k * N);
      hn::StoreU(e[k], di, exps + k * N);
    }
  }
  for (; i < n; ++i) multiply_lane(lanes[i % kSumLanes], exps[i % kSumLanes], x[i]);
}

void CenteredSquaresLanesF32(const float* x, std::size_t n, double center,
                             double lanes[kSumLanes]) {
  const auto c = hn::Set(DD(), center);
  AccumulateLanes(
      n, lanes,
      [x, c](std::size_t i) {
        const auto v = hn::Sub(LoadWide(x + i), c);
        return hn::Mul(v, v);
      },
      [x, center](std::size_t i) {
        const double v = static_cast<double>(x[i]) - center;
        return v * v;
      });
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

void CenteredMomentsLanesF32(const float* x, std::size_t n, double center,
                             double lanes_d[kSumLanes], double lanes_q[kSumLanes]) {
  CenteredMomentsLanes(x, n, center, lanes_d, lanes_q);
}

void AddRowF64(const float* x, std::size_t n, bool squares, double* acc, const float* next) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    if (next != nullptr) hwy::Prefetch(next + i);  // the next row of the sweep: a hint
    auto v = LoadWide(x + i);
    if (squares) v = hn::Mul(v, v);
    hn::StoreU(hn::Add(hn::LoadU(dd, acc + i), v), dd, acc + i);
  }
  for (; i < n; ++i) {
    const double v = x[i];
    acc[i] += squares ? v * v : v;
  }
}

// Channels-last blocks: x is `rows` rows of C floats (row stride C). Per channel c, in row
// order: d = x[r][c] - shift[c]; acc1[c] = sum of d, acc2[c] = sum of d^2: each channel's
// additions in row order, over blocks of up to 4 vectors of channels held in registers for all
// rows (no accumulator loads and stores per row). The same lines of the next `rows` rows (the
// next chunk, usually this thread's next task) are prefetched along the way, so that their
// reads from L3, a whole row apart, overlap this chunk's arithmetic: group_norm_case/nhwc (two
// threads, seven alternations, medians) 1.01-1.18 -> 0.98-1.15 ms, median of the seven 1.10 ->
// 1.02. Hints: they never fault, past the tensor's end too.
template <int kVecs>
HWY_INLINE void ShiftedMomentsColumns(const float* x, std::size_t rows, std::size_t C,
                                      std::size_t c0, const double* shift, double* acc1,
                                      double* acc2) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  auto s0 = hn::LoadU(dd, shift + c0), s1 = s0, s2 = s0, s3 = s0;
  if (kVecs > 1) s1 = hn::LoadU(dd, shift + c0 + N);
  if (kVecs > 2) s2 = hn::LoadU(dd, shift + c0 + 2 * N);
  if (kVecs > 3) s3 = hn::LoadU(dd, shift + c0 + 3 * N);
  auto a0 = hn::Zero(dd), a1 = a0, a2 = a0, a3 = a0, q0 = a0, q1 = a0, q2 = a0, q3 = a0;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* p = x + r * C + c0;
    hwy::Prefetch(p + rows * C);
    if (kVecs > 2) hwy::Prefetch(p + rows * C + 16);  // the block's second line
    const auto d0 = hn::Sub(LoadWide(p), s0);
    a0 = hn::Add(a0, d0);
    q0 = hn::Add(q0, hn::Mul(d0, d0));
    if (kVecs > 1) {
      const auto d1 = hn::Sub(LoadWide(p + N), s1);
      a1 = hn::Add(a1, d1);
      q1 = hn::Add(q1, hn::Mul(d1, d1));
    }
    if (kVecs > 2) {
      const auto d2 = hn::Sub(LoadWide(p + 2 * N), s2);
      a2 = hn::Add(a2, d2);
      q2 = hn::Add(q2, hn::Mul(d2, d2));
    }
    if (kVecs > 3) {
      const auto d3 = hn::Sub(LoadWide(p + 3 * N), s3);
      a3 = hn::Add(a3, d3);
      q3 = hn::Add(q3, hn::Mul(d3, d3));
    }
  }
  hn::StoreU(a0, dd, acc1 + c0);
  hn::StoreU(q0, dd, acc2 + c0);
  if (kVecs > 1) {
    hn::StoreU(a1, dd, acc1 + c0 + N);
    hn::StoreU(q1, dd, acc2 + c0 + N);
  }
  if (kVecs > 2) {
    hn::StoreU(a2, dd, acc1 + c0 + 2 * N);
    hn::StoreU(q2, dd, acc2 + c0 + 2 * N);
  }
  if (kVecs > 3) {
    hn::StoreU(a3, dd, acc1 + c0 + 3 * N);
    hn::StoreU(q3, dd, acc2 + c0 + 3 * N);
  }
}

void ShiftedMomentsBlockF32(const float* x, std::size_t rows, std::size_t C,
                            const double* shift, double* acc1, double* acc2) {
  const std::size_t N = hn::Lanes(DD());
  std::size_t c = 0;
  for (; c + 4 * N <= C; c += 4 * N) ShiftedMomentsColumns<4>(x, rows, C, c, shift, acc1, acc2);
  for (; c + N <= C; c += N) ShiftedMomentsColumns<1>(x, rows, C, c, shift, acc1, acc2);
  for (; c < C; ++c) {
    double a = 0, q = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      const double d = static_cast<double>(x[r * C + c]) - shift[c];
      a += d;
      q += d * d;
    }
    acc1[c] = a;
    acc2[c] = q;
  }
}

// y[r][c] = float((x[r][c] - mean[c]) * scale[c] + bias[c]) for `rows` rows of C floats,
// evaluated in double with a separate multiply and add and rounded once. Rows front to back,
// the parameters loaded from L1 per vector: blocks of channels held in registers down the
// rows (as the statistics above) wrote 128 bytes of every 1280-byte row per block, and the
// stores waited on their lines (perf). group_norm_case/nhwc on one thread: 3.6-3.9 -> 3.0-3.8
// ms. (The statistics pass measured the other way round: it stays in column blocks.)
void NormalizeColumnsBlockF32(const float* x, float* y, std::size_t rows, std::size_t C,
                              const double* mean, const double* scale, const double* bias,
                              bool stream) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* p = x + r * C;
    float* q = y + r * C;
    std::size_t c = 0;
    for (; c + N <= C; c += N) {
      const auto v = hn::Sub(LoadWide(p + c), hn::LoadU(dd, mean + c));
      StoreRounded(hn::Add(hn::Mul(v, hn::LoadU(dd, scale + c)), hn::LoadU(dd, bias + c)), q + c,
                   stream && reinterpret_cast<std::uintptr_t>(q + c) % (N * sizeof(float)) == 0);
    }
    for (; c < C; ++c) {
      q[c] = static_cast<float>((static_cast<double>(p[c]) - mean[c]) * scale[c] + bias[c]);
    }
  }
  if (stream) stream_fence();
}

// (x - mean) * rstd * w + b in double, rounded once to float.
template <bool kHasW, bool kWStep, bool kHasB, bool kBStep>
void NormalizeRow(const float* x, float* y, std::size_t n, double mean, double rstd,
                  const float* w, const float* b) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  const auto vmean = hn::Set(dd, mean), vrstd = hn::Set(dd, rstd);
  const auto w0 = hn::Set(dd, kHasW ? static_cast<double>(w[0]) : 1.0);
  const auto b0 = hn::Set(dd, kHasB ? static_cast<double>(b[0]) : 0.0);
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    auto r = hn::Mul(hn::Sub(LoadWide(x + i), vmean), vrstd);
    if constexpr (kHasW) r = hn::Mul(r, kWStep ? LoadWide(w + i) : w0);
    if constexpr (kHasB) r = hn::Add(r, kBStep ? LoadWide(b + i) : b0);
    StoreRounded(r, y + i);
  }
  for (; i < n; ++i) {
    double r = (static_cast<double>(x[i]) - mean) * rstd;
    if constexpr (kHasW) r = r * static_cast<double>(w[kWStep ? i : 0]);
    if constexpr (kHasB) r = r + static_cast<double>(b[kBStep ? i : 0]);
    y[i] = static_cast<float>(r);
  }
}

void NormalizeRowF32(const float* x, float* y, std::size_t n, double mean, double rstd,
                     const float* w, std::ptrdiff_t w_step, const float* b,
                     std::ptrdiff_t b_step) {
  // The 9 layouts of (w, b): absent, one value, or a dense row.
  using Fn = void (*)(const float*, float*, std::size_t, double, double, const float*,
                      const float*);
  static constexpr Fn kFns[3][3] = {
      {&NormalizeRow<false, false, false, false>, &NormalizeRow<false, false, true, false>,
       &NormalizeRow<false, false, true, true>},
      {&NormalizeRow<true, false, false, false>, &NormalizeRow<true, false, true, false>,
       &NormalizeRow<true, false, true, true>},
      {&NormalizeRow<true, true, false, false>, &NormalizeRow<true, true, true, false>,
       &NormalizeRow<true, true, true, true>}};
  const int wi = w == nullptr ? 0 : (w_step == 0 ? 1 : 2);
  const int bi = b == nullptr ? 0 : (b_step == 0 ? 1 : 2);
  kFns[wi][bi](x, y, n, mean, rstd, w, b);
}

// Stage 2's and stage 3's scalar form (GroupRowStages): the tails of the vector rows, and
// whole rows on targets without FMA or with fewer than 4 double lanes. std::fma is the one
// rounding of a fused multiply-add wherever it runs: the same bits as the vectors' MulAdd.
HWY_INLINE void GroupMomentsScalar(const float* x, std::size_t begin, std::size_t end,
                                   double shift, double lanes_d[kSumLanes],
                                   double lanes_q[kSumLanes]) {
  for (std::size_t i = begin; i < end; ++i) {
    const double v = static_cast<double>(x[i]) - shift;
    lanes_d[i % kSumLanes] += v;
    lanes_q[i % kSumLanes] = std::fma(v, v, lanes_q[i % kSumLanes]);
  }
}

HWY_INLINE void GroupOutputScalar(const float* x, float* y, std::size_t begin, std::size_t end,
                                  double mean, double scale, double bias) {
  for (std::size_t i = begin; i < end; ++i) {
    y[i] = static_cast<float>(std::fma(static_cast<double>(x[i]) - mean, scale, bias));
  }
}

// The stages of Note [pipelined groups] (norm.cc) over one row each, in one loop: stage 1 the
// operations of sum_lanes_f32, stage 2 the sums of d = x - shift and d^2 (a fused multiply-add)
// in lanes, stage 3 y = fma(x - mean, scale, bias). Only where the target has FMA.
template <bool kS1, bool kS2, bool kS3>
HWY_NOINLINE void GroupRowPasses(std::size_t n, const float* x1, double lanes1[kSumLanes],
                                 const float* x2, double shift, double lanes_d[kSumLanes],
                                 double lanes_q[kSumLanes], const float* x3, float* y3,
                                 double mean, double scale, double bias) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  const bool eight = kSumLanes / N == 8;  // AVX2: 8 vectors per lane set
  const std::size_t aligned = n / kSumLanes * kSumLanes;
  // The lanes of the stages that run (the others' pointers may be null).
  auto load = [&](const double* lanes, std::size_t m) { return hn::LoadU(dd, lanes + m * N); };
  const auto zero = hn::Zero(dd);
  auto a0 = zero, a1 = zero, a2 = zero, a3 = zero, a4 = zero, a5 = zero, a6 = zero, a7 = zero;
  auto d0 = zero, d1 = zero, d2 = zero, d3 = zero, d4 = zero, d5 = zero, d6 = zero, d7 = zero;
  auto q0 = zero, q1 = zero, q2 = zero, q3 = zero, q4 = zero, q5 = zero, q6 = zero, q7 = zero;
  if constexpr (kS1) {
    a0 = load(lanes1, 0), a1 = load(lanes1, 1), a2 = load(lanes1, 2), a3 = load(lanes1, 3);
    if (eight) a4 = load(lanes1, 4), a5 = load(lanes1, 5), a6 = load(lanes1, 6), a7 = load(lanes1, 7);
  }
  if constexpr (kS2) {
    d0 = load(lanes_d, 0), d1 = load(lanes_d, 1), d2 = load(lanes_d, 2), d3 = load(lanes_d, 3);
    q0 = load(lanes_q, 0), q1 = load(lanes_q, 1), q2 = load(lanes_q, 2), q3 = load(lanes_q, 3);
    if (eight) {
      d4 = load(lanes_d, 4), d5 = load(lanes_d, 5), d6 = load(lanes_d, 6), d7 = load(lanes_d, 7);
      q4 = load(lanes_q, 4), q5 = load(lanes_q, 5), q6 = load(lanes_q, 6), q7 = load(lanes_q, 7);
    }
  }
  const auto vshift = hn::Set(dd, shift), vmean = hn::Set(dd, mean);
  const auto vscale = hn::Set(dd, scale), vbias = hn::Set(dd, bias);
  auto sum = [&](hn::Vec<DD>& acc, std::size_t at) { acc = hn::Add(acc, LoadWide(x1 + at)); };
  auto moments = [&](hn::Vec<DD>& acc_d, hn::Vec<DD>& acc_q, std::size_t at) {
    const auto v = hn::Sub(LoadWide(x2 + at), vshift);
    acc_d = hn::Add(acc_d, v);
    acc_q = hn::MulAdd(v, v, acc_q);
  };
  auto output = [&](std::size_t at) {
    StoreRounded(hn::MulAdd(hn::Sub(LoadWide(x3 + at), vmean), vscale, vbias), y3 + at);
  };
  for (std::size_t i = 0; i < aligned; i += kSumLanes) {
    if constexpr (kS1) {
      hwy::Prefetch(x1 + i + kPrefetchAhead);  // a hint: never faults
      sum(a0, i);
      sum(a1, i + N);
      sum(a2, i + 2 * N);
      sum(a3, i + 3 * N);
      if (eight) {
        sum(a4, i + 4 * N);
        sum(a5, i + 5 * N);
        sum(a6, i + 6 * N);
        sum(a7, i + 7 * N);
      }
    }
    if constexpr (kS2) {
      moments(d0, q0, i);
      moments(d1, q1, i + N);
      moments(d2, q2, i + 2 * N);
      moments(d3, q3, i + 3 * N);
      if (eight) {
        moments(d4, q4, i + 4 * N);
        moments(d5, q5, i + 5 * N);
        moments(d6, q6, i + 6 * N);
        moments(d7, q7, i + 7 * N);
      }
    }
    if constexpr (kS3) {
      for (std::size_t j = 0; j < kSumLanes; j += N) output(i + j);
    }
  }
  if constexpr (kS1) {
    StoreLaneSet(lanes1, eight, a0, a1, a2, a3, a4, a5, a6, a7);
    for (std::size_t i = aligned; i < n; ++i) lanes1[i % kSumLanes] += static_cast<double>(x1[i]);
  }
  if constexpr (kS2) {
    StoreLaneSet(lanes_d, eight, d0, d1, d2, d3, d4, d5, d6, d7);
    StoreLaneSet(lanes_q, eight, q0, q1, q2, q3, q4, q5, q6, q7);
    GroupMomentsScalar(x2, aligned, n, shift, lanes_d, lanes_q);
  }
  if constexpr (kS3) GroupOutputScalar(x3, y3, aligned, n, mean, scale, bias);
}

void GroupRowPassesF32(const GroupRowStages& s) {
  using Fn = decltype(&GroupRowPasses<true, true, true>);
  static constexpr Fn kPasses[8] = {
      &GroupRowPasses<false, false, false>, &GroupRowPasses<true, false, false>,
      &GroupRowPasses<false, true, false>,  &GroupRowPasses<true, true, false>,
      &GroupRowPasses<false, false, true>,  &GroupRowPasses<true, false, true>,
      &GroupRowPasses<false, true, true>,   &GroupRowPasses<true, true, true>};
  const DD dd;
  if (!HWY_NATIVE_FMA || hn::Lanes(dd) < 4) {  // the plain lane loops
    if (s.x1 != nullptr) SumLanesF32(s.x1, s.n, false, s.lanes1);
    if (s.x2 != nullptr) GroupMomentsScalar(s.x2, 0, s.n, s.shift, s.lanes_d, s.lanes_q);
    if (s.x3 != nullptr) GroupOutputScalar(s.x3, s.y3, 0, s.n, s.mean, s.scale, s.bias);
    return;
  }
  kPasses[(s.x1 != nullptr) + 2 * (s.x2 != nullptr) + 4 * (s.x3 != nullptr)](
      s.n, s.x1, s.lanes1, s.x2, s.shift, s.lanes_d, s.lanes_q, s.x3, s.y3, s.mean, s.scale,
      s.bias);
}

// Note [normalization statistics]
// The mean and variance of a normalization group come from Bjorck's corrected two-pass scheme:
// pass 1 gives m1 = (lane sum of x) / n; pass 2 sums d = x - m1 and d^2 in lanes (one pass,
// Note [sum lanes] lanes folded by the fixed tree, plain adds), then
//   c = (sum of d) / n,  mean = m1 + c,  var = (sum of d^2) / n - c^2.
// The error of m1 (about 2^-44 of the mean magnitude) is removed by c, which is itself small, so
// mean is accurate to ~2^-44 of the standard deviation, not of |x|: inputs 1000 + N(0, 1) keep
// every digit. var has no cancellation (c^2 is tiny next to it). No compensated sums: each row
// costs two vector passes and a few scalar adds. rms_norm: the lane sum of x^2 (exact squares).
struct RowStats {
  double mean, var;
};

HWY_INLINE double FoldPlain(const double lanes[kSumLanes]) {
  // fold_lanes (f[j] = (l[j] + l[j + 8]) + (l[j + 16] + l[j + 24])) in vectors where they
  // have 4 or 8 lanes: the same additions.
  HWY_ALIGN double f[8];
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  if (N == 8 || N == 4) {
    for (std::size_t j = 0; j < 8; j += N) {
      const auto v = hn::Add(hn::Add(hn::LoadU(dd, lanes + j), hn::LoadU(dd, lanes + j + 8)),
                             hn::Add(hn::LoadU(dd, lanes + j + 16), hn::LoadU(dd, lanes + j + 24)));
      hn::Store(v, dd, f + j);
    }
  } else {
    fold_lanes(lanes, f);
  }
  return ((f[0] + f[1]) + (f[2] + f[3])) + ((f[4] + f[5]) + (f[6] + f[7]));
}

// Pass 2 from m1 (a float row, or the row widened by pass 1): mean and variance.
template <class T>
HWY_INLINE RowStats CenteredStatistics(const T* x, std::size_t len, double m1,
                                       double lanes[kSumLanes], double lanes_q[kSumLanes]) {
  const double n = static_cast<double>(len);
  std::fill(lanes, lanes + kSumLanes, 0.0);
  std::fill(lanes_q, lanes_q + kSumLanes, 0.0);
  CenteredMomentsLanes(x, len, m1, lanes, lanes_q);
  const double c = FoldPlain(lanes) / n;
  const double v = FoldPlain(lanes_q) / n - c * c;
  return {m1 + c, v < 0 ? 0.0 : v};  // NaN stays NaN
}

// Note [widened rows]
// A layer_norm row (at most kWidenedRowMax elements, L1-resident as doubles) is widened once:
// pass 1 sums the widened values in the lanes and stores them, and pass 2 and the normalization
// load doubles. The conversions are 2 of the 3 FP-port uops of pass 1's step and 2 of the other
// passes' 6 and 8, so this removes a quarter of the arithmetic; the values, and every bit of
// the results, are those of the float row. The 2-thread bench (`BM_layer_norm`, 10.5 MiB)
// gains only a few percent: there the row's first read from memory dominates.
constexpr std::size_t kWidenedRowMax = 4096;

// Pass 1 over a float row: lanes += x (Note [sum lanes]), and xd = x in double; returns xd.
HWY_INLINE const double* WidenAndSumLanes(const float* x, std::size_t n, double* xd,
                                          double lanes[kSumLanes]) {
  const DD dd;
  AccumulateLanes(
      n, lanes,
      [x, xd, dd](std::size_t i) {
        const auto v = LoadWide(x + i);
        hn::StoreU(v, dd, xd + i);
        return v;
      },
      [x, xd](std::size_t i) { return xd[i] = static_cast<double>(x[i]); }, x);
  return xd;
}

HWY_INLINE RowStats RowStatistics(const float* x, std::size_t len, bool rms,
                                  double lanes[kSumLanes], double lanes_q[kSumLanes]) {
  const double n = static_cast<double>(len);
  std::fill(lanes, lanes + kSumLanes, 0.0);
  if (rms) {
    SumLanesF32(x, len, true, lanes);
    return {0.0, FoldPlain(lanes) / n};
  }
  SumLanesF32(x, len, false, lanes);
  return CenteredStatistics(x, len, FoldPlain(lanes) / n, lanes, lanes_q);
}

// Whole groups that are one dense row each (layer_norm / rms_norm over the last dims): the
// statistics (Note [normalization statistics]) and the output of every row in one call.
// NormalizeRow with weight and bias rows already in double (layer_norm: one weight row for
// every group, converted once per call instead of once per group): the same arithmetic.
template <class T>
HWY_INLINE void NormalizeRowWideParams(const T* x, float* y, std::size_t n, double mean,
                                       double rstd, const double* w, const double* b) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  const auto vmean = hn::Set(dd, mean), vrstd = hn::Set(dd, rstd);
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    auto r = hn::Mul(hn::Mul(hn::Sub(LoadWide(x + i), vmean), vrstd), hn::LoadU(dd, w + i));
    StoreRounded(hn::Add(r, hn::LoadU(dd, b + i)), y + i);
  }
  for (; i < n; ++i) y[i] = static_cast<float>((static_cast<double>(x[i]) - mean) * rstd * w[i] + b[i]);
}

// Note [pipelined rows]
// layer_norm rows that share one weight and bias row, of at most kPipelinedRowMax elements:
// - Statistics in one pass about a shift, the row's first value c = x[0] (Note [shifted
//   moments] in norm.cc, with a subset of one value: (mean - c)^2 <= (n - 1) var):
//   T1 = sum of d = x - c and T2 = sum of d^2 in lanes (Note [sum lanes]), d^2 added by a fused
//   multiply-add; e = T1 / n, mean = c + e, var = T2 / n - e^2. T2 / n = var + e^2 <= n var,
//   so the subtraction loses at most log2(n) bits, 10 at n = 1024, of the 29 that double
//   carries beyond a float (mean and var to ~2^-42 relative).
// - Output fma((x - mean) rstd, w, b), rounded once to float.
// - Fused multiply-adds give one rounding on every target: vectors use them where the target
//   has FMA (every target with 4 or more double lanes), the other targets run the scalar rows
//   below with std::fma (correctly rounded in hardware or in libm): the same bits everywhere.
// - One loop runs two stages on two rows: the statistics of row k (widening it into a ring of
//   rows in L1) and the output of row k - kPipelineLag, whose statistics were folded
//   kPipelineLag loops earlier, so the out-of-order core never waits on a fold's chain (a
//   tree of adds, a division, a square root).
// Large outputs (NormRows::stream, from 8 MiB) leave through streaming stores, as channels-last
// group_norm's (Note [channels-last streaming output] in norm.cc): no read-for-ownership of y.
// Against Bjorck's two passes in three stages this takes 2 FP-port instructions fewer per 8
// elements, one fold and one ring row fewer. bench/norm_floor_bench.cc measures the cost of the
// stage structure and of unfused arithmetic (docs/performance.md, "Limits").
constexpr std::size_t kPipelineLag = 2;
constexpr std::size_t kPipelineDepth = kPipelineLag + 1;
constexpr std::size_t kPipelinedRowMax = 1024;  // the rows in flight stay in L1 (24 KiB)

// Row statistics over [begin, end) of x (widened into xd) one value at a time, in the lanes the
// vectors use (lanes[i % 32]).
HWY_INLINE void ShiftedMomentsScalar(const float* x, std::size_t begin, std::size_t end,
                                     double shift, double* xd, double lanes_d[kSumLanes],
                                     double lanes_q[kSumLanes]) {
  for (std::size_t i = begin; i < end; ++i) {
    const double d = (xd[i] = x[i]) - shift;
    lanes_d[i % kSumLanes] += d;
    lanes_q[i % kSumLanes] = std::fma(d, d, lanes_q[i % kSumLanes]);
  }
}

HWY_INLINE void FinishShifted(const double lanes_d[kSumLanes], const double lanes_q[kSumLanes],
                              double shift, std::size_t len, double eps, double* mean,
                              double* rstd) {
  const double n = static_cast<double>(len);
  const double e = FoldPlain(lanes_d) / n, var = FoldPlain(lanes_q) / n - e * e;
  *mean = shift + e;
  *rstd = 1.0 / std::sqrt((var < 0 ? 0.0 : var) + eps);  // NaN stays NaN
}

HWY_INLINE void OutputScalar(const double* xd, float* y, std::size_t begin, std::size_t end,
                             double mean, double rstd, const double* w, const double* b) {
  for (std::size_t i = begin; i < end; ++i) {
    y[i] = static_cast<float>(std::fma((xd[i] - mean) * rstd, w[i], b[i]));
  }
}

// The rows on targets without FMA or with fewer than 4 double lanes: the same operations as
// NormalizeRowsPipelined, one row at a time.
void NormalizeRowsShiftedScalar(const NormRows& p, const double* w, const double* b, double* xd) {
  double lanes_d[kSumLanes], lanes_q[kSumLanes];
  for (std::size_t r = 0; r < p.rows; ++r) {
    const float* x = p.x + r * p.x_stride;
    const double shift = p.len > 0 ? x[0] : 0.0;
    std::fill(lanes_d, lanes_d + kSumLanes, 0.0);
    std::fill(lanes_q, lanes_q + kSumLanes, 0.0);
    ShiftedMomentsScalar(x, 0, p.len, shift, xd, lanes_d, lanes_q);
    double mean, rstd;
    FinishShifted(lanes_d, lanes_q, shift, p.len, p.eps, &mean, &rstd);
    OutputScalar(xd, p.y + r * p.y_stride, 0, p.len, mean, rstd, w, b);
  }
}

#if HWY_NATIVE_FMA
// One loop over the 32-aligned part of two rows: kS1 widens x1 into w1 and sums d = x1 - shift
// and d^2 into lanes_d and lanes_q; kS3 writes y3 = fma((x3 - mean) rstd, w, b). The tails
// (scalar lanes) are the caller's.
template <bool kS1, bool kS3>
HWY_NOINLINE void PipelinedPasses(std::size_t aligned, const float* x1, double* w1, double shift,
                                  double lanes_d[kSumLanes], double lanes_q[kSumLanes],
                                  const double* x3, float* y3, double mean, double rstd,
                                  const double* w, const double* b, bool stream) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  const bool eight = kSumLanes / N == 8;  // AVX2: 8 vectors per lane set
  const auto zero = hn::Zero(dd);
  auto d0 = zero, d1 = zero, d2 = zero, d3 = zero, d4 = zero, d5 = zero, d6 = zero, d7 = zero;
  auto q0 = zero, q1 = zero, q2 = zero, q3 = zero, q4 = zero, q5 = zero, q6 = zero, q7 = zero;
  const auto vshift = hn::Set(dd, shift), vmean = hn::Set(dd, mean), vrstd = hn::Set(dd, rstd);
  auto moments = [&](hn::Vec<DD>& acc_d, hn::Vec<DD>& acc_q, std::size_t at) {
    const auto v = LoadWide(x1 + at);
    hn::StoreU(v, dd, w1 + at);
    const auto d = hn::Sub(v, vshift);
    acc_d = hn::Add(acc_d, d);
    acc_q = hn::MulAdd(d, d, acc_q);
  };
  auto output = [&](std::size_t at) {
    const auto z = hn::Mul(hn::Sub(hn::LoadU(dd, x3 + at), vmean), vrstd);
    StoreRounded(hn::MulAdd(z, hn::LoadU(dd, w + at), hn::LoadU(dd, b + at)), y3 + at, stream);
  };
  for (std::size_t i = 0; i < aligned; i += kSumLanes) {
    if constexpr (kS1) {
      hwy::Prefetch(x1 + i + kPrefetchAhead);  // a hint: never faults
      moments(d0, q0, i);
      moments(d1, q1, i + N);
      moments(d2, q2, i + 2 * N);
      moments(d3, q3, i + 3 * N);
      if (eight) {
        moments(d4, q4, i + 4 * N);
        moments(d5, q5, i + 5 * N);
        moments(d6, q6, i + 6 * N);
        moments(d7, q7, i + 7 * N);
      }
    }
    if constexpr (kS3) {
      for (std::size_t j = 0; j < kSumLanes; j += N) output(i + j);
    }
  }
  if constexpr (kS1) {
    StoreLaneSet(lanes_d, eight, d0, d1, d2, d3, d4, d5, d6, d7);
    StoreLaneSet(lanes_q, eight, q0, q1, q2, q3, q4, q5, q6, q7);
  }
}

// layer_norm rows (a weight and bias row shared by all, in double) through PipelinedPasses;
// ring holds kPipelineDepth widened rows of p.len doubles, `stride` apart.
void NormalizeRowsPipelined(const NormRows& p, const double* w, const double* b, double* ring,
                            std::size_t stride) {
  using Fn = decltype(&PipelinedPasses<true, true>);
  static constexpr Fn kPasses[4] = {&PipelinedPasses<false, false>, &PipelinedPasses<true, false>,
                                    &PipelinedPasses<false, true>, &PipelinedPasses<true, true>};
  const std::size_t N = hn::Lanes(DD());
  const std::size_t len = p.len, aligned = len / kSumLanes * kSumLanes;
  double means[kPipelineDepth] = {}, rstds[kPipelineDepth] = {};
  double lanes_d[kSumLanes], lanes_q[kSumLanes];
  for (std::size_t k = 0; k < p.rows + kPipelineLag; ++k) {
    const bool s1 = k < p.rows, s3 = k >= kPipelineLag;
    // Ring slots of the two rows (unused where a stage is off).
    const std::size_t r1 = k % kPipelineDepth, r3 = (k + kPipelineDepth - kPipelineLag) % kPipelineDepth;
    const float* x1 = s1 ? p.x + k * p.x_stride : nullptr;
    const double shift = s1 && len > 0 ? x1[0] : 0.0;
    double* w1 = ring + r1 * stride;
    const double* x3 = ring + r3 * stride;
    float* y3 = s3 ? p.y + (k - kPipelineLag) * p.y_stride : nullptr;
    // Streaming stores where the output row starts on a float vector (every store of the
    // 32-aligned part then does).
    const bool stream = p.stream && s3 &&
                        reinterpret_cast<std::uintptr_t>(y3) % (N * sizeof(float)) == 0;
    kPasses[s1 + 2 * s3](aligned, x1, w1, shift, lanes_d, lanes_q, x3, y3, means[r3], rstds[r3],
                         w, b, stream);
    if (s1) {
      ShiftedMomentsScalar(x1, aligned, len, shift, w1, lanes_d, lanes_q);
      FinishShifted(lanes_d, lanes_q, shift, len, p.eps, &means[r1], &rstds[r1]);
    }
    if (s3) OutputScalar(x3, y3, aligned, len, means[r3], rstds[r3], w, b);
  }
  if (p.stream) stream_fence();
}
#endif  // HWY_NATIVE_FMA

void NormalizeRowsF32(const NormRows& p) {
  double lanes[kSumLanes], lanes_q[kSumLanes];
  // One dense weight and bias row shared by every group (layer_norm's): widen it once.
  const bool shared = !p.rms && p.w_stride == 0 && p.b_stride == 0 && p.w_step == 1 &&
                      p.b_step == 1;
  thread_local AlignedVector<double> wide, xd;
  // Rows of doubles start on cache lines (Note [aligned scratch]).
  const std::size_t stride = (p.len + kCacheLine / sizeof(double) - 1) / (kCacheLine / sizeof(double)) *
                             (kCacheLine / sizeof(double));
  if (shared) {
    xd.resize(p.len);
    wide.resize(stride + p.len);
    for (std::size_t i = 0; i < p.len; ++i) {
      wide[i] = p.w[i];
      wide[stride + i] = p.b[i];
    }
  }
  if (shared && p.len <= kPipelinedRowMax) {  // Note [pipelined rows]
#if HWY_NATIVE_FMA
    if (hn::Lanes(DD()) >= 4) {
      xd.resize(kPipelineDepth * stride);
      NormalizeRowsPipelined(p, wide.data(), wide.data() + stride, xd.data(), stride);
      return;
    }
#endif
    NormalizeRowsShiftedScalar(p, wide.data(), wide.data() + stride, xd.data());
    return;
  }
  for (std::size_t r = 0; r < p.rows; ++r) {
    const float* x = p.x + r * p.x_stride;
    if (shared && p.len <= kWidenedRowMax) {
      // Note [widened rows]: pass 1 leaves the row in doubles for the two passes after it.
      std::fill(lanes, lanes + kSumLanes, 0.0);
      const double* xw = WidenAndSumLanes(x, p.len, xd.data(), lanes);
      const double m1 = FoldPlain(lanes) / static_cast<double>(p.len);
      const RowStats st = CenteredStatistics(xw, p.len, m1, lanes, lanes_q);
      NormalizeRowWideParams(xw, p.y + r * p.y_stride, p.len, st.mean,
                             1.0 / std::sqrt(st.var + p.eps), wide.data(), wide.data() + stride);
      continue;
    }
    const RowStats st = RowStatistics(x, p.len, p.rms, lanes, lanes_q);
    const double rstd = 1.0 / std::sqrt(st.var + p.eps);
    if (shared) {
      NormalizeRowWideParams(x, p.y + r * p.y_stride, p.len, st.mean, rstd, wide.data(),
                             wide.data() + stride);
      continue;
    }
    NormalizeRowF32(x, p.y + r * p.y_stride, p.len, st.mean, rstd, p.w + r * p.w_stride,
                    p.w_step, p.rms ? nullptr : p.b + r * p.b_stride, p.b_step);
  }
}

// The max (or min) of a float row, n > 0, comparing +0 and -0 equal (either may come back);
// *has_nan tells whether a NaN was seen (the value is then meaningless).
float RowExtremeF32(const float* x, std::size_t n, bool is_max, bool* has_nan) {
  const hn::ScalableTag<float> d;
  const std::size_t N = hn::Lanes(d);
  float best = x[0];
  bool nan = false;
  std::size_t i = 0;
  if (n >= N) {
    auto m = hn::LoadU(d, x);
    auto nans = hn::IfThenElseZero(hn::IsNaN(m), hn::Set(d, 1.0f));
    for (i = N; i + N <= n; i += N) {
      const auto v = hn::LoadU(d, x + i);
      m = is_max ? hn::Max(m, v) : hn::Min(m, v);
      nans = hn::Or(nans, hn::IfThenElseZero(hn::IsNaN(v), hn::Set(d, 1.0f)));
    }
    best = hn::GetLane(is_max ? hn::MaxOfLanes(d, m) : hn::MinOfLanes(d, m));
    nan = hn::GetLane(hn::MaxOfLanes(d, nans)) != 0.0f;
  }
  for (; i < n; ++i) {
    nan = nan || std::isnan(x[i]);
    best = (is_max ? x[i] > best : x[i] < best) ? x[i] : best;
  }
  *has_nan = nan;
  return best;
}

float RowMaxF32(const float* x, std::size_t n, bool* has_nan) {
  return RowExtremeF32(x, n, true, has_nan);
}

// Rows whose max is finite and that hold no NaN (softmax.cc sends the others to its scalar
// path). t = x - max (in double; t <= 0), e = exp(t) (0 below -708, where exp(t) / sum cannot
// reach the float range), the sum of e in lanes (Note [sum lanes]), then y = e * (1 / sum)
// or y = t - log(sum), rounded once.
//
// Note [softmax exp]: exp(t) for t in [-708, 0] as 2^k 2^(j/16) exp(r), where
// t = (16 k + j) ln2/16 + r with |r| <= ln2/32: 2^(j/16) from a 16-entry table (one vpermt2pd
// on AVX-512, a gather elsewhere), exp(r) a degree-5 polynomial with c0 = c1 = 1
// (tools/gen_exp16_table.py: relative error 2^-47.35), 2^k added to the table entry's
// exponent (vscalefpd on AVX-512). The polynomial runs in Estrin's form with the table entry
// folded in (TimesExpR): 13 instructions per vector instead of ExpCore's 18 (Taylor to r^11
// on |r| <= ln2/2), and a chain of 9 dependent ones from t instead of 11, which lets more
// vectors overlap (4% faster in cache). Relative error < 2^-47 (the table entries and the
// evaluation add < 2^-51; row_paths_test measures 2^-47.31 on every target).
alignas(64) constexpr double kExp2Sixteenths[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0,
};
constexpr double kExpR[6] = {1.0,
                             1.0,
                             0x1.fffffffdbe773p-2,
                             0x1.55555556b22d0p-3,
                             0x1.55573becb09c3p-5,
                             0x1.1110f6e6711a2p-7};

// 2^(j/16) for j the low 4 bits of each lane of `bits`.
HWY_INLINE hn::Vec<DD> Exp2Sixteenths(hn::Vec<hn::RebindToUnsigned<DD>> bits) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  // vpermt2pd reads bits 3..0 of each index: bit 3 picks the upper half of the table.
  return hn::Vec<DD>{_mm512_permutex2var_pd(_mm512_load_pd(kExp2Sixteenths), bits.raw,
                                            _mm512_load_pd(kExp2Sixteenths + 8))};
#else
  const DD dd;
  const hn::RebindToUnsigned<DD> du;
  const hn::RebindToSigned<DD> di;
  return hn::GatherIndex(dd, kExp2Sixteenths,
                         hn::BitCast(di, hn::And(bits, hn::Set(du, std::uint64_t{15}))));
#endif
}

// T exp(r) as T + T (r + r^2 (c2 + c3 r + r^2 (c4 + c5 r))): the polynomial in Estrin's
// form (a chain of 4 dependent operations instead of Horner's 5 and the product's 1), the
// table entry folded into the last one.
HWY_INLINE hn::Vec<DD> TimesExpR(hn::Vec<DD> t, hn::Vec<DD> r) {
  const DD dd;
  const auto r2 = hn::Mul(r, r);
  const auto lo = hn::MulAdd(hn::Set(dd, kExpR[3]), r, hn::Set(dd, kExpR[2]));
  const auto hi = hn::MulAdd(hn::Set(dd, kExpR[5]), r, hn::Set(dd, kExpR[4]));
  const auto s = hn::MulAdd(r2, hn::MulAdd(r2, hi, lo), r);
  return hn::MulAdd(t, s, t);
}

HWY_INLINE hn::Vec<DD> ExpTable16(hn::Vec<DD> t) {
  const DD dd;
  const hn::RebindToUnsigned<DD> du;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 32 significant bits
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  // kd = K / 16 + 1.5 * 2^48, K = round(16 t / ln2) = 16 k + j: the unit in the last place
  // of 1.5 * 2^48 is 1/16, so the low mantissa bits hold K as they would for 16 t / ln2 +
  // 1.5 * 2^52 (the same rounding: the two differ by the exact factor 16). kf = K / 16 and
  // kf kLn2Hi are exact (|K| < 2^15).
  const auto shift = hn::Set(dd, 0x1.8p48);
  const auto kd = hn::MulAdd(t, hn::Set(dd, 1.4426950408889634), shift);
  const auto kf = hn::Sub(kd, shift);
  auto r = hn::NegMulAdd(kf, hn::Set(dd, kLn2Hi), t);
  r = hn::NegMulAdd(kf, hn::Set(dd, kLn2Lo), r);
  const auto bits = hn::BitCast(du, kd);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  // vscalefpd multiplies by 2^floor(kf) = 2^k: one instruction for the shift, shift and add
  // below. The product is normal (t >= -708), so scaling after the rounding gives the same
  // bits as rounding the scaled product.
  return hn::Vec<DD>{_mm512_maskz_scalef_pd(0xFF, TimesExpR(Exp2Sixteenths(bits), r).raw,
                                            kf.raw)};
#else
  // (bits >> 4) << 52 is k << 52: bits 4..15 of the mantissa hold k (two's complement);
  // the exponent and the constant's leading bit shift out of the word.
  const auto scaled = hn::BitCast(
      dd, hn::Add(hn::BitCast(du, Exp2Sixteenths(bits)), hn::ShiftLeft<52>(hn::ShiftRight<4>(bits))));
  return TimesExpR(scaled, r);
#endif
}

HWY_INLINE hn::Vec<DD> ExpShifted(hn::Vec<DD> t) {
  const DD dd;
  const auto lo = hn::Set(dd, -708.0);
  return hn::IfThenZeroElse(hn::Lt(t, lo), ExpTable16(hn::Max(t, lo)));
}

// scratch[i] = exp(x[i] - max) for i in [begin, n); a padded tail goes through the same
// vector code.
HWY_INLINE void ExpShiftedRow(const float* x, std::size_t begin, std::size_t n, double max,
                              double* scratch) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  const auto vmax = hn::Set(dd, max);
  std::size_t i = begin;
  for (; i + N <= n; i += N) hn::StoreU(ExpShifted(hn::Sub(LoadWide(x + i), vmax)), dd, scratch + i);
  if (i < n) {
    HWY_ALIGN float tail[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN double out[HWY_MAX_BYTES / sizeof(double)];
    for (std::size_t j = i; j < n; ++j) tail[j - i] = x[j];
    hn::Store(ExpShifted(hn::Sub(LoadWide(tail), vmax)), dd, out);
    for (std::size_t j = i; j < n; ++j) scratch[j] = out[j - i];
  }
}

void SumExpLanesF32(const float* x, std::size_t n, double max, double* scratch,
                    double lanes[kSumLanes]) {
  ExpShiftedRow(x, 0, n, max, scratch);
  AccumulateLanes(
      n, lanes, [scratch](std::size_t k) { return hn::LoadU(DD(), scratch + k); },
      [scratch](std::size_t k) { return scratch[k]; });
}

// One pass over the row: scratch[i] = exp(x[i] - max), the terms other than the maxima added
// into `lanes` (Note [sum lanes]), the maxima (each contributes exactly 1) counted. The lanes
// hold the same sums as an exp pass followed by a summing pass: the same additions in the same
// order. next_row (may be null) is prefetched along the way.
//
// softmax (kCountMaxima false) adds the maxima into the lanes like every other term: the lane
// that holds a 1 rounds away terms below 2^-53 of it, which moves the sum by less than its
// own rounding, and its output e / sum needs no more. Its terms below -708 are not zeroed
// either: exp(-708) ~ 3.3e-308 added to a sum of at least 1 leaves its bits unchanged, and
// e / sum rounds to a float 0 all the same.
template <bool kCountMaxima>
HWY_INLINE std::size_t ExpSumRow(const float* x, std::size_t n, double max, double* scratch,
                                 double lanes[kSumLanes], const float* next_row) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  // AccumulateLanes vectorizes the 32-aligned part where a vector has 4 lanes or more; the
  // scalar loop reads the rest from scratch.
  const std::size_t vector_end = N >= 4 ? n / kSumLanes * kSumLanes : 0;
  ExpShiftedRow(x, vector_end, n, max, scratch);
  const auto vmax = hn::Set(dd, max);
  const auto zero = hn::Zero(dd);
  std::size_t maxima = 0;
  if constexpr (!kCountMaxima) {
    const auto lo = hn::Set(dd, -708.0);
    AccumulateLanes(
        n, lanes,
        [&](std::size_t k) {
          const auto e = ExpTable16(hn::Max(hn::Sub(LoadWide(x + k), vmax), lo));
          hn::StoreU(e, dd, scratch + k);
          return e;
        },
        [&](std::size_t k) { return scratch[k]; }, nullptr, next_row);
    return 0;
  }
  AccumulateLanes(
      n, lanes,
      [&](std::size_t k) {
        const auto t = hn::Sub(LoadWide(x + k), vmax);
        const auto e = ExpShifted(t);
        hn::StoreU(e, dd, scratch + k);
        const auto is_max = hn::Eq(t, zero);
        maxima += hn::CountTrue(dd, is_max);
        return hn::IfThenZeroElse(is_max, e);
      },
      [&](std::size_t k) {
        if (x[k] == static_cast<float>(max)) {
          ++maxima;
          return 0.0;
        }
        return scratch[k];
      },
      nullptr, next_row);
  return maxima;
}

void SoftmaxRowF32(const float* x, float* y, std::size_t n, bool log, double* scratch,
                   float row_max, bool stream, const float* next_row) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  const double max = row_max;
  // Streaming stores need y aligned to the float vector; i advances by whole vectors.
  stream = stream && reinterpret_cast<std::uintptr_t>(y) % (N * sizeof(float)) == 0;
  const auto vmax = hn::Set(dd, max);
  std::size_t i = 0;
  // log_softmax: the maxima contribute exactly 1 each: they are counted, not added, so that
  // the lane holding a max does not round away the small terms (log_softmax of the max is
  // -log1p(z)). softmax adds them (ExpSumRow).
  double lanes[kSumLanes] = {};
  const std::size_t maxima = log ? ExpSumRow<true>(x, n, max, scratch, lanes, next_row)
                                 : ExpSumRow<false>(x, n, max, scratch, lanes, next_row);
  const Neumaier total = combine_lanes(lanes, static_cast<double>(maxima));
  const double sum = total.sum, comp = total.comp;
  if (!log) {
    const auto inv = hn::Set(dd, 1.0 / (sum + comp));
    for (i = 0; i + N <= n; i += N) {
      StoreRounded(hn::Mul(hn::LoadU(dd, scratch + i), inv), y + i, stream);
    }
    for (; i < n; ++i) y[i] = static_cast<float>(scratch[i] * (1.0 / (sum + comp)));
    return;
  }
  const double log_sum = log_of_sum(sum, comp, maxima);
  // A log_sum below half an ulp of t vanishes in the subtraction; the exact value is still
  // below t, which matters when t is a tie of the float grid: step down one double ulp
  // (t < 0 there, so one more in the bit pattern).
  const hn::RebindToSigned<DD> di;
  const auto vls = hn::Set(dd, log_sum);
  auto log_of = [&](hn::Vec<DD> t) {
    const auto r = hn::Sub(t, vls);
    const auto down = hn::BitCast(dd, hn::Add(hn::BitCast(di, r), hn::Set(di, 1)));
    return log_sum > 0 ? hn::IfThenElse(hn::And(hn::Eq(r, t), hn::IsFinite(t)), down, r) : r;
  };
  for (i = 0; i + N <= n; i += N) {
    StoreRounded(log_of(hn::Sub(LoadWide(x + i), vmax)), y + i, stream);
  }
  if (i < n) {
    HWY_ALIGN float tail[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN float out[HWY_MAX_BYTES / sizeof(float)];
    for (std::size_t j = i; j < n; ++j) tail[j - i] = x[j];
    StoreRounded(log_of(hn::Sub(LoadWide(tail), vmax)), out);
    for (std::size_t j = i; j < n; ++j) y[j] = out[j - i];
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(SumLanesF32);
HWY_EXPORT(ProductLanesF32);
HWY_EXPORT(CenteredSquaresLanesF32);
HWY_EXPORT(CenteredMomentsLanesF32);
HWY_EXPORT(AddRowF64);
HWY_EXPORT(NormalizeRowF32);
HWY_EXPORT(GroupRowPassesF32);
HWY_EXPORT(ShiftedMomentsBlockF32);
HWY_EXPORT(NormalizeColumnsBlockF32);
HWY_EXPORT(NormalizeRowsF32);
HWY_EXPORT(SoftmaxRowF32);
HWY_EXPORT(SumExpLanesF32);
HWY_EXPORT(RowMaxF32);
HWY_EXPORT(RowExtremeF32);

void sum_lanes_f32(const float* x, std::size_t n, bool squares, double lanes[kSumLanes]) {
  HWY_DYNAMIC_DISPATCH(SumLanesF32)(x, n, squares, lanes);
}
void product_lanes_f32(const float* x, std::size_t n, double lanes[kSumLanes],
                       std::int64_t exps[kSumLanes]) {
  HWY_DYNAMIC_DISPATCH(ProductLanesF32)(x, n, lanes, exps);
}
void centered_squares_lanes_f32(const float* x, std::size_t n, double center,
                                double lanes[kSumLanes]) {
  HWY_DYNAMIC_DISPATCH(CenteredSquaresLanesF32)(x, n, center, lanes);
}
void centered_moments_lanes_f32(const float* x, std::size_t n, double center,
                                double lanes_d[kSumLanes], double lanes_q[kSumLanes]) {
  HWY_DYNAMIC_DISPATCH(CenteredMomentsLanesF32)(x, n, center, lanes_d, lanes_q);
}
void add_row_f64(const float* x, std::size_t n, bool squares, double* acc, const float* next) {
  HWY_DYNAMIC_DISPATCH(AddRowF64)(x, n, squares, acc, next);
}
void normalize_row_f32(const float* x, float* y, std::size_t n, double mean, double rstd,
                       const float* w, std::ptrdiff_t w_step, const float* b,
                       std::ptrdiff_t b_step) {
  HWY_DYNAMIC_DISPATCH(NormalizeRowF32)(x, y, n, mean, rstd, w, w_step, b, b_step);
}
void shifted_moments_block_f32(const float* x, std::size_t rows, std::size_t channels,
                               const double* shift, double* acc1, double* acc2) {
  HWY_DYNAMIC_DISPATCH(ShiftedMomentsBlockF32)(x, rows, channels, shift, acc1, acc2);
}
void normalize_columns_block_f32(const float* x, float* y, std::size_t rows,
                                 std::size_t channels, const double* mean, const double* scale,
                                 const double* bias, bool stream) {
  HWY_DYNAMIC_DISPATCH(NormalizeColumnsBlockF32)(x, y, rows, channels, mean, scale, bias, stream);
}
void normalize_rows_f32(const NormRows& p) { HWY_DYNAMIC_DISPATCH(NormalizeRowsF32)(p); }
void group_row_passes_f32(const GroupRowStages& s) {
  HWY_DYNAMIC_DISPATCH(GroupRowPassesF32)(s);
}
void sum_exp_lanes_f32(const float* x, std::size_t n, double max, double* scratch,
                       double lanes[kSumLanes]) {
  HWY_DYNAMIC_DISPATCH(SumExpLanesF32)(x, n, max, scratch, lanes);
}
void softmax_row_f32(const float* x, float* y, std::size_t n, bool log, double* scratch,
                     float max, bool stream, const float* next_row) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRowF32)(x, y, n, log, scratch, max, stream, next_row);
}
float row_max_f32(const float* x, std::size_t n, bool* has_nan) {
  return HWY_DYNAMIC_DISPATCH(RowMaxF32)(x, n, has_nan);
}
float row_extreme_f32(const float* x, std::size_t n, bool is_max, bool* has_nan) {
  return HWY_DYNAMIC_DISPATCH(RowExtremeF32)(x, n, is_max, has_nan);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
