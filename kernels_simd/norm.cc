// Normalization kernels. A group is the trailing num_reduced dims of the views. Its mean and
// variance are computed in two passes in double (the mean is exact to double precision before
// the centered squares are summed, so no cancellation); each output is
// (x - mean) * rstd * weight + bias evaluated in double and rounded once. float32 groups whose
// rows are dense run vectorized with lane sums (Note [sum lanes]) flushed into a
// compensated total every kReduceGrain elements; channels-last group_norm has its own
// per-channel pass; other layouts and dtypes load each group into doubles and use compensated
// sums. One task owns a whole group (or, channels-last, a fixed chunk of rows whose partials
// combine in order), so the bits do not depend on the thread count.
#include "kernels_simd/norm.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/convert.h"
#include "kernels_simd/aligned_vector.h"
#include "kernels_simd/elementwise.h"
#include "kernels_simd/reduce_driver.h"
#include "kernels_simd/row_stats.h"
#include "kernels_simd/transpose.h"

namespace mpsim::simd {
namespace {

// The compensated sum of v (or of its squares): Note [float64 sum lanes]'s 16 Neumaier lanes in
// vectors, then their sums and compensations in lane order, as the float64 reductions total a
// chunk: not one dependent chain along the row.
double compensated_sum(const std::vector<double>& v, bool squares) {
  double sums[kF64SumLanes], comps[kF64SumLanes];
  neumaier_lanes_f64(v.data(), v.size(), squares, sums, comps);
  Neumaier total;
  for (double s : sums) total.add(s);
  for (double c : comps) total.add(c);
  return total.value();
}

// The float fast path's view of a group: rows dense in x and out, with w and b constant along
// a row (step 0) or dense; `outer` walks the rows (the group's other dims, merged where every
// view allows). Empty when the layout does not fit.
struct RowLayout {
  std::int64_t row_len = 1;
  std::array<std::int64_t, 4> step{};  // per view, elements between row elements
  std::vector<std::int64_t> outer;     // sizes of the row dims, outermost first
  std::array<std::vector<std::int64_t>, 4> outer_strides;  // in elements
};

std::optional<RowLayout> row_layout(const std::array<const TensorView*, 4>& v, std::int64_t nr) {
  const std::int64_t nd = static_cast<std::int64_t>(v[0]->sizes.size());
  std::vector<std::int64_t> sizes;
  std::array<std::vector<std::int64_t>, 4> strides;
  for (std::int64_t d = nd - nr; d < nd; ++d) {
    const std::int64_t size = v[0]->sizes[d];
    if (size == 1) continue;
    bool merge = !sizes.empty();
    for (int k = 0; k < 4; ++k) merge = merge && strides[k].back() == v[k]->strides[d] * size;
    if (merge) {
      sizes.back() *= size;
      for (int k = 0; k < 4; ++k) strides[k].back() = v[k]->strides[d];
    } else {
      sizes.push_back(size);
      for (int k = 0; k < 4; ++k) strides[k].push_back(v[k]->strides[d]);
    }
  }
  RowLayout layout;
  if (sizes.empty()) {  // one element per group
    layout.step = {1, 0, 0, 1};
    return layout;
  }
  layout.row_len = sizes.back();
  for (int k = 0; k < 4; ++k) layout.step[k] = strides[k].back();
  const bool fits = layout.step[0] == 1 && layout.step[3] == 1 &&
                    (layout.step[1] == 0 || layout.step[1] == 1) &&
                    (layout.step[2] == 0 || layout.step[2] == 1);
  if (!fits) return std::nullopt;
  sizes.pop_back();
  layout.outer = sizes;
  for (int k = 0; k < 4; ++k) {
    strides[k].pop_back();
    layout.outer_strides[k] = strides[k];
  }
  return layout;
}

// Calls fn(row pointers of x, w, b, out) for every row of the group whose views start at base.
template <class Fn>
void for_each_group_row(const RowLayout& layout, const std::array<const float*, 4>& base, Fn&& fn) {
  const std::size_t nd = layout.outer.size();
  std::vector<std::int64_t> index(nd, 0);
  std::array<const float*, 4> p = base;
  while (true) {
    fn(p);
    std::size_t d = nd;
    for (; d-- > 0;) {
      for (int k = 0; k < 4; ++k) p[k] += layout.outer_strides[k][d];
      if (++index[d] < layout.outer[d]) break;
      for (int k = 0; k < 4; ++k) p[k] -= layout.outer[d] * layout.outer_strides[k][d];
      index[d] = 0;
    }
    if (d == static_cast<std::size_t>(-1)) return;
  }
}

// Folds the lanes into a compensated total every kReduceGrain elements (and at the end): a
// lane then holds at most ~512 terms, as in Note [reduction accuracy].
struct LaneFlusher {
  double lanes[kSumLanes] = {};
  Neumaier total;
  std::int64_t pending = 0;
  void after(std::int64_t n) {
    pending += n;
    if (pending >= kReduceGrain) flush();
  }
  void flush() {
    double f[8];
    fold_lanes(lanes, f);
    for (double v : f) total.add(v);
    std::fill(std::begin(lanes), std::end(lanes), 0.0);
    pending = 0;
  }
  double value() {
    flush();
    return total.value();
  }
};

// Rows shorter than this run one group at a time: their per-row calls dominate.
constexpr std::int64_t kPipelinedGroupRowMin = 64;

// Note [group shift]
// group_norm's float32 groups whose weight and bias are one value per row (NCHW, and any
// layout other than channels-last) take their statistics in one pass about a shift, as
// channels-last does (Note [shifted moments]): c = the mean of the group's leading rows (the
// fewest whole rows that hold at least 1/16 of the group's n values, k of them), then the sums
// of d = x - c and d^2 over the whole group; mean = c + T1/n, var = T2/n - (T1/n)^2. As there,
// (mean - c)^2 <= var (n - k)/k, so the subtraction loses at most log2(1 + 2 (n - k)/k) bits
// of the double result: 5 at most (k >= n/16), 4.2 at the SD shapes (one row of ten), against
// the 29 that double carries beyond a float. The leading rows are read twice, the rest once:
// Bjorck's corrected two passes (Note [normalization statistics]) read every value twice. d^2
// is added by a fused multiply-add, and the output is fma(x - mean, scale, bias) with
// scale = rstd * weight per row, rounded once (group_row_passes_f32: fused on every target, so
// the bits do not depend on it). Both NCHW paths below (pipelined, one group at a time) run
// the same operations in the same order through group_row_passes_f32: the same bits.
constexpr std::int64_t kShiftFraction = 16;

// The leading rows of a group (rows of len values) whose mean is its shift.
std::size_t shift_rows(std::size_t rows, std::int64_t len, std::int64_t count) {
  const std::int64_t want = (count + kShiftFraction - 1) / kShiftFraction;
  return std::clamp<std::size_t>(
      static_cast<std::size_t>((want + len - 1) / std::max<std::int64_t>(len, 1)), 1,
      std::max<std::size_t>(rows, 1));
}

// Note [pipelined groups]
// NCHW group_norm reads each group twice: the statistics pass from L3 or memory (its 160 KiB
// groups at the SD shapes are then in L2) and the output pass from L2, writing y. One group at
// a time, the statistics pass waits on memory while the ports idle, and the output pass waits
// on its stores. Here loop k runs, row by row, the statistics of group k (Note [group shift])
// with the output of group k - 1, and sums the leading rows of group k + 1 for its shift, so
// the reads of one group overlap the arithmetic of the other (row_group_norm.cc: GroupRowPasses).
// The lanes flush after the same rows as the one-group loop: the same bits. Tasks hold several
// groups (about four tasks per thread); the groups' values do not depend on the split. This runs
// faster than the corrected two passes over three pipelined groups (group_norm_case/nchw, two
// threads, alternating runs; docs/measurements.md).
void normalize_groups_pipelined_f32(const KernelCall& call, const RowLayout& layout,
                                    const ReduceWalker& wx, const ReduceWalker& ww,
                                    const ReduceWalker& wb, const ReduceWalker& wo) {
  const double eps = call.params_as<NormParams>().eps;
  const std::int64_t groups = wx.outputs(), count = wx.count();
  const auto len = static_cast<std::size_t>(layout.row_len);
  const double n = static_cast<double>(count);
  const std::int64_t threads = tbb::this_task_arena::max_concurrency();
  const std::int64_t per_task = std::max<std::int64_t>(2, groups / (4 * threads));
  const std::int64_t task_size = std::max<std::int64_t>(1, kTaskElements / per_task);
  for_each_group(groups, std::min(count, task_size), [&](std::int64_t m0, std::int64_t m1) {
    // Every group has the same layout: the offsets (x, w, b, out) of its rows from its start,
    // in the group's row order.
    auto base_of = [&](std::int64_t m) {
      return std::array<const float*, 4>{reinterpret_cast<const float*>(wx.run_start(m)),
                                         reinterpret_cast<const float*>(ww.run_start(m)),
                                         reinterpret_cast<const float*>(wb.run_start(m)),
                                         reinterpret_cast<const float*>(wo.run_start(m))};
    };
    std::vector<std::array<std::ptrdiff_t, 4>> offsets;
    const std::array<const float*, 4> base0 = base_of(m0);
    for_each_group_row(layout, base0, [&](const std::array<const float*, 4>& p) {
      offsets.push_back({p[0] - base0[0], p[1] - base0[1], p[2] - base0[2], p[3] - base0[3]});
    });
    const std::size_t per_group = offsets.size();
    const std::size_t lead = shift_rows(per_group, layout.row_len, count);
    const double lead_count = static_cast<double>(lead * len);
    auto row = [&](std::int64_t m, std::size_t r) {
      std::array<const float*, 4> p = base_of(m);
      for (int v = 0; v < 4; ++v) p[v] += offsets[r][v];
      return p;
    };
    // Ring slots: group k's shift, mean and rstd at slot(k).
    auto slot = [m0](std::int64_t k) { return static_cast<std::size_t>(k - m0 + 2) % 2; };
    double shifts[2] = {}, means[2] = {}, rstds[2] = {};
    {
      LaneFlusher s;
      for (std::size_t r = 0; r < lead; ++r) {
        sum_lanes_f32(row(m0, r)[0], len, false, s.lanes);
        s.after(layout.row_len);
      }
      shifts[slot(m0)] = s.value() / lead_count;
    }
    for (std::int64_t k = m0; k < m1 + 1; ++k) {
      const bool stats = k<m1, out = k> m0, next = k + 1 < m1;
      const double shift = shifts[slot(k)];
      LaneFlusher s, d, q;
      for (std::size_t r = 0; r < per_group; ++r) {
        GroupRowStages st{len,     nullptr, s.lanes, nullptr, shift,
                          d.lanes, q.lanes, nullptr, nullptr, means[slot(k - 1)],
                          0,       0};
        if (next && r < lead) st.x1 = row(k + 1, r)[0];
        if (stats) st.x2 = row(k, r)[0];
        if (out) {
          const std::array<const float*, 4> p = row(k - 1, r);
          st.x3 = p[0];
          st.y3 = const_cast<float*>(p[3]);
          st.scale = rstds[slot(k - 1)] * static_cast<double>(p[1][0]);
          st.bias = p[2][0];
        }
        group_row_passes_f32(st);
        if (st.x1 != nullptr) s.after(layout.row_len);
        if (stats) {
          d.after(layout.row_len);
          q.after(layout.row_len);
        }
      }
      if (next) shifts[slot(k + 1)] = s.value() / lead_count;
      if (stats) {
        const double c = d.value() / n, v = q.value() / n - c * c;
        means[slot(k)] = shift + c;
        const double var = v < 0 ? 0.0 : v;  // NaN stays NaN
        rstds[slot(k)] = 1.0 / std::sqrt(var + eps);
      }
    }
  });
}

// The float32 path: statistics in lanes (Note [normalization statistics]) and the affine
// output, all vectorized per row.
void normalize_groups_f32(bool rms, const KernelCall& call, const RowLayout& layout) {
  const TensorView &x = call.inputs[0], &w = call.inputs[1], &b = call.inputs[2],
                   &out = call.outputs[0];
  const std::int64_t nr = call.params_as<NormParams>().num_reduced;
  const double eps = call.params_as<NormParams>().eps;
  const ReduceWalker wx(x, nr), ww(w, nr), wb(b, nr), wo(out, nr);
  const std::int64_t groups = wx.outputs(), count = wx.count();
  const auto len = static_cast<std::size_t>(layout.row_len);
  if (layout.outer.empty() && count <= kReduceGrain && wx.kept_stride() >= 0 &&
      ww.kept_stride() >= 0 && wb.kept_stride() >= 0 && wo.kept_stride() >= 0) {
    // One dense row per group, at fixed strides: whole runs of groups per call.
    for_each_group(groups, count, [&](std::int64_t m0, std::int64_t m1) {
      NormRows p{reinterpret_cast<const float*>(wx.run_start(m0)),
                 const_cast<float*>(reinterpret_cast<const float*>(wo.run_start(m0))),
                 reinterpret_cast<const float*>(ww.run_start(m0)),
                 reinterpret_cast<const float*>(wb.run_start(m0)),
                 static_cast<std::size_t>(m1 - m0),
                 len,
                 wx.kept_stride(),
                 wo.kept_stride(),
                 ww.kept_stride(),
                 wb.kept_stride(),
                 layout.step[1],
                 layout.step[2],
                 eps,
                 rms,
                 out.numel() * static_cast<std::int64_t>(sizeof(float)) >= kNormStreamMinBytes};
      normalize_rows_f32(p);
    });
    return;
  }
  // Note [group shift]: group_norm with a weight and bias per row.
  const bool shifted = call.op == op_id("group_norm") && layout.step[1] == 0 && layout.step[2] == 0;
  if (shifted && groups > 1 && layout.row_len >= kPipelinedGroupRowMin) {
    normalize_groups_pipelined_f32(call, layout, wx, ww, wb, wo);
    return;
  }
  const std::size_t lead =
      shifted
          ? shift_rows(static_cast<std::size_t>(count / std::max<std::int64_t>(layout.row_len, 1)),
                       layout.row_len, count)
          : 0;
  for_each_group(groups, count, [&](std::int64_t m0, std::int64_t m1) {
    for (std::int64_t m = m0; m < m1; ++m) {
      const std::array<const float*, 4> base = {reinterpret_cast<const float*>(wx.run_start(m)),
                                                reinterpret_cast<const float*>(ww.run_start(m)),
                                                reinterpret_cast<const float*>(wb.run_start(m)),
                                                reinterpret_cast<const float*>(wo.run_start(m))};
      // Note [normalization statistics] (row_layer_norm.cc), with the lanes flushed into
      // compensated totals every kReduceGrain elements for groups of any length.
      const double n = static_cast<double>(count);
      double mean = 0, var = 0;
      if (rms) {
        LaneFlusher sq;
        for_each_group_row(layout, base, [&](const std::array<const float*, 4>& p) {
          sum_lanes_f32(p[0], len, true, sq.lanes);  // exact squares
          sq.after(layout.row_len);
        });
        var = sq.value() / n;
      } else if (shifted) {
        // Note [group shift]: the mean of the leading rows, then one pass about it.
        LaneFlusher s, d, q;
        std::size_t r = 0;
        for_each_group_row(layout, base, [&](const std::array<const float*, 4>& p) {
          if (r++ >= lead) return;
          sum_lanes_f32(p[0], len, false, s.lanes);
          s.after(layout.row_len);
        });
        const double shift = s.value() / static_cast<double>(lead * len);
        for_each_group_row(layout, base, [&](const std::array<const float*, 4>& p) {
          group_row_passes_f32(
              {len, nullptr, nullptr, p[0], shift, d.lanes, q.lanes, nullptr, nullptr, 0, 0, 0});
          d.after(layout.row_len);
          q.after(layout.row_len);
        });
        const double c = d.value() / n, v = q.value() / n - c * c;
        mean = shift + c;
        var = v < 0 ? 0.0 : v;  // NaN stays NaN
      } else {
        LaneFlusher s;
        for_each_group_row(layout, base, [&](const std::array<const float*, 4>& p) {
          sum_lanes_f32(p[0], len, false, s.lanes);
          s.after(layout.row_len);
        });
        const double m1 = s.value() / n;
        LaneFlusher d, q;
        for_each_group_row(layout, base, [&](const std::array<const float*, 4>& p) {
          centered_moments_lanes_f32(p[0], len, m1, d.lanes, q.lanes);
          d.after(layout.row_len);
          q.after(layout.row_len);
        });
        const double c = d.value() / n, v = q.value() / n - c * c;
        mean = m1 + c;
        var = v < 0 ? 0.0 : v;  // NaN stays NaN
      }
      const double rstd = 1.0 / std::sqrt(var + eps);
      for_each_group_row(layout, base, [&](const std::array<const float*, 4>& p) {
        if (shifted) {  // fma(x - mean, rstd * w, b), as the pipelined groups
          group_row_passes_f32({len, nullptr, nullptr, nullptr, 0, nullptr, nullptr, p[0],
                                const_cast<float*>(p[3]), mean, rstd * static_cast<double>(p[1][0]),
                                p[2][0]});
          return;
        }
        normalize_row_f32(p[0], const_cast<float*>(p[3]), len, mean, rstd, p[1], layout.step[1],
                          rms ? nullptr : p[2], layout.step[2]);
      });
    }
  });
}

// group_norm of a channels-last float input: each sample is [S, C] (S spatial positions, C
// channels contiguous). Rows of C channels go into per-channel double accumulators over fixed
// chunks of rows (in parallel) in one pass (Note [shifted moments]); a group's statistics add
// its chunks' and channels' sums in a fixed order; the output pass applies per-channel
// mean, scale = rstd * weight and bias: (x - mean) * scale + bias, rounded once.
// Returns false when the views are not in that layout.
bool group_norm_channels_last_f32(const KernelCall& call) {
  const TensorView &x = call.inputs[0], &w = call.inputs[1], &b = call.inputs[2],
                   &out = call.outputs[0];
  if (x.sizes.size() < 4) return false;  // [N, G, C/G, spatial...]
  const std::int64_t n_samples = x.sizes[0], groups = x.sizes[1], cg = x.sizes[2];
  const std::int64_t c = groups * cg;
  std::int64_t spatial = 1;
  for (std::size_t d = 3; d < x.sizes.size(); ++d) spatial *= x.sizes[d];
  auto sample_dense = [&](const TensorView& v) {
    if (v.strides[2] != 1 || v.strides[1] != cg) return false;
    std::int64_t expected = c;
    for (std::size_t d = v.sizes.size(); d-- > 3;) {
      if (v.sizes[d] != 1 && v.strides[d] != expected) return false;
      expected *= v.sizes[d];
    }
    return n_samples == 1 || v.strides[0] == expected;
  };
  auto per_channel = [&](const TensorView& v) {
    if (v.strides[2] != 1 || v.strides[1] != cg || v.strides[0] != 0) return false;
    for (std::size_t d = 3; d < v.sizes.size(); ++d) {
      if (v.strides[d] != 0) return false;
    }
    return true;
  };
  if (spatial == 1 || !sample_dense(x) || !sample_dense(out) || !per_channel(w) ||
      !per_channel(b)) {
    return false;
  }
  const double eps = call.params_as<NormParams>().eps;
  const auto uc = static_cast<std::size_t>(c);
  const std::int64_t rows_per_chunk = std::max<std::int64_t>(1, kReduceGrain / c);
  const std::int64_t chunks = (spatial + rows_per_chunk - 1) / rows_per_chunk;
  const auto* xd = static_cast<const float*>(x.data);
  auto* yd = static_cast<float*>(out.data);
  auto row_of = [&](const float* base, std::int64_t n, std::int64_t r) {
    return base + n * spatial * c + r * c;
  };
  // Note [shifted moments]: one pass over the data gives, per channel, the sums of
  // d = x - c_g and d^2 about a shift c_g per group: the mean of the group's values in the first
  // chunk of rows. Then mean = c_g + T1/n and var = T2/n - (T1/n)^2. The shift is the mean of a
  // subset of k of the group's n values, so (mean - c_g)^2 <= var (n - k)/k, and the
  // subtraction loses at most log2(1 + 2 (n - k)/k) bits of the double result: 8 for the SD
  // shapes (k/n = 51/4096), against the 29 bits that double carries beyond a float. Two passes
  // (the mean, then squared deviations) would read the whole tensor once more.
  const std::int64_t rows0 = std::min(spatial, rows_per_chunk);
  std::vector<double> shift(static_cast<std::size_t>(n_samples * c));
  for_each_group(n_samples, rows0 * c, [&](std::int64_t n0, std::int64_t n1) {
    AlignedVector<double> acc(uc);
    for (std::int64_t n = n0; n < n1; ++n) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::int64_t r = 0; r < rows0; ++r) {
        add_rows_f64(row_of(xd, n, r), uc, 1, 0, false, acc.data());
      }
      for (std::int64_t g = 0; g < groups; ++g) {
        Neumaier total;
        for (std::int64_t ch = g * cg; ch < (g + 1) * cg; ++ch) total.add(acc[ch]);
        const double c_g = total.value() / static_cast<double>(rows0 * cg);
        for (std::int64_t ch = g * cg; ch < (g + 1) * cg; ++ch) shift[n * c + ch] = c_g;
      }
    }
  });
  // partial1/2[(n * chunks + k) * G + g]: chunk k's sums of d and d^2 over group g's channels,
  // sample n (every entry written by its chunk's task: no initialization). Per group, not per
  // channel: the next step reads every partial, and per channel they were 830 KB at the SD shapes
  // (81 chunks of 51 rows per sample), a noticeable share of the op on two threads
  // (docs/measurements.md).
  const auto partials = static_cast<std::size_t>(n_samples * chunks * groups);
  const std::unique_ptr<double[]> partial1(new double[partials]), partial2(new double[partials]);
  for_each_group(n_samples * chunks, rows_per_chunk * c, [&](std::int64_t t0, std::int64_t t1) {
    thread_local AlignedVector<double> acc1, acc2;
    acc1.resize(uc);
    acc2.resize(uc);
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t n = t / chunks, k = t % chunks;
      // Each channel's rows in order, its accumulators in registers for the whole chunk; then
      // each group's channels in order.
      const std::int64_t r0 = k * rows_per_chunk, r1 = std::min(spatial, r0 + rows_per_chunk);
      shifted_moments_block_f32(row_of(xd, n, r0), static_cast<std::size_t>(r1 - r0), uc,
                                shift.data() + n * c, acc1.data(), acc2.data());
      for (std::int64_t g = 0; g < groups; ++g) {
        double s1 = 0, s2 = 0;
        for (std::int64_t ch = g * cg; ch < (g + 1) * cg; ++ch) {
          s1 += acc1[ch];
          s2 += acc2[ch];
        }
        partial1[t * groups + g] = s1;
        partial2[t * groups + g] = s2;
      }
    }
  });
  // Per sample and group: the chunks' sums added in chunk order (plain adds in a fixed order:
  // the sums of d are centered, so their rounding errors are ~2^-43 of the standard deviation,
  // Note [normalization statistics] in row_layer_norm.cc); then mean and rstd for the group's
  // channels.
  AlignedVector<double> center(shift.size()), scale(shift.size());  // rstd, then rstd * w
  const double count = static_cast<double>(cg * spatial);
  for_each_group(n_samples, chunks * groups, [&](std::int64_t n0, std::int64_t n1) {
    for (std::int64_t n = n0; n < n1; ++n) {
      for (std::int64_t g = 0; g < groups; ++g) {
        double t1 = 0, t2 = 0;
        for (std::int64_t k = 0; k < chunks; ++k) {
          t1 += partial1[(n * chunks + k) * groups + g];
          t2 += partial2[(n * chunks + k) * groups + g];
        }
        const double d = t1 / count;
        const double v = t2 / count - d * d;
        const double var = v < 0 ? 0.0 : v;  // rounding can dip below 0; NaN stays NaN
        for (std::int64_t ch = g * cg; ch < (g + 1) * cg; ++ch) {
          center[n * c + ch] = shift[n * c + ch] + d;
          scale[n * c + ch] = 1.0 / std::sqrt(var + eps);
        }
      }
    }
  });
  // The output's per-channel scale rstd * w (one rounding, in place of rounding
  // (x - mean) * rstd per element) and bias.
  // Note [channels-last streaming output]: the output pass reads x a second time from L3 (a
  // sample is larger than L2) while it writes y; normal stores also read each line of y first
  // (read-for-ownership). From 8 MiB of output, y is written with streaming stores instead
  // (Note [streaming stores], whose elementwise measurement found them level at 4-8 MiB and ahead
  // above); group_norm_case/nhwc (10.5 MiB output, two threads) runs faster with them
  // (docs/measurements.md). The NCHW group_norm output
  // showed no difference and keeps normal stores; layer_norm's output gains from them
  // (Note [pipelined rows] in row_layer_norm.cc).
  const bool stream = out.numel() * static_cast<std::int64_t>(sizeof(float)) >= kNormStreamMinBytes;
  AlignedVector<double> bv(uc);
  for (std::int64_t ch = 0; ch < c; ++ch) bv[ch] = static_cast<const float*>(b.data)[ch];
  for (std::int64_t n = 0; n < n_samples; ++n) {
    for (std::int64_t ch = 0; ch < c; ++ch) {
      scale[n * c + ch] *= static_cast<double>(static_cast<const float*>(w.data)[ch]);
    }
  }
  for_each_group(n_samples * chunks, rows_per_chunk * c, [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t n = t / chunks, k = t % chunks;
      const std::int64_t r0 = k * rows_per_chunk, r1 = std::min(spatial, r0 + rows_per_chunk);
      normalize_columns_block_f32(row_of(xd, n, r0), const_cast<float*>(row_of(yd, n, r0)),
                                  static_cast<std::size_t>(r1 - r0), uc, center.data() + n * c,
                                  scale.data() + n * c, bv.data(), stream);
    }
  });
  return true;
}

template <class T>
void normalize_groups(bool rms, const KernelCall& call) {
  const TensorView &x = call.inputs[0], &w = call.inputs[1], &b = call.inputs[2],
                   &out = call.outputs[0];
  const std::int64_t nr = call.params_as<NormParams>().num_reduced;
  if constexpr (std::is_same_v<T, float>) {
    if (call.op == op_id("group_norm") && group_norm_channels_last_f32(call)) return;
    if (const auto layout = row_layout({&x, &w, &b, &out}, nr)) {
      normalize_groups_f32(rms, call, *layout);
      return;
    }
  }
  const double eps = call.params_as<NormParams>().eps;
  const ReduceWalker wx(x, nr), ww(w, nr), wb(b, nr), wo(out, nr);
  const std::int64_t groups = wx.outputs(), count = wx.count();
  // Note [16-bit normalization rows]
  // Dense 16-bit rows of x and out (layer_norm and rms_norm over the last dims, group_norm's
  // contiguous groups) widen to float exactly and take the float rows' statistics lanes: the
  // sum of x (Note [sum lanes], row_stats.h), the mean, then the sum of (x - mean)^2, each
  // difference and square rounded in double, combined by combine_lanes; the output
  // ((x - mean) * rstd) * w + b runs in double lanes and rounds once to the 16-bit type
  // (normalize_row_16). A float16 sum of up to 8192 values is exact in double (multiples of
  // 2^-24 below 2^16), and a plain double sum of squares errs by n 2^-53 of itself, so the
  // output lies within about 2^-43 of the exact one, relative, far inside the 2^-12 that one
  // 16-bit rounding needs: half_norm_test's MPFR oracle finds every output correctly rounded.
  // The other layouts keep compensated double sums over the row walk. [2, 4096, 320] float16
  // layer_norm: 2.6-2.7 ms this way, 13.1 with compensated sums along one dependent chain per
  // row (`torch_sweep.py --filter "f16 layer_norm"`).
  constexpr bool kSixteen = Float16Like<T>;
  constexpr bool kBF16 = std::is_same_v<T, BFloat16>;
  const bool rows16 = kSixteen && wx.dense_run() && wo.dense_run();
  auto run = [&](std::int64_t m0, std::int64_t m1) {
    std::vector<double> v(static_cast<std::size_t>(count)), wv(v.size()), bv(v.size()),
        centered(v.size());
    std::vector<float> widened(rows16 ? v.size() : 0);
    for (std::int64_t m = m0; m < m1; ++m) {
      if (rows16) {
        (kBF16 ? bf16_to_f32_row : f16_to_f32_row)(
            reinterpret_cast<const std::uint16_t*>(wx.run_start(m)), widened.data(), v.size());
      } else {
        wx.walk(m, 0, count, [&](const char* p, std::int64_t r) { v[r] = load_as_double<T>(p); });
      }
      // A weight and bias shared by every group (kept stride 0: layer_norm's) load once.
      if (m == m0 || ww.kept_stride() != 0) {
        ww.walk(m, 0, count, [&](const char* p, std::int64_t r) { wv[r] = load_as_double<T>(p); });
      }
      if (m == m0 || wb.kept_stride() != 0) {
        wb.walk(m, 0, count, [&](const char* p, std::int64_t r) { bv[r] = load_as_double<T>(p); });
      }
      const double n = static_cast<double>(count);
      if (rows16) {
        // Note [16-bit normalization rows]
        double lanes[kSumLanes] = {};
        double mean = 0;
        if (!rms) {
          sum_lanes_f32(widened.data(), widened.size(), false, lanes);
          mean = combine_lanes(lanes, 0).value() / n;
          std::fill(lanes, lanes + kSumLanes, 0.0);
        }
        centered_squares_lanes_f32(widened.data(), widened.size(), mean, lanes);
        const double rstd = 1.0 / std::sqrt(combine_lanes(lanes, 0).value() / n + eps);
        normalize_row_16(widened.data(),
                         reinterpret_cast<std::uint16_t*>(const_cast<char*>(wo.run_start(m))),
                         widened.size(), mean, rstd, wv.data(), rms ? nullptr : bv.data(), kBF16);
        continue;
      }
      const double mean = rms ? 0.0 : compensated_sum(v, false) / n;
      for (std::size_t r = 0; r < v.size(); ++r) centered[r] = v[r] - mean;
      const double rstd = 1.0 / std::sqrt(compensated_sum(centered, true) / n + eps);
      wo.walk(m, 0, count, [&](const char* p, std::int64_t r) {
        double y = centered[r] * rstd * wv[r];
        if (!rms) y = y + bv[r];
        *reinterpret_cast<T*>(const_cast<char*>(p)) = convert<T>(y);  // the output view
      });
    }
  };
  for_each_group(groups, count, run);
}

KernelStatus norm_kernel(const KernelCall& call) {
  const bool rms = call.op == op_id("rms_norm");
  visit_dtype(call.inputs[0].dtype, [&]<class T>() {
    if constexpr (FloatingElement<T>) normalize_groups<T>(rms, call);
  });
  return KernelStatus::Ok;
}

// Whether v is dense in row-major order.
bool row_major_dense(const TensorView& v) {
  std::int64_t expected = 1;
  for (std::size_t d = v.sizes.size(); d-- > 0;) {
    if (v.sizes[d] != 1 && v.strides[d] != expected) return false;
    expected *= v.sizes[d];
  }
  return true;
}

// batch_norm of a dense float32 [N, C, *] input: each (n, c) plane is one row with a constant
// mean, rstd = 1 / sqrt(var + eps), weight and bias (the parameters are [C] views expanded
// along every other dim): the row kernel of the normalizations, ((x - mean) * rstd) * w + b in
// double, rounded once. Returns false for other layouts.
// Whether v is a dense channels-last [N, C, H, W]: C fastest, then W, H, N.
bool channels_last_dense(const TensorView& v) {
  if (v.sizes.size() != 4) return false;
  const std::int64_t c = v.sizes[1], h = v.sizes[2], w = v.sizes[3];
  const std::int64_t want[4] = {h * w * c, 1, w * c, c};
  for (std::size_t d = 0; d < 4; ++d) {
    if (v.sizes[d] != 1 && v.strides[d] != want[d]) return false;
  }
  return true;
}

// batch_norm of a dense channels-last float32 [N, C, H, W]: each pixel's C channels are one row
// with per-channel statistics (normalize_channels_f32), the arithmetic of the NCHW planes below, so
// the same bits in both layouts, far faster than the scalar loop into an NCHW output
// (`elementwise_bench --benchmark_filter=batch_norm_channels_last`, beside a build of the scalar
// loop into an NCHW output; docs/measurements.md).
bool batch_norm_pixels_f32(const KernelCall& call, double eps) {
  const TensorView& x = call.inputs[0];
  const TensorView& out = call.outputs[0];
  if (!channels_last_dense(x) || !channels_last_dense(out)) return false;
  const std::int64_t c = x.sizes[1];
  const std::int64_t pixels = x.numel() / std::max<std::int64_t>(1, c);
  std::vector<double> mean(static_cast<std::size_t>(c)), rstd(static_cast<std::size_t>(c));
  std::vector<double> w(static_cast<std::size_t>(c)), b(static_cast<std::size_t>(c));
  auto param = [&](int k, std::int64_t ch) {
    const TensorView& p = call.inputs[static_cast<std::size_t>(k)];
    return static_cast<const float*>(p.data)[ch * p.strides[1]];
  };
  for (std::int64_t ch = 0; ch < c; ++ch) {
    const auto i = static_cast<std::size_t>(ch);
    mean[i] = param(1, ch);
    rstd[i] = 1.0 / std::sqrt(static_cast<double>(param(2, ch)) + eps);
    w[i] = param(3, ch);
    b[i] = param(4, ch);
  }
  const auto* xd = static_cast<const float*>(x.data);
  auto* yd = static_cast<float*>(out.data);
  for_each_group(pixels, c, [&](std::int64_t p0, std::int64_t p1) {
    normalize_channels_f32(xd + p0 * c, yd + p0 * c, static_cast<std::size_t>(c),
                           static_cast<std::size_t>(p1 - p0), mean.data(), rstd.data(), w.data(),
                           b.data());
  });
  return true;
}

bool batch_norm_planes_f32(const KernelCall& call, double eps) {
  const TensorView& x = call.inputs[0];
  const TensorView& out = call.outputs[0];
  if (!row_major_dense(x) || !row_major_dense(out)) return false;
  const std::int64_t n_samples = x.sizes[0], c = x.sizes[1];
  const std::int64_t plane = x.numel() / std::max<std::int64_t>(1, n_samples * c);
  auto param = [&](int k, std::int64_t ch) {
    const TensorView& p = call.inputs[static_cast<std::size_t>(k)];
    return static_cast<const float*>(p.data) + ch * p.strides[1];
  };
  const auto* xd = static_cast<const float*>(x.data);
  auto* yd = static_cast<float*>(out.data);
  for_each_group(n_samples * c, plane, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t p = p0; p < p1; ++p) {
      const std::int64_t ch = p % c;
      const double mean = *param(1, ch);
      const double rstd = 1.0 / std::sqrt(static_cast<double>(*param(2, ch)) + eps);
      normalize_row_f32(xd + p * plane, yd + p * plane, static_cast<std::size_t>(plane), mean, rstd,
                        param(3, ch), 0, param(4, ch), 0);
    }
  });
  return true;
}

// batch_norm (inference): every input is expanded to the output's shape.
KernelStatus batch_norm_kernel(const KernelCall& call) {
  const double eps = call.params_as<NormParams>().eps;
  const TensorView& out = call.outputs[0];
  if (out.dtype == DType::Float32 &&
      (batch_norm_planes_f32(call, eps) || batch_norm_pixels_f32(call, eps))) {
    return KernelStatus::Ok;
  }
  visit_dtype(out.dtype, [&]<class T>() {
    if constexpr (FloatingElement<T>) {
      for_each_row<6>({&out, &call.inputs[0], &call.inputs[1], &call.inputs[2], &call.inputs[3],
                       &call.inputs[4]},
                      [&](const RowPointers<6>& r, std::int64_t n) {
                        for (std::int64_t i = 0; i < n; ++i) {
                          auto at = [&](int k) {
                            return load_as_double<T>(r.ptr[k] + i * r.stride[k]);
                          };
                          const double y = (at(1) - at(2)) / std::sqrt(at(3) + eps) * at(4) + at(5);
                          *reinterpret_cast<T*>(r.ptr[0] + i * r.stride[0]) = convert<T>(y);
                        }
                      });
    }
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_norm_kernels(KernelTable& table) {
  table.set(op_id("layer_norm"), &norm_kernel, kFloatDTypes);
  table.set(op_id("rms_norm"), &norm_kernel, kFloatDTypes);
  table.set(op_id("group_norm"), &norm_kernel, kFloatDTypes);
  table.set(op_id("batch_norm"), &batch_norm_kernel, kFloatDTypes);
}

}  // namespace mpsim::simd
