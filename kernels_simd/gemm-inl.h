// Per-target pieces of the GEMM engine shared by gemm_engine-inl.h and attention.cc: the micro-tile
// shape, packing of panels (widening to the accumulation type) and the register-blocked
// micro-kernel. Included inside HWY_NAMESPACE after `namespace hn = hwy::HWY_NAMESPACE;`.
#if defined(MPSIM_KERNELS_SIMD_GEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPSIM_KERNELS_SIMD_GEMM_INL_H_
#undef MPSIM_KERNELS_SIMD_GEMM_INL_H_
#else
#define MPSIM_KERNELS_SIMD_GEMM_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/convert.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/aligned_vector.h"
#include "kernels_simd/cast16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Note [gemm tile]
// The micro-kernel keeps a kRows x kVecs block of accumulator vectors in registers and, per k,
// loads kVecs vectors of b and broadcasts kRows values of a. With 32 vector registers (AVX-512,
// NEON) 8 x 3 uses 24 accumulators + 3 + 1; with 16 (AVX2, SSE4) 6 x 2 uses 12 + 2 + 1. On one Zen
// 4 core (1024^3, Fast, one thread) 8 x 3, 14 x 2, 12 x 2 and 6 x 4 all run at about one rate,
// short of a register-only FMA loop's (docs/measurements.md); 8 x 3 pads a 40-row problem (the
// attention head size) not at all.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_NEON
constexpr std::int64_t kRows = 8;
constexpr std::size_t kVecs = 3;
#else
constexpr std::int64_t kRows = 6;
constexpr std::size_t kVecs = 2;
#endif
template <class Acc>
constexpr std::int64_t PanelWidth() {
  return static_cast<std::int64_t>(kVecs * hn::MaxLanes(hn::ScalableTag<Acc>()));
}

template <class Acc, class In>
HWY_INLINE Acc Widen(In v) {
  return convert<Acc>(v);
}

// Whether runs of In widen in vectors when packed (WidenRun), and a 16-bit output is rounded in
// vectors (FinalizeRow in gemm_engine-inl.h): the 16-bit types, whose scalar conversions cost
// several operations a value (float's and double's one or none). Converted one by one, packing a
// and rounding the output take a large share of float16 conv2d's time; in vectors float16 conv2d
// runs in float32's time (perf; `linalg_bench --threads 1 --filter "f16 conv3x3"`, beside a build
// that converted one by one; docs/measurements.md).
template <class In>
constexpr bool kWidensInVectors = std::is_same_v<In, Half> || std::is_same_v<In, BFloat16>;

// The 16-bit values at p (kWidensInVectors) widened to lanes of d (float16 through
// F16BitsToF32ForArithmetic: the values only ever enter multiply-adds).
template <class D, class In>
HWY_INLINE hn::Vec<D> LoadWidened(D d, const In* HWY_RESTRICT p) {
  const hn::Rebind<float, D> df;
  const auto bits =
      hn::LoadU(hn::Rebind<std::uint16_t, D>(), reinterpret_cast<const std::uint16_t*>(p));
  const auto f = [&] {
    if constexpr (std::is_same_v<In, BFloat16>) {
      return BF16BitsToF32(df, bits);
    } else {
      return F16BitsToF32ForArithmetic(df, bits);
    }
  }();
  if constexpr (sizeof(hn::TFromD<D>) == sizeof(float)) {
    return f;
  } else {
    return hn::PromoteTo(d, f);
  }
}

// dst[j] = Widen<Acc>(src[j]) for j < n, whole vectors at a time for the 16-bit types.
template <class Acc, class In>
HWY_INLINE void WidenRun(const In* HWY_RESTRICT src, std::int64_t n, Acc* HWY_RESTRICT dst) {
  std::int64_t j = 0;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kWidensInVectors<In>) {
    const hn::ScalableTag<Acc> d;
    const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
    for (; j + lanes <= n; j += lanes) hn::StoreU(LoadWidened(d, src + j), d, dst + j);
  }
#endif
  for (; j < n; ++j) dst[j] = Widen<Acc>(src[j]);
}

// The runs of kRows rows (null: a row of zeros), n values each, widened (WidenRun) and
// interleaved: dst[q * kRows + r] = rows[r][q].
template <class Acc, class In>
HWY_INLINE void WidenInterleaved(const In* const (&rows)[kRows], std::int64_t n,
                                 Acc* HWY_RESTRICT dst) {
  constexpr std::int64_t kChunk = 128;
  Acc wide[kRows][kChunk];
  for (std::int64_t q0 = 0; q0 < n; q0 += kChunk) {
    const std::int64_t m = std::min(kChunk, n - q0);
    for (std::int64_t r = 0; r < kRows; ++r) {
      if (rows[r] != nullptr) {
        WidenRun(rows[r] + q0, m, wide[r]);
      } else {
        std::fill(wide[r], wide[r] + m, Acc(0));
      }
    }
    for (std::int64_t q = 0; q < m; ++q) {
      for (std::int64_t r = 0; r < kRows; ++r) dst[(q0 + q) * kRows + r] = wide[r][q];
    }
  }
}

// dst[k * kRows + r] = a[r * rs + k * cs] for the first `rows` rows, zero for the rest.
template <class Acc, class In>
void PackA(const In* a, std::int64_t rs, std::int64_t cs, std::int64_t rows, std::int64_t kc,
           Acc* HWY_RESTRICT dst) {
  if constexpr (kWidensInVectors<In>) {
    if (cs == 1) {
      const In* run[kRows];
      for (std::int64_t r = 0; r < kRows; ++r) run[r] = r < rows ? a + r * rs : nullptr;
      WidenInterleaved(run, kc, dst);
      return;
    }
  }
  for (std::int64_t r = 0; r < kRows; ++r) {
    if (r < rows) {
      const In* src = a + r * rs;
      for (std::int64_t k = 0; k < kc; ++k) dst[k * kRows + r] = Widen<Acc>(src[k * cs]);
    } else {
      for (std::int64_t k = 0; k < kc; ++k) dst[k * kRows + r] = Acc(0);
    }
  }
}

// dst[k * kNr + j] = b[k * rs + j * cs] for the first `cols` columns, zero for the rest.
template <class Acc, class In>
void PackB(const In* b, std::int64_t rs, std::int64_t cs, std::int64_t cols, std::int64_t kk,
           Acc* HWY_RESTRICT dst) {
  constexpr std::int64_t kNr = PanelWidth<Acc>();
  if (rs == 1 && cs != 1) {
    // Column-major b (a transposed weight, as linear's): 16 steps of k at a time, so every
    // source cache line is read whole while the panel's 16 rows stay in L1.
    for (std::int64_t k0 = 0; k0 < kk; k0 += 16) {
      const std::int64_t k1 = std::min<std::int64_t>(kk, k0 + 16);
      for (std::int64_t j = 0; j < kNr; ++j) {
        const In* src = b + j * cs;
        for (std::int64_t k = k0; k < k1; ++k) {
          dst[k * kNr + j] = j < cols ? Widen<Acc>(src[k]) : Acc(0);
        }
      }
    }
    return;
  }
  for (std::int64_t k = 0; k < kk; ++k) {
    const In* src = b + k * rs;
    Acc* row = dst + k * kNr;
    if (cs == 1) {
      WidenRun(src, cols, row);
    } else {
      for (std::int64_t j = 0; j < cols; ++j) row[j] = Widen<Acc>(src[j * cs]);
    }
    for (std::int64_t j = cols; j < kNr; ++j) row[j] = Acc(0);
  }
}

// acc (kRows x kNr, rows ldc apart) = (load ? acc : 0) + a @ b_panel over kc steps, each
// output a chain of multiply-adds in k order (Note [gemm numerics] in gemm.h). a is a packed
// panel (kc x kRows, row r of step k at a[k * kRows + r]) or, with kRowMajorA, kRows rows
// lda apart (a[r * lda + k]), of Acc or of float widened exactly as each value is broadcast.
// kV < kVecs computes only the panel's first kV vectors of columns (a last, narrower panel).
// kLdc, where not 0, is ldc known at compile time (the engine's tiles: kNr); with a runtime
// ldc the compiler kept the tile's 24 addresses live across the K loop and spilled.
template <class Acc, bool kRowMajorA = false, class InA = Acc, std::size_t kV = kVecs,
          std::int64_t kLdc = 0>
HWY_NOINLINE void MicroKernel(const InA* HWY_RESTRICT a, const Acc* HWY_RESTRICT b, std::int64_t kc,
                              Acc* HWY_RESTRICT acc, std::int64_t runtime_ldc, bool load,
                              std::int64_t lda = 0) {
  const std::int64_t ldc = kLdc != 0 ? kLdc : runtime_ldc;
  static_assert(std::is_same_v<InA, Acc> || (kRowMajorA && std::is_same_v<InA, float>));
  static_assert(kV >= 1 && kV <= kVecs);
  const hn::ScalableTag<Acc> d;
  using V = hn::Vec<decltype(d)>;
  constexpr std::size_t kN = hn::MaxLanes(d);
  constexpr std::size_t kNr = kVecs * kN;
  const std::int64_t row_step = kRowMajorA ? lda : 1;
  constexpr std::int64_t kStep = kRowMajorA ? 1 : kRows;
  // Every loop over the tile is unrolled before the compiler places c: rolled, GCC 12 built c on
  // the stack and copied it to registers around the K loop. Unrolled, with kLdc, it runs faster on
  // one and two threads, Fast and Golden (`linalg_bench --filter mm`, beside a build without;
  // docs/measurements.md).
  V c[kRows][kV];
  HWY_UNROLL(16)
  for (std::int64_t r = 0; r < kRows; ++r) {
    HWY_UNROLL(4)
    for (std::size_t v = 0; v < kV; ++v) {
      c[r][v] = load ? hn::LoadU(d, acc + r * ldc + v * kN) : hn::Zero(d);
    }
  }
  for (std::int64_t k = 0; k < kc; ++k) {
    V bv[kV];
    // The b panel streams from L2; asking for its lines 16 steps ahead runs 2048^3 and
    // 4096 x 4096 x 1024 (Fast, one thread) faster, 1024^3 and conv2d the same
    // (`linalg_bench --threads 1 --filter "mm 2048"`, beside a build without the prefetch;
    // docs/measurements.md).
    HWY_UNROLL(4)
    for (std::size_t v = 0; v < kV; ++v) hwy::Prefetch(b + 16 * kNr + v * kN);
    HWY_UNROLL(4)
    for (std::size_t v = 0; v < kV; ++v) bv[v] = hn::Load(d, b + v * kN);
    HWY_UNROLL(16)
    for (std::int64_t r = 0; r < kRows; ++r) {
      const V ar = hn::Set(d, static_cast<Acc>(a[r * row_step]));
      HWY_UNROLL(4)
      for (std::size_t v = 0; v < kV; ++v) c[r][v] = hn::MulAdd(ar, bv[v], c[r][v]);
    }
    a += kStep;
    b += kNr;
  }
  HWY_UNROLL(16)
  for (std::int64_t r = 0; r < kRows; ++r) {
    HWY_UNROLL(4)
    for (std::size_t v = 0; v < kV; ++v) hn::StoreU(c[r][v], d, acc + r * ldc + v * kN);
  }
}

// The micro-kernel over the first `cols` columns of a panel, in as few vectors as hold them:
// the bits of the full panel's, without the padding's multiply-adds (a panel of 320 columns in
// 48s computes 336 with the full kernel alone).
template <class Acc, bool kRowMajorA = false, class InA = Acc, std::int64_t kLdc = 0>
HWY_INLINE void MicroKernelCols(std::int64_t cols, const InA* HWY_RESTRICT a,
                                const Acc* HWY_RESTRICT b, std::int64_t kc, Acc* HWY_RESTRICT acc,
                                std::int64_t ldc, bool load, std::int64_t lda = 0) {
  constexpr std::int64_t kN = static_cast<std::int64_t>(hn::MaxLanes(hn::ScalableTag<Acc>()));
  if constexpr (kVecs >= 3) {
    if (cols <= 2 * kN) {
      if (cols <= kN)
        return MicroKernel<Acc, kRowMajorA, InA, 1, kLdc>(a, b, kc, acc, ldc, load, lda);
      return MicroKernel<Acc, kRowMajorA, InA, 2, kLdc>(a, b, kc, acc, ldc, load, lda);
    }
  } else if constexpr (kVecs == 2) {
    if (cols <= kN)
      return MicroKernel<Acc, kRowMajorA, InA, 1, kLdc>(a, b, kc, acc, ldc, load, lda);
  }
  MicroKernel<Acc, kRowMajorA, InA, kVecs, kLdc>(a, b, kc, acc, ldc, load, lda);
}

// Note [conv in registers]
// acc (kRows x kNr, rows kNr apart) = the sum over taps t and channels q of
// rows[t * kRows + r][q] * b[(t * channels + q) * kNr + ...], each output one chain of
// multiply-adds in (t, q) order from zero: the chain of MicroKernel over the same K, without
// storing and reloading the accumulators at the ends of K blocks (those are exact, so the
// bits are the same). rows holds, per tap, kRows pointers to `channels` values each (a
// convolution's input, read in place or staged), null where the tap lies in the padding for
// that pixel: its products are never formed, so a tap in the padding adds nothing (not
// 0 x w, which is NaN for an infinite w). A tap with no row is skipped whole; one with some
// runs the rows it has. b is a panel packed over the whole K. kV < kVecs computes the panel's
// first kV vectors of columns.
template <class Acc, std::size_t kV = kVecs>
HWY_NOINLINE void MicroKernelTaps(const Acc* const* HWY_RESTRICT rows, std::int64_t taps,
                                  std::int64_t channels, const Acc* HWY_RESTRICT b,
                                  Acc* HWY_RESTRICT acc) {
  static_assert(kV >= 1 && kV <= kVecs);
  const hn::ScalableTag<Acc> d;
  using V = hn::Vec<decltype(d)>;
  constexpr std::size_t kN = hn::MaxLanes(d);
  constexpr std::int64_t kNr = static_cast<std::int64_t>(kVecs * kN);
  V c[kRows][kV];
  HWY_UNROLL(16)
  for (std::int64_t r = 0; r < kRows; ++r) {
    HWY_UNROLL(4)
    for (std::size_t v = 0; v < kV; ++v) c[r][v] = hn::Zero(d);
  }
  for (std::int64_t t = 0; t < taps; ++t, b += channels * kNr) {
    const Acc* a[kRows];
    std::int64_t live = 0;
    HWY_UNROLL(16)
    for (std::int64_t r = 0; r < kRows; ++r) {
      a[r] = rows[t * kRows + r];
      live += a[r] != nullptr;
    }
    if (live == kRows) {
      const Acc* bt = b;
      for (std::int64_t q = 0; q < channels; ++q, bt += kNr) {
        V bv[kV];
        HWY_UNROLL(4)
        for (std::size_t v = 0; v < kV; ++v) hwy::Prefetch(bt + 16 * kNr + v * kN);
        HWY_UNROLL(4)
        for (std::size_t v = 0; v < kV; ++v) bv[v] = hn::Load(d, bt + v * kN);
        HWY_UNROLL(16)
        for (std::int64_t r = 0; r < kRows; ++r) {
          const V ar = hn::Set(d, a[r][q]);
          HWY_UNROLL(4)
          for (std::size_t v = 0; v < kV; ++v) c[r][v] = hn::MulAdd(ar, bv[v], c[r][v]);
        }
      }
    } else if (live > 0) {  // a border tap: only the rows inside x
      const Acc* bt = b;
      for (std::int64_t q = 0; q < channels; ++q, bt += kNr) {
        V bv[kV];
        HWY_UNROLL(4)
        for (std::size_t v = 0; v < kV; ++v) bv[v] = hn::Load(d, bt + v * kN);
        HWY_UNROLL(16)
        for (std::int64_t r = 0; r < kRows; ++r) {
          if (a[r] == nullptr) continue;
          const V ar = hn::Set(d, a[r][q]);
          HWY_UNROLL(4)
          for (std::size_t v = 0; v < kV; ++v) c[r][v] = hn::MulAdd(ar, bv[v], c[r][v]);
        }
      }
    }
  }
  HWY_UNROLL(16)
  for (std::int64_t r = 0; r < kRows; ++r) {
    HWY_UNROLL(4)
    for (std::size_t v = 0; v < kV; ++v) hn::StoreU(c[r][v], d, acc + r * kNr + v * kN);
  }
}

// MicroKernelTaps over the first `cols` columns of a panel, in as few vectors as hold them.
template <class Acc>
HWY_INLINE void MicroKernelTapsCols(std::int64_t cols, const Acc* const* HWY_RESTRICT rows,
                                    std::int64_t taps, std::int64_t channels,
                                    const Acc* HWY_RESTRICT b, Acc* HWY_RESTRICT acc) {
  constexpr std::int64_t kN = static_cast<std::int64_t>(hn::MaxLanes(hn::ScalableTag<Acc>()));
  if constexpr (kVecs >= 3) {
    if (cols <= 2 * kN) {
      if (cols <= kN) return MicroKernelTaps<Acc, 1>(rows, taps, channels, b, acc);
      return MicroKernelTaps<Acc, 2>(rows, taps, channels, b, acc);
    }
  } else if constexpr (kVecs == 2) {
    if (cols <= kN) return MicroKernelTaps<Acc, 1>(rows, taps, channels, b, acc);
  }
  MicroKernelTaps<Acc, kVecs>(rows, taps, channels, b, acc);
}

// Thread-owned scratch (Note [gemm scratch]); grows to its bound once per thread.
template <class Acc>
Acc* ThreadScratch(AlignedVector<Acc>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPSIM_KERNELS_SIMD_GEMM_INL_H_
