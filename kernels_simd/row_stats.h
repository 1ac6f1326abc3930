// SIMD row primitives of the reductions, softmax and normalization kernels: float32 rows in,
// double accumulation out (dynamic dispatch to the best enabled SIMD target).
// Implemented per family: row_sums.cc (sums, products, extremes), row_softmax.cc,
// row_group_norm.cc and row_layer_norm.cc, with their shared per-target pieces in
// row_stats-inl.h.
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

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace mpsim::simd {

inline constexpr std::size_t kSumLanes = 32;

// lanes[i % 32] += x[i] (or x[i]^2 when squares) for i in [0, n), in increasing i.
void sum_lanes_f32(const float* x, std::size_t n, bool squares, double lanes[kSumLanes]);
// Note [row sums in row tiles]
// out[r] = the compensated sum of row r (x + r * stride, n floats, or their squares), for
// rows r in [0, rows): per row, lanes from zero (sum_lanes_f32), fold_lanes, a Neumaier sum of
// the 8 folded lanes from zero and a Neumaier sum of that sum and its compensation, then
// Neumaier::value(): the per-output steps of the reductions' single-chunk rows, with the same
// IEEE operations in the same order, so the same bits. The Neumaier steps of a tile of rows run
// across vector lanes, one row per lane, instead of one row's dependent chain after another's: far
// faster on short rows (`elementwise_bench --benchmark_filter=sum_case/short_rows`;
// docs/measurements.md).
void sum_rows_f32(const float* x, std::size_t n, std::size_t rows, std::size_t stride, bool squares,
                  double* out);

// For outputs j in [0, n), whose 32 sum lanes lie lane-major (lane k of output j at
// lanes[k * lane_stride + j]): fold_lanes, then a Neumaier sum of the 8 folded lanes from zero,
// stored as sums[j] and comps[j]: the per-output steps of the lane-major column sums (Note
// [lane-major column sums] in reduce.cc), the same operations in vector lanes across outputs.
void fold_lane_columns(const double* lanes, std::size_t lane_stride, std::size_t n, double* sums,
                       double* comps);

// Note [float64 sum lanes]
// A float64 sum (or sum of squares) runs kF64SumLanes Neumaier sums side by side: term i (from
// the chunk's start, a multiple of kF64SumLanes) into lane i % 16, in increasing i, each lane
// Neumaier::add's steps from zero; the chunk's total then adds the lanes' sums in lane order,
// then their compensations. Each lane's error is that of a compensated sum, so the bound is a
// compensated sum's: a few ulps of the exact sum unless it cancels massively. The lanes are a
// fixed order on every target (vectors of any width hold whole lanes), so the bits do not depend on
// the target; strided runs take the same lanes one by one
// (`elementwise_bench --benchmark_filter=f64_sum`; docs/measurements.md).
inline constexpr std::size_t kF64SumLanes = 16;
void neumaier_lanes_f64(const double* x, std::size_t n, bool squares, double sums[kF64SumLanes],
                        double comps[kF64SumLanes]);

// The sum of n int32 or int64 values in int64, wrapping (two's complement, any order).
std::uint64_t sum_int_row(const std::int32_t* x, std::size_t n);
std::uint64_t sum_int_row(const std::int64_t* x, std::size_t n);

// lanes[i % 32] += (x[i] - center)^2, each difference and square rounded in double.
void centered_squares_lanes_f32(const float* x, std::size_t n, double center,
                                double lanes[kSumLanes]);

// lanes_d[i % 32] += d and lanes_q[i % 32] += d^2 with d = x[i] - center, in one pass
// (Note [normalization statistics] in row_layer_norm.cc).
void centered_moments_lanes_f32(const float* x, std::size_t n, double center,
                                double lanes_d[kSumLanes], double lanes_q[kSumLanes]);

// Note [product lanes]
// prod keeps the sums' 32 lanes (lane r mod 32 of the reduced index r), each a double
// mantissa m with its own int64 exponent e: the lane's product is m * 2^e. After multiplies
// the mantissa is scaled back to [1, 2) by a power of two (take_exponent), so no lane
// overflows or underflows however long the product runs: prod of 1e30, 1e-30, 1e30, ... is 1,
// where a plain double product overflows or flushes. Scaling by 2^k is exact and a product of
// normal numbers rounds the same at any scale, so the mantissa bits do not depend on when the
// scaling happens: the vector rows (every 4 blocks of 32 floats, whose factors stay within
// double's range) and the scalar rows (after every multiply, and float64 factors scaled first)
// give the same bits. Lanes, then chunks in order, are multiplied the same way, and the
// result is m * 2^e rounded once to the output dtype. Zero, infinite and NaN lanes are left
// unscaled, so 0 * inf is NaN and inf * finite is inf, as in any order of the plain product.

// Scales a finite nonzero m to [1, 2) by a power of two (subnormals included) and returns
// the power removed; 0, inf and NaN are left alone (0 returned).
inline std::int64_t take_exponent(double& m) {
  std::uint64_t b = std::bit_cast<std::uint64_t>(m);
  auto field = static_cast<std::int64_t>((b >> 52) & 0x7ff);
  std::int64_t k = 0;
  if (field == 0x7ff || (b << 1) == 0) return 0;
  if (field == 0) {  // subnormal: scale up first
    m *= 0x1p64;
    k = -64;
    b = std::bit_cast<std::uint64_t>(m);
    field = static_cast<std::int64_t>((b >> 52) & 0x7ff);
  }
  m = std::bit_cast<double>((b & ~(std::uint64_t{0x7ff} << 52)) | (std::uint64_t{0x3ff} << 52));
  return k + field - 1023;
}

// lane * 2^exp *= x, the lane kept in [1, 2) (Note [product lanes]).
inline void multiply_lane(double& lane, std::int64_t& exp, double x) {
  exp += take_exponent(x);
  lane *= x;
  exp += take_exponent(lane);
}

// lanes[i % 32] * 2^exps[i % 32] *= x[i] for i in [0, n), in increasing i; lanes come in and
// leave in [1, 2) (or 0, inf, NaN).
void product_lanes_f32(const float* x, std::size_t n, double lanes[kSumLanes],
                       std::int64_t exps[kSumLanes]);

// Note [product columns]
// prod over leading dims (the channels of NCHW, dim 0 of a matrix) takes the product lanes
// of a tile of outputs one lane at a time: lane l of every output of the tile multiplies the
// rows r = l, l + 32, ... in increasing r, in vector lanes across outputs (product_column_f32),
// then joins the outputs' running products in lane order, as the chunk's `part.p *= lanes[k]`
// does. The products of each lane are the same multiplies in the same order as multiply_lane's
// (the scalings between them, here every kProductBlocks rows, change no bits), so the results
// are the walk's bits, and far faster than walking each output's column value by value
// (`elementwise_bench --benchmark_filter=reduce_channels/prod`; docs/measurements.md).
// One lane of n outputs: m[j] * 2^e[j] = the product of x[i * stride + j] over rows i in
// [0, rows) in increasing i, from m = 1, e = 0 (m left in [1, 2), or 0, inf, NaN), then joined
// into the outputs' running products: pe[j] += e[j], p[j] *= m[j].
void product_column_f32(const float* x, std::size_t n, std::size_t rows, std::size_t stride,
                        double* m, std::int64_t* e, double* p, std::int64_t* pe);

// The fold of Note [sum lanes]: f[j] = (l[j] + l[j + 8]) + (l[j + 16] + l[j + 24]).
inline void fold_lanes(const double l[kSumLanes], double f[8]) {
  for (int j = 0; j < 8; ++j) f[j] = (l[j] + l[j + 8]) + (l[j + 16] + l[j + 24]);
}

// acc[i] += x[r * stride + i] (or its square) in double for r = 0, 1, ..., rows - 1 in turn:
// rows of a tile of column sums, each acc[i] loaded and stored once for all of them (the same
// additions in the same order as row by row). next, when given, is the row the caller reads
// after these: prefetched as they are read (a sweep of rows far apart, which the hardware
// prefetcher does not follow).
void add_rows_f64(const float* x, std::size_t n, std::size_t rows, std::size_t stride,
                  bool squares, double* acc, const float* next = nullptr);

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
// y[i] = float((x[i] - mean[i]) * rstd[i] * w[i] + b[i]) evaluated in double as
// normalize_row_f32 does, with each element's own mean and rstd, for `pixels` consecutive rows
// of n (the pixels of a channels-last tensor; the parameters: n doubles each).
void normalize_channels_f32(const float* x, float* y, std::size_t n, std::size_t pixels,
                            const double* mean, const double* rstd, const double* w,
                            const double* b);
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
  // Streaming stores for the outputs of the pipelined layer_norm rows (Note [pipelined rows]
  // in row_layer_norm.cc); the values do not depend on it.
  bool stream = false;
  // skip_layer_norm (Note [summed rows] in row_layer_norm.cc): with skip, the row normalized
  // is (x + skip) + add_bias (add_bias may be null), each add rounded to float, and it is
  // written to `sum` when that is given.
  const float* skip = nullptr;
  const float* add_bias = nullptr;
  float* sum = nullptr;
  std::ptrdiff_t skip_stride = 0, sum_stride = 0;
};
void normalize_rows_f32(const NormRows& p);
// y[i] = ((x[i] - mean) * rstd) * w[i] + b[i] (b null: no bias) in double, rounded once to
// float16 (bf16 false) or bfloat16 bits: the dense 16-bit rows of Note [16-bit normalization
// rows] in norm.cc.
void normalize_row_16(const float* x, std::uint16_t* y, std::size_t n, double mean, double rstd,
                      const double* w, const double* b, bool bf16);

// Channels-last group_norm and layer_norm outputs of this size and more leave through
// streaming stores (Note [channels-last streaming output] in norm.cc, Note [pipelined rows]).
inline constexpr std::int64_t kNormStreamMinBytes = std::int64_t{8} << 20;

// One row of each of up to three groups of the same layout (Note [pipelined groups] in
// norm.cc): stage 1 is sum_lanes_f32(x1, n, false, lanes1); stage 2 adds d = x2 - shift and
// d^2 into lanes_d and lanes_q (Note [sum lanes]), d^2 by a fused multiply-add; stage 3 writes
// y3 = float(fma(x3 - mean, scale, bias)). A stage whose x is null is skipped (its lanes may
// then be null too). Fused multiply-adds round once on every target (std::fma where the
// vectors cannot fuse): the same bits everywhere.
struct GroupRowStages {
  std::size_t n;
  const float* x1;
  double* lanes1;
  const float* x2;
  double shift;
  double* lanes_d;
  double* lanes_q;
  const float* x3;
  float* y3;
  double mean, scale, bias;
};
void group_row_passes_f32(const GroupRowStages& s);

// y[r][c] = float((x[r][c] - mean[c]) * scale[c] + bias[c]) for `rows` rows of `channels`
// floats, per-channel double parameters (channels-last group_norm's output: scale = rstd * w).
// stream: streaming stores where y is aligned to a vector, and a store fence at the end (Note
// [streaming stores] in elementwise.h); the values do not depend on it.
void normalize_columns_block_f32(const float* x, float* y, std::size_t rows, std::size_t channels,
                                 const double* mean, const double* scale, const double* bias,
                                 bool stream);

// lanes[i % 32] += exp(x[i] - max) (the double exp of softmax, 0 below -708) for a row with
// no NaN and a finite max >= every element; scratch holds n doubles (logsumexp).
void sum_exp_lanes_f32(const float* x, std::size_t n, double max, double* scratch,
                       double lanes[kSumLanes]);

// softmax (or log_softmax) of a contiguous float row whose elements are all finite or -inf and
// whose max (row_max_f32) is finite (callers send other rows to the scalar path); scratch
// holds n doubles. stream: write y with streaming stores where it is aligned to a vector (Note
// [streaming stores] in elementwise.h; the caller calls stream_fence() before its task
// completes: one fence per task, not per row). The values do not
// depend on it. next_row: the row the caller takes next (prefetched while this one computes;
// may be null).
void softmax_row_f32(const float* x, float* y, std::size_t n, bool log, double* scratch, float max,
                     bool stream, const float* next_row = nullptr);
// The same row with float16 (bf16 false) or bfloat16 outputs, each rounded once from its double
// result (x: the 16-bit row widened; Note [16-bit softmax rows] in softmax.cc).
void softmax_row_16(const float* x, std::uint16_t* y, std::size_t n, bool log, double* scratch,
                    float max, bool bf16);
// softmax (or log_softmax) of rows <= kSoftmaxTileRows rows x[r] -> y[r] of n elements each,
// every row as softmax_row_f32 or softmax_row_16 would take it (maxes[r] its row_max_f32,
// finite, the row free of NaN), the same bits, the rows' sums combined side by side (Note
// [softmax row tiles] in row_softmax.cc); scratch holds kSoftmaxTileRows * n doubles.
inline constexpr std::size_t kSoftmaxTileRows = 8;
// The longest rows that take tiles: from about 192 floats a row's own exps hide most of its
// sums' chain and the tile's scratch (8 rows of doubles) outgrows L1; tiles measured no faster
// there, and slower from 320.
inline constexpr std::size_t kSoftmaxTileMaxLength = 160;
void softmax_tile_f32(const float* const* x, float* const* y, std::size_t n, std::size_t rows,
                      bool log, const float* maxes, double* scratch, bool stream);
void softmax_tile_16(const float* const* x, std::uint16_t* const* y, std::size_t n,
                     std::size_t rows, bool log, const float* maxes, double* scratch, bool bf16);

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

// Note [extreme columns]
// out[j] = the extreme (max, or min) of x[r * stride + j] over rows r in [0, rows), as amax and
// amin define it (reduce.cc's `better`): the first NaN in row order, else the largest (least),
// +0 above -0 for max and -0 below +0 for min; for j in [0, n). Each lane takes the rows in
// order with `better`'s choices, so the result is the walk's, bit for bit (amax over the channels
// of NCHW: `elementwise_bench --benchmark_filter=reduce_channels/amax`; docs/measurements.md).
void extreme_columns_f32(const float* x, std::size_t n, std::size_t rows, std::size_t stride,
                         bool is_max, float* out);

}  // namespace mpsim::simd
