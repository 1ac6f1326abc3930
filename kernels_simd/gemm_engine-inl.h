// The GEMM engine's per-target body (gemm.h): Goto-style blocking around a register-blocked
// micro-kernel. b is packed into panels of kNr columns, K block by K block (Note [packed b
// blocks]; one column chunk at a time, Note [gemm scratch]); each task owns an output tile of
// kMc rows and up to kNc columns, packs its rows of a per K block of up to kKc into panels of
// kRows (or reads row-major rows in place, Note [thin gemm]), and runs the micro-kernel over
// every (row panel, column panel) pair. A convolution with dense channels runs each micro-tile
// over the whole K instead, reading x in place (Note [conv in registers]). Numerics: Note
// [gemm numerics]. Two translation units instantiate it, so that each compiles in half the
// time (scripts/build_times.sh): gemm.cc the double accumulators (Golden, and float64),
// gemm_f32.cc the float ones (Fast).
#if defined(MPSIM_KERNELS_SIMD_GEMM_ENGINE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPSIM_KERNELS_SIMD_GEMM_ENGINE_INL_H_
#undef MPSIM_KERNELS_SIMD_GEMM_ENGINE_INL_H_
#else
#define MPSIM_KERNELS_SIMD_GEMM_ENGINE_INL_H_
#endif

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/convert.h"
#include "hwy/highway.h"
#include "kernels_simd/aligned_vector.h"
#include "kernels_simd/elementwise.h"
#include "kernels_simd/gemm-inl.h"
#include "kernels_simd/gemm.h"
#include "kernels_simd/scratch_pool.h"
#include "kernels_simd/stream_fence.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Cache blocking: a task walks its row panels, and for each the b panels of its columns; a row
// panel of a (kKc x kRows) stays in L1 while b panels (kKc x kNr: 24 KiB at kKc = 128 on AVX-512,
// half a 32 KiB L1) stream from L2. kKc = 128 runs faster than 256 there (whose b panel fills L1).
// kMc x kNc bounds a task's accumulator tile; kNc is a multiple of every target's kNr (48, 24, 16,
// 12, 8, 6, 4). kNc = 576 keeps a K block's slice of b (288 KiB in float) and the accumulator tile
// (216 KiB) together in a 1 MiB L2: Fast, 2 threads, 4096 x 4096 x 1024 and 2048^3 run a little
// faster than with 1536 and the same at 1024^3 (`linalg_bench --filter mm`, beside a build with
// 1536; docs/measurements.md).
constexpr std::int64_t kMcPanels = 12;
constexpr std::int64_t kMc = kRows * kMcPanels;
constexpr std::int64_t kKc = 128;
constexpr std::int64_t kNc = 576;
// The accumulator tile holds whole panels: a kNc that is not a multiple of kNr would overrun it.
static_assert(kNc % PanelWidth<float>() == 0 && kNc % PanelWidth<double>() == 0);

// Note [gemm streaming]
// An output of kStreamingStoreMinBytes (16 MiB) or more, with unit column stride, is written with
// streaming stores where Acc is the output type (Fast float32, float64): it leaves the caches
// before anyone reads it, and a normal store would first read each line it writes
// (Note [streaming stores] in elementwise.h). The values are the same; each task fences its stores
// before it completes. 4096 x 4096 x 40, Fast, 2 threads (a 64 MiB output) runs faster streamed
// than with normal stores (`linalg_bench --filter "mm 4096x4096x40"`; docs/measurements.md).

// Note [thin gemm]
// A packed row panel of a pays for itself when many column panels of b reuse it; with one or two (n
// up to 2 kNr, as attention's P V with n = 40) packing costs about as much as the products. There
// the micro-kernel broadcasts a's values from kRows row-major rows in place (float rows widened
// exactly to double in Golden): the same values in the same order, so the same bits as the packed
// route, and faster at 4096 x 40 x 4096 (`linalg_bench --filter "mm 4096x40x4096"`).
// Wider products keep their K blocks, but where a is row-major and needs no widening (Fast float32,
// float64) full row panels are read in place there too, instead of packed per tile and K block, a
// little faster on one and two threads (`linalg_bench --threads 1 --filter "mm 1024"`, beside a
// build that packs; docs/measurements.md).
constexpr std::int64_t kInPlacePanels = 2;
// Note [whole K]
// Where a is row-major and needs no widening (Fast float32, float64) and a whole-K panel of b (K
// kNr values) fits kWholeKBytes, b is packed in whole-K panels and each micro-tile runs over all of
// K in registers, a's rows read in place: no accumulator tile stored and reloaded at the ends of K
// blocks. A task walks its column panels and, for each (in L2), its row panels. The chains are the
// K blocks' (whose ends are exact), so are the bits. This runs faster on 2 threads, Fast, and the
// same at 1024^3 on one (`linalg_bench --filter mm`, beside a build with K blocks;
// docs/measurements.md).
constexpr std::int64_t kWholeKBytes = std::int64_t{512} << 10;
// Note [conv in registers]
// A convolution runs each micro-tile over the whole K in registers (MicroKernelTaps in
// gemm-inl.h): per tap, the kRows pixels' channels are read where they lie, in x itself when
// its channels are dense and need no widening (Fast float32, float64), else in the input rows
// that the task's pixels read, first staged dense and widened in the thread's scratch (Golden
// float32: double; float16 and bfloat16: float or double). A tap in the padding forms no
// product: the sum runs over the taps inside x, as PyTorch's (0 x inf would be NaN), and a
// tap in the padding for every pixel of a micro-tile costs nothing. No accumulator tile is
// stored and reloaded at the ends of K blocks. b is packed in whole-K panels; a task walks its
// column panels and, for each, its row panels, so the panel (K kNr values: 540 KiB for 320 float
// channels of a 3x3 kernel) stays in L2 while the row panels pass. conv2d 3x3 320 -> 320 on
// [1, 320, 64, 64], 2 threads, runs faster this way than on K blocks of packed gathered panels, in
// both layouts, Fast and Golden, float32 and float16 (`linalg_bench --filter conv3x3`, beside a
// build of each; docs/measurements.md).
// Problems with fewer multiply-adds run whole on one thread, many problems in parallel.
constexpr std::int64_t kSmallProblemMacs = std::int64_t{1} << 21;

// The a operand of a plain GEMM: a strided matrix.
template <class In>
struct StridedA {
  // float and double rows the micro-kernel can read in place (Note [thin gemm]): over all of
  // K (kInPlace) and block by block (kInPlaceBlocks).
  static constexpr bool kInPlace = std::is_same_v<In, float> || std::is_same_v<In, double>;
  static constexpr bool kInPlaceBlocks = kInPlace;
  static constexpr bool kTaps = false;  // Note [conv in registers]
  const In* a;
  std::int64_t rs, cs;
  // Rows i .. i + kRows - 1 from column pc (RowStride() apart) when a is row-major (cs == 1),
  // else null.
  const In* Rows(std::int64_t i, std::int64_t pc, std::int64_t /*kc*/ = 0) const {
    return cs == 1 ? a + i * rs + pc : nullptr;
  }
  std::int64_t RowStride() const { return rs; }
  template <class Acc>
  void Pack(std::int64_t i, std::int64_t rows, std::int64_t pc, std::int64_t kc, Acc* dst) const {
    if (kc == 0) return;  // k = 0: nothing to pack (a may be the null data of an empty tensor)
    PackA(a + i * rs + pc * cs, rs, cs, rows, kc, dst);
  }
};

// The a operand of a convolution (Im2Col in gemm.h): row p is output pixel p, column k is
// (kh, kw, c) with c fastest; a tap outside the input forms no product. Never materialized:
// the micro-kernel reads each pixel's channels at each tap from x in place, or from the input
// rows its task staged (Note [conv in registers]).
template <class In>
struct Im2ColA {
  static constexpr bool kTaps = true;  // Note [conv in registers]
  const In* x;
  const Im2Col* g;
  std::int64_t Taps() const { return g->kernel_h * g->kernel_w; }
  // Whether the micro-kernel reads x itself: channels dense and no widening.
  template <class Acc>
  bool ReadsInPlace() const {
    return std::is_same_v<In, Acc> && g->c_stride == 1;
  }
  // The rows of x, [lo, hi), that output pixels [i0, i1) read.
  std::pair<std::int64_t, std::int64_t> InputRows(std::int64_t i0, std::int64_t i1) const {
    const std::int64_t lo = (i0 / g->out_w) * g->stride_h - g->pad_h;
    const std::int64_t hi =
        ((i1 - 1) / g->out_w) * g->stride_h - g->pad_h + (g->kernel_h - 1) * g->dilation_h + 1;
    return {std::max<std::int64_t>(lo, 0), std::min(hi, g->height)};
  }
  // Rows [lo, hi) of x widened to Acc, dense channels-last: row ih, column iw at
  // dst + ((ih - lo) W + iw) C.
  template <class Acc>
  void StageRows(std::int64_t lo, std::int64_t hi, Acc* HWY_RESTRICT dst) const {
    const std::int64_t channels = g->channels;
    for (std::int64_t ih = lo; ih < hi; ++ih) {
      for (std::int64_t iw = 0; iw < g->width; ++iw) {
        const In* src = x + ih * g->h_stride + iw * g->w_stride;
        Acc* d = dst + ((ih - lo) * g->width + iw) * channels;
        if (g->c_stride == 1) {
          WidenRun(src, channels, d);
        } else {
          for (std::int64_t c = 0; c < channels; ++c) d[c] = Widen<Acc>(src[c * g->c_stride]);
        }
      }
    }
  }
  // rows[t * kRows + r] = pixel i + r's channels at tap t, where input row ih, column iw lies
  // at base + (ih - lo) h_stride + iw w_stride; null where the tap lies in the padding or
  // r >= valid.
  template <class Acc>
  void TapRows(std::int64_t i, std::int64_t valid, const Acc* base, std::int64_t lo,
               std::int64_t h_stride, std::int64_t w_stride, const Acc** rows) const {
    std::int64_t ih0[kRows], iw0[kRows];
    for (std::int64_t r = 0; r < kRows; ++r) {
      ih0[r] = r < valid ? ((i + r) / g->out_w) * g->stride_h - g->pad_h : -g->height - 1;
      iw0[r] = r < valid ? ((i + r) % g->out_w) * g->stride_w - g->pad_w : 0;
    }
    for (std::int64_t t = 0; t < Taps(); ++t) {
      const std::int64_t dh = (t / g->kernel_w) * g->dilation_h;
      const std::int64_t dw = (t % g->kernel_w) * g->dilation_w;
      for (std::int64_t r = 0; r < kRows; ++r) {
        const std::int64_t ih = ih0[r] + dh, iw = iw0[r] + dw;
        const bool inside = ih >= 0 && ih < g->height && iw >= 0 && iw < g->width;
        rows[t * kRows + r] = inside ? base + (ih - lo) * h_stride + iw * w_stride : nullptr;
      }
    }
  }
};

// out[j] = (alpha * acc[j]) + (beta * c[j]) (each step skipped where it is exact: alpha == 1,
// beta == 1, no c), rounded once to Out. The vector and scalar forms do the same operations and
// roundings (a 16-bit Out from double through round-to-odd: convert, core/convert.h).
// `stream`: whole vectors go out through streaming stores where out is vector-aligned (Note
// [gemm streaming]; the caller fences).
template <class Acc, class Out>
void FinalizeRow(const Acc* HWY_RESTRICT acc, std::int64_t cols, Out* out, std::int64_t o_cs,
                 const Out* c, std::int64_t c_cs, Acc alpha, Acc beta, bool stream) {
  std::int64_t j = 0;
  constexpr bool kWide = std::is_same_v<Out, float> || std::is_same_v<Out, double>;
  if constexpr (kWide || kWidensInVectors<Out>) {
    const hn::ScalableTag<Acc> d;
    // Out's lanes; the 16-bit types go as their bits
    const hn::Rebind<std::conditional_t<kWide, Out, std::uint16_t>, decltype(d)> dout;
    const hn::Rebind<float, decltype(d)> df;
    constexpr std::int64_t kN = static_cast<std::int64_t>(hn::MaxLanes(d));
    const bool vector_c = c == nullptr || c_cs == 0 || c_cs == 1;
    stream = stream && reinterpret_cast<std::uintptr_t>(out) % (kN * sizeof(Out)) == 0;
    if (o_cs == 1 && vector_c) {
      const auto va = hn::Set(d, alpha), vb = hn::Set(d, beta);
      for (; j + kN <= cols; j += kN) {
        auto v = hn::LoadU(d, acc + j);
        if (alpha != Acc(1)) v = hn::Mul(va, v);
        if (c != nullptr) {
          hn::Vec<decltype(d)> cv;
          if (c_cs == 0) {
            cv = hn::Set(d, Widen<Acc>(c[0]));
          } else if constexpr (std::is_same_v<Acc, Out>) {
            cv = hn::LoadU(d, c + j);
          } else if constexpr (kWide) {
            cv = hn::PromoteTo(d, hn::LoadU(dout, c + j));
          } else {
            cv = LoadWidened(d, c + j);
          }
          if (beta != Acc(1)) cv = hn::Mul(vb, cv);
          v = hn::Add(v, cv);
        }
        if constexpr (std::is_same_v<Acc, Out>) {
          if (stream) {
            hn::Stream(v, dout, out + j);
          } else {
            hn::StoreU(v, dout, out + j);
          }
        } else if constexpr (kWide) {
          hn::StoreU(F64ToF32(d, v), dout, out + j);
        } else {
          const auto f = [&] {
            if constexpr (std::is_same_v<Acc, float>) {
              return v;
            } else {
              return F64ToF32RoundOdd(d, v);
            }
          }();
          auto* bits = reinterpret_cast<std::uint16_t*>(out + j);
          if constexpr (std::is_same_v<Out, BFloat16>) {
            hn::StoreU(F32ToBF16Bits(df, f), dout, bits);
          } else {
            hn::StoreU(F32ToF16Bits(df, f), dout, bits);
          }
        }
      }
    }
  }
  for (; j < cols; ++j) {
    Acc v = acc[j];
    if (alpha != Acc(1)) v = alpha * v;
    if (c != nullptr) {
      Acc cv = Widen<Acc>(c[j * c_cs]);
      if (beta != Acc(1)) cv = beta * cv;
      v = v + cv;
    }
    out[j * o_cs] = convert<Out>(v);
  }
}

template <class In, class Acc>
class Engine {
 public:
  static constexpr std::int64_t kNr = PanelWidth<Acc>();

  Engine(const GemmConfig& config)
      : alpha_(static_cast<Acc>(config.alpha)), beta_(static_cast<Acc>(config.beta)) {}

  // One problem, its tiles spread over the threads when `parallel`; `a` packs panels of a.
  template <class Source>
  void Run(const GemmProblem& p, const Source& a, bool parallel) const {
    const std::int64_t chunk = ChunkWidth(p.k);
    for (std::int64_t n0 = 0; n0 < p.n; n0 += chunk) {
      const std::int64_t nw = std::min(chunk, p.n - n0);
      const std::int64_t panels = (nw + kNr - 1) / kNr;
      const std::size_t packed_size = static_cast<std::size_t>(panels * kNr * p.k);
      static thread_local AlignedVector<Acc> local_b;
      std::optional<ScratchPool::Lease> shared_b;
      if (parallel) shared_b.emplace(gemm_packed_b_pool().take(packed_size * sizeof(Acc)));
      Acc* packed = parallel ? shared_b->as<Acc>() : ThreadScratch(local_b, packed_size);
      const In* b = static_cast<const In*>(p.b);
      // b's rows come in runs (GemmProblem::b_taps); a block's rows are packed run by run.
      const std::int64_t run = p.b_taps > 1 ? p.k / p.b_taps : std::max<std::int64_t>(p.k, 1);
      const bool whole_k = WholeK(p, a);
      auto pack_panels = [&](std::int64_t q0, std::int64_t q1) {
        if (p.k == 0) return;  // nothing to pack; b may be the null data of an empty tensor
        for (std::int64_t q = q0; q < q1; ++q) {
          const std::int64_t j0 = n0 + q * kNr;
          if (whole_k && p.b_taps > 1 && p.b_cs != 1) {  // a convolution's weight
            PackBTaps(p, b + j0 * p.b_cs, run, std::min(kNr, p.n - j0), packed + q * kNr * p.k);
            continue;
          }
          for (std::int64_t pc = 0, kc; pc < p.k; pc += kc) {
            // Note [conv in registers]: one block, the whole K
            kc = whole_k ? p.k : BlockLength(pc, p.k);
            Acc* dst = packed + Slice(panels, q, pc, kc);
            for (std::int64_t k = pc; k < pc + kc;) {
              const std::int64_t tap = k / run, rows = std::min(pc + kc, (tap + 1) * run) - k;
              PackB(b + tap * p.b_tap_stride + (k - tap * run) * p.b_rs + j0 * p.b_cs, p.b_rs,
                    p.b_cs, std::min(kNr, p.n - j0), rows, dst + (k - pc) * kNr);
              k += rows;
            }
          }
        }
      };
      // Tiles: up to kMc rows by nc columns. The row panels are dealt evenly over a number of
      // row tiles that the threads divide (1024 rows: 12 tiles of 10 or 11 panels, not 11 of
      // 12 and a last of 8, which left one of 2 threads idle for 5% of the time); nc shrinks
      // (in whole panels) until every thread has several tiles. Tiles only group whole
      // outputs, so their shape changes no result.
      const std::int64_t threads = parallel ? tbb::this_task_arena::max_concurrency() : 1;
      const std::int64_t row_panels = (p.m + kRows - 1) / kRows;
      std::int64_t row_tiles = (row_panels + kMcPanels - 1) / kMcPanels;
      row_tiles = std::min(row_panels, (row_tiles + threads - 1) / threads * threads);
      std::int64_t nc = std::min<std::int64_t>(kNc, panels * kNr);
      while (parallel && nc > 4 * kNr && row_tiles * ((nw + nc - 1) / nc) < 4 * threads) {
        nc = (nc / 2 + kNr - 1) / kNr * kNr;
      }
      const std::int64_t col_tiles = (nw + nc - 1) / nc;
      // Note [gemm streaming]
      const bool stream =
          std::is_same_v<Acc, Out> && p.o_cs == 1 &&
          p.m * p.n * static_cast<std::int64_t>(sizeof(Out)) >= kStreamingStoreMinBytes;
      auto run_tiles = [&](std::int64_t t0, std::int64_t t1) {
        for (std::int64_t t = t0; t < t1; ++t) {
          const std::int64_t rt = t / col_tiles;
          const std::int64_t i0 = rt * row_panels / row_tiles * kRows;
          const std::int64_t i1 = std::min(p.m, (rt + 1) * row_panels / row_tiles * kRows);
          Tile(p, a, packed, n0, nw, i0, i1, (t % col_tiles) * nc, nc, whole_k, stream);
        }
        if (stream) stream_fence();
      };
      if (parallel) {
        tbb::parallel_for(
            tbb::blocked_range<std::int64_t>(0, panels, 4),
            [&](const auto& r) { pack_panels(r.begin(), r.end()); }, tbb::simple_partitioner());
        tbb::parallel_for(
            tbb::blocked_range<std::int64_t>(0, row_tiles * col_tiles, 1),
            [&](const auto& r) { run_tiles(r.begin(), r.end()); }, tbb::simple_partitioner());
      } else {
        pack_panels(0, panels);
        run_tiles(0, row_tiles * col_tiles);
      }
    }
  }

 private:
  // Columns of b packed at once: at most kGemmPackedBBytes, whole panels.
  static std::int64_t ChunkWidth(std::int64_t k) {
    const std::int64_t cols =
        static_cast<std::int64_t>(kGemmPackedBBytes / sizeof(Acc)) / std::max<std::int64_t>(k, 1);
    return std::max(kNr, cols / kNr * kNr);
  }

  // Note [packed b blocks]: the packed chunk holds, for each K block in turn, the block's
  // slice of every panel (kc x kNr values each) side by side, so the slices a tile's micro-kernel
  // calls read one after another are adjacent in memory, one stream for the prefetchers (whole-K
  // panels put them K kNr values apart): 2048^3 and 4096 x 4096 x 1024 Fast on one thread run
  // faster this way (`linalg_bench --threads 1 --filter "mm 2048"`, beside a build with whole-K
  // panels; docs/measurements.md). Returns the offset of
  // panel q's slice of the block starting at k = pc, kc long.
  static std::int64_t Slice(std::int64_t panels, std::int64_t q, std::int64_t pc, std::int64_t kc) {
    return pc * panels * kNr + q * kNr * kc;
  }
  // The K block from pc: kKc long, or shorter at the end of K. Blocks only cut the chains,
  // which carry on in acc, so their lengths change no bit.
  static std::int64_t BlockLength(std::int64_t pc, std::int64_t k) { return std::min(kKc, k - pc); }

  // Note [conv in registers]: a whole-K panel of b's first `cols` columns from b (b_taps runs
  // of `run` rows), channel by channel with every tap at once: a weight in PyTorch's layout
  // ([Cout, C, kH, kW]) keeps one channel's taps side by side, so each of its cache lines is
  // read once, where run by run read each again for every tap (9 times for 3x3). conv2d 3x3
  // 320 -> 320, Fast, 2 threads: packing b 2.3% -> 1.9% of the time (perf).
  static void PackBTaps(const GemmProblem& p, const In* b, std::int64_t run, std::int64_t cols,
                        Acc* HWY_RESTRICT dst) {
    for (std::int64_t c = 0; c < run; ++c) {
      for (std::int64_t t = 0; t < p.b_taps; ++t) {
        const In* src = b + t * p.b_tap_stride + c * p.b_rs;
        Acc* row = dst + (t * run + c) * kNr;
        for (std::int64_t j = 0; j < cols; ++j) row[j] = Widen<Acc>(src[j * p.b_cs]);
        for (std::int64_t j = cols; j < kNr; ++j) row[j] = Acc(0);
      }
    }
  }

  // Whether b is packed in whole-K panels and each micro-tile runs over all of K: a
  // convolution (Note [conv in registers]), or a row-major a read in place with no widening
  // whose K keeps a panel of b within kWholeKBytes (Note [whole K]).
  template <class Source>
  static bool WholeK(const GemmProblem& p, const Source& a) {
    if constexpr (Source::kTaps) {
      return true;
    } else if constexpr (Source::kInPlace && std::is_same_v<In, Acc>) {
      return a.cs == 1 && p.k > kKc &&
             p.k * kNr * static_cast<std::int64_t>(sizeof(Acc)) <= kWholeKBytes;
    } else {
      return false;
    }
  }

  // Output rows [i0, i1) (at most kMc) x chunk columns [j0, j0 + nc) (relative to n0); b is
  // packed in whole-K panels when whole_k (WholeK).
  template <class Source>
  void Tile(const GemmProblem& p, const Source& a, const Acc* packed_b, std::int64_t n0,
            std::int64_t nw, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t nc,
            bool whole_k, bool stream) const {
    if constexpr (Source::kTaps) {
      TileTaps(p, a, packed_b, n0, nw, i0, i1, j0, nc, stream);
    } else {
      if constexpr (Source::kInPlace && std::is_same_v<In, Acc>) {
        if (whole_k) return TileWholeK(p, a, packed_b, n0, nw, i0, i1, j0, nc, stream);
      }
      TilePacked(p, a, packed_b, n0, nw, i0, i1, j0, nc, stream);
    }
  }

  // Note [whole K]: Tile for a row-major a read in place, b packed in whole-K panels: column
  // panel by column panel (which stays in L2), each row panel's sums in registers over all of
  // K. A last row panel past m is packed first, with zero rows.
  template <class Source>
  void TileWholeK(const GemmProblem& p, const Source& a, const Acc* packed_b, std::int64_t n0,
                  std::int64_t nw, std::int64_t i0, std::int64_t i1, std::int64_t j0,
                  std::int64_t nc, bool stream) const {
    const std::int64_t cols = std::min(nc, nw - j0);
    const std::int64_t col_panels = (cols + kNr - 1) / kNr;
    const std::int64_t row_panels = (i1 - i0 + kRows - 1) / kRows;
    static thread_local AlignedVector<Acc> tail_scratch, tile;
    Acc* acc = ThreadScratch(tile, static_cast<std::size_t>(kRows * kNr));
    Acc* tail = nullptr;
    const std::int64_t last = i0 + (row_panels - 1) * kRows;
    if (last + kRows > p.m) {
      tail = ThreadScratch(tail_scratch, static_cast<std::size_t>(kRows * p.k));
      a.Pack(last, p.m - last, 0, p.k, tail);
    }
    for (std::int64_t jp = 0; jp < col_panels; ++jp) {
      const Acc* bp = packed_b + (j0 / kNr + jp) * kNr * p.k;
      const std::int64_t panel_cols = std::min(kNr, cols - jp * kNr);
      for (std::int64_t ip = 0; ip < row_panels; ++ip) {
        const std::int64_t i = i0 + ip * kRows;
        if (i == last && tail != nullptr) {
          MicroKernelCols<Acc, false, Acc, kNr>(panel_cols, tail, bp, p.k, acc, kNr, false);
        } else {
          MicroKernelCols<Acc, true, In, kNr>(panel_cols, a.Rows(i, 0), bp, p.k, acc, kNr, false,
                                              a.RowStride());
        }
        Finalize(p, acc, i, n0 + j0 + jp * kNr, n0 + nw, stream);
      }
    }
  }

  // Note [conv in registers]: Tile for a convolution, b packed in whole-K panels. x is read in
  // place where it can be (Source::ReadsInPlace), else the input rows of the tile's pixels are
  // first staged, widened, in the thread's scratch.
  template <class Source>
  void TileTaps(const GemmProblem& p, const Source& a, const Acc* packed_b, std::int64_t n0,
                std::int64_t nw, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t nc,
                bool stream) const {
    const Im2Col& g = *a.g;
    const std::int64_t taps = a.Taps(), channels = p.k / taps;
    const std::int64_t cols = std::min(nc, nw - j0);
    const std::int64_t col_panels = (cols + kNr - 1) / kNr;
    const std::int64_t row_panels = (i1 - i0 + kRows - 1) / kRows;
    static thread_local AlignedVector<Acc> staged, tile;
    static thread_local std::vector<const Acc*> table;
    const Acc* base = nullptr;
    std::int64_t lo = 0, h_stride = 0, w_stride = 0;
    if (a.template ReadsInPlace<Acc>()) {
      base = reinterpret_cast<const Acc*>(a.x);
      h_stride = g.h_stride;
      w_stride = g.w_stride;
    } else {
      const auto [first, end] = a.InputRows(i0, i1);
      lo = first;
      w_stride = channels;
      h_stride = g.width * channels;
      const std::int64_t n = std::max<std::int64_t>(end - first, 0) * h_stride;
      Acc* dst = ThreadScratch(staged, static_cast<std::size_t>(n));
      a.StageRows(first, end, dst);
      base = dst;
    }
    table.resize(static_cast<std::size_t>(row_panels * taps * kRows));
    for (std::int64_t ip = 0; ip < row_panels; ++ip) {
      const std::int64_t i = i0 + ip * kRows;
      a.TapRows(i, std::min(kRows, p.m - i), base, lo, h_stride, w_stride,
                table.data() + ip * taps * kRows);
    }
    Acc* acc = ThreadScratch(tile, static_cast<std::size_t>(kRows * kNr));
    for (std::int64_t jp = 0; jp < col_panels; ++jp) {
      const Acc* bp = packed_b + (j0 / kNr + jp) * kNr * p.k;
      const std::int64_t panel_cols = std::min(kNr, cols - jp * kNr);
      for (std::int64_t ip = 0; ip < row_panels; ++ip) {
        MicroKernelTapsCols<Acc>(panel_cols, table.data() + ip * taps * kRows, taps, channels, bp,
                                 acc);
        Finalize(p, acc, i0 + ip * kRows, n0 + j0 + jp * kNr, n0 + nw, stream);
      }
    }
  }

  // Tile for a strided a: packed row panels of K blocks (or rows read in place, Note [thin
  // gemm]).
  template <class Source>
  void TilePacked(const GemmProblem& p, const Source& a, const Acc* packed_b, std::int64_t n0,
                  std::int64_t nw, std::int64_t i0, std::int64_t i1, std::int64_t j0,
                  std::int64_t nc, bool stream) const {
    const std::int64_t rows = i1 - i0;
    const std::int64_t cols = std::min(nc, nw - j0);
    const std::int64_t col_panels = (cols + kNr - 1) / kNr;
    const std::int64_t panels = (nw + kNr - 1) / kNr;  // of the packed chunk
    // Note [thin gemm]: full row panels of a row-major a, read in place over all of K.
    std::int64_t packed_from = 0;  // the first row (of the tile) left to the packed route
    if constexpr (Source::kInPlace) {
      if (col_panels <= kInPlacePanels && a.Rows(i0, 0) != nullptr) {
        static thread_local AlignedVector<Acc> tile_scratch;
        Acc* acc = ThreadScratch(tile_scratch, static_cast<std::size_t>(kRows * kNr));
        for (; packed_from + kRows <= rows; packed_from += kRows) {
          for (std::int64_t jp = 0; jp < col_panels; ++jp) {
            std::int64_t pc = 0;
            do {  // once for K = 0
              const std::int64_t kc = BlockLength(pc, p.k);
              MicroKernelCols<Acc, true, In, kNr>(std::min(kNr, cols - jp * kNr),
                                                  a.Rows(i0 + packed_from, pc),
                                                  packed_b + Slice(panels, j0 / kNr + jp, pc, kc),
                                                  kc, acc, kNr, pc > 0, a.RowStride());
              pc += kc;
            } while (pc < p.k);
            Finalize(p, acc, i0 + packed_from, n0 + j0 + jp * kNr, n0 + nw, stream);
          }
        }
        if (packed_from == rows) return;
      }
    }
    const std::int64_t row_panels = (rows - packed_from + kRows - 1) / kRows;
    const bool several_blocks = BlockLength(0, p.k) < p.k;
    static thread_local AlignedVector<Acc> a_scratch, acc_scratch;
    Acc* packed_a = ThreadScratch(a_scratch, static_cast<std::size_t>(kMc * kKc));
    Acc* accs = ThreadScratch(acc_scratch,
                              static_cast<std::size_t>(several_blocks ? kMc * kNc : kRows * kNr));
    std::int64_t pc = 0;
    do {  // once for K = 0
      const std::int64_t kc = BlockLength(pc, p.k);
      const bool last = pc + kc >= p.k;
      // Row panels read in place (Note [thin gemm]) have their rows
      // here; the others null, and packed.
      const In* rows_in_place[kMcPanels];
      for (std::int64_t ip = 0; ip < row_panels; ++ip) {
        const std::int64_t i = i0 + packed_from + ip * kRows;
        rows_in_place[ip] = nullptr;
        if constexpr (Source::kInPlaceBlocks && std::is_same_v<In, Acc>) {
          if (kc > 0 && i + kRows <= p.m) rows_in_place[ip] = a.Rows(i, pc, kc);
        }
        if (rows_in_place[ip] == nullptr) {
          a.Pack(i, std::min(kRows, p.m - i), pc, kc, packed_a + ip * kRows * kc);
        }
      }
      for (std::int64_t ip = 0; ip < row_panels; ++ip) {
        for (std::int64_t jp = 0; jp < col_panels; ++jp) {
          const Acc* bp = packed_b + Slice(panels, j0 / kNr + jp, pc, kc);
          Acc* acc = several_blocks ? accs + (ip * col_panels + jp) * kRows * kNr : accs;
          const std::int64_t panel_cols = std::min(kNr, cols - jp * kNr);
          bool done = false;
          if constexpr (Source::kInPlaceBlocks && std::is_same_v<In, Acc>) {
            if (rows_in_place[ip] != nullptr) {
              MicroKernelCols<Acc, true, In, kNr>(panel_cols, rows_in_place[ip], bp, kc, acc, kNr,
                                                  pc > 0, a.RowStride());
              done = true;
            }
          }
          if (!done) {
            MicroKernelCols<Acc, false, Acc, kNr>(panel_cols, packed_a + ip * kRows * kc, bp, kc,
                                                  acc, kNr, pc > 0);
          }
          if (last) {
            Finalize(p, acc, i0 + packed_from + ip * kRows, n0 + j0 + jp * kNr, n0 + nw, stream);
          }
        }
      }
      pc += kc;
    } while (pc < p.k);
  }

  // Writes the micro-tile acc (kRows x kNr) at output rows from i, columns from j (up to the
  // chunk's end).
  void Finalize(const GemmProblem& p, const Acc* acc, std::int64_t i, std::int64_t j,
                std::int64_t end, bool stream) const {
    Out* out = static_cast<Out*>(p.out);
    const Out* c = static_cast<const Out*>(p.c);
    const std::int64_t nj = std::min(kNr, end - j);
    for (std::int64_t r = 0; r < std::min(kRows, p.m - i); ++r) {
      FinalizeRow(acc + r * kNr, nj, out + (i + r) * p.o_rs + j * p.o_cs, p.o_cs,
                  c == nullptr ? nullptr : c + (i + r) * p.c_rs + j * p.c_cs, p.c_cs, alpha_, beta_,
                  stream);
    }
  }

  using Out = In;
  Acc alpha_, beta_;
};

// Runs the batch: problems with few multiply-adds whole on one thread each, in parallel;
// others one after another, each over its tiles in parallel. `im2col` (or null) says how a
// is read (Im2Col in gemm.h).
template <class In, class Acc>
void RunGemm(const GemmConfig& config, const Im2Col* im2col,
             std::span<const GemmProblem> problems) {
  const Engine<In, Acc> engine(config);
  auto run = [&](GemmProblem p, bool parallel) {
    if (config.beta == 0) p.c = nullptr;  // not read: NaN in c does not propagate (PyTorch)
    if (im2col != nullptr) {
      engine.Run(p, Im2ColA<In>{static_cast<const In*>(p.a), im2col}, parallel);
      return;
    }
    constexpr std::int64_t kNr = Engine<In, Acc>::kNr;
    // The transposed problem (gemm.h) fills the micro-kernel better when n is narrower than a
    // panel and m is not. It is taken when n fills at most a quarter of a panel (matrix x
    // vector), or when a is column-major (so packing it as the new b reads rows); a row-major
    // a would be packed by gathers, which cost more than a panel's padding (docs/measurements.md).
    // b's runs (b_taps) have no transposed form.
    if (p.b_taps == 1 && p.m > p.n && (4 * p.n <= kNr || (p.a_rs == 1 && p.n < kNr))) {
      p = transposed(p);
    }
    engine.Run(p, StridedA<In>{static_cast<const In*>(p.a), p.a_rs, p.a_cs}, parallel);
  };
  const GemmProblem& first = problems.front();
  const bool small = first.m * first.n * first.k < kSmallProblemMacs;
  if (problems.size() > 1 && small) {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, problems.size(), 1),
        [&](const auto& r) {
          for (std::size_t i = r.begin(); i < r.end(); ++i) run(problems[i], false);
        },
        tbb::simple_partitioner());
    return;
  }
  for (const GemmProblem& p : problems) run(p, !small);
}

// float64 always accumulates in double (gemm.cc sends it to the double engine); the other
// dtypes in Acc.
template <class Acc>
void GemmIn(const GemmConfig& config, const Im2Col* im2col, std::span<const GemmProblem> problems) {
  visit_dtype(config.dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, double>) {
      if constexpr (std::is_same_v<Acc, double>) {
        RunGemm<double, double>(config, im2col, problems);
      } else {
        HWY_ABORT("float64 gemm sent to the float engine");
      }
    } else if constexpr (FloatingElement<T>) {
      RunGemm<T, Acc>(config, im2col, problems);
    }
  });
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPSIM_KERNELS_SIMD_GEMM_ENGINE_INL_H_
