// The float softmax rows of row_stats.h: exp(x - max) by the table of Note [softmax exp], its
// sum in the lanes of Note [sum lanes] (sum_exp_lanes_f32, logsumexp's), and softmax and
// log_softmax rows in one exp pass (softmax_row_f32). Every result but the exp is evaluated in
// double with separate multiplies and adds; the exp fuses where the target can, which moves
// the double result by an ulp or two, far below the float rounding.
#include <cmath>
#include <cstdint>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/row_softmax.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "core/dtype.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/cast16-inl.h"
#include "kernels_simd/row_stats-inl.h"
#include "kernels_simd/row_stats.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rows whose max is finite and that hold no NaN (softmax.cc sends the others to its scalar
// path). t = x - max (in double; t <= 0), e = exp(t) (0 below -708, where exp(t) / sum cannot
// reach the float range), the sum of e in lanes (Note [sum lanes]), then y = e * (1 / sum)
// or y = t - log(sum), rounded once.
//
// Note [softmax exp]: exp(t) for t in [-708, 0] as 2^k 2^(j/16) exp(r), where
// t = (16 k + j) ln2/16 + r with |r| <= ln2/32: 2^(j/16) from a 16-entry table (one vpermt2pd
// on AVX-512, a gather elsewhere), exp(r) a degree-5 polynomial with c0 = c1 = 1
// (tools/gen_exp16_table.py: relative error 2^-47.35), 2^k added to the table entry's
// exponent (vscalefpd on AVX-512). The polynomial runs in Estrin's form with the table entry folded
// in (TimesExpR): 13 instructions per vector instead of ExpCore's 18 (Taylor to r^11 on |r| <=
// ln2/2), and a chain of 9 dependent ones from t instead of 11, which lets more vectors overlap:
// faster in cache (docs/measurements.md). Relative error <
// 2^-47 (the table entries and the evaluation add < 2^-51; row_paths_test measures 2^-47.31 on
// every target).
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
  return hn::Vec<DD>{_mm512_maskz_scalef_pd(0xFF, TimesExpR(Exp2Sixteenths(bits), r).raw, kf.raw)};
#else
  // (bits >> 4) << 52 is k << 52: bits 4..15 of the mantissa hold k (two's complement);
  // the exponent and the constant's leading bit shift out of the word.
  const auto scaled = hn::BitCast(dd, hn::Add(hn::BitCast(du, Exp2Sixteenths(bits)),
                                              hn::ShiftLeft<52>(hn::ShiftRight<4>(bits))));
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
  for (; i + N <= n; i += N)
    hn::StoreU(ExpShifted(hn::Sub(LoadWide(x + i), vmax)), dd, scratch + i);
  if (i < n) {
    StoreFirst(ExpShifted(hn::Sub(LoadWideFirst(x + i, n - i), vmax)), dd, scratch + i, n - i);
  }
}

void SumExpLanesF32(const float* x, std::size_t n, double max, double* scratch,
                    double lanes[kSumLanes]) {
  ExpShiftedRow(x, 0, n, max, scratch);
  AccumulateLanes(
      n, lanes, [scratch](std::size_t k) { return hn::LoadU(DD(), scratch + k); },
      [scratch](std::size_t k) { return scratch[k]; });
}

// One pass over the row: scratch[i] = exp(x[i] - max) (log_softmax, kCountMaxima: only past
// the 32-aligned part, which the scalar lanes read), the terms other than the maxima added
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
        const auto e = ExpShifted(t);  // log_softmax's outputs need no e: not stored
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

// The outputs of a softmax row: float, or the bits of float16 or bfloat16 (Note [16-bit softmax
// rows] in softmax.cc), each rounded once from the double result.
enum class RowOut { kF32, kF16, kBF16 };
template <RowOut kOut>
using OutT = std::conditional_t<kOut == RowOut::kF32, float, std::uint16_t>;

// The 16-bit codes of r, each rounded once.
template <RowOut kOut>
HWY_INLINE hn::Vec<hn::Rebind<std::uint16_t, DD>> Bits16(hn::Vec<DD> r) {
  const DD dd;
  const hn::Rebind<float, DD> df;
  const auto f =
      kOut == RowOut::kBF16 ? F64ToF32RoundOddForBF16(dd, r) : F64ToF32RoundOddForF16(dd, r);
  return kOut == RowOut::kBF16 ? F32ToBF16Bits(df, f) : F32ToF16Bits(df, f);
}

// r rounded once to the output type at y.
template <RowOut kOut>
HWY_INLINE void StoreOut(hn::Vec<DD> r, OutT<kOut>* y, bool stream) {
  if constexpr (kOut == RowOut::kF32) {
    StoreRounded(r, y, stream);
  } else {
    hn::StoreU(Bits16<kOut>(r), hn::Rebind<std::uint16_t, DD>(), y);
  }
}
// The first `count` lanes of r (count below the lanes), rounded as StoreOut rounds them.
template <RowOut kOut>
HWY_INLINE void StoreOutFirst(hn::Vec<DD> r, OutT<kOut>* y, std::size_t count) {
  if constexpr (kOut != RowOut::kF32) {
    StoreFirst(Bits16<kOut>(r), hn::Rebind<std::uint16_t, DD>(), y, count);
  } else if constexpr (kMaskedTails) {
    StoreFirst(hn::DemoteTo(DF(), r), DF(), y, count);  // StoreRounded's rounding there
  } else {
    HWY_ALIGN float out[hn::MaxLanes(DF())];
    StoreRounded(r, out);
    for (std::size_t j = 0; j < count; ++j) y[j] = out[j];
  }
}

// y = e * inv for a softmax row's exps e, each rounded once (streaming stores where y is
// aligned to the float vector).
template <RowOut kOut>
HWY_INLINE void ScaleRow(const double* e, OutT<kOut>* y, std::size_t n, double inv, bool stream) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  stream = stream && kOut == RowOut::kF32 &&
           reinterpret_cast<std::uintptr_t>(y) % (N * sizeof(float)) == 0;
  const auto vinv = hn::Set(dd, inv);
  std::size_t i = 0;
  for (; i + N <= n; i += N) StoreOut<kOut>(hn::Mul(hn::LoadU(dd, e + i), vinv), y + i, stream);
  if (i < n) StoreOutFirst<kOut>(hn::Mul(LoadFirst(e + i, n - i), vinv), y + i, n - i);
}

// y = (x - max) - log_sum for a log_softmax row, each rounded once (streaming stores where y
// is aligned to the float vector).
template <RowOut kOut>
HWY_INLINE void LogRow(const float* x, OutT<kOut>* y, std::size_t n, double max, double log_sum,
                       bool stream) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  stream = stream && kOut == RowOut::kF32 &&
           reinterpret_cast<std::uintptr_t>(y) % (N * sizeof(float)) == 0;
  const auto vmax = hn::Set(dd, max);
  // A log_sum below half an ulp of t vanishes in the subtraction; the exact value is still
  // below t, which matters when t is a tie of the output grid: step down one double ulp
  // (t < 0 there, so one more in the bit pattern).
  const hn::RebindToSigned<DD> di;
  const auto vls = hn::Set(dd, log_sum);
  auto log_of = [&](hn::Vec<DD> t) {
    const auto r = hn::Sub(t, vls);
    const auto down = hn::BitCast(dd, hn::Add(hn::BitCast(di, r), hn::Set(di, 1)));
    return log_sum > 0 ? hn::IfThenElse(hn::And(hn::Eq(r, t), hn::IsFinite(t)), down, r) : r;
  };
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    StoreOut<kOut>(log_of(hn::Sub(LoadWide(x + i), vmax)), y + i, stream);
  }
  if (i < n) StoreOutFirst<kOut>(log_of(hn::Sub(LoadWideFirst(x + i, n - i), vmax)), y + i, n - i);
}

template <RowOut kOut>
void SoftmaxRow(const float* x, OutT<kOut>* y, std::size_t n, bool log, double* scratch,
                float row_max, bool stream, const float* next_row) {
  const double max = row_max;
  // log_softmax: the maxima contribute exactly 1 each: they are counted, not added, so that
  // the lane holding a max does not round away the small terms (log_softmax of the max is
  // -log1p(z)). softmax adds them (ExpSumRow).
  double lanes[kSumLanes] = {};
  const std::size_t maxima = log ? ExpSumRow<true>(x, n, max, scratch, lanes, next_row)
                                 : ExpSumRow<false>(x, n, max, scratch, lanes, next_row);
  const Neumaier total = combine_lanes(lanes, static_cast<double>(maxima));
  const double sum = total.sum, comp = total.comp;
  if (!log) {
    ScaleRow<kOut>(scratch, y, n, 1.0 / (sum + comp), stream);
    return;
  }
  LogRow<kOut>(x, y, n, max, log_of_sum(sum, comp, maxima), stream);
}

void SoftmaxRowF32(const float* x, float* y, std::size_t n, bool log, double* scratch,
                   float row_max, bool stream, const float* next_row) {
  SoftmaxRow<RowOut::kF32>(x, y, n, log, scratch, row_max, stream, next_row);
}
void SoftmaxRow16(const float* x, std::uint16_t* y, std::size_t n, bool log, double* scratch,
                  float row_max, bool bf16) {
  if (bf16) {
    SoftmaxRow<RowOut::kBF16>(x, y, n, log, scratch, row_max, false, nullptr);
  } else {
    SoftmaxRow<RowOut::kF16>(x, y, n, log, scratch, row_max, false, nullptr);
  }
}

// Note [softmax row tiles]
// Short softmax and log_softmax rows run up to kSoftmaxTileRows at a time: each row's exps, sum
// lanes and maxima as SoftmaxRow's (ExpSumRow), its 32 lanes folded as fold_lanes folds them,
// then combine_lanes's Neumaier steps for the tile's rows across vector lanes, one row per
// lane (NeumaierAdd: the same IEEE operations in the same order, so the same sums), and
// softmax's 1 / (sum + comp) for all the rows at once; each row then scales (or takes its
// log_of_sum and subtracts it) as SoftmaxRow's. The bits are SoftmaxRow's. Alone, a row of 64
// floats waits on its scalar chain of nine Neumaier steps and a division between its exps and
// its outputs, and that chain costs about what the exps do:
// softmax over the last dim of [2, 320, 64, 64] float32 takes 2.4-2.5 ms in tiles, 3.4 row by
// row, and of [2, 8, 4096, 77] 7.7-7.9 ms against 9.0 (log_softmax 8.6-8.7 against 10.4-10.7),
// one thread (`bench/torch_sweep.py --filter softmax`).
template <RowOut kOut>
void SoftmaxTile(const float* const* x, OutT<kOut>* const* y, std::size_t n, std::size_t rows,
                 bool log, const float* maxes, double* scratch, bool stream) {
  const DD dd;
  const std::size_t N = hn::Lanes(dd);
  HWY_ALIGN double lanes[kSumLanes];
  HWY_ALIGN double tile[8 * kSoftmaxTileRows] = {};  // folded lane j of row r at j * 8 + r
  HWY_ALIGN double folded[8];
  HWY_ALIGN double ones[kSoftmaxTileRows] = {};  // the maxima log_softmax counts
  std::size_t maxima[kSoftmaxTileRows] = {};
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t k = 0; k < kSumLanes; k += N) hn::Store(hn::Zero(dd), dd, lanes + k);
    double* e = scratch + r * n;
    maxima[r] = log ? ExpSumRow<true>(x[r], n, maxes[r], e, lanes, nullptr)
                    : ExpSumRow<false>(x[r], n, maxes[r], e, lanes, nullptr);
    ones[r] = static_cast<double>(maxima[r]);
    // fold_lanes: (l[j] + l[j + 8]) + (l[j + 16] + l[j + 24])
    for (std::size_t j = 0; j < 8; j += N) {
      const auto f = hn::Add(hn::Add(hn::Load(dd, lanes + j), hn::Load(dd, lanes + j + 8)),
                             hn::Add(hn::Load(dd, lanes + j + 16), hn::Load(dd, lanes + j + 24)));
      hn::Store(f, dd, folded + j);
    }
    for (std::size_t j = 0; j < 8; ++j) tile[j * kSoftmaxTileRows + r] = folded[j];
  }
  HWY_ALIGN double sums[kSoftmaxTileRows], comps[kSoftmaxTileRows], inv[kSoftmaxTileRows];
  for (std::size_t r0 = 0; r0 < kSoftmaxTileRows; r0 += N) {
    // combine_lanes(lanes, ones): Neumaier from zero over the maxima counted (none for
    // softmax, which adds them into the lanes) and the 8 folded lanes
    auto sum = hn::Zero(dd), comp = hn::Zero(dd);
    NeumaierAdd(sum, comp, hn::Load(dd, ones + r0));
    for (std::size_t j = 0; j < 8; ++j) {
      NeumaierAdd(sum, comp, hn::Load(dd, tile + j * kSoftmaxTileRows + r0));
    }
    hn::Store(sum, dd, sums + r0);
    hn::Store(comp, dd, comps + r0);
    hn::Store(hn::Div(hn::Set(dd, 1.0), hn::Add(sum, comp)), dd, inv + r0);
  }
  for (std::size_t r = 0; r < rows; ++r) {
    if (log) {
      LogRow<kOut>(x[r], y[r], n, maxes[r], log_of_sum(sums[r], comps[r], maxima[r]), stream);
    } else {
      ScaleRow<kOut>(scratch + r * n, y[r], n, inv[r], stream);
    }
  }
}

void SoftmaxTileF32(const float* const* x, float* const* y, std::size_t n, std::size_t rows,
                    bool log, const float* maxes, double* scratch, bool stream) {
  SoftmaxTile<RowOut::kF32>(x, y, n, rows, log, maxes, scratch, stream);
}
void SoftmaxTile16(const float* const* x, std::uint16_t* const* y, std::size_t n,
                   std::size_t rows, bool log, const float* maxes, double* scratch, bool bf16) {
  if (bf16) {
    SoftmaxTile<RowOut::kBF16>(x, y, n, rows, log, maxes, scratch, false);
  } else {
    SoftmaxTile<RowOut::kF16>(x, y, n, rows, log, maxes, scratch, false);
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(SoftmaxRowF32);
HWY_EXPORT(SoftmaxRow16);
HWY_EXPORT(SoftmaxTileF32);
HWY_EXPORT(SoftmaxTile16);
HWY_EXPORT(SumExpLanesF32);

void sum_exp_lanes_f32(const float* x, std::size_t n, double max, double* scratch,
                       double lanes[kSumLanes]) {
  HWY_DYNAMIC_DISPATCH(SumExpLanesF32)(x, n, max, scratch, lanes);
}
void softmax_row_f32(const float* x, float* y, std::size_t n, bool log, double* scratch, float max,
                     bool stream, const float* next_row) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRowF32)(x, y, n, log, scratch, max, stream, next_row);
}
void softmax_row_16(const float* x, std::uint16_t* y, std::size_t n, bool log, double* scratch,
                    float max, bool bf16) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRow16)(x, y, n, log, scratch, max, bf16);
}
void softmax_tile_f32(const float* const* x, float* const* y, std::size_t n, std::size_t rows,
                      bool log, const float* maxes, double* scratch, bool stream) {
  HWY_DYNAMIC_DISPATCH(SoftmaxTileF32)(x, y, n, rows, log, maxes, scratch, stream);
}
void softmax_tile_16(const float* const* x, std::uint16_t* const* y, std::size_t n,
                     std::size_t rows, bool log, const float* maxes, double* scratch, bool bf16) {
  HWY_DYNAMIC_DISPATCH(SoftmaxTile16)(x, y, n, rows, log, maxes, scratch, bf16);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
