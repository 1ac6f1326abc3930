// The reduction driver: out[m] = combine over the trailing reduced dims of a strided input.
// Note [fixed blocks] applies: every reduction is cut into chunks of kReduceGrain elements
// that do not depend on the thread count; chunk partials are computed in parallel and
// combined per output in chunk order, so the bits never depend on the threads.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/kernel_call.h"
#include "kernels_simd/elementwise.h"

namespace mpsim::simd {

// 16384 elements: a chunk's work is well above a task's cost, and the chunks are small enough that
// a reduction of one row of 16M elements feeds both threads with 1024 chunks
// (docs/measurements.md).
inline constexpr std::int64_t kReduceGrain = 1 << 14;
// Elements per parallel task when many small outputs or groups share one: 256 KiB of float32, whose
// streaming takes far longer than TBB's cost per task, so that cost stays a small share
// (docs/measurements.md). Tasks only group whole outputs (or
// chunks), so this changes no result.
inline constexpr std::int64_t kTaskElements = 1 << 16;
// The fewest outputs a reduction over leading dims sweeps as rows (ReduceWalker::column_stride): 16
// float32 outputs fill a 64-byte line. With one output (a whole-tensor sum) a "row" was one
// element, swept by a call each, far slower than the dense run
// (`elementwise_bench --benchmark_filter=sum_case/all`, beside a build without the bound;
// docs/measurements.md).
inline constexpr std::int64_t kMinColumnOutputs = 16;

// Walks elements [begin, end) of one reduction (in the row-major order of the reduced dims)
// of output m, calling visit(pointer to element, index within the reduction).
class ReduceWalker {
 public:
  ReduceWalker(const TensorView& in, std::int64_t num_reduced) : in_(in) {
    const std::int64_t nd = static_cast<std::int64_t>(in.sizes.size());
    kept_ = nd - num_reduced;
    elem_ = static_cast<std::int64_t>(dtype_size(in.dtype));
    for (std::int64_t d = 0; d < nd; ++d) {
      (d < kept_ ? outer_ : count_) *= in.sizes[d];
    }
    // The reduced dims form one run with a single stride when each is nested in the next
    // (size-1 dims ignored): then walk() is a strided loop, no odometer.
    run_stride_ = 0;
    std::int64_t expected = -1;
    flat_ = true;
    for (std::int64_t d = nd - 1; d >= kept_; --d) {
      if (in.sizes[d] == 1) continue;
      if (expected < 0) {
        run_stride_ = in.strides[d];
      } else if (in.strides[d] != expected) {
        flat_ = false;
      }
      expected = in.strides[d] * in.sizes[d];
    }
    kept_dense_ = true;
    expected = 1;
    for (std::int64_t d = kept_ - 1; d >= 0; --d) {
      if (in.sizes[d] == 1) continue;
      kept_dense_ = kept_dense_ && in.strides[d] == expected;
      expected = in.strides[d] * in.sizes[d];
    }
    // The kept dims form one run with a single stride (e.g. every row of a dense tensor, or
    // stride 0 for an expanded weight): then output m starts at m * kept_stride_, no divisions.
    kept_flat_ = true;
    expected = -1;
    for (std::int64_t d = kept_ - 1; d >= 0; --d) {
      if (in.sizes[d] == 1) continue;
      if (expected < 0) {
        kept_stride_ = in.strides[d];
      } else if (in.strides[d] != expected) {
        kept_flat_ = false;
      }
      expected = in.strides[d] * in.sizes[d];
    }
  }
  // The layout of a reduction over leading dims: outputs dense (output m at element m) and the
  // reduced dims one strided run, so element r of output m is at element m + r * stride.
  // Returns that stride, or 0 for any other layout.
  // Rows of fewer than kMinColumnOutputs outputs (a whole-tensor sum: one) are too short to
  // sweep: their outputs walk their own runs.
  std::int64_t column_stride() const {
    return flat_ && kept_dense_ && count_ > 1 && outer_ >= kMinColumnOutputs ? run_stride_ : 0;
  }
  // True when the reduced elements of every output are one dense run (stride 1): then
  // element r of output m is at run_start(m) + r elements.
  bool dense_run() const { return flat_ && run_stride_ == 1; }
  const char* run_start(std::int64_t m) const {
    const char* base = static_cast<const char*>(in_.data);
    if (kept_flat_) return base + m * kept_stride_ * elem_;
    for (std::int64_t d = kept_ - 1; d >= 0; --d) {
      base += (m % in_.sizes[d]) * in_.strides[d] * elem_;
      m /= in_.sizes[d];
    }
    return base;
  }
  const char* data() const { return static_cast<const char*>(in_.data); }
  // Elements between the starts of consecutive outputs when that is one stride (else -1).
  std::int64_t kept_stride() const { return kept_flat_ ? kept_stride_ : -1; }
  std::int64_t outputs() const { return outer_; }
  std::int64_t count() const { return count_; }

  template <class Visit>
  void walk(std::int64_t m, std::int64_t begin, std::int64_t end, Visit&& visit) const {
    if (begin >= end) return;  // also keeps the index arithmetic off empty dims
    const std::int64_t nd = static_cast<std::int64_t>(in_.sizes.size());
    const char* base = run_start(m);
    std::int64_t rest = 0;
    if (flat_) {
      const std::int64_t step = run_stride_ * elem_;
      const char* p = base + begin * step;
      for (std::int64_t r = begin; r < end; ++r, p += step) visit(p, r);
      return;
    }
    // Multi-index of `begin` over the reduced dims, then an odometer.
    std::vector<std::int64_t> index(static_cast<std::size_t>(nd), 0);
    rest = begin;
    const char* p = base;
    for (std::int64_t d = nd - 1; d >= kept_; --d) {
      index[d] = rest % in_.sizes[d];
      rest /= in_.sizes[d];
      p += index[d] * in_.strides[d] * elem_;
    }
    for (std::int64_t r = begin; r < end; ++r) {
      visit(p, r);
      for (std::int64_t d = nd - 1; d >= kept_; --d) {
        p += in_.strides[d] * elem_;
        if (++index[d] < in_.sizes[d]) break;
        p -= in_.sizes[d] * in_.strides[d] * elem_;
        index[d] = 0;
      }
    }
  }

 private:
  const TensorView& in_;
  std::int64_t kept_ = 0, elem_ = 1, outer_ = 1, count_ = 1;
  bool flat_ = true, kept_dense_ = false, kept_flat_ = true;
  std::int64_t kept_stride_ = 0;  // elements between consecutive outputs' starts when kept_flat_
  std::int64_t run_stride_ = 0;  // elements between consecutive reduced elements when flat_
};

// Runs fn(first, last) over the groups [0, groups) in tasks of about kTaskElements elements
// (a group has group_size elements and belongs to one task, so per-group results never depend
// on the thread count).
template <class Fn>
void for_each_group(std::int64_t groups, std::int64_t group_size, Fn&& fn) {
  const std::int64_t per_task =
      std::max<std::int64_t>(1, kTaskElements / std::max<std::int64_t>(group_size, 1));
  if (groups <= per_task) {
    fn(std::int64_t{0}, groups);
    return;
  }
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, groups, per_task),
      [&](const tbb::blocked_range<std::int64_t>& r) { fn(r.begin(), r.end()); },
      tbb::simple_partitioner());
}

// Computes partial(m, chunk) for every output and chunk in parallel, then
// finish(m, partials of m in chunk order). Partial must be default-constructible.
template <class Partial, class ChunkFn, class FinishFn>
void reduce_in_chunks(const ReduceWalker& walker, ChunkFn&& chunk, FinishFn&& finish) {
  const std::int64_t outputs = walker.outputs();
  const std::int64_t count = walker.count();
  const std::int64_t chunks = std::max<std::int64_t>(1, (count + kReduceGrain - 1) / kReduceGrain);
  std::vector<Partial> partials(static_cast<std::size_t>(outputs * chunks));
  // Tasks of about kTaskElements elements: several small outputs, or one chunk of a large one.
  const std::int64_t per_task =
      std::max<std::int64_t>(1, kTaskElements / std::max<std::int64_t>(count, 1));
  const std::int64_t tasks = outputs * chunks;
  auto run = [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t m = t / chunks, c = t % chunks;
      partials[t] = chunk(m, c * kReduceGrain, std::min(count, (c + 1) * kReduceGrain));
    }
  };
  if (tasks <= per_task) {
    run(0, tasks);
  } else {
    tbb::parallel_for(
        tbb::blocked_range<std::int64_t>(0, tasks, per_task),
        [&](const tbb::blocked_range<std::int64_t>& r) { run(r.begin(), r.end()); },
        tbb::simple_partitioner());
  }
  // Finishing an output reads only its own partials: any order, in parallel.
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, outputs,
                                       std::max<std::int64_t>(1, kReduceGrain / chunks)),
      [&](const tbb::blocked_range<std::int64_t>& r) {
        for (std::int64_t m = r.begin(); m < r.end(); ++m) {
          finish(m, std::span<const Partial>(partials.data() + m * chunks,
                                             static_cast<std::size_t>(chunks)));
        }
      },
      tbb::simple_partitioner());
}

}  // namespace mpsim::simd
