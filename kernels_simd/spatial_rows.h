// The driver shared by the pooling and resizing kernels: it walks the rows of a 4-d
// [N, C, OH, OW] output view in fixed-size blocks. Kernels supply the row function.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <cstdint>

#include "core/kernel_call.h"
#include "core/convert.h"

namespace mpsim::simd {

// Note [spatial rows]
// A row is the output's innermost run: C channels of one pixel when the output is
// channels-last (its C stride is 1), else the OW pixels of one (n, c, oh) line. Every output
// element is computed on its own, from its window's taps in (ih, iw) row-major order, so its
// bits depend neither on the walk (NCHW and channels-last give the same values) nor on the
// partition. Blocks hold whole rows, about kSpatialGrain taps of work each (the count comes from
// the shapes only, never from the thread count); simple_partitioner runs exactly those blocks. 2^15
// taps is work well above the cost of a TBB task, and still cuts an SD feature map
// ([2, 320, 64, 64]) into hundreds of blocks (docs/measurements.md).
inline constexpr std::int64_t kSpatialGrain = 1 << 15;

struct SpatialRow {
  std::int64_t n;
  std::int64_t a;  // channels-last: oh; NCHW: c
  std::int64_t b;  // channels-last: ow; NCHW: oh
};

inline bool is_channels_last_walk(const TensorView& out) {
  return out.sizes[1] > 1 && out.strides[1] == 1;
}

// Calls row(SpatialRow, scratch) for every row of `out`, where scratch = make_scratch() is
// made once per block (a kernel's per-row buffers); `taps_per_element` is about the number of
// input values an output element reads, which sizes the blocks.
template <class MakeScratch, class RowFn>
void for_each_spatial_row(const TensorView& out, std::int64_t taps_per_element,
                          MakeScratch&& make_scratch, RowFn&& row) {
  const std::int64_t n = out.sizes[0], c = out.sizes[1], oh = out.sizes[2], ow = out.sizes[3];
  const bool cl = is_channels_last_walk(out);
  const std::int64_t len = cl ? c : ow;
  const std::int64_t a_count = cl ? oh : c;
  const std::int64_t b_count = cl ? ow : oh;
  const std::int64_t rows = n * a_count * b_count;
  if (rows == 0 || len == 0) return;
  const std::int64_t per_block =
      std::max<std::int64_t>(1, kSpatialGrain / std::max<std::int64_t>(1, len * taps_per_element));
  const std::int64_t blocks = (rows + per_block - 1) / per_block;
  auto run_block = [&](std::int64_t block) {
    auto scratch = make_scratch();
    const std::int64_t end = std::min(rows, (block + 1) * per_block);
    for (std::int64_t r = block * per_block; r < end; ++r) {
      const std::int64_t outer = r / b_count;
      row(SpatialRow{outer / a_count, outer % a_count, r % b_count}, scratch);
    }
  };
  if (blocks == 1) {
    run_block(0);
    return;
  }
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, blocks, 1),
      [&](const tbb::blocked_range<std::int64_t>& r) {
        for (std::int64_t b = r.begin(); b < r.end(); ++b) run_block(b);
      },
      tbb::simple_partitioner());
}

// An element as a double (exact for every float dtype) and a double rounded once to T.
template <class T>
double widen(T v) {
  return convert<double>(v);
}
template <class T>
T narrow(double v) {
  return convert<T>(v);
}

}  // namespace mpsim::simd
