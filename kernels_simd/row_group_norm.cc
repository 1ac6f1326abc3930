// The row and column primitives of group_norm (row_stats.h): the one-pass moments and the
// output of channels-last blocks, and the stages of Note [pipelined groups] (norm.cc) run over
// up to three rows in one loop (group_row_passes_f32). Channels-last blocks evaluate in double
// with separate multiplies and adds; the group row stages use fused multiply-adds, which round
// once on every target (std::fma where the vectors cannot fuse): the same bits everywhere.
#include <cmath>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/row_group_norm.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/row_stats-inl.h"
#include "kernels_simd/row_stats.h"
#include "kernels_simd/stream_fence.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Channels-last blocks: x is `rows` rows of C floats (row stride C). Per channel c, in row
// order: d = x[r][c] - shift[c]; acc1[c] = sum of d, acc2[c] = sum of d^2: each channel's
// additions in row order, over blocks of up to 4 vectors of channels held in registers for all
// rows (no accumulator loads and stores per row). The same lines of the next `rows` rows (the
// next chunk, usually this thread's next task) are prefetched along the way, so that their
// reads from L3, a whole row apart, overlap this chunk's arithmetic (the gain:
// docs/measurements.md). Hints: they never fault, past the tensor's end too.
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

void ShiftedMomentsBlockF32(const float* x, std::size_t rows, std::size_t C, const double* shift,
                            double* acc1, double* acc2) {
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

// Stage 2's and stage 3's scalar form (GroupRowStages): the tails of the vector rows, and
// whole rows on targets without FMA or with fewer than 4 double lanes. std::fma is the one
// rounding of a fused multiply-add wherever it runs: the same bits as the vectors' MulAdd.
HWY_INLINE void GroupMomentsScalar(const float* x, std::size_t begin, std::size_t end, double shift,
                                   double lanes_d[kSumLanes], double lanes_q[kSumLanes]) {
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
                                 double lanes_q[kSumLanes], const float* x3, float* y3, double mean,
                                 double scale, double bias) {
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
    if (eight)
      a4 = load(lanes1, 4), a5 = load(lanes1, 5), a6 = load(lanes1, 6), a7 = load(lanes1, 7);
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
    if (s.x1 != nullptr) SumLanes(s.x1, s.n, false, s.lanes1);
    if (s.x2 != nullptr) GroupMomentsScalar(s.x2, 0, s.n, s.shift, s.lanes_d, s.lanes_q);
    if (s.x3 != nullptr) GroupOutputScalar(s.x3, s.y3, 0, s.n, s.mean, s.scale, s.bias);
    return;
  }
  kPasses[(s.x1 != nullptr) + 2 * (s.x2 != nullptr) + 4 * (s.x3 != nullptr)](
      s.n, s.x1, s.lanes1, s.x2, s.shift, s.lanes_d, s.lanes_q, s.x3, s.y3, s.mean, s.scale,
      s.bias);
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(GroupRowPassesF32);
HWY_EXPORT(ShiftedMomentsBlockF32);
HWY_EXPORT(NormalizeColumnsBlockF32);

void shifted_moments_block_f32(const float* x, std::size_t rows, std::size_t channels,
                               const double* shift, double* acc1, double* acc2) {
  HWY_DYNAMIC_DISPATCH(ShiftedMomentsBlockF32)(x, rows, channels, shift, acc1, acc2);
}
void normalize_columns_block_f32(const float* x, float* y, std::size_t rows, std::size_t channels,
                                 const double* mean, const double* scale, const double* bias,
                                 bool stream) {
  HWY_DYNAMIC_DISPATCH(NormalizeColumnsBlockF32)(x, y, rows, channels, mean, scale, bias, stream);
}
void group_row_passes_f32(const GroupRowStages& s) { HWY_DYNAMIC_DISPATCH(GroupRowPassesF32)(s); }

}  // namespace mpsim::simd
#endif  // HWY_ONCE
