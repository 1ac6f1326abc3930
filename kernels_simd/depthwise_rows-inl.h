// The row kernels of the depthwise convolution per Highway target (Note [depthwise] in conv.cc),
// for x and the output in S: float, double, Half or BFloat16 (depthwise_rows.cc, _f64.cc,
// _f16.cc and _bf16.cc instantiate them). Every output is one chain:
// acc = 0, acc = acc + x w over its taps (kh, kw) inside x, in order (a tap in the padding is
// skipped, never 0 x w), then acc + bias, stored. Golden runs the chain in double lanes: a
// product of two floats (or of two widened 16-bit values) is exact in double, so a fused and an
// unfused multiply-add round alike, and the bits are the scalar double chain's on every target;
// the sum is rounded to S once. float64 runs the double chain unfused (Madd), for the same
// reason. Fast runs float32 and the 16-bit types in float lanes, fused where the target has FMA,
// rounded to S once. No chain depends on its lane, its block or the layout, so channels-last and
// NCHW, and any split of the rows, give the same bits. Channels-last rows are vectorized over the
// channels, NCHW rows along the row (Note [direct NCHW rows], Note [staged rows]). Included after
// `hwy/foreach_target.h`; opens HWY_NAMESPACE itself.
#if defined(MPSIM_KERNELS_SIMD_DEPTHWISE_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPSIM_KERNELS_SIMD_DEPTHWISE_ROWS_INL_H_
#undef MPSIM_KERNELS_SIMD_DEPTHWISE_ROWS_INL_H_
#else
#define MPSIM_KERNELS_SIMD_DEPTHWISE_ROWS_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/dtype.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/cast16-inl.h"
#include "kernels_simd/depthwise_rows.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Chains computed together, their sums in registers: channels-last, blocks of pixels times
// vectors of channels; NCHW, blocks of rows at a vector of columns. Eight independent chains
// cover the multiply-add latency (4 cycles) at two a cycle, and leave registers for the
// weights on AVX2's sixteen.
constexpr std::size_t kChains = 8;
// Adjacent pixels of a channels-last block, sharing each weight load.
constexpr std::size_t kBlock = 4;
// Output rows of an NCHW block, sharing each weight.
constexpr std::size_t kRows = kChains;

template <class S>
constexpr bool kHalfStorage = std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>;

// Elements of S in a 64-byte line: the prefetches' step.
template <class S>
constexpr std::int64_t kLine = 64 / static_cast<std::int64_t>(sizeof(S));

// acc + x w: fused for float32 and the 16-bit types (Golden's double products of them are exact,
// so fused or not they round alike), unfused for float64, whose products round: the scalar
// chain's bits on every target, FMA or not.
template <class S, class V>
HWY_INLINE V Madd(V x, V w, V acc) {
  if constexpr (std::is_same_v<S, double>) {
    return hn::Add(acc, hn::Mul(x, w));
  } else {
    return hn::MulAdd(x, w, acc);
  }
}

// The 16-bit values at p as float lanes of df, exactly (float16 through F16C where the target
// has it: a signalling NaN comes out quiet, which the multiply-add would make it anyway, so the
// sums keep their bits).
template <class S, class DF>
HWY_INLINE hn::Vec<DF> LoadHalf(DF df, const S* HWY_RESTRICT p) {
  const hn::Rebind<std::uint16_t, DF> d16;
  const auto bits = hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(p));
  if constexpr (std::is_same_v<S, BFloat16>) {
    return BF16BitsToF32(df, bits);
  } else {
    return F16BitsToF32ForArithmetic(df, bits);
  }
}

// x's values at p as lanes of D: as they are, or widened exactly (float or 16-bit values to
// Golden's double lanes, 16-bit values to Fast's float lanes).
template <class D, class S>
HWY_INLINE hn::Vec<D> LoadX(D d, const S* HWY_RESTRICT p) {
  using T = hn::TFromD<D>;
  if constexpr (std::is_same_v<S, T>) {
    return hn::LoadU(d, p);
  } else if constexpr (std::is_same_v<S, float>) {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, D>(), p));
  } else if constexpr (sizeof(T) == sizeof(float)) {
    return LoadHalf(d, p);
  } else {
    return hn::PromoteTo(d, LoadHalf(hn::Rebind<float, D>(), p));
  }
}

// Float lanes rounded to the 16-bit S, to nearest even, and stored at p.
template <class S, class DF>
HWY_INLINE void StoreHalf(DF df, hn::Vec<DF> v, S* HWY_RESTRICT p) {
  const hn::Rebind<std::uint16_t, DF> d16;
  auto* bits = reinterpret_cast<std::uint16_t*>(p);
  if constexpr (std::is_same_v<S, BFloat16>) {
    hn::StoreU(F32ToBF16Bits(df, v), d16, bits);
  } else {
    hn::StoreU(F32ToF16Bits(df, v), d16, bits);
  }
}

// Stores the sums v at p, rounded once to S. Golden's double sums reach a 16-bit S through
// float by round-to-odd (F64ToF32RoundOdd), which gives the double's correctly rounded 16-bit
// value: the scalar loop's bits (Half(double), BFloat16(double) in core/dtype.h).
template <class D, class S>
HWY_INLINE void StoreOut(D d, hn::Vec<D> v, S* HWY_RESTRICT p) {
  using T = hn::TFromD<D>;
  if constexpr (std::is_same_v<S, T>) {
    hn::StoreU(v, d, p);
  } else if constexpr (sizeof(T) == sizeof(float)) {
    StoreHalf(d, v, p);
  } else if constexpr (kHalfStorage<S>) {
    StoreHalf(hn::Rebind<float, D>(), F64ToF32RoundOdd(d, v), p);
  } else {
    hn::StoreU(F64ToF32(d, v), hn::Rebind<float, D>(), p);
  }
}

// One output row i. Its taps lie on x's rows i stride_h - pad_h + kh dilation_h for kh in
// [kh_begin, kh_end) (the other rows are padding); x points at the first of them, at column 0
// and the first channel.
template <class T, class S>
struct Row {
  const S* x = nullptr;
  std::int64_t kh_begin = 0, kh_end = 0;
  const T* w = nullptr;
  std::int64_t w_tap = 0;   // the distance between two taps' weights
  const T* bias = nullptr;  // or null
  S* out = nullptr;         // the output row, at column 0 and the first channel
};

// Output row i's taps kh in [begin, end) lie on x's rows, the others in the padding.
struct TapRows {
  std::int64_t begin, end;
};

HWY_INLINE TapRows TapRowsAt(const DepthwiseArgs& a, std::int64_t i) {
  const std::int64_t top = i * a.stride_h - a.pad_h;  // x's row of tap kh = 0
  const std::int64_t last = a.height - 1 - top;       // of kh dilation_h
  return {top >= 0 ? 0 : (-top + a.dilation_h - 1) / a.dilation_h,
          last < 0 ? 0 : std::min(a.kernel_h, last / a.dilation_h + 1)};
}

template <class T, class S>
HWY_INLINE Row<T, S> RowAt(const DepthwiseArgs& a, const S* x, S* out, std::int64_t i) {
  Row<T, S> r;
  const TapRows taps = TapRowsAt(a, i);
  r.kh_begin = taps.begin;
  r.kh_end = taps.end;
  if (r.kh_begin < r.kh_end) {
    r.x = x + (i * a.stride_h - a.pad_h + r.kh_begin * a.dilation_h) * a.x_h_stride;
  }
  r.w = static_cast<const T*>(a.weights);
  r.bias = static_cast<const T*>(a.bias);
  r.out = out + i * a.out_h_stride;
  return r;
}

// Writes the sums of kB adjacent pixels from column j, kC vectors of channels from c, each plus
// its bias (when there is one) and rounded once.
template <std::size_t kB, std::size_t kC, class D, class S>
HWY_INLINE void StorePixels(D d, const DepthwiseArgs& a, const Row<hn::TFromD<D>, S>& r,
                            const hn::Vec<D> (&acc)[kB * kC], std::int64_t j, std::int64_t c) {
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  for (std::size_t b = 0; b < kB; ++b) {
    for (std::size_t v = 0; v < kC; ++v) {
      const std::int64_t at = c + static_cast<std::int64_t>(v) * n;
      auto sum = acc[b * kC + v];
      if (r.bias != nullptr) sum = hn::Add(sum, hn::LoadU(d, r.bias + at));
      StoreOut(d, sum, r.out + (j + static_cast<std::int64_t>(b)) * a.out_w_stride + at);
    }
  }
}

// kB adjacent pixels, columns j .. j + kB - 1 of a channels-last row, times kC vectors of
// channels from c. kEdge: skips the taps whose column is padding.
template <std::size_t kB, std::size_t kC, bool kEdge, class D, class S>
HWY_INLINE void Pixels(D d, const DepthwiseArgs& a, const Row<hn::TFromD<D>, S>& r, std::int64_t j,
                       std::int64_t c) {
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  hn::Vec<D> acc[kB * kC];
  for (auto& v : acc) v = hn::Zero(d);
  const std::int64_t step = a.stride_w * a.x_w_stride;
  const S* row = r.x + c;
  for (std::int64_t kh = r.kh_begin; kh < r.kh_end; ++kh, row += a.dilation_h * a.x_h_stride) {
    for (std::int64_t kw = 0; kw < a.kernel_w; ++kw) {
      const std::int64_t iw = j * a.stride_w - a.pad_w + kw * a.dilation_w;
      if (kEdge && (iw < 0 || iw >= a.width)) continue;
      const auto* w = r.w + (kh * a.kernel_w + kw) * r.w_tap + c;
      const S* x = row + iw * a.x_w_stride;
      for (std::size_t v = 0; v < kC; ++v) {
        const auto wv = hn::LoadU(d, w + static_cast<std::int64_t>(v) * n);
        for (std::size_t b = 0; b < kB; ++b) {
          const S* p = x + static_cast<std::int64_t>(b) * step + static_cast<std::int64_t>(v) * n;
          acc[b * kC + v] = Madd<S>(LoadX(d, p), wv, acc[b * kC + v]);
        }
      }
    }
  }
  StorePixels<kB, kC>(d, a, r, acc, j, c);
}

// Pixels as above, all interior, for stride_w and dilation_w 1 and kernel_w kKW: adjacent
// pixels' taps on a row of x share its columns, so each column is read (and widened) once for
// the block, kB + kKW - 1 of them instead of kB kKW. A pixel still takes its taps in (kh, kw)
// order: for each kh, column t gives pixel b its tap kw = t - b, in ascending t.
template <std::size_t kB, std::size_t kC, std::size_t kKW, class D, class S>
HWY_INLINE void SharedPixels(D d, const DepthwiseArgs& a, const Row<hn::TFromD<D>, S>& r,
                             std::int64_t j, std::int64_t c) {
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  hn::Vec<D> acc[kB * kC];
  for (auto& v : acc) v = hn::Zero(d);
  const S* row = r.x + (j - a.pad_w) * a.x_w_stride + c;
  for (std::int64_t kh = r.kh_begin; kh < r.kh_end; ++kh, row += a.dilation_h * a.x_h_stride) {
    const auto* w = r.w + kh * static_cast<std::int64_t>(kKW) * r.w_tap + c;
    for (std::size_t v = 0; v < kC; ++v) {
      const std::int64_t at = static_cast<std::int64_t>(v) * n;
      hn::Vec<D> wv[kKW];
      for (std::size_t kw = 0; kw < kKW; ++kw) {
        wv[kw] = hn::LoadU(d, w + static_cast<std::int64_t>(kw) * r.w_tap + at);
      }
      for (std::size_t t = 0; t < kB + kKW - 1; ++t) {
        const auto xv = LoadX(d, row + static_cast<std::int64_t>(t) * a.x_w_stride + at);
        for (std::size_t b = (t + 1 > kKW ? t + 1 - kKW : 0); b < kB && b <= t; ++b) {
          acc[b * kC + v] = Madd<S>(xv, wv[t - b], acc[b * kC + v]);
        }
      }
    }
  }
  StorePixels<kB, kC>(d, a, r, acc, j, c);
}

// kB pixels from column j, the channels from c: kChains / kB vectors at a time, then one, then
// the channels past the last vector with one lane each.
template <std::size_t kB, bool kEdge, class D, class S>
HWY_INLINE void NhwcPixels(D d, const DepthwiseArgs& a, const Row<hn::TFromD<D>, S>& r,
                           std::int64_t j, std::int64_t c = 0) {
  constexpr std::size_t kC = kChains / kB;
  const hn::CappedTag<hn::TFromD<D>, 1> d1;
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  if constexpr (!kEdge && kB > 1) {
    if (a.kernel_w == 3 && a.stride_w == 1 && a.dilation_w == 1) {
      for (; c + static_cast<std::int64_t>(kC) * n <= a.channels; c += kC * n) {
        SharedPixels<kB, kC, 3>(d, a, r, j, c);
      }
    }
  }
  for (; c + static_cast<std::int64_t>(kC) * n <= a.channels; c += kC * n) {
    Pixels<kB, kC, kEdge>(d, a, r, j, c);
  }
  for (; c + n <= a.channels; c += n) Pixels<kB, 1, kEdge>(d, a, r, j, c);
  for (; c + static_cast<std::int64_t>(kC) <= a.channels; c += kC) {
    Pixels<kB, kC, kEdge>(d1, a, r, j, c);
  }
  for (; c < a.channels; ++c) Pixels<kB, 1, kEdge>(d1, a, r, j, c);
}

// The output columns [lo, hi) whose taps all lie inside x's row.
struct InteriorColumns {
  std::int64_t lo, hi;
};

HWY_INLINE InteriorColumns InteriorColumnsOf(const DepthwiseArgs& a) {
  const std::int64_t lo = std::min(a.out_w, (a.pad_w + a.stride_w - 1) / a.stride_w);
  const std::int64_t last = a.width - 1 + a.pad_w - (a.kernel_w - 1) * a.dilation_w;
  return {lo, last < 0 ? lo : std::clamp(last / a.stride_w + 1, lo, a.out_w)};
}

// Note [held weights]
// Channels-last 3x3 kernels with stride_w and dilation_w 1 (depthwise_nhwc_held) run Held::
// kVectors vectors of channels at a time across all the task's rows, their nine weights held in
// registers, Held::kPixels adjacent outputs a step: each x vector is loaded once for the (up to)
// three outputs whose taps lie on it, and the channels' x rows stay in L1 from one output row to
// the next. Two empty asm statements steer GCC: one keeps the pointer that walks a kernel row's
// columns opaque (else GCC gives every column's offset a register of its own, the stride being
// known only at run time, more registers than there are), the other keeps each x vector in a
// register (else GCC folds each of its uses into its multiply-add as a load of its own). Border
// columns and rows with taps on padding rows take the same chains with those taps skipped;
// channels past the last whole step take the per-pixel kernels. Every chain keeps its taps,
// their order and its rounding (Note [depthwise]), so the bits are the per-pixel kernels'.
// They run faster than the per-pixel kernels in both precisions (the depthwise rows of
// `bench/report.py`), though on one core still short of the bench's scratch loop of the same shape
// (`MPSIM_NUM_THREADS=1 gemm_floor_bench --benchmark_filter=depthwise`, `dw_in_place`;
// docs/measurements.md).

// Adjacent outputs a step and vectors of channels per output, their sums and their 9 weights
// each held in registers: 4 x 2 in 32 registers (AVX-512; Golden's two double vectors cover a
// cache line of channels), 4 x 1 for Fast in 16 (AVX2), where Golden takes the per-pixel
// kernels.
template <class T>
struct Held {
#if HWY_MAX_BYTES >= 64
  static constexpr std::size_t kPixels = 4;
  static constexpr std::size_t kVectors = 2;
  static constexpr bool kUsed = true;
#else
  static constexpr std::size_t kPixels = 4;
  static constexpr std::size_t kVectors = 1;
  static constexpr bool kUsed = sizeof(T) == sizeof(float);
#endif
};

// Steps p on by `step` elements; the empty asm keeps the pointer opaque to GCC (Note [held
// weights]).
template <class T>
HWY_INLINE void Walk(T*& p, std::int64_t step) {
  p += step;
#if HWY_COMPILER_GCC
  asm("" : "+r"(p));
#endif
}

// v, held in a register: GCC would otherwise fold each of the (up to) three uses of an x vector
// into its multiply-add as a load of its own (Note [held weights]).
template <class V>
HWY_INLINE V InRegister(V v) {
#if HWY_COMPILER_GCC && HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
  asm("" : "+v"(v.raw));
#endif
  return v;
}

// kB adjacent outputs from column j at kV vectors of channels from c, written from out.
// rows[kh] points at x's row under kernel row kh, column 0, channel c, for kh in [r.kh_begin,
// r.kh_end). kEdge: some taps lie in the padding (rows or columns) and are skipped; else every
// tap lies inside x.
template <std::size_t kB, std::size_t kV, bool kEdge, class D, class S>
HWY_INLINE void HeldPixels(D d, const DepthwiseArgs& a, const Row<hn::TFromD<D>, S>& r,
                           const S* const (&rows)[3], const hn::Vec<D> (&w)[kV][9],
                           const hn::Vec<D> (&bias)[kV], bool has_bias, std::int64_t j, S* out) {
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  hn::Vec<D> acc[kV][kB];
  HWY_UNROLL(2)
  for (auto& vector : acc) {
    HWY_UNROLL(16)
    for (auto& v : vector) v = hn::Zero(d);
  }
  const std::int64_t left = j - a.pad_w;  // x's column under tap kw = 0 of output j
  HWY_UNROLL(3)
  for (std::int64_t kh = 0; kh < 3; ++kh) {
    if (kEdge && (kh < r.kh_begin || kh >= r.kh_end)) continue;
    const S* p = kEdge ? rows[kh] : rows[kh] + left * a.x_w_stride;
    HWY_UNROLL(16)
    for (std::size_t t = 0; t < kB + 2; ++t) {
      const std::int64_t column = left + static_cast<std::int64_t>(t);
      if (kEdge && (column < 0 || column >= a.width)) continue;
      const S* at = kEdge ? p + column * a.x_w_stride : p;
      HWY_UNROLL(2)
      for (std::size_t v = 0; v < kV; ++v) {
        const auto xv = InRegister(LoadX(d, at + static_cast<std::int64_t>(v) * n));
        HWY_UNROLL(16)
        for (std::size_t b = 0; b < kB; ++b) {
          if (t >= b && t - b < 3) acc[v][b] = Madd<S>(xv, w[v][kh * 3 + t - b], acc[v][b]);
        }
      }
      if constexpr (!kEdge) Walk(p, a.x_w_stride);
    }
  }
  HWY_UNROLL(16)
  for (std::size_t b = 0; b < kB; ++b) {
    HWY_UNROLL(2)
    for (std::size_t v = 0; v < kV; ++v) {
      StoreOut(d, has_bias ? hn::Add(acc[v][b], bias[v]) : acc[v][b],
               out + static_cast<std::int64_t>(v) * n);
    }
    Walk(out, a.out_w_stride);
  }
}

// Output rows [row_begin, row_end) of a channels-last image for a 3x3 kernel with stride_w and
// dilation_w 1 (Note [held weights]); the channels past the last kVectors vectors per pixel.
template <class D, class S>
void HeldRows(D d, const DepthwiseArgs& a, const S* x, S* out, std::int64_t row_begin,
              std::int64_t row_end) {
  using T = hn::TFromD<D>;
  constexpr std::size_t kB = Held<T>::kPixels, kV = Held<T>::kVectors;
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t pixels = static_cast<std::int64_t>(kB);
  const std::int64_t step = n * static_cast<std::int64_t>(kV);
  const auto [lo, hi] = InteriorColumnsOf(a);
  const T* weights = static_cast<const T*>(a.weights);
  const T* biases = static_cast<const T*>(a.bias);
  const bool has_bias = biases != nullptr;
  std::int64_t c = 0;
  for (; c + step <= a.channels; c += step) {
    hn::Vec<D> w[kV][9];
    hn::Vec<D> bias[kV];
    for (std::size_t v = 0; v < kV; ++v) {
      const std::int64_t cv = c + static_cast<std::int64_t>(v) * n;
      for (std::size_t t = 0; t < 9; ++t) {
        w[v][t] = hn::LoadU(d, weights + static_cast<std::int64_t>(t) * a.channels + cv);
      }
      bias[v] = has_bias ? hn::LoadU(d, biases + cv) : hn::Zero(d);
    }
    for (std::int64_t i = row_begin; i < row_end; ++i) {
      Row<T, S> r = RowAt<T>(a, x, out, i);
      const S* rows[3] = {};
      for (std::int64_t kh = r.kh_begin; kh < r.kh_end; ++kh) {
        rows[kh] = r.x + (kh - r.kh_begin) * a.dilation_h * a.x_h_stride + c;
      }
      S* row_out = r.out + c;
      const auto edge = [&](std::int64_t j) {
        HeldPixels<1, kV, true>(d, a, r, rows, w, bias, has_bias, j, row_out + j * a.out_w_stride);
      };
      std::int64_t j = 0;
      if (r.kh_begin != 0 || r.kh_end != 3) {  // taps on padding rows
        for (; j + pixels <= a.out_w; j += pixels) {
          HeldPixels<kB, kV, true>(d, a, r, rows, w, bias, has_bias, j,
                                   row_out + j * a.out_w_stride);
        }
        for (; j < a.out_w; ++j) edge(j);
        continue;
      }
      for (; j < lo; ++j) edge(j);
      for (; j + pixels <= hi; j += pixels) {
        HeldPixels<kB, kV, false>(d, a, r, rows, w, bias, has_bias, j,
                                  row_out + j * a.out_w_stride);
      }
      for (; j < hi; ++j) {
        HeldPixels<1, kV, false>(d, a, r, rows, w, bias, has_bias, j, row_out + j * a.out_w_stride);
      }
      for (; j < a.out_w; ++j) edge(j);
    }
  }
  if (c == a.channels) return;
  for (std::int64_t i = row_begin; i < row_end; ++i) {
    Row<T, S> r = RowAt<T>(a, x, out, i);
    r.w_tap = a.channels;
    for (std::int64_t j = 0; j < a.out_w; ++j) NhwcPixels<1, true>(d, a, r, j, c);
  }
}

// Interior columns (every tap inside x) in blocks of kBlock pixels; the others one by one.
template <class D, class S>
void NhwcRows(D d, const DepthwiseArgs& a, const S* x, S* out, std::int64_t row_begin,
              std::int64_t row_end) {
  using T = hn::TFromD<D>;
  if (Held<T>::kUsed && depthwise_nhwc_held(a)) return HeldRows(d, a, x, out, row_begin, row_end);
  const auto [lo, hi] = InteriorColumnsOf(a);
  for (std::int64_t i = row_begin; i < row_end; ++i) {
    Row<T, S> r = RowAt<T>(a, x, out, i);
    r.w_tap = a.channels;
    std::int64_t j = 0;
    for (; j < lo; ++j) NhwcPixels<1, true>(d, a, r, j);
    for (; j + static_cast<std::int64_t>(kBlock) <= hi; j += kBlock) {
      NhwcPixels<kBlock, false>(d, a, r, j);
    }
    for (; j < hi; ++j) NhwcPixels<1, false>(d, a, r, j);
    for (; j < a.out_w; ++j) NhwcPixels<1, true>(d, a, r, j);
  }
}

// Note [staged rows]
// An NCHW call off the direct route (Note [direct NCHW rows]: kernels other than 3x3, strides,
// dilations) copies the x rows of kDepthwiseChunkRows output rows at a time to scratch, each
// between zeros: pad_w before it, and after it up to the last column a vector of outputs
// reads. A vector then reads its taps with plain loads wherever it lies on the row, and the
// copies are written long before they are read (no store forwarding between the two). Lanes
// whose tap lies in the padding read a zero there and are masked off (kEdge), so the tap is
// still skipped, never 0 w. Rows narrower than a vector that the direct route cannot take
// (Note [narrow rows]) take this route, one vector a row: a staged row is wide enough for a
// whole vector's taps (depthwise_staged_width), and only the out_w lanes are stored.
template <class S>
struct Staged {
  const S* rows;       // staged row 0
  std::int64_t width;  // of a staged row: depthwise_staged_width
  std::int64_t first;  // x's row at staged row 0 (negative: padding)
  const S* row(std::int64_t ih) const { return rows + (ih - first) * width; }
};

// The lanes of a vector of outputs from column j whose tap kw lies inside x's row (lane l
// reads staged column j + l + kw dilation_w, x's column plus pad_w). Columns are exact in
// float lanes: a staged row is far below 2^24 columns.
template <class D>
HWY_INLINE hn::Mask<D> Inside(D d, const DepthwiseArgs& a, hn::Vec<D> iota, std::int64_t j,
                              std::int64_t kw) {
  using T = hn::TFromD<D>;
  const auto column = hn::Add(iota, hn::Set(d, static_cast<T>(j + kw * a.dilation_w)));
  return hn::And(hn::Ge(column, hn::Set(d, static_cast<T>(a.pad_w))),
                 hn::Lt(column, hn::Set(d, static_cast<T>(a.pad_w + a.width))));
}

// Stores rows i .. i + kR - 1 at the columns from j, each plus the bias (when there is one) and
// rounded once: the first `count` lanes (all of them, or the out_w columns of a row narrower
// than a vector, Note [staged rows]).
template <std::size_t kR, class D, class S>
HWY_INLINE void StoreRows(D d, const DepthwiseArgs& a, hn::Vec<D> (&acc)[kR],
                          const hn::TFromD<D>* bias, std::int64_t i, std::int64_t j, S* out,
                          std::int64_t count) {
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  for (std::size_t r = 0; r < kR; ++r) {
    if (bias != nullptr) acc[r] = hn::Add(acc[r], hn::Set(d, *bias));
    S* row = out + (i + static_cast<std::int64_t>(r)) * a.out_h_stride + j;
    if (count == n) {
      StoreOut(d, acc[r], row);
    } else {
      HWY_ALIGN S lanes[hn::MaxLanes(D())];
      StoreOut(d, acc[r], lanes);
      std::copy_n(lanes, count, row);
    }
  }
}

// Output rows i .. i + kR - 1 of an NCHW plane at the vector of columns from j (stride_w 1:
// lane l is column j + l): kR chains, one per row, each over its taps (kh, kw) in order, the
// rows sharing each weight. A row skips its taps kh on padding rows; kEdge: some lane's tap
// lies in the padding columns.
template <std::size_t kR, bool kEdge, class D, class S>
HWY_INLINE void Columns(D d, const DepthwiseArgs& a, const Staged<S>& st, const hn::TFromD<D>* w,
                        const hn::TFromD<D>* bias, std::int64_t i, std::int64_t j, S* out,
                        hn::Vec<D> iota, std::int64_t count) {
  hn::Vec<D> acc[kR];
  TapRows taps[kR];
  std::int64_t kh_begin = a.kernel_h, kh_end = 0;
  for (std::size_t r = 0; r < kR; ++r) {
    acc[r] = hn::Zero(d);
    taps[r] = TapRowsAt(a, i + static_cast<std::int64_t>(r));
    kh_begin = std::min(kh_begin, taps[r].begin);
    kh_end = std::max(kh_end, taps[r].end);
  }
  const std::int64_t top = i * a.stride_h - a.pad_h;  // x's row of row i's tap kh = 0
  for (std::int64_t kh = kh_begin; kh < kh_end; ++kh) {
    for (std::int64_t kw = 0; kw < a.kernel_w; ++kw) {
      const auto wv = hn::Set(d, w[kh * a.kernel_w + kw]);
      hn::Mask<D> inside{};
      if constexpr (kEdge) inside = Inside(d, a, iota, j, kw);
#pragma GCC unroll 16
      for (std::size_t r = 0; r < kR; ++r) {
        if (kh < taps[r].begin || kh >= taps[r].end) continue;
        const std::int64_t ih = top + static_cast<std::int64_t>(r) * a.stride_h + kh * a.dilation_h;
        const auto fma = Madd<S>(LoadX(d, st.row(ih) + j + kw * a.dilation_w), wv, acc[r]);
        if constexpr (kEdge) {
          acc[r] = hn::IfThenElse(inside, fma, acc[r]);
        } else {
          acc[r] = fma;
        }
      }
    }
  }
  StoreRows(d, a, acc, bias, i, j, out, count);
}

// Rows i .. i + kR - 1 of an NCHW plane, vector by vector along them, the last vector
// overlapping the one before it (recomputing the same bits) when the row is not a multiple of
// the lanes; a row narrower than a vector is one vector, its first out_w lanes stored.
template <std::size_t kR, class D, class S>
HWY_INLINE void RowBlock(D d, const DepthwiseArgs& a, const Staged<S>& st, const hn::TFromD<D>* w,
                         const hn::TFromD<D>* bias, std::int64_t i, S* out, hn::Vec<D> iota) {
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  // Columns [j, j + n) have every tap inside x's row when j >= pad_w and j + n <= end.
  const std::int64_t end = a.width + a.pad_w - (a.kernel_w - 1) * a.dilation_w;
  if (a.out_w < n) return Columns<kR, true>(d, a, st, w, bias, i, 0, out, iota, a.out_w);
  for (std::int64_t j = 0; j < a.out_w; j += n) {
    const std::int64_t at = std::min(j, a.out_w - n);
    if (at < a.pad_w || at + n > end) {
      Columns<kR, true>(d, a, st, w, bias, i, at, out, iota, n);
    } else {
      Columns<kR, false>(d, a, st, w, bias, i, at, out, iota, n);
    }
  }
}

// Rows [begin, end) of an NCHW plane: staged in chunks of kDepthwiseChunkRows rows (Note
// [staged rows]), each in blocks of kRows, 4, 2 and 1 rows. Not inlined: NchwRows calls it for
// three ranges of rows, and three inlined copies of its kernels tripled the file's compile time.
template <class D, class S>
HWY_NOINLINE void NchwRange(D d, const DepthwiseArgs& a, const S* x, S* out, const hn::TFromD<D>* w,
                          const hn::TFromD<D>* bias, std::int64_t begin, std::int64_t end,
                          S* scratch, hn::Vec<D> iota) {
  Staged<S> st{scratch, depthwise_staged_width(a), 0};
  for (std::int64_t chunk = begin; chunk < end; chunk += kDepthwiseChunkRows) {
    const std::int64_t chunk_end = std::min(end, chunk + kDepthwiseChunkRows);
    st.first = chunk * a.stride_h - a.pad_h;
    const std::int64_t last =
        (chunk_end - 1) * a.stride_h - a.pad_h + (a.kernel_h - 1) * a.dilation_h;
    for (std::int64_t ih = std::max<std::int64_t>(st.first, 0); ih <= std::min(last, a.height - 1);
         ++ih) {
      const S* src = x + ih * a.x_h_stride;
      S* dst = scratch + (ih - st.first) * st.width;
      std::fill(dst, dst + a.pad_w, S{});
      std::copy_n(src, a.width, dst + a.pad_w);
      std::fill(dst + a.pad_w + a.width, dst + st.width, S{});
    }
    // x's rows of the next chunk and this chunk's output rows start on their way from memory
    // (every 64-byte line) while this chunk computes: the staging copy above would otherwise
    // wait on each line, and the stores on each line's fetch.
    const std::int64_t next = std::min(last + 1, a.height);
    const std::int64_t next_last = std::min(last + kDepthwiseChunkRows * a.stride_h, a.height - 1);
    for (std::int64_t ih = std::max<std::int64_t>(next, 0); ih <= next_last; ++ih) {
      for (std::int64_t c = 0; c < a.width; c += kLine<S>) hwy::Prefetch(x + ih * a.x_h_stride + c);
    }
    for (std::int64_t i = chunk; i < chunk_end; ++i) {
      for (std::int64_t c = 0; c < a.out_w; c += kLine<S>)
        hwy::Prefetch(out + i * a.out_h_stride + c);
    }
    std::int64_t i = chunk;
    for (; i + static_cast<std::int64_t>(kRows) <= chunk_end; i += kRows) {
      RowBlock<kRows>(d, a, st, w, bias, i, out, iota);
    }
    if (i + 4 <= chunk_end) {
      RowBlock<4>(d, a, st, w, bias, i, out, iota);
      i += 4;
    }
    if (i + 2 <= chunk_end) {
      RowBlock<2>(d, a, st, w, bias, i, out, iota);
      i += 2;
    }
    if (i < chunk_end) RowBlock<1>(d, a, st, w, bias, i, out, iota);
  }
}

// Note [direct NCHW rows]
// The rows of a 3x3 kernel with stride_h 1 and unit dilations read x's plane in place: no
// staging copy. A tap on a padding row is skipped. A vector of outputs from column j reads tap kw
// at x's columns j + kw - pad_w + l. Where that run lies inside the row it is one unaligned load;
// at the row's ends the run clamped into the row is loaded and its lanes moved into place
// (DirectTap), and the lanes whose tap lies outside the row are masked off as in Columns
// (the tap skipped), so the chains and bits are the staged route's. The staged route spent
// most of its time on its per-row copies, zero fills and prefetches, which cost more than the
// 36 multiply-adds of a row of 64.

// Whether rows of a plane may take the direct route: a 3x3 kernel, stride_h 1, unit dilations,
// and x's and the output's rows of at least n columns (the clamped runs of DirectTap fit in x's,
// whole vectors in the output's).
HWY_INLINE bool DirectEligible(const DepthwiseArgs& a, std::int64_t n) {
  return a.kernel_h == 3 && a.kernel_w == 3 && a.stride_h == 1 && a.dilation_h == 1 &&
         a.dilation_w == 1 && a.width >= n && a.out_w >= n;
}

// Where tap kw of a vector of outputs reads x's row when some lane's column lies outside it
// (`masked`; Note [direct NCHW rows]): the run from `start`, clamped into the row, its lanes
// moved by `index`; `inside` masks the lanes whose column lies in the row.
template <class D>
struct DirectTap {
  // Defined here, under the target's attributes: GCC compiles an implicit constructor without
  // them, and on aarch64 then cannot inline Highway's mask constructor into it.
  HWY_INLINE DirectTap() {}
  std::int64_t start = 0;
  bool masked = false;
  hn::Mask<D> inside;
  decltype(hn::IndicesFromVec(D(), hn::Zero(hn::RebindToSigned<D>()))) index;
};

template <class D>
HWY_INLINE DirectTap<D> DirectTapAt(D d, const DepthwiseArgs& a, hn::Vec<D> iota, std::int64_t j,
                                    std::int64_t kw) {
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t column = j + kw - a.pad_w;
  DirectTap<D> t;
  t.start = std::clamp<std::int64_t>(column, 0, a.width - n);
  t.inside = Inside(d, a, iota, j, kw);
  // With width >= n, a run clamped into the row moved exactly where some lane lies outside.
  t.masked = !hn::AllTrue(d, t.inside);
  if (t.masked) {
    const hn::RebindToSigned<D> di;
    using TI = hn::TFromD<decltype(di)>;
    // Lane l takes the run's lane l + column - start; n is a power of two, so the wrapped
    // indices of the masked lanes stay in range.
    t.index = hn::IndicesFromVec(
        d, hn::And(hn::Add(hn::Iota(di, 0), hn::Set(di, static_cast<TI>(column - t.start))),
                   hn::Set(di, static_cast<TI>(n - 1))));
  }
  return t;
}

// Output rows i .. i + kR - 1 at the vector of columns from j, reading x in place (Note [direct
// NCHW rows]): the rows share x's rows, so each x vector is read (and widened) once for the taps
// on it, 3 (kR + 2) reads instead of 9 kR. x's rows are taken in ascending order and each row's
// columns in ascending kw, so every output row still takes its taps in (kh, kw) order: x row q
// gives output row q - kh its tap (kh, kw). x points at the plane, wv holds the 9 weights.
// kMasked: the taps
// kw (bit kw) that lie outside x's row for some lane, taps[kw] saying where they read; 8: the
// flags in taps decide at run time. kAllRows: every row the block reads lies in x.
template <std::size_t kR, int kMasked, bool kAllRows, class D, class S>
HWY_INLINE void Direct3x3(D d, const DepthwiseArgs& a, const S* x, const hn::Vec<D> (&wv)[9],
                          const DirectTap<D> (&taps)[3], const hn::TFromD<D>* bias, std::int64_t i,
                          std::int64_t j, S* out) {
  hn::Vec<D> acc[kR];
  for (auto& v : acc) v = hn::Zero(d);
#pragma GCC unroll 16
  for (std::size_t q = 0; q < kR + 2; ++q) {
    const std::int64_t ih = i - a.pad_h + static_cast<std::int64_t>(q);
    if (!kAllRows && (ih < 0 || ih >= a.height)) continue;  // a padding row: taps skipped
    const S* row = x + ih * a.x_h_stride;
#pragma GCC unroll 3
    for (std::size_t kw = 0; kw < 3; ++kw) {
      const bool masked = kMasked == 8 ? taps[kw].masked : ((kMasked >> kw) & 1) != 0;
      if (masked) {
        const auto xv = hn::TableLookupLanes(LoadX(d, row + taps[kw].start), taps[kw].index);
#pragma GCC unroll 3
        for (std::size_t kh = 0; kh < 3; ++kh) {
          if (q < kh || q - kh >= kR) continue;
          auto& sum = acc[q - kh];
          sum = hn::IfThenElse(taps[kw].inside, Madd<S>(xv, wv[kh * 3 + kw], sum), sum);
        }
      } else {
        const auto xv = InRegister(LoadX(d, row + j + static_cast<std::int64_t>(kw) - a.pad_w));
#pragma GCC unroll 3
        for (std::size_t kh = 0; kh < 3; ++kh) {
          if (q < kh || q - kh >= kR) continue;
          acc[q - kh] = Madd<S>(xv, wv[kh * 3 + kw], acc[q - kh]);
        }
      }
    }
  }
  StoreRows(d, a, acc, bias, i, j, out, static_cast<std::int64_t>(hn::Lanes(d)));
}

// Rows i .. i + kR - 1 on the direct route, vector by vector along them (the last vector
// overlapping the one before it, as RowBlock). A vector at the row's left or right end alone
// (one tap kw outside the row) takes a kernel with that pattern compiled in.
template <std::size_t kR, bool kAllRows, class D, class S>
HWY_INLINE void DirectRowBlock(D d, const DepthwiseArgs& a, const S* x, const hn::Vec<D> (&wv)[9],
                               const hn::TFromD<D>* bias, std::int64_t i, S* out, hn::Vec<D> iota) {
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t end = a.width + a.pad_w - 2;  // columns [j, j + n) inside for j + n <= end
  DirectTap<D> taps[3];
  for (std::int64_t j = 0; j < a.out_w; j += n) {
    const std::int64_t at = std::min(j, a.out_w - n);
    if (at >= a.pad_w && at + n <= end) {
      Direct3x3<kR, 0, kAllRows>(d, a, x, wv, taps, bias, i, at, out);
      continue;
    }
    int pattern = 0;
    for (std::size_t kw = 0; kw < 3; ++kw) {
      taps[kw] = DirectTapAt(d, a, iota, at, static_cast<std::int64_t>(kw));
      pattern |= taps[kw].masked ? 1 << kw : 0;
    }
    if (pattern == 1) {
      Direct3x3<kR, 1, kAllRows>(d, a, x, wv, taps, bias, i, at, out);
    } else if (pattern == 4) {
      Direct3x3<kR, 4, kAllRows>(d, a, x, wv, taps, bias, i, at, out);
    } else {
      Direct3x3<kR, 8, kAllRows>(d, a, x, wv, taps, bias, i, at, out);
    }
  }
}

// Rows [begin, end) on the direct route: blocks of kRows, 4, 2, 1. The weights are set once
// here: a store to the output may alias them for all the compiler knows.
template <class D, class S>
HWY_INLINE void DirectRange(D d, const DepthwiseArgs& a, const S* x, S* out, const hn::TFromD<D>* w,
                            const hn::TFromD<D>* bias, std::int64_t begin, std::int64_t end,
                            hn::Vec<D> iota) {
  hn::Vec<D> wv[9];
  for (std::size_t t = 0; t < 9; ++t) wv[t] = hn::Set(d, w[t]);
  std::int64_t i = begin;
  for (; i + static_cast<std::int64_t>(kRows) <= end; i += kRows) {
    // The next block's output lines (and x's new rows) start on their way while this block
    // computes: each store would otherwise wait on its line's fetch.
    const std::int64_t next = i + static_cast<std::int64_t>(kRows);
    for (std::int64_t r = next; r < std::min(end, next + static_cast<std::int64_t>(kRows)); ++r) {
      for (std::int64_t c = 0; c < a.out_w; c += kLine<S>)
        hwy::Prefetch(out + r * a.out_h_stride + c);
      const std::int64_t ih = r + 2 - a.pad_h;  // the row tap kh = 2 of output row r reads
      if (ih < 0 || ih >= a.height) continue;
      for (std::int64_t c = 0; c < a.width; c += kLine<S>) hwy::Prefetch(x + ih * a.x_h_stride + c);
    }
    // Every row of the block in x: the rows it reads, i - pad_h .. i - pad_h + kRows + 1.
    if (i >= a.pad_h && i - a.pad_h + static_cast<std::int64_t>(kRows) + 1 < a.height) {
      DirectRowBlock<kRows, true>(d, a, x, wv, bias, i, out, iota);
    } else {
      DirectRowBlock<kRows, false>(d, a, x, wv, bias, i, out, iota);
    }
  }
  if (i + 4 <= end) {
    DirectRowBlock<4, false>(d, a, x, wv, bias, i, out, iota);
    i += 4;
  }
  if (i + 2 <= end) {
    DirectRowBlock<2, false>(d, a, x, wv, bias, i, out, iota);
    i += 2;
  }
  if (i < end) DirectRowBlock<1, false>(d, a, x, wv, bias, i, out, iota);
}

// One channel's rows [row_begin, row_end) on the direct route (Note [direct NCHW rows]).
template <class D, class S>
HWY_NOINLINE void DirectRows(D d, const DepthwiseArgs& a, const S* x, S* out, std::int64_t channel,
                             std::int64_t row_begin, std::int64_t row_end) {
  using T = hn::TFromD<D>;
  const T* w = static_cast<const T*>(a.weights) + channel * 9;
  const T* bias = a.bias == nullptr ? nullptr : static_cast<const T*>(a.bias) + channel;
  DirectRange(d, a, x, out, w, bias, row_begin, row_end, hn::Iota(d, 0));
}

// Note [narrow rows]
// Rows narrower than a vector (out_w < lanes) that the direct route could take at 8 or 4 lanes
// (MobileNet's 14- and 7-column planes) take it there; the rest take the staged route at the full
// width, one vector a row (Note [staged rows]). Each width is compiled per target and chain, so
// the widths are few: the staged kernels exist at the full width alone, the direct ones at the
// full width, 8 and 4 lanes. [8, 1024, 7, 7] and [8, 512, 14, 14] float32 NCHW, 2 threads,
// Golden and Fast, run as fast as with every narrower width compiled
// (`linalg_bench --filter depthwise3x3`).
template <class D, class S>
void NarrowRows(D d, const DepthwiseArgs& a, const S* x, S* out, std::int64_t channel,
                std::int64_t row_begin, std::int64_t row_end, S* scratch) {
  using T = hn::TFromD<D>;
  if constexpr (hn::MaxLanes(D()) > 8) {
    if (DirectEligible(a, 8)) {
      return DirectRows(hn::CappedTag<T, 8>(), a, x, out, channel, row_begin, row_end);
    }
  }
  if constexpr (hn::MaxLanes(D()) > 4) {
    if (DirectEligible(a, 4)) {
      return DirectRows(hn::CappedTag<T, 4>(), a, x, out, channel, row_begin, row_end);
    }
  }
  const T* w = static_cast<const T*>(a.weights) + channel * a.kernel_h * a.kernel_w;
  const T* bias = a.bias == nullptr ? nullptr : static_cast<const T*>(a.bias) + channel;
  NchwRange(d, a, x, out, w, bias, row_begin, row_end, scratch, hn::Iota(d, 0));
}

// One channel's rows [row_begin, row_end) of an NCHW plane. On the staged route, the rows whose
// taps reach padding rows at the top and the bottom apart from the others, so that blocks of the
// latter take every tap.
template <class D, class S>
void NchwRows(D d, const DepthwiseArgs& a, const S* x, S* out, std::int64_t channel,
              std::int64_t row_begin, std::int64_t row_end, S* scratch) {
  using T = hn::TFromD<D>;
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  // A staged row holds a whole vector of outputs' taps (depthwise_staged_width).
  static_assert(hn::MaxLanes(hn::ScalableTag<float>()) <= kDepthwiseMaxLanes);
  if (a.out_w < n) return NarrowRows(d, a, x, out, channel, row_begin, row_end, scratch);
  if (DirectEligible(a, n)) return DirectRows(d, a, x, out, channel, row_begin, row_end);
  const auto iota = hn::Iota(d, 0);
  const T* w = static_cast<const T*>(a.weights) + channel * a.kernel_h * a.kernel_w;
  const T* bias = a.bias == nullptr ? nullptr : static_cast<const T*>(a.bias) + channel;
  // Rows [lo, hi) have every tap on x's rows.
  const std::int64_t lo = std::clamp((a.pad_h + a.stride_h - 1) / a.stride_h, row_begin, row_end);
  const std::int64_t bottom = a.height - 1 + a.pad_h - (a.kernel_h - 1) * a.dilation_h;
  const std::int64_t hi = bottom < 0 ? lo : std::clamp(bottom / a.stride_h + 1, lo, row_end);
  NchwRange(d, a, x, out, w, bias, row_begin, lo, scratch, iota);
  NchwRange(d, a, x, out, w, bias, lo, hi, scratch, iota);
  NchwRange(d, a, x, out, w, bias, hi, row_end, scratch, iota);
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPSIM_KERNELS_SIMD_DEPTHWISE_ROWS_INL_H_
