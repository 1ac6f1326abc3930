// The normalization rows of row_stats.h: one output row of any normalization
// (normalize_row_f32), and whole groups that are one dense row each, statistics and output in
// one call (normalize_rows_f32: layer_norm and rms_norm over the last dims), with Note
// [normalization statistics], Note [widened rows] and Note [pipelined rows]. Results are
// evaluated in double; the pipelined rows use fused multiply-adds, which round once on every
// target (std::fma where the vectors cannot fuse): the same bits everywhere.
#include <algorithm>
#include <cmath>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/row_layer_norm.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "core/dtype.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/aligned_vector.h"
#include "kernels_simd/cast16-inl.h"
#include "kernels_simd/row_stats-inl.h"
#include "kernels_simd/row_stats.h"
#include "kernels_simd/stream_fence.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// (x - mean) * rstd * w + b in double, rounded once to float.
template <bool kHasW, bool kWStep, bool kHasB, bool kBStep>
void NormalizeRow(const float* x, float* y, std::size_t n, double mean, double rstd, const float* w,
                  const float* b) {
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

// Per element i of each of `pixels` rows of n: ((x[i] - mean[i]) * rstd[i]) * w[i] + b[i] in
// double, rounded once to float: NormalizeRow's arithmetic with each element's own statistics
// (a channels-last pixel's channels). The parameters come as doubles (w and b widened once, not
// once a pixel) and the pixels loop here, not one dispatch each: [2, 320, 64, 64] channels-last
// batch_norm, one thread, 0.63-0.66 ms against 0.72-0.73 (`bench/torch_sweep.py --filter
// "batch_norm cl"`). Six double operations per 8 outputs (two of them conversions) bound it.
void NormalizeChannelsF32(const float* x, float* y, std::size_t n, std::size_t pixels,
                          const double* mean, const double* rstd, const double* w,
                          const double* b) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  for (std::size_t p = 0; p < pixels; ++p, x += n, y += n) {
    std::size_t i = 0;
    for (; i + N <= n; i += N) {
      auto r =
          hn::Mul(hn::Sub(LoadWide(x + i), hn::LoadU(dd, mean + i)), hn::LoadU(dd, rstd + i));
      r = hn::Add(hn::Mul(r, hn::LoadU(dd, w + i)), hn::LoadU(dd, b + i));
      StoreRounded(r, y + i);
    }
    for (; i < n; ++i) {
      const double r = (static_cast<double>(x[i]) - mean[i]) * rstd[i];
      y[i] = static_cast<float>(r * w[i] + b[i]);
    }
  }
}

// ((x - mean) * rstd) * w (+ b) in double, rounded once to float16 or bfloat16 (the double
// rounded to odd, then to nearest: Half(double), BFloat16(double)); w and b dense rows of
// doubles, b null for none.
template <bool kBF16, bool kHasB>
void NormalizeRow16(const float* x, std::uint16_t* y, std::size_t n, double mean, double rstd,
                    const double* w, const double* b) {
  const DD dd;
  const hn::Rebind<float, DD> df;
  const hn::Rebind<std::uint16_t, DD> d16;
  const std::size_t N = hn::Lanes(dd);
  const auto vmean = hn::Set(dd, mean), vrstd = hn::Set(dd, rstd);
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    auto r = hn::Mul(hn::Mul(hn::Sub(LoadWide(x + i), vmean), vrstd), hn::LoadU(dd, w + i));
    if constexpr (kHasB) r = hn::Add(r, hn::LoadU(dd, b + i));
    const auto f = kBF16 ? F64ToF32RoundOddForBF16(dd, r) : F64ToF32RoundOddForF16(dd, r);
    hn::StoreU(kBF16 ? F32ToBF16Bits(df, f) : F32ToF16Bits(df, f), d16, y + i);
  }
  for (; i < n; ++i) {
    double r = (static_cast<double>(x[i]) - mean) * rstd * w[i];
    if constexpr (kHasB) r = r + b[i];
    y[i] = kBF16 ? BFloat16(r).bits : Half(r).bits;
  }
}
void NormalizeRow16Any(const float* x, std::uint16_t* y, std::size_t n, double mean, double rstd,
                       const double* w, const double* b, bool bf16) {
  using Fn = void (*)(const float*, std::uint16_t*, std::size_t, double, double, const double*,
                      const double*);
  static constexpr Fn kFns[2][2] = {{&NormalizeRow16<false, false>, &NormalizeRow16<false, true>},
                                    {&NormalizeRow16<true, false>, &NormalizeRow16<true, true>}};
  kFns[bf16 ? 1 : 0][b != nullptr ? 1 : 0](x, y, n, mean, rstd, w, b);
}

void NormalizeRowF32(const float* x, float* y, std::size_t n, double mean, double rstd,
                     const float* w, std::ptrdiff_t w_step, const float* b, std::ptrdiff_t b_step) {
  // The 9 layouts of (w, b): absent, one value, or a dense row.
  using Fn =
      void (*)(const float*, float*, std::size_t, double, double, const float*, const float*);
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
    SumLanes(x, len, true, lanes);
    return {0.0, FoldPlain(lanes) / n};
  }
  SumLanes(x, len, false, lanes);
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
  for (; i < n; ++i)
    y[i] = static_cast<float>((static_cast<double>(x[i]) - mean) * rstd * w[i] + b[i]);
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

// Note [summed rows]
// skip_layer_norm's float32 rows (NormRows::skip): the row normalized is s = (x + skip) + bias,
// each add one IEEE rounding in float, the bits of its composition's add kernels. Each row's s
// is formed just before its statistics, in L1 (or in the sum output, which then holds it), so
// the adds' loads stream beside the normalization of the rows before it instead of in a pass
// of their own.
HWY_INLINE const float* SummedRow(const NormRows& p, std::size_t r, float* buf) {
  const float* x = p.x + r * p.x_stride;
  if (p.skip == nullptr) return x;
  const float* k = p.skip + r * p.skip_stride;
  const float* bias = p.add_bias;
  float* s = p.sum != nullptr ? p.sum + r * p.sum_stride : buf;
  const hn::ScalableTag<float> df;
  const std::size_t N = hn::Lanes(df);
  std::size_t i = 0;
  for (; i + N <= p.len; i += N) {
    auto v = hn::Add(hn::LoadU(df, x + i), hn::LoadU(df, k + i));
    if (bias != nullptr) v = hn::Add(v, hn::LoadU(df, bias + i));
    hn::StoreU(v, df, s + i);
  }
  for (; i < p.len; ++i) {
    const float t = x[i] + k[i];
    s[i] = bias != nullptr ? t + bias[i] : t;
  }
  return s;
}

// The rows on targets without FMA or with fewer than 4 double lanes: the same operations as
// NormalizeRowsPipelined, one row at a time.
void NormalizeRowsShiftedScalar(const NormRows& p, const double* w, const double* b, double* xd,
                                float* sbuf) {
  double lanes_d[kSumLanes], lanes_q[kSumLanes];
  for (std::size_t r = 0; r < p.rows; ++r) {
    const float* x = SummedRow(p, r, sbuf);
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
// ring holds kPipelineDepth widened rows of p.len doubles, `stride` apart; sbuf one float row
// (Note [summed rows]).
void NormalizeRowsPipelined(const NormRows& p, const double* w, const double* b, double* ring,
                            std::size_t stride, float* sbuf) {
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
    const std::size_t r1 = k % kPipelineDepth,
                      r3 = (k + kPipelineDepth - kPipelineLag) % kPipelineDepth;
    const float* x1 = s1 ? SummedRow(p, k, sbuf) : nullptr;
    const double shift = s1 && len > 0 ? x1[0] : 0.0;
    double* w1 = ring + r1 * stride;
    const double* x3 = ring + r3 * stride;
    float* y3 = s3 ? p.y + (k - kPipelineLag) * p.y_stride : nullptr;
    // Streaming stores where the output row starts on a float vector (every store of the
    // 32-aligned part then does).
    const bool stream =
        p.stream && s3 && reinterpret_cast<std::uintptr_t>(y3) % (N * sizeof(float)) == 0;
    kPasses[s1 + 2 * s3](aligned, x1, w1, shift, lanes_d, lanes_q, x3, y3, means[r3], rstds[r3], w,
                         b, stream);
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
  const bool shared =
      !p.rms && p.w_stride == 0 && p.b_stride == 0 && p.w_step == 1 && p.b_step == 1;
  thread_local AlignedVector<double> wide, xd;
  thread_local AlignedVector<float> summed;
  if (p.skip != nullptr && p.sum == nullptr && summed.size() < p.len) summed.resize(p.len);
  // Rows of doubles start on cache lines (Note [aligned scratch]).
  const std::size_t stride = (p.len + kCacheLine / sizeof(double) - 1) /
                             (kCacheLine / sizeof(double)) * (kCacheLine / sizeof(double));
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
      NormalizeRowsPipelined(p, wide.data(), wide.data() + stride, xd.data(), stride,
                             summed.data());
      return;
    }
#endif
    NormalizeRowsShiftedScalar(p, wide.data(), wide.data() + stride, xd.data(), summed.data());
    return;
  }
  for (std::size_t r = 0; r < p.rows; ++r) {
    const float* x = SummedRow(p, r, summed.data());
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
    NormalizeRowF32(x, p.y + r * p.y_stride, p.len, st.mean, rstd, p.w + r * p.w_stride, p.w_step,
                    p.rms ? nullptr : p.b + r * p.b_stride, p.b_step);
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(NormalizeRowF32);
HWY_EXPORT(NormalizeRow16Any);
HWY_EXPORT(NormalizeChannelsF32);
HWY_EXPORT(NormalizeRowsF32);

void normalize_row_f32(const float* x, float* y, std::size_t n, double mean, double rstd,
                       const float* w, std::ptrdiff_t w_step, const float* b,
                       std::ptrdiff_t b_step) {
  HWY_DYNAMIC_DISPATCH(NormalizeRowF32)(x, y, n, mean, rstd, w, w_step, b, b_step);
}
void normalize_row_16(const float* x, std::uint16_t* y, std::size_t n, double mean, double rstd,
                      const double* w, const double* b, bool bf16) {
  HWY_DYNAMIC_DISPATCH(NormalizeRow16Any)(x, y, n, mean, rstd, w, b, bf16);
}
void normalize_rows_f32(const NormRows& p) { HWY_DYNAMIC_DISPATCH(NormalizeRowsF32)(p); }
void normalize_channels_f32(const float* x, float* y, std::size_t n, std::size_t pixels,
                            const double* mean, const double* rstd, const double* w,
                            const double* b) {
  HWY_DYNAMIC_DISPATCH(NormalizeChannelsF32)(x, y, n, pixels, mean, rstd, w, b);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
