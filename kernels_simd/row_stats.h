// SIMD row primitives of the reductions, softmax and normalization kernels: float32 rows in,
// double accumulation out (dynamic dispatch to the best enabled SIMD target).
//
// Note [sum lanes]
// A float sum accumulates term i of a row into lane i mod 32 of 32 double accumulators, each
// lane adding its terms in increasing i; the 32 lanes then fold to 8 by the fixed tree
// f[j] = (l[j] + l[j + 8]) + (l[j + 16] + l[j + 24]) and the 8 combine with Neumaier
// (Neumaier summation, in lane order). Every SIMD target (four 8-lane vectors on AVX-512,
// eight 4-lane vectors on AVX2, a plain loop on narrower targets) and the scalar tails perform
// exactly these additions, so the lanes, and every result built from them, are bit-identical
// for every target and thread count. 32 independent chains keep the adds pipelined (one chain
// of 8 lanes would wait on the add latency). Squares of floats are exact in double.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace mpsim::simd {

inline constexpr std::size_t kSumLanes = 32;

// lanes[i % 32] += x[i] (or x[i]^2 when squares) for i in [0, n), in increasing i.
void sum_lanes_f32(const float* x, std::size_t n, bool squares, double lanes[kSumLanes]);
// lanes[i % 32] += (x[i] - center)^2, each difference and square rounded in double.
void centered_squares_lanes_f32(const float* x, std::size_t n, double center,
                                double lanes[kSumLanes]);

// lanes_d[i % 32] += d and lanes_q[i % 32] += d^2 with d = x[i] - center, in one pass
// (Note [normalization statistics] in row_stats.cc).
void centered_moments_lanes_f32(const float* x, std::size_t n, double center,
                                double lanes_d[kSumLanes], double lanes_q[kSumLanes]);

// The fold of Note [sum lanes]: f[j] = (l[j] + l[j + 8]) + (l[j + 16] + l[j + 24]).
inline void fold_lanes(const double l[kSumLanes], double f[8]) {
  for (int j = 0; j < 8; ++j) f[j] = (l[j] + l[j + 8]) + (l[j + 16] + l[j + 24]);
}

// acc[i] += x[i] (or x[i]^2) in double: one row of a tile of column sums.
// next, when given, is the row the caller reads after this one: prefetched as this one is read
// (a sweep of rows far apart, which the hardware prefetcher does not follow).
void add_row_f64(const float* x, std::size_t n, bool squares, double* acc,
                 const float* next = nullptr);

// Channels-last statistics: x is `rows` rows of `channels` floats; per channel c, over the rows
// in order, d = x[r][c] - shift[c], acc1[c] = sum of d, acc2[c] = sum of d^2 (the one-pass
// moments of channels-last group_norm about a shift close to the mean).
void shifted_moments_block_f32(const float* x, std::size_t rows, std::size_t channels,
                               const double* shift, double* acc1, double* acc2);

// y[i] = float((x[i] - mean) * rstd * w[i] + b[i]) evaluated in double and rounded once;
// w and b advance by w_step / b_step elements (0: one value for the row); w == nullptr means 1
// and b == nullptr means 0.
void normalize_row_f32(const float* x, float* y, std::size_t n, double mean, double rstd,
                       const float* w, std::ptrdiff_t w_step, const float* b,
                       std::ptrdiff_t b_step);
// Groups that are one dense row each: row r of x, y, w, b starts r * *_stride elements after
// the first; w and b advance by w_step / b_step (0 or 1) along a row. The statistics and
// outputs of normalize_row_f32 (layer_norm, or rms_norm when rms: b unused), for rows of at
// most kReduceGrain elements (one lane flush).
struct NormRows {
  const float* x;
  float* y;
  const float* w;
  const float* b;
  std::size_t rows, len;
  std::ptrdiff_t x_stride, y_stride, w_stride, b_stride, w_step, b_step;
  double eps;
  bool rms;
};
void normalize_rows_f32(const NormRows& p);

// y[r][c] = float((x[r][c] - mean[c]) * scale[c] + bias[c]) for `rows` rows of `channels`
// floats, per-channel double parameters (channels-last group_norm's output: scale = rstd * w).
void normalize_columns_block_f32(const float* x, float* y, std::size_t rows,
                                 std::size_t channels, const double* mean, const double* scale,
                                 const double* bias);

// lanes[i % 32] += exp(x[i] - max) (the double exp of softmax, 0 below -708) for a row with
// no NaN and a finite max >= every element; scratch holds n doubles (logsumexp).
void sum_exp_lanes_f32(const float* x, std::size_t n, double max, double* scratch,
                       double lanes[kSumLanes]);

// softmax (or log_softmax) of a contiguous float row whose elements are all finite or -inf and
// whose max (row_max_f32) is finite (callers send other rows to the scalar path); scratch
// holds n doubles. stream: write y with streaming stores where it is aligned to a vector (Note
// [streaming stores] in elementwise.h; the row ends with a store fence). The values do not
// depend on it. next_row: the row the caller takes next (prefetched while this one computes;
// may be null).
void softmax_row_f32(const float* x, float* y, std::size_t n, bool log, double* scratch,
                     float max, bool stream, const float* next_row = nullptr);

// Neumaier's compensated sum: sum + comp carries about twice double precision. Once the sum
// is not finite (an infinity or NaN term) the compensation stops, so the value is the IEEE sum
// of the terms (+inf + finite = +inf, inf - inf = NaN) rather than a NaN from inf - inf inside
// the correction.
struct Neumaier {
  double sum = 0, comp = 0;
  void add(double x) {
    const double t = sum + x;
    const bool sum_bigger = std::fabs(sum) >= std::fabs(x);  // selects, not a branch
    const double c = ((sum_bigger ? sum : x) - t) + (sum_bigger ? x : sum);
    comp += std::isfinite(t) ? c : 0.0;
    sum = t;
  }
  double value() const { return std::isfinite(sum) ? sum + comp : sum; }
};

// Neumaier over `ones` then the 8 folded lanes in order: {sum, compensation}. softmax counts
// its maxima (each contributes exactly 1) as `ones` instead of adding them into a lane, where
// they would round away the small terms that log_softmax of the max (-log1p(z)) needs.
inline Neumaier combine_lanes(const double lanes[kSumLanes], double ones) {
  double f[8];
  fold_lanes(lanes, f);
  Neumaier total;
  total.add(ones);
  for (double v : f) total.add(v);
  return total;
}

// The compensated total of the lanes (Note [sum lanes]).
inline double lane_total(const double lanes[kSumLanes]) { return combine_lanes(lanes, 0).value(); }

// log(sum + comp) for a softmax denominator maxima + z: with one max, log1p of the exact
// (sum - 1) + comp keeps the digits of a small z that log(sum + comp) would lose.
inline double log_of_sum(double sum, double comp, std::size_t maxima) {
  return maxima == 1 && sum < 2 ? std::log1p((sum - 1.0) + comp) : std::log(sum + comp);
}

// Max of a float row (n > 0) and whether it holds a NaN (the max is then meaningless).
float row_max_f32(const float* x, std::size_t n, bool* has_nan);
// The max (is_max) or min of a float row (n > 0) with +0 and -0 compared equal (either may
// come back), and whether it holds a NaN (the value is then meaningless).
float row_extreme_f32(const float* x, std::size_t n, bool is_max, bool* has_nan);

}  // namespace mpsim::simd
