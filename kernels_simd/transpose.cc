// Vectorized data-movement rows: blocked transposes for copies across the input's contiguous
// dim (Note [tiled transpose] in copy.cc), streaming copies, the casts between float32 and the
// 16-bit floats, reversed runs (flip, reflect padding) and every second element (slices with
// step 2). In the strips, one 128-bit vector holds N = 16 / sizeof(T) elements; an N x N square
// goes through registers (Note [perfect-shuffle transpose]), so every load and store moves 16
// bytes.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/transpose.cc"
#include "kernels_simd/transpose.h"

#include <cstdint>
#include <cstring>
#include <limits>

#include "core/convert.h"
#include "core/dtype.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels_simd/cast16-inl.h"
#include "kernels_simd/stream_fence.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The register tiles below are arrays of vectors, which sizeless (scalable: SVE, RVV) vectors
// cannot form; those targets and the scalar one transpose element by element.
#undef MPSIM_TRANSPOSE_TILES
#define MPSIM_TRANSPOSE_TILES (HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE)

template <class T>
HWY_INLINE void TransposeScalar(T* HWY_RESTRICT out, const T* HWY_RESTRICT in, std::int64_t j0,
                                std::int64_t j1, std::int64_t k0, std::int64_t k1,
                                std::int64_t out_j, std::int64_t in_k) {
  for (std::int64_t j = j0; j < j1; ++j) {
    for (std::int64_t k = k0; k < k1; ++k) out[j * out_j + k] = in[j + k * in_k];
  }
}

#if MPSIM_TRANSPOSE_TILES
// Note [perfect-shuffle transpose]
// Rows v[0..N) of an N x N square, N a power of two. One stage replaces them by
//   v'[2i] = InterleaveLower(v[i], v[i + N/2]),  v'[2i+1] = InterleaveUpper(v[i], v[i + N/2]);
// element (r, c), at row r lane c, moves to row (2r mod N) + (c >= N/2), lane (2c mod N) +
// (r >= N/2): both indices rotate their log2(N) bits by one, the row's top bit entering the
// lane's bottom and the lane's top bit the row's. After log2(N) stages every bit has crossed
// once and (r, c) sits at row c, lane r: the transpose (4 x 4 floats: 8 shuffles).
template <class D>
HWY_INLINE void TransposeSquare(D d, hn::TFromD<D>* HWY_RESTRICT out, std::int64_t out_j,
                                const hn::TFromD<D>* HWY_RESTRICT in, std::int64_t in_k) {
  constexpr std::size_t N = 16 / sizeof(hn::TFromD<D>);
  hn::Vec<D> v[N];
  for (std::size_t r = 0; r < N; ++r) v[r] = hn::LoadU(d, in + static_cast<std::int64_t>(r) * in_k);
  for (std::size_t stage = 1; stage < N; stage *= 2) {
    hn::Vec<D> w[N];
    for (std::size_t i = 0; i < N / 2; ++i) {
      w[2 * i] = hn::InterleaveLower(d, v[i], v[i + N / 2]);
      w[2 * i + 1] = hn::InterleaveUpper(d, v[i], v[i + N / 2]);
    }
    for (std::size_t r = 0; r < N; ++r) v[r] = w[r];
  }
  for (std::size_t c = 0; c < N; ++c) {
    hn::StoreU(v[c], d, out + static_cast<std::int64_t>(c) * out_j);
  }
}
#endif

// Strips of one cache line of every input row (64 bytes: kStrip elements of j) walk down all of k:
// the output rows of a strip are contiguous (out_j == nk for a full copy), so the writes stream,
// and each input line is used whole as it arrives. This beats the previous order (tiles of 16 rows
// read along 512 columns, scalar) on permute_to_channels_last (bench/elementwise_bench, 2 threads,
// same-minute A/B; docs/measurements.md).
template <class T>
void TransposeBlockT(T* HWY_RESTRICT out, const T* HWY_RESTRICT in, std::int64_t nj,
                     std::int64_t nk, std::int64_t out_j, std::int64_t in_k) {
  constexpr std::int64_t kStrip = 64 / static_cast<std::int64_t>(sizeof(T));
#if !MPSIM_TRANSPOSE_TILES
  for (std::int64_t j0 = 0; j0 < nj; j0 += kStrip) {
    TransposeScalar(out, in, j0, j0 + kStrip < nj ? j0 + kStrip : nj, 0, nk, out_j, in_k);
  }
#else
  const hn::Full128<T> d;
  constexpr std::int64_t N = 16 / static_cast<std::int64_t>(sizeof(T));
  const std::int64_t nk_full = nk / N * N;
  std::int64_t j0 = 0;
  for (; j0 + kStrip <= nj; j0 += kStrip) {
    for (std::int64_t k = 0; k < nk_full; k += N) {
      for (std::int64_t j = j0; j < j0 + kStrip; j += N) {
        TransposeSquare(d, out + j * out_j + k, out_j, in + j + k * in_k, in_k);
      }
    }
    TransposeScalar(out, in, j0, j0 + kStrip, nk_full, nk, out_j, in_k);
  }
  TransposeScalar(out, in, j0, nj, 0, nk, out_j, in_k);
#endif
}

#if MPSIM_TRANSPOSE_TILES
// Note [de-interleave transpose]
// Rows v[0..N) of an N x N tile, N a power of two. One stage replaces them by
//   w[i] = ConcatEven(v[2i + 1], v[2i]),  w[i + N/2] = ConcatOdd(v[2i + 1], v[2i]):
// element (r, c) moves to row (r >> 1) + (c & 1) * N/2, lane (c >> 1) + (r & 1) * N/2; both
// indices rotate right by one bit, each one's bottom bit entering the other's top. After
// log2(N) stages (r, c) sits at row c, lane r. Unlike InterleaveLower/Upper, ConcatEven/Odd
// cross the 128-bit blocks of wide vectors, so the tile can be as wide as the vector: 16 x 16
// floats in 64 one-instruction permutes on AVX-512.
template <std::size_t N, class D>
HWY_INLINE void TransposeTile(D d, hn::Vec<D> (&v)[N]) {
  for (std::size_t stage = 1; stage < N; stage *= 2) {
    hn::Vec<D> w[N];
    for (std::size_t i = 0; i < N / 2; ++i) {
      w[i] = hn::ConcatEven(d, v[2 * i + 1], v[2 * i]);
      w[i + N / 2] = hn::ConcatOdd(d, v[2 * i + 1], v[2 * i]);
    }
    for (std::size_t r = 0; r < N; ++r) v[r] = w[r];
  }
}

// Note [pair transpose]
// 16-bit lanes permute slowly across a vector (vpermt2w is 3 uops on AVX-512), so an N x N
// tile of them (N >= 8: whole 128-bit blocks) first interleaves rows 2i and 2i + 1 within
// each block: lo[i] holds, as 32-bit lanes, the pairs (v[2i][c], v[2i + 1][c]) of columns
// c = 8b + 0..3 of each block b, hi[i] those of 8b + 4..7. An N/2 x N/2 transpose of 32-bit
// lanes (Note [de-interleave transpose]) then makes lo[m] the pairs of rows 0..N-1 of column
// 8 (m / 4) + m % 4, little-endian: that column's output row. N interleaves and N/2 log2(N/2)
// ConcatEven/Odd of 32-bit lanes (48 + 16 one-instruction shuffles for 16 x 16 on AVX-512,
// against 64 of the 3-uop kind).
template <std::size_t N, class D>
HWY_INLINE void TransposeTilePairs(D d, hn::Vec<D> (&v)[N]) {
  constexpr std::size_t H = N / 2;
  const hn::Repartition<std::uint32_t, D> d32;
  hn::Vec<decltype(d32)> lo[H], hi[H];
  for (std::size_t i = 0; i < H; ++i) {
    lo[i] = hn::BitCast(d32, hn::InterleaveLower(d, v[2 * i], v[2 * i + 1]));
    hi[i] = hn::BitCast(d32, hn::InterleaveUpper(d, v[2 * i], v[2 * i + 1]));
  }
  TransposeTile<H>(d32, lo);
  TransposeTile<H>(d32, hi);
  for (std::size_t m = 0; m < H; ++m) {
    v[m / 4 * 8 + m % 4] = hn::BitCast(d, lo[m]);
    v[m / 4 * 8 + 4 + m % 4] = hn::BitCast(d, hi[m]);
  }
}
#endif

// Note [streamed transpose] (copy.cc) has the why. Bands of kBand input rows are read along
// j, each row a sequential stream; a step takes a tile of N positions j by one cache line of
// rows k (L = kLine / N register tiles), transposes it and writes N whole output lines with
// streaming stores (through a 1 KiB staging tile when L > 1, so that each line is written
// front to back at once). Rows of k past the last whole line take the strips above.
template <class T>
void TransposeBlockStreamedT(T* HWY_RESTRICT out, const T* HWY_RESTRICT in, std::int64_t nj,
                             std::int64_t nk, std::int64_t out_j, std::int64_t in_k) {
  constexpr std::int64_t kLine = 64 / static_cast<std::int64_t>(sizeof(T));
#if !MPSIM_TRANSPOSE_TILES
  TransposeBlockT(out, in, nj, nk, out_j, in_k);
  (void)kLine;
#else
  constexpr std::size_t kCap = kLine < 16 ? static_cast<std::size_t>(kLine) : 16;
  const hn::CappedTag<T, kCap> d;
  constexpr std::size_t N = hn::MaxLanes(decltype(d)());
  constexpr std::int64_t L = kLine / static_cast<std::int64_t>(N);
  constexpr std::int64_t kBand = kLine > 32 ? kLine : 32;
  const std::int64_t nk_lines = nk / kLine * kLine;
  const std::int64_t nj_tiles = nj / static_cast<std::int64_t>(N) * static_cast<std::int64_t>(N);
  alignas(64) T stage[L > 1 ? N * kLine : 1];
  for (std::int64_t k0 = 0; k0 < nk_lines; k0 += kBand) {
    const std::int64_t k1 = k0 + kBand < nk_lines ? k0 + kBand : nk_lines;
    for (std::int64_t j = 0; j < nj_tiles; j += static_cast<std::int64_t>(N)) {
      for (std::int64_t k = k0; k < k1; k += kLine) {
        T* o = out + j * out_j + k;
        for (std::int64_t t = 0; t < L; ++t) {
          hn::Vec<decltype(d)> v[N];
          const T* x = in + j + (k + t * static_cast<std::int64_t>(N)) * in_k;
          for (std::size_t r = 0; r < N; ++r) {
            v[r] = hn::LoadU(d, x + static_cast<std::int64_t>(r) * in_k);
          }
          if constexpr (sizeof(T) == 2 && N >= 8) {
            TransposeTilePairs<N>(d, v);
          } else {
            TransposeTile<N>(d, v);
          }
          for (std::size_t r = 0; r < N; ++r) {
            if constexpr (L == 1) {
              hn::Stream(v[r], d, o + static_cast<std::int64_t>(r) * out_j);
            } else {
              hn::Store(v[r], d,
                        stage + static_cast<std::int64_t>(r) * kLine + t * static_cast<std::int64_t>(N));
            }
          }
        }
        if constexpr (L > 1) {
          for (std::size_t r = 0; r < N; ++r) {
            for (std::int64_t c = 0; c < kLine; c += static_cast<std::int64_t>(N)) {
              hn::Stream(hn::Load(d, stage + static_cast<std::int64_t>(r) * kLine + c), d,
                         o + static_cast<std::int64_t>(r) * out_j + c);
            }
          }
        }
      }
    }
    TransposeScalar(out, in, nj_tiles, nj, k0, k1, out_j, in_k);
  }
  if (nk_lines < nk) {
    TransposeBlockT(out + nk_lines, in + nk_lines * in_k, nj, nk - nk_lines, out_j, in_k);
  }
#endif
}

void TransposeBlockStreamed(void* out, const void* in, std::int64_t nj, std::int64_t nk,
                            std::int64_t out_j, std::int64_t in_k, std::size_t elem_bytes) {
  switch (elem_bytes) {
    case 1:
      return TransposeBlockStreamedT(static_cast<std::uint8_t*>(out),
                                     static_cast<const std::uint8_t*>(in), nj, nk, out_j, in_k);
    case 2:
      return TransposeBlockStreamedT(static_cast<std::uint16_t*>(out),
                                     static_cast<const std::uint16_t*>(in), nj, nk, out_j, in_k);
    case 4:
      return TransposeBlockStreamedT(static_cast<std::uint32_t*>(out),
                                     static_cast<const std::uint32_t*>(in), nj, nk, out_j, in_k);
    default:
      return TransposeBlockStreamedT(static_cast<std::uint64_t*>(out),
                                     static_cast<const std::uint64_t*>(in), nj, nk, out_j, in_k);
  }
}

void TransposeBlock(void* out, const void* in, std::int64_t nj, std::int64_t nk,
                    std::int64_t out_j, std::int64_t in_k, std::size_t elem_bytes) {
  switch (elem_bytes) {
    case 1:
      return TransposeBlockT(static_cast<std::uint8_t*>(out), static_cast<const std::uint8_t*>(in),
                             nj, nk, out_j, in_k);
    case 2:
      return TransposeBlockT(static_cast<std::uint16_t*>(out),
                             static_cast<const std::uint16_t*>(in), nj, nk, out_j, in_k);
    case 4:
      return TransposeBlockT(static_cast<std::uint32_t*>(out),
                             static_cast<const std::uint32_t*>(in), nj, nk, out_j, in_k);
    default:
      return TransposeBlockT(static_cast<std::uint64_t*>(out),
                             static_cast<const std::uint64_t*>(in), nj, nk, out_j, in_k);
  }
}

// dst = src, byte for byte: memcpy up to dst's first 64-byte boundary, then whole vectors
// with streaming stores (each line written front to back at once), memcpy for the tail.
void StreamCopy(void* dst, const void* src, std::size_t bytes) {
  auto* HWY_RESTRICT o = static_cast<std::uint8_t*>(dst);
  const auto* HWY_RESTRICT x = static_cast<const std::uint8_t*>(src);
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::CappedTag<std::uint8_t, 64> d;
  const std::size_t lanes = hn::Lanes(d);
  if (64 % lanes == 0) {
    i = (64 - reinterpret_cast<std::uintptr_t>(o) % 64) % 64;
    if (i > bytes) i = bytes;
    std::memcpy(o, x, i);
    for (; i + lanes <= bytes; i += lanes) hn::Stream(hn::LoadU(d, x + i), d, o + i);
  }
#endif
  std::memcpy(o + i, x + i, bytes - i);
}

// The casts between float32 and the 16-bit floats: n elements, whole vectors of float lanes
// through `lanes(df, d16, in + i, out + i)` (float lanes and 16-bit ones; cast16-inl.h) and the
// rest through `one`, the scalar function (core/dtype.h) whose bits the lanes reproduce on every
// target. `lanes` is generic, so the scalar target, which runs `one` alone, never instantiates
// it.
template <class From, class To, class Lanes, class One>
HWY_INLINE void CastRow(const From* HWY_RESTRICT in, To* HWY_RESTRICT out, std::size_t n,
                        const Lanes& lanes, const One& one) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<float> df;
  const hn::Rebind<std::uint16_t, decltype(df)> d16;
  const std::size_t step = hn::Lanes(df);
  for (; i + step <= n; i += step) lanes(df, d16, in + i, out + i);
#else
  (void)lanes;
#endif
  for (; i < n; ++i) out[i] = one(in[i]);
}

void F32ToF16Row(const float* HWY_RESTRICT in, std::uint16_t* HWY_RESTRICT out, std::size_t n) {
  const auto lanes = [](auto df, auto d16, const auto* from, auto* to) {
    hn::StoreU(F32ToF16Bits(df, hn::LoadU(df, from)), d16, to);
  };
  CastRow(in, out, n, lanes, detail::f32_to_f16_bits);
}

void F16ToF32Row(const std::uint16_t* HWY_RESTRICT in, float* HWY_RESTRICT out, std::size_t n) {
  const auto lanes = [](auto df, auto d16, const auto* from, auto* to) {
    hn::StoreU(F16BitsToF32(df, hn::LoadU(d16, from)), df, to);
  };
  CastRow(in, out, n, lanes, detail::f16_bits_to_f32);
}

void BF16ToF32Row(const std::uint16_t* HWY_RESTRICT in, float* HWY_RESTRICT out, std::size_t n) {
  const auto lanes = [](auto df, auto d16, const auto* from, auto* to) {
    hn::StoreU(BF16BitsToF32(df, hn::LoadU(d16, from)), df, to);
  };
  CastRow(in, out, n, lanes, detail::bf16_bits_to_f32);
}

void F32ToBF16Row(const float* HWY_RESTRICT in, std::uint16_t* HWY_RESTRICT out, std::size_t n) {
  const auto lanes = [](auto df, auto d16, const auto* from, auto* to) {
    hn::StoreU(F32ToBF16Bits(df, hn::LoadU(df, from)), d16, to);
  };
  CastRow(in, out, n, lanes, detail::f32_to_bf16_bits);
}

// float32 -> int32 / int64 (convert, core/convert.h): truncation in range, the minimum outside it
// and for NaN (x86's value on every target); in range means min - 1 < x < max + 1, which for a
// float is min <= x < max + 1 (`elementwise_bench --benchmark_filter=to_int`;
// docs/measurements.md).
template <class To>
void F32ToIntRow(const float* HWY_RESTRICT in, To* HWY_RESTRICT out, std::size_t n) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  constexpr double kLimit = static_cast<double>(std::numeric_limits<To>::max()) + 1.0;
  if constexpr (sizeof(To) == 4) {
    const hn::ScalableTag<float> df;
    const hn::RebindToSigned<decltype(df)> di;
    const std::size_t step = hn::Lanes(df);
    const auto lo = hn::Set(df, static_cast<float>(-kLimit)),
               hi = hn::Set(df, static_cast<float>(kLimit));
    for (; i + step <= n; i += step) {
      const auto x = hn::LoadU(df, in + i);
      const auto inside = hn::And(hn::Ge(x, lo), hn::Lt(x, hi));  // NaN: outside
      const auto safe = hn::IfThenElseZero(inside, x);
      hn::StoreU(hn::IfThenElse(hn::RebindMask(di, inside), hn::ConvertTo(di, safe),
                                hn::Set(di, std::numeric_limits<To>::min())),
                 di, out + i);
    }
  } else {
    const hn::ScalableTag<double> dd;
    const hn::Rebind<float, decltype(dd)> df;
    const hn::RebindToSigned<decltype(dd)> di;
    const std::size_t step = hn::Lanes(dd);
    const auto lo = hn::Set(dd, -kLimit), hi = hn::Set(dd, kLimit);
    for (; i + step <= n; i += step) {
      const auto x = hn::PromoteTo(dd, hn::LoadU(df, in + i));
      const auto inside = hn::And(hn::Gt(x, lo), hn::Lt(x, hi));
      const auto safe = hn::IfThenElseZero(inside, x);
      hn::StoreU(hn::IfThenElse(hn::RebindMask(di, inside), hn::ConvertTo(di, safe),
                                hn::Set(di, std::numeric_limits<To>::min())),
                 di, out + i);
    }
  }
#endif
  for (; i < n; ++i) out[i] = convert<To>(in[i]);
}
void F32ToI32Row(const float* HWY_RESTRICT in, std::int32_t* HWY_RESTRICT out, std::size_t n) {
  F32ToIntRow(in, out, n);
}
void F32ToI64Row(const float* HWY_RESTRICT in, std::int64_t* HWY_RESTRICT out, std::size_t n) {
  F32ToIntRow(in, out, n);
}

// The double -> 16-bit casts: double lanes rounded to float by round-to-odd, then to nearest
// even (the scalar Half(double) and BFloat16(double), core/dtype.h: one rounding).
template <bool kBF16>
void F64To16Row(const double* HWY_RESTRICT in, std::uint16_t* HWY_RESTRICT out, std::size_t n) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const hn::Rebind<std::uint16_t, decltype(dd)> d16;
  const std::size_t step = hn::Lanes(dd);
  for (; i + step <= n; i += step) {
    const auto v = hn::LoadU(dd, in + i);
    const auto f = kBF16 ? F64ToF32RoundOddForBF16(dd, v) : F64ToF32RoundOddForF16(dd, v);
    hn::StoreU(kBF16 ? F32ToBF16Bits(df, f) : F32ToF16Bits(df, f), d16, out + i);
  }
#endif
  for (; i < n; ++i) out[i] = kBF16 ? BFloat16(in[i]).bits : Half(in[i]).bits;
}

void F64ToF16Row(const double* HWY_RESTRICT in, std::uint16_t* HWY_RESTRICT out, std::size_t n) {
  F64To16Row<false>(in, out, n);
}
void F64ToBF16Row(const double* HWY_RESTRICT in, std::uint16_t* HWY_RESTRICT out, std::size_t n) {
  F64To16Row<true>(in, out, n);
}

// out[k] = in_last[-k]: whole vectors loaded from the far end of the run and their lanes
// reversed, then the tail one by one. Highway 1.0.3 has no Reverse of 8-bit lanes, so bytes
// go one by one.
template <class T>
void ReverseRunT(T* HWY_RESTRICT out, const T* HWY_RESTRICT in_last, std::int64_t n) {
  std::int64_t k = 0;
  if constexpr (sizeof(T) > 1) {
    const hn::ScalableTag<T> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    for (; k + lanes <= n; k += lanes) {
      hn::StoreU(hn::Reverse(d, hn::LoadU(d, in_last - k - (lanes - 1))), d, out + k);
    }
  }
  for (; k < n; ++k) out[k] = in_last[-k];
}

void ReverseRun(void* out, const void* in_last, std::int64_t n, std::size_t elem_bytes) {
  switch (elem_bytes) {
    case 1:
      return ReverseRunT(static_cast<std::uint8_t*>(out), static_cast<const std::uint8_t*>(in_last),
                         n);
    case 2:
      return ReverseRunT(static_cast<std::uint16_t*>(out),
                         static_cast<const std::uint16_t*>(in_last), n);
    case 4:
      return ReverseRunT(static_cast<std::uint32_t*>(out),
                         static_cast<const std::uint32_t*>(in_last), n);
    default:
      return ReverseRunT(static_cast<std::uint64_t*>(out),
                         static_cast<const std::uint64_t*>(in_last), n);
  }
}

// out[k] = in[2k]: pairs of vectors de-interleaved, the odd lanes dropped. The vector loop
// stops one element early so that it never reads in[2n - 1], past the run's last element.
template <class T>
void TakeEvenT(T* HWY_RESTRICT out, const T* HWY_RESTRICT in, std::int64_t n) {
  std::int64_t k = 0;
  if constexpr (sizeof(T) > 1) {
    const hn::ScalableTag<T> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    for (; k + lanes < n; k += lanes) {
      hn::Vec<decltype(d)> even, odd;
      hn::LoadInterleaved2(d, in + 2 * k, even, odd);
      hn::StoreU(even, d, out + k);
    }
  }
  for (; k < n; ++k) out[k] = in[2 * k];
}

void TakeEven(void* out, const void* in, std::int64_t n, std::size_t elem_bytes) {
  switch (elem_bytes) {
    case 1:
      return TakeEvenT(static_cast<std::uint8_t*>(out), static_cast<const std::uint8_t*>(in), n);
    case 2:
      return TakeEvenT(static_cast<std::uint16_t*>(out), static_cast<const std::uint16_t*>(in), n);
    case 4:
      return TakeEvenT(static_cast<std::uint32_t*>(out), static_cast<const std::uint32_t*>(in), n);
    default:
      return TakeEvenT(static_cast<std::uint64_t*>(out), static_cast<const std::uint64_t*>(in), n);
  }
}

// out[k] = bits for k in [0, n): whole vectors of the pattern, then the tail.
template <class T>
void FillRunT(T* HWY_RESTRICT out, std::int64_t n, T bits) {
  const hn::ScalableTag<T> d;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const auto v = hn::Set(d, bits);
  std::int64_t k = 0;
  for (; k + 4 * lanes <= n; k += 4 * lanes) {
    hn::StoreU(v, d, out + k);
    hn::StoreU(v, d, out + k + lanes);
    hn::StoreU(v, d, out + k + 2 * lanes);
    hn::StoreU(v, d, out + k + 3 * lanes);
  }
  for (; k + lanes <= n; k += lanes) hn::StoreU(v, d, out + k);
  for (; k < n; ++k) out[k] = bits;
}

void FillRun(void* out, std::int64_t n, std::size_t elem_bytes, std::uint64_t bits) {
  switch (elem_bytes) {
    case 1:
      return FillRunT(static_cast<std::uint8_t*>(out), n, static_cast<std::uint8_t>(bits));
    case 2:
      return FillRunT(static_cast<std::uint16_t*>(out), n, static_cast<std::uint16_t>(bits));
    case 4:
      return FillRunT(static_cast<std::uint32_t*>(out), n, static_cast<std::uint32_t>(bits));
    default:
      return FillRunT(static_cast<std::uint64_t*>(out), n, bits);
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(FillRun);

void fill_run(void* out, std::int64_t n, std::size_t elem_bytes, std::uint64_t bits) {
  HWY_DYNAMIC_DISPATCH(FillRun)(out, n, elem_bytes, bits);
}

HWY_EXPORT(TransposeBlock);

void transpose_block(void* out, const void* in, std::int64_t nj, std::int64_t nk,
                     std::int64_t out_j, std::int64_t in_k, std::size_t elem_bytes) {
  HWY_DYNAMIC_DISPATCH(TransposeBlock)(out, in, nj, nk, out_j, in_k, elem_bytes);
}

HWY_EXPORT(TransposeBlockStreamed);

void transpose_block_streamed(void* out, const void* in, std::int64_t nj, std::int64_t nk,
                              std::int64_t out_j, std::int64_t in_k, std::size_t elem_bytes) {
  HWY_DYNAMIC_DISPATCH(TransposeBlockStreamed)(out, in, nj, nk, out_j, in_k, elem_bytes);
  stream_fence();  // the streaming stores are visible before the block's task completes
}

HWY_EXPORT(StreamCopy);

void stream_copy(void* dst, const void* src, std::size_t bytes) {
  HWY_DYNAMIC_DISPATCH(StreamCopy)(dst, src, bytes);
  stream_fence();
}

void stream_copy_unfenced(void* dst, const void* src, std::size_t bytes) {
  HWY_DYNAMIC_DISPATCH(StreamCopy)(dst, src, bytes);
}

HWY_EXPORT(F32ToF16Row);

void f32_to_f16_row(const float* in, std::uint16_t* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(F32ToF16Row)(in, out, n);
}

HWY_EXPORT(F16ToF32Row);

void f16_to_f32_row(const std::uint16_t* in, float* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(F16ToF32Row)(in, out, n);
}

HWY_EXPORT(BF16ToF32Row);

void bf16_to_f32_row(const std::uint16_t* in, float* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(BF16ToF32Row)(in, out, n);
}

HWY_EXPORT(F32ToBF16Row);
HWY_EXPORT(F64ToF16Row);
HWY_EXPORT(F32ToI32Row);
HWY_EXPORT(F32ToI64Row);
HWY_EXPORT(F64ToBF16Row);

void f32_to_bf16_row(const float* in, std::uint16_t* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(F32ToBF16Row)(in, out, n);
}

void f32_to_int_row(const float* in, std::int32_t* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(F32ToI32Row)(in, out, n);
}
void f32_to_int_row(const float* in, std::int64_t* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(F32ToI64Row)(in, out, n);
}

void f64_to_f16_row(const double* in, std::uint16_t* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(F64ToF16Row)(in, out, n);
}

void f64_to_bf16_row(const double* in, std::uint16_t* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(F64ToBF16Row)(in, out, n);
}

HWY_EXPORT(ReverseRun);
HWY_EXPORT(TakeEven);

void take_even(void* out, const void* in, std::int64_t n, std::size_t elem_bytes) {
  HWY_DYNAMIC_DISPATCH(TakeEven)(out, in, n, elem_bytes);
}

void reverse_run(void* out, const void* in_last, std::int64_t n, std::size_t elem_bytes) {
  HWY_DYNAMIC_DISPATCH(ReverseRun)(out, in_last, n, elem_bytes);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
