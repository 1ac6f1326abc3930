// The row primitives of the reductions (row_stats.h): the float sums, sums of squares and
// centered moments in the lanes of Note [sum lanes], the products in the lanes of Note
// [product lanes], the column-sum rows and the row extremes. Sums are evaluated in double with
// separate multiplies and adds (never a fused multiply-add, which only some targets have), so
// the bits do not depend on the target.
#include <algorithm>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/row_sums.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/row_stats-inl.h"
#include "kernels_simd/row_stats.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void SumLanesF32(const float* x, std::size_t n, bool squares, double lanes[kSumLanes]) {
  SumLanes(x, n, squares, lanes);
}

// The wrapping int64 sum of n int32 (widened) or int64 values: any order gives the same sum
// modulo 2^64, so lanes do.
template <class T>
std::uint64_t SumIntRow(const T* x, std::size_t n) {
  const hn::ScalableTag<std::int64_t> d64;
  const std::size_t lanes = hn::Lanes(d64);
  auto acc = hn::Zero(d64);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    if constexpr (sizeof(T) == 4) {
      acc = hn::Add(
          acc, hn::PromoteTo(d64, hn::LoadU(hn::Rebind<std::int32_t, decltype(d64)>(), x + i)));
    } else {
      acc = hn::Add(acc, hn::LoadU(d64, x + i));
    }
  }
  HWY_ALIGN std::int64_t parts[HWY_MAX_BYTES / 8];
  hn::Store(acc, d64, parts);
  std::uint64_t total = 0;
  for (std::size_t k = 0; k < lanes; ++k) total += static_cast<std::uint64_t>(parts[k]);
  for (; i < n; ++i) total += static_cast<std::uint64_t>(static_cast<std::int64_t>(x[i]));
  return total;
}
std::uint64_t SumI32Row(const std::int32_t* x, std::size_t n) { return SumIntRow(x, n); }
std::uint64_t SumI64Row(const std::int64_t* x, std::size_t n) { return SumIntRow(x, n); }

// Note [float64 sum lanes] (row_stats.h): the lane sums and compensations live in two arrays
// of kF64SumLanes doubles that each block of kF64SumLanes terms updates vector by vector (whole
// lanes per vector on every target); the tail lane by lane with Neumaier::add's scalar steps.
void NeumaierLanesF64(const double* x, std::size_t n, bool squares, double sums[kF64SumLanes],
                      double comps[kF64SumLanes]) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  HWY_ALIGN double s[kF64SumLanes] = {}, c[kF64SumLanes] = {};
  std::size_t i = 0;
  for (; i + kF64SumLanes <= n; i += kF64SumLanes) {
    for (std::size_t k = 0; k < kF64SumLanes; k += N) {
      auto sum = hn::Load(dd, s + k), comp = hn::Load(dd, c + k);
      const auto v = hn::LoadU(dd, x + i + k);
      NeumaierAdd(sum, comp, squares ? hn::Mul(v, v) : v);
      hn::Store(sum, dd, s + k);
      hn::Store(comp, dd, c + k);
    }
  }
  for (; i < n; ++i) {
    Neumaier lane{s[i % kF64SumLanes], c[i % kF64SumLanes]};
    lane.add(squares ? x[i] * x[i] : x[i]);
    s[i % kF64SumLanes] = lane.sum;
    c[i % kF64SumLanes] = lane.comp;
  }
  for (std::size_t k = 0; k < kF64SumLanes; ++k) {
    sums[k] = s[k];
    comps[k] = c[k];
  }
}

// fold_lane_columns (row_stats.h): N outputs a vector, the tail output by output.
void FoldLaneColumns(const double* lanes, std::size_t lane_stride, std::size_t n, double* sums,
                     double* comps) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  std::size_t j = 0;
  for (; j + N <= n; j += N) {
    auto sum = hn::Zero(dd), comp = hn::Zero(dd);
    for (std::size_t k = 0; k < 8; ++k) {
      auto lane = [&](std::size_t q) { return hn::LoadU(dd, lanes + q * lane_stride + j); };
      NeumaierAdd(sum, comp,
                  hn::Add(hn::Add(lane(k), lane(k + 8)), hn::Add(lane(k + 16), lane(k + 24))));
    }
    hn::StoreU(sum, dd, sums + j);
    hn::StoreU(comp, dd, comps + j);
  }
  for (; j < n; ++j) {
    double l[kSumLanes], f[8];
    for (std::size_t k = 0; k < kSumLanes; ++k) l[k] = lanes[k * lane_stride + j];
    fold_lanes(l, f);
    Neumaier part;
    for (double v : f) part.add(v);
    sums[j] = part.sum;
    comps[j] = part.comp;
  }
}

// Note [extreme columns] (row_stats.h).
void ExtremeColumnsF32(const float* x, std::size_t n, std::size_t rows, std::size_t stride,
                       bool is_max, float* out) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const std::size_t lanes = hn::Lanes(d);
  // x replaces v: `better(x, v)` of reduce.cc.
  auto merge = [&](hn::Vec<decltype(d)> v, hn::Vec<decltype(d)> x) {
    const auto zero = hn::Zero(di);
    const auto sx = hn::RebindMask(d, hn::Lt(hn::BitCast(di, x), zero));
    const auto sv = hn::RebindMask(d, hn::Lt(hn::BitCast(di, v), zero));
    const auto tie = is_max ? hn::AndNot(sx, sv) : hn::AndNot(sv, sx);
    const auto wins = is_max ? hn::Gt(x, v) : hn::Lt(x, v);
    const auto take =
        hn::AndNot(hn::IsNaN(v), hn::Or(hn::IsNaN(x), hn::Or(hn::And(hn::Eq(x, v), tie), wins)));
    return hn::IfThenElse(take, x, v);
  };
  // Row by row (each row of the tile read front to back, as the prefetcher likes), the
  // outputs in `out` as the accumulators (n floats: a tile stays in L1).
  const std::size_t whole = n / lanes * lanes;
  std::copy(x, x + n, out);
  HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {};
  HWY_ALIGN float acc[HWY_MAX_BYTES / sizeof(float)] = {};
  for (std::size_t j = whole; j < n; ++j) acc[j - whole] = x[j];
  for (std::size_t r = 1; r < rows; ++r) {
    const float* row = x + r * stride;
    for (std::size_t j = 0; j < whole; j += lanes) {
      hn::StoreU(merge(hn::LoadU(d, out + j), hn::LoadU(d, row + j)), d, out + j);
    }
    if (whole < n) {
      for (std::size_t j = whole; j < n; ++j) buf[j - whole] = row[j];
      hn::Store(merge(hn::Load(d, acc), hn::Load(d, buf)), d, acc);
    }
  }
  for (std::size_t j = whole; j < n; ++j) out[j] = acc[j - whole];
}

// Note [row sums in row tiles] (row_stats.h).
void SumRowsF32(const float* x, std::size_t n, std::size_t rows, std::size_t stride, bool squares,
                double* out) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  HWY_ALIGN double lanes[kSumLanes];
  HWY_ALIGN double folded[8];
  HWY_ALIGN double tile[8 * 8];  // folded lane j of the tile's row r at tile[j * 8 + r]
  for (std::size_t r0 = 0; r0 < rows; r0 += N) {
    const std::size_t tile_rows = std::min(N, rows - r0);
    for (std::size_t r = 0; r < N; ++r) {
      if (r < tile_rows) {
        for (std::size_t k = 0; k < kSumLanes; k += N) hn::Store(hn::Zero(dd), dd, lanes + k);
        SumLanes(x + (r0 + r) * stride, n, squares, lanes);
        // fold_lanes: (l[j] + l[j + 8]) + (l[j + 16] + l[j + 24])
        for (std::size_t j = 0; j < 8; j += N) {
          const auto f =
              hn::Add(hn::Add(hn::Load(dd, lanes + j), hn::Load(dd, lanes + j + 8)),
                      hn::Add(hn::Load(dd, lanes + j + 16), hn::Load(dd, lanes + j + 24)));
          hn::Store(f, dd, folded + j);
        }
      } else {
        for (double& f : folded) f = 0;  // lanes past the last row: summed, never stored
      }
      for (std::size_t j = 0; j < 8; ++j) tile[j * 8 + r] = folded[j];
    }
    auto sum = hn::Zero(dd), comp = hn::Zero(dd);
    for (std::size_t j = 0; j < 8; ++j) NeumaierAdd(sum, comp, hn::Load(dd, tile + j * 8));
    auto total = hn::Zero(dd), total_comp = hn::Zero(dd);
    NeumaierAdd(total, total_comp, sum);
    NeumaierAdd(total, total_comp, comp);
    const auto value = hn::IfThenElse(hn::IsFinite(total), hn::Add(total, total_comp), total);
    HWY_ALIGN double values[8];
    hn::Store(value, dd, values);
    for (std::size_t r = 0; r < tile_rows; ++r) out[r0 + r] = values[r];
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

// Note [product columns] (row_stats.h): row by row, kProductBlocks rows between scalings, then
// the join; the tail outputs one by one with multiply_lane's steps.
void ProductColumnF32(const float* x, std::size_t n, std::size_t rows, std::size_t stride,
                      double* m, std::int64_t* e, double* p, std::int64_t* pe) {
  const DD dd;
  const hn::RebindToSigned<DD> di;
  const std::size_t N = hn::Lanes(dd);
  const std::size_t whole = n / N * N;
  std::fill(m, m + n, 1.0);
  std::fill(e, e + n, std::int64_t{0});
  for (std::size_t i = 0; i < rows; i += kProductBlocks) {
    const std::size_t end = std::min(rows, i + kProductBlocks);
    for (std::size_t j = 0; j < whole; j += N) {
      auto mv = hn::LoadU(dd, m + j);
      for (std::size_t b = i; b < end; ++b) mv = hn::Mul(mv, LoadWide(x + b * stride + j));
      auto ev = hn::LoadU(di, e + j);
      TakeExponents(mv, ev);
      hn::StoreU(mv, dd, m + j);
      hn::StoreU(ev, di, e + j);
    }
    for (std::size_t j = whole; j < n; ++j) {
      for (std::size_t b = i; b < end; ++b) multiply_lane(m[j], e[j], x[b * stride + j]);
    }
  }
  // the join: the chunk's `part.e += exps[k]; part.p *= lanes[k]`
  for (std::size_t j = 0; j < whole; j += N) {
    hn::StoreU(hn::Add(hn::LoadU(di, pe + j), hn::LoadU(di, e + j)), di, pe + j);
    hn::StoreU(hn::Mul(hn::LoadU(dd, p + j), hn::LoadU(dd, m + j)), dd, p + j);
  }
  for (std::size_t j = whole; j < n; ++j) {
    pe[j] += e[j];
    p[j] *= m[j];
  }
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

void CenteredMomentsLanesF32(const float* x, std::size_t n, double center,
                             double lanes_d[kSumLanes], double lanes_q[kSumLanes]) {
  CenteredMomentsLanes(x, n, center, lanes_d, lanes_q);
}

template <std::size_t kRows, bool kSquares>
HWY_INLINE void AddRows(const float* x, std::size_t n, std::size_t stride, double* acc,
                        const float* next) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    if (next != nullptr) hwy::Prefetch(next + i);  // the next row of the sweep: a hint
    auto a = hn::LoadU(dd, acc + i);
    for (std::size_t r = 0; r < kRows; ++r) {
      auto v = LoadWide(x + r * stride + i);
      if constexpr (kSquares) v = hn::Mul(v, v);
      a = hn::Add(a, v);
    }
    hn::StoreU(a, dd, acc + i);
  }
  for (; i < n; ++i) {
    for (std::size_t r = 0; r < kRows; ++r) {
      const double v = x[r * stride + i];
      acc[i] += kSquares ? v * v : v;
    }
  }
}

void AddRowsF64(const float* x, std::size_t n, std::size_t rows, std::size_t stride, bool squares,
                double* acc, const float* next) {
  for (; rows >= 4; rows -= 4, x += 4 * stride) {
    (squares ? AddRows<4, true> : AddRows<4, false>)(x, n, stride, acc, rows > 4 ? nullptr : next);
  }
  for (; rows > 0; --rows, x += stride) {
    (squares ? AddRows<1, true> : AddRows<1, false>)(x, n, stride, acc, rows > 1 ? nullptr : next);
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

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(SumLanesF32);
HWY_EXPORT(SumRowsF32);
HWY_EXPORT(FoldLaneColumns);
HWY_EXPORT(ExtremeColumnsF32);
HWY_EXPORT(NeumaierLanesF64);
HWY_EXPORT(SumI32Row);
HWY_EXPORT(SumI64Row);
HWY_EXPORT(ProductLanesF32);
HWY_EXPORT(ProductColumnF32);
HWY_EXPORT(CenteredSquaresLanesF32);
HWY_EXPORT(CenteredMomentsLanesF32);
HWY_EXPORT(AddRowsF64);
HWY_EXPORT(RowMaxF32);
HWY_EXPORT(RowExtremeF32);

void sum_lanes_f32(const float* x, std::size_t n, bool squares, double lanes[kSumLanes]) {
  HWY_DYNAMIC_DISPATCH(SumLanesF32)(x, n, squares, lanes);
}
std::uint64_t sum_int_row(const std::int32_t* x, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(SumI32Row)(x, n);
}
std::uint64_t sum_int_row(const std::int64_t* x, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(SumI64Row)(x, n);
}
void neumaier_lanes_f64(const double* x, std::size_t n, bool squares, double sums[kF64SumLanes],
                        double comps[kF64SumLanes]) {
  HWY_DYNAMIC_DISPATCH(NeumaierLanesF64)(x, n, squares, sums, comps);
}
void fold_lane_columns(const double* lanes, std::size_t lane_stride, std::size_t n, double* sums,
                       double* comps) {
  HWY_DYNAMIC_DISPATCH(FoldLaneColumns)(lanes, lane_stride, n, sums, comps);
}
void extreme_columns_f32(const float* x, std::size_t n, std::size_t rows, std::size_t stride,
                         bool is_max, float* out) {
  HWY_DYNAMIC_DISPATCH(ExtremeColumnsF32)(x, n, rows, stride, is_max, out);
}
void sum_rows_f32(const float* x, std::size_t n, std::size_t rows, std::size_t stride, bool squares,
                  double* out) {
  HWY_DYNAMIC_DISPATCH(SumRowsF32)(x, n, rows, stride, squares, out);
}
void product_lanes_f32(const float* x, std::size_t n, double lanes[kSumLanes],
                       std::int64_t exps[kSumLanes]) {
  HWY_DYNAMIC_DISPATCH(ProductLanesF32)(x, n, lanes, exps);
}
void product_column_f32(const float* x, std::size_t n, std::size_t rows, std::size_t stride,
                        double* m, std::int64_t* e, double* p, std::int64_t* pe) {
  HWY_DYNAMIC_DISPATCH(ProductColumnF32)(x, n, rows, stride, m, e, p, pe);
}
void centered_squares_lanes_f32(const float* x, std::size_t n, double center,
                                double lanes[kSumLanes]) {
  HWY_DYNAMIC_DISPATCH(CenteredSquaresLanesF32)(x, n, center, lanes);
}
void centered_moments_lanes_f32(const float* x, std::size_t n, double center,
                                double lanes_d[kSumLanes], double lanes_q[kSumLanes]) {
  HWY_DYNAMIC_DISPATCH(CenteredMomentsLanesF32)(x, n, center, lanes_d, lanes_q);
}
void add_rows_f64(const float* x, std::size_t n, std::size_t rows, std::size_t stride,
                  bool squares, double* acc, const float* next) {
  HWY_DYNAMIC_DISPATCH(AddRowsF64)(x, n, rows, stride, squares, acc, next);
}
float row_max_f32(const float* x, std::size_t n, bool* has_nan) {
  return HWY_DYNAMIC_DISPATCH(RowMaxF32)(x, n, has_nan);
}
float row_extreme_f32(const float* x, std::size_t n, bool is_max, bool* has_nan) {
  return HWY_DYNAMIC_DISPATCH(RowExtremeF32)(x, n, is_max, has_nan);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
