// softmax and log_softmax over the trailing dim of a (permuted) view. Each row: max, then
// e = exp(x - max) in double (relative error < 2^-47) summed in lanes (Note [sum lanes]; the
// maxima, exactly 1 each, counted apart), then every output rounded once: e * (1 / sum), or
// x - max - log(sum) with log(sum) as log1p(sum - 1) near 1 (where one element dominates).
// float32 rows and dense float16/bfloat16 rows run vectorized (row_stats.h: exp, sum and count
// in one pass, exp from a 2^(j/16) table, Note [softmax exp]; the next row prefetched
// meanwhile; Note [16-bit softmax rows]); other dtypes and layouts and rows with a NaN or an
// infinite max run the same steps in scalar code (exp_row_f64, of the same accuracy).
// Outputs of 16 MiB and more are written with streaming stores (Note [streaming stores]), and
// the row max is found once.
// Rows are independent, so the bits do not depend on the threads. Special values as PyTorch:
// a NaN, or an infinity that the max subtracts to NaN, makes the row NaN.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/convert.h"
#include "kernels_simd/aligned_vector.h"
#include "kernels_simd/elementwise.h"
#include "kernels_simd/reduce.h"
#include "kernels_simd/reduce_driver.h"
#include "kernels_simd/row_stats.h"
#include "kernels_simd/stream_fence.h"
#include "kernels_simd/transpose.h"
#include "kernels_simd/unary.h"

namespace mpsim::simd {
namespace {

// Byte offsets of the starts of a view's rows (row m: row-major over all dims but the last). Where
// the leading dims collapse into one (a dense or sliced batch of rows), row m lies m strides on:
// one multiply, where the general walk takes a division per dim (three for the [2, 8, 4096, 77]
// scores of a cross-attention, per row of 77 values, several times a row), which shows in softmax
// and log_softmax over such scores on one thread (`bench/torch_sweep.py --filter 77`, beside a
// build with the division walk; docs/measurements.md).
class RowOffsets {
 public:
  explicit RowOffsets(const TensorView& v)
      : v_(v), elem_(static_cast<std::int64_t>(dtype_size(v.dtype))) {
    std::int64_t extent = -1;  // the collapsed dims' span so far, in elements
    for (std::int64_t d = static_cast<std::int64_t>(v.sizes.size()) - 2; d >= 0; --d) {
      if (v.sizes[d] == 1) continue;
      if (extent < 0) {
        stride_ = v.strides[d] * elem_;
      } else if (v.strides[d] != extent) {
        uniform_ = false;
        return;
      }
      extent = v.strides[d] * v.sizes[d];
    }
  }
  std::int64_t operator()(std::int64_t m) const {
    if (uniform_) return m * stride_;
    std::int64_t off = 0;
    for (std::int64_t d = static_cast<std::int64_t>(v_.sizes.size()) - 2; d >= 0; --d) {
      off += (m % v_.sizes[d]) * v_.strides[d] * elem_;
      m /= v_.sizes[d];
    }
    return off;
  }

 private:
  const TensorView& v_;
  std::int64_t elem_;
  bool uniform_ = true;
  std::int64_t stride_ = 0;  // bytes from one row to the next, where uniform_
};

// The kSoftmaxTileRows dense rows from row m through softmax_tile_f32 or softmax_tile_16 (16-bit
// rows widened into xf first), where every one has a finite max and no NaN; false (nothing
// written) where one does not.
template <class T>
bool softmax_tile(bool log, const TensorView& in, const TensorView& out, const RowOffsets& in_row,
                  const RowOffsets& out_row, std::int64_t m, std::size_t n, double* scratch,
                  bool stream, std::vector<float>& xf) {
  constexpr std::size_t kRows = kSoftmaxTileRows;
  const float* x[kRows];
  float maxes[kRows];
  if constexpr (!std::is_same_v<T, float>) xf.resize(n * kRows);
  for (std::size_t b = 0; b < kRows; ++b) {
    const char* src = static_cast<const char*>(in.data) + in_row(m + static_cast<std::int64_t>(b));
    if constexpr (std::is_same_v<T, float>) {
      x[b] = reinterpret_cast<const float*>(src);
    } else {
      (std::is_same_v<T, BFloat16> ? bf16_to_f32_row : f16_to_f32_row)(
          reinterpret_cast<const std::uint16_t*>(src), xf.data() + b * n, n);
      x[b] = xf.data() + b * n;
    }
    bool nan = false;
    maxes[b] = row_max_f32(x[b], n, &nan);
    if (!std::isfinite(maxes[b]) || nan) return false;
  }
  using Out = std::conditional_t<std::is_same_v<T, float>, float, std::uint16_t>;
  Out* y[kRows];
  for (std::size_t b = 0; b < kRows; ++b) {
    y[b] = reinterpret_cast<Out*>(static_cast<char*>(out.data) +
                                  out_row(m + static_cast<std::int64_t>(b)));
  }
  if constexpr (std::is_same_v<T, float>) {
    softmax_tile_f32(x, y, n, kRows, log, maxes, scratch, stream);
  } else {
    softmax_tile_16(x, y, n, kRows, log, maxes, scratch, std::is_same_v<T, BFloat16>);
  }
  return true;
}

template <class T>
void softmax_rows(bool log, const TensorView& in, const TensorView& out) {
  const bool scalar = in.sizes.empty();
  const std::int64_t n = scalar ? 1 : in.sizes.back();
  const std::int64_t rows = n == 0 ? 0 : in.numel() / n;
  const std::int64_t elem = static_cast<std::int64_t>(sizeof(T));
  const std::int64_t si = scalar ? 0 : in.strides.back() * elem;
  const std::int64_t so = scalar ? 0 : out.strides.back() * elem;
  const auto un = static_cast<std::size_t>(n);
  // Note [streaming stores] (elementwise.h): large float outputs skip the read-for-ownership.
  const bool stream = out.numel() * elem >= kStreamingStoreMinBytes;
  const RowOffsets in_row(in), out_row(out);
  auto run_rows = [&](std::int64_t r0, std::int64_t r1) {
    // The rows' streaming stores are ordered before the task completes.
    struct Fence {
      bool on;
      ~Fence() {
        if (on) stream_fence();
      }
    } fence{stream};
    std::vector<double> t(un);
    // Note [softmax row tiles] (row_softmax.cc): short dense rows, kSoftmaxTileRows at a time;
    // their scratch holds every row of a tile.
    const bool tiles = un <= kSoftmaxTileMaxLength && si == elem && so == elem &&
                       (std::is_same_v<T, float> || Float16Like<T>);
    AlignedVector<double> e(tiles ? un * kSoftmaxTileRows : un);  // Note [aligned scratch]
    std::vector<float> xf, yf;    // strided float rows, gathered and scattered
    std::vector<bool> done;       // rows of a tile that the SIMD row computed
    for (std::int64_t m = r0; m < r1; ++m) {
      if (tiles && m + static_cast<std::int64_t>(kSoftmaxTileRows) <= r1 &&
          softmax_tile<T>(log, in, out, in_row, out_row, m, un, e.data(), stream, xf)) {
        m += static_cast<std::int64_t>(kSoftmaxTileRows) - 1;
        continue;
      }
      if constexpr (std::is_same_v<T, float>) {
        // Note [row tiles]
        // Strided float rows side by side in memory (softmax over the channels of an NCHW
        // tensor: row m + 1 starts one element after row m, its elements a plane apart) are
        // gathered kTileRows at a time, element by element, so each read takes a run of
        // kTileRows floats from one cache line instead of one float from a new page; each row
        // then runs the SIMD row as alone; output rows laid out so are scattered back the same
        // way (softmax over the channels of a channels-last tensor: dense rows in, a row-major
        // result). The rows' arithmetic is unchanged, so are the bits. Over dim 1 of
        // [2, 320, 64, 64] they run far faster in both layouts
        // (`elementwise_bench --benchmark_filter=softmax_channels`, beside a build without tiles;
        // docs/measurements.md).
        constexpr std::int64_t kTileRows = 16;
        const std::int64_t in0 = in_row(m), out0 = out_row(m);
        bool in_side = si != elem, out_side = so != elem;  // rows side by side, strided
        bool tile = (in_side || out_side) && m + kTileRows <= r1;
        for (std::int64_t b = 1; tile && b < kTileRows; ++b) {
          if (in_side) tile = in_row(m + b) == in0 + b * elem;
          if (out_side) tile = tile && out_row(m + b) == out0 + b * elem;
        }
        if (tile) {
          const auto tn = static_cast<std::size_t>(kTileRows);
          if (in_side) xf.resize(un * tn);
          if (out_side) yf.resize(un * tn);
          done.assign(tn, false);
          const char* src = static_cast<const char*>(in.data) + in0;
          if (in_side) {
            for (std::size_t i = 0; i < un; ++i) {
              const float* run =
                  reinterpret_cast<const float*>(src + static_cast<std::int64_t>(i) * si);
              for (std::size_t b = 0; b < tn; ++b) xf[b * un + i] = run[b];
            }
          }
          for (std::size_t b = 0; b < tn; ++b) {
            const auto row = static_cast<std::int64_t>(b);
            const float* x = in_side ? xf.data() + b * un
                                     : reinterpret_cast<const float*>(
                                           static_cast<const char*>(in.data) + in_row(m + row));
            float* y =
                out_side
                    ? yf.data() + b * un
                    : reinterpret_cast<float*>(static_cast<char*>(out.data) + out_row(m + row));
            bool nan = false;
            const float max = row_max_f32(x, un, &nan);
            if (!std::isfinite(max) || nan) continue;  // the scalar row below, from x itself
            softmax_row_f32(x, y, un, log, e.data(), max, stream && !out_side, nullptr);
            done[b] = true;
          }
          if (out_side) {
            char* dst = static_cast<char*>(out.data) + out0;
            for (std::size_t i = 0; i < un; ++i) {
              float* run = reinterpret_cast<float*>(dst + static_cast<std::int64_t>(i) * so);
              for (std::size_t b = 0; b < tn; ++b) {
                if (done[b]) run[b] = yf[b * un + i];
              }
            }
          }
          bool all = true;
          for (std::size_t b = 0; b < tn; ++b) all = all && done[b];
          if (all) {
            m += kTileRows - 1;
            continue;
          }
          // Rows left to the scalar path: run them one by one below (done rows again, the same
          // bits).
        }
      }
      const char* src = static_cast<const char*>(in.data) + (scalar ? 0 : in_row(m));
      char* dst = static_cast<char*>(out.data) + (scalar ? 0 : out_row(m));
      if constexpr (std::is_same_v<T, float>) {
        // Float rows with no NaN and a finite max take the SIMD row (the same arithmetic as
        // below, vectorized); strided ones through dense buffers.
        const float* x = reinterpret_cast<const float*>(src);
        float* y = reinterpret_cast<float*>(dst);
        if (si != elem) {
          xf.resize(un);
          for (std::size_t i = 0; i < un; ++i)
            xf[i] = *reinterpret_cast<const float*>(src + i * si);
          x = xf.data();
        }
        if (so != elem) {
          yf.resize(un);
          y = yf.data();
        }
        bool nan = false;
        const float max = row_max_f32(x, un, &nan);
        if (std::isfinite(max) && !nan) {
          // The next dense row is prefetched while this one computes (rows of a few KiB
          // start on a new page, where the hardware prefetcher starts cold).
          const float* next = si == elem && m + 1 < r1
                                  ? reinterpret_cast<const float*>(
                                        static_cast<const char*>(in.data) + in_row(m + 1))
                                  : nullptr;
          softmax_row_f32(x, y, un, log, e.data(), max, stream && so == elem, next);
          if (so != elem) {
            for (std::size_t i = 0; i < un; ++i) *reinterpret_cast<float*>(dst + i * so) = y[i];
          }
          continue;
        }
      }
      // Note [16-bit softmax rows]
      // Dense 16-bit rows widen to float exactly and, where the float rows would (no NaN, a
      // finite max), take the float SIMD row with 16-bit outputs: the same double arithmetic
      // (exp within 2^-47, the sum lanes), each output rounded once to the 16-bit type
      // (softmax_row_16; softmax_tile_16 for a tile of short rows). [2, 320, 64, 64] float16
      // softmax over the last dim: 2.9-3.0 ms this way in tiles (4.2-4.5 row by row), 11.2
      // along the scalar path below, which the other rows keep (`torch_sweep.py --filter "f16
      // softmax"`).
      constexpr bool kBF16 = std::is_same_v<T, BFloat16>;
      const bool rows16 = Float16Like<T> && si == elem && so == elem;
      if (rows16) {
        xf.resize(un);
        (kBF16 ? bf16_to_f32_row : f16_to_f32_row)(reinterpret_cast<const std::uint16_t*>(src),
                                                   xf.data(), un);
        bool nan = false;
        const float max = row_max_f32(xf.data(), un, &nan);
        if (std::isfinite(max) && !nan) {
          softmax_row_16(xf.data(), reinterpret_cast<std::uint16_t*>(dst), un, log, e.data(), max,
                         kBF16);
          continue;
        }
        std::copy(xf.begin(), xf.end(), t.begin());
      } else {
        for (std::int64_t i = 0; i < n; ++i) t[i] = load_as_double<T>(src + i * si);
      }
      double max = -INFINITY;
      for (std::int64_t i = 0; i < n; ++i) {
        // fmax(max, t[i]) inline (glibc's keeps its first argument for equal values, +-0 too)
        max = std::isnan(t[i]) || std::isnan(max) ? NAN : (t[i] > max ? t[i] : max);
      }
      for (std::int64_t i = 0; i < n; ++i) t[i] -= max;
      exp_row_f64(t.data(), e.data(), un);
      // The row_stats.h arithmetic: maxima counted, the other terms in the sum lanes.
      double lanes[kSumLanes] = {};
      std::size_t maxima = 0;
      for (std::size_t i = 0; i < un; ++i) {
        if (t[i] == 0) {
          ++maxima;
        } else {
          lanes[i % kSumLanes] += e[i];
        }
      }
      const Neumaier total = combine_lanes(lanes, static_cast<double>(maxima));
      const double sum = total.sum, comp = total.comp;
      const double log_sum = log ? log_of_sum(sum, comp, maxima) : 0;
      const double inv = 1.0 / (sum + comp);
      for (std::int64_t i = 0; i < n; ++i) {
        double r = log ? t[i] - log_sum : e[i] * inv;
        // A log_sum below half an ulp of t vanishes in the subtraction; the exact value is
        // still below t, which matters when t is a tie of the output grid: step down.
        if (log && r == t[i] && log_sum > 0) r = std::nextafter(r, -INFINITY);
        if (rows16) {
          e[i] = r;  // rounded below, the row at once
        } else {
          *reinterpret_cast<T*>(dst + i * so) = convert<T>(r);
        }
      }
      if (rows16) {
        (kBF16 ? f64_to_bf16_row : f64_to_f16_row)(e.data(), reinterpret_cast<std::uint16_t*>(dst),
                                                   un);
      }
    }
  };
  for_each_group(rows, n, run_rows);
}

KernelStatus softmax_kernel(const KernelCall& call) {
  const bool log = call.op == op_id("log_softmax");
  visit_dtype(call.inputs[0].dtype, [&]<class T>() {
    if constexpr (FloatingElement<T>) softmax_rows<T>(log, call.inputs[0], call.outputs[0]);
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_softmax_kernels(KernelTable& table) {
  table.set(op_id("softmax"), &softmax_kernel, kFloatDTypes);
  table.set(op_id("log_softmax"), &softmax_kernel, kFloatDTypes);
}

}  // namespace mpsim::simd
