// The elementwise driver: walks N same-shaped strided views (output first) row by row, in
// fixed-size blocks run in parallel. Kernels supply only the row function.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/dim_vector.h"
#include "core/kernel_call.h"

namespace mpsim::simd {

// Note [fixed blocks]
// Work is cut into blocks of kElementwiseGrain consecutive output elements (in row-major order),
// whatever the thread count; TBB's simple_partitioner runs exactly those blocks. Elementwise
// results never depend on the cut, and reductions built on the same blocks combine partial results
// in block order, so output bits are the same for 1, 2 or 64 threads. 32768 elements of a 3-operand
// f32 op are memory traffic well above the cost of scheduling a TBB task, and few enough to give 2
// threads 64 blocks on a 2M-element tensor (docs/measurements.md).
inline constexpr std::int64_t kElementwiseGrain = 1 << 15;

// Note [streaming stores]
// An elementwise output of at least kStreamingStoreMinBytes is written with non-temporal
// (streaming) stores: a normal store first reads the line it writes (read-for-ownership), so a
// streaming op moves 3 lines per 2 of payload, and an output this large leaves the caches before
// anyone reads it anyway. Skipping that read wins on such outputs (max(x, 0) on one core, at 64 and
// 16 MiB); at 4-8 MiB the two tie, and at 1 MiB streaming loses (the output no longer stays in L2),
// hence the threshold (docs/measurements.md). Only rows whose loop moves memory faster than it
// computes stream: on 16M floats in one thread on an AMD EPYC, streaming ran abs 1.29x and relu
// 1.19x as fast (`build/bench/ab_rows --ops abs,relu --n 16777216 --stream both --rounds 11
// build/libmpsim.so`), but exp 0.78x and gelu 0.80x, and every golden float-lane op, exp to
// softplus, 1.05-1.36x faster with plain stores, the Fast and double-lane rows 1.07-1.37x, on one
// thread and on two. So the unary op streams abs, neg, relu, square, sqrt and reciprocal
// (streams_well in unary_kernel.cc), and pow its exact powers; the golden float-lane rows (CrRow,
// unary_cr-inl.h) and pow's correctly rounded rows always store plainly. The values written are the
// same either way; a row ends with a store fence (stream_fence.h) so that the stores are visible
// before its task completes. Users: the unary and binary rows as above, softmax / log_softmax rows,
// dense copies (copy.cc: a 64 MiB clone on two threads is faster streamed; BM_copy in
// bench/elementwise_bench.cc). Only whole vectors of at least 16 bytes stream: Highway 1.0.3's
// Stream of a partial 128-bit vector (two floats demoted from SSE4's two doubles) is a 16-byte
// movntps, which writes past its lanes and faults at an 8-byte aligned address; those stores are
// plain (kStreamable in unary.cc and row_stats-inl.h; the tests' sse4 runs caught it).
inline constexpr std::int64_t kStreamingStoreMinBytes = std::int64_t{16} << 20;

template <std::size_t N>
struct RowPointers {
  std::array<char*, N> ptr;
  std::array<std::int64_t, N> stride;  // bytes between consecutive elements of the row
};

namespace detail {

// Sizes and byte strides after dropping size-1 dims, ordering the others by the output's
// strides (outermost first, so a channels-last or transposed output is walked in memory
// order; Note [elementwise output layout] in core/tensor.cc) and merging dims that are
// contiguous with each other in every operand (so a dense tensor becomes a single row).
template <std::size_t N>
struct Layout {
  // In place for up to 6 dims (Note [dim vectors] in core/dim_vector.h): no allocation per call.
  DimVector sizes;
  std::array<DimVector, N> strides;

  explicit Layout(const std::array<const TensorView*, N>& views) {
    const TensorView& out = *views[0];
    // The dims of more than one element, outermost first: by decreasing stride of out, ties in
    // dim order (a stable insertion sort; dims are few).
    DimVector dims;
    for (std::size_t d = 0; d < out.sizes.size(); ++d) {
      if (out.sizes[d] == 1) continue;
      std::size_t at = dims.size();
      while (at > 0 && out.strides[static_cast<std::size_t>(dims[at - 1])] < out.strides[d]) --at;
      dims.insert(dims.begin() + at, static_cast<std::int64_t>(d));
    }
    for (const std::int64_t dim : dims) {
      const auto d = static_cast<std::size_t>(dim);
      std::array<std::int64_t, N> s;
      bool merge = !sizes.empty();
      for (std::size_t k = 0; k < N; ++k) {
        s[k] = views[k]->strides[d] * static_cast<std::int64_t>(dtype_size(views[k]->dtype));
        merge = merge && strides[k].back() == s[k] * out.sizes[d];
      }
      if (merge) {
        sizes.back() *= out.sizes[d];
        for (std::size_t k = 0; k < N; ++k) strides[k].back() = s[k];
      } else {
        sizes.push_back(out.sizes[d]);
        for (std::size_t k = 0; k < N; ++k) strides[k].push_back(s[k]);
      }
    }
    if (sizes.empty()) {  // a single element
      sizes.push_back(1);
      for (std::size_t k = 0; k < N; ++k) strides[k].push_back(0);
    }
  }
};

}  // namespace detail

// Calls row(RowPointers<N>, n) for every row segment of the iteration space; a segment never
// crosses a block boundary (Note [fixed blocks]). block_done() runs after each block's rows, on
// the thread that ran them (a fence for the block's streaming stores).
template <std::size_t N, class RowFn, class BlockDone = void (*)()>
void for_each_row(
    const std::array<const TensorView*, N>& views, RowFn&& row, BlockDone&& block_done = [] {}) {
  const std::int64_t total = views[0]->numel();
  if (total == 0) return;
  const detail::Layout<N> layout(views);
  const std::int64_t ndim = static_cast<std::int64_t>(layout.sizes.size());
  const std::int64_t inner = layout.sizes.back();

  auto run_block = [&](std::int64_t begin, std::int64_t end) {
    // Multi-index of `begin` over the outer dims, and the pointers it addresses.
    DimVector index(static_cast<std::size_t>(ndim), 0);
    std::int64_t rest = begin / inner;
    std::int64_t col = begin % inner;
    RowPointers<N> p;
    for (std::size_t k = 0; k < N; ++k) {
      p.ptr[k] = static_cast<char*>(views[k]->data);
      p.stride[k] = layout.strides[k].back();
    }
    for (std::int64_t d = ndim - 2; d >= 0; --d) {
      index[d] = rest % layout.sizes[d];
      rest /= layout.sizes[d];
      for (std::size_t k = 0; k < N; ++k) p.ptr[k] += index[d] * layout.strides[k][d];
    }
    std::int64_t pos = begin;
    while (pos < end) {
      const std::int64_t n = std::min(inner - col, end - pos);
      RowPointers<N> seg = p;
      for (std::size_t k = 0; k < N; ++k) seg.ptr[k] += col * p.stride[k];
      row(seg, n);
      pos += n;
      col = 0;
      // Odometer step to the next row.
      for (std::int64_t d = ndim - 2; d >= 0; --d) {
        for (std::size_t k = 0; k < N; ++k) p.ptr[k] += layout.strides[k][d];
        if (++index[d] < layout.sizes[d]) break;
        for (std::size_t k = 0; k < N; ++k) p.ptr[k] -= layout.sizes[d] * layout.strides[k][d];
        index[d] = 0;
      }
    }
    block_done();
  };

  const std::int64_t blocks = (total + kElementwiseGrain - 1) / kElementwiseGrain;
  if (blocks == 1) {
    run_block(0, total);
    return;
  }
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, blocks, 1),
      [&](const tbb::blocked_range<std::int64_t>& r) {
        for (std::int64_t b = r.begin(); b < r.end(); ++b) {
          run_block(b * kElementwiseGrain, std::min(total, (b + 1) * kElementwiseGrain));
        }
      },
      tbb::simple_partitioner());
}

// The element of type T at p as a double: exact for every float dtype, and for integers
// below 2^53.
template <class T>
double load_as_double(const char* p) {
  const T v = *reinterpret_cast<const T*>(p);
  if constexpr (Float16Like<T>) {
    return static_cast<float>(v);
  } else {
    return static_cast<double>(v);
  }
}

// True when every operand of the row is dense (stride == element size).
template <std::size_t N>
bool row_is_dense(const RowPointers<N>& p, const std::array<std::int64_t, N>& elem_sizes) {
  for (std::size_t k = 0; k < N; ++k) {
    if (p.stride[k] != elem_sizes[k]) return false;
  }
  return true;
}

}  // namespace mpsim::simd
