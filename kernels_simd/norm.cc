// Normalization kernels. A group (the trailing num_reduced dims of the views) is loaded into
// doubles; its mean and variance are computed two-pass with compensated sums (the mean is exact
// to double precision before the squares are summed, so no cancellation); each output is
// (x - mean) * rstd * weight + bias evaluated in double and rounded once. One task owns a whole
// group, so the bits do not depend on the thread count.
#include "kernels_simd/norm.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <cmath>
#include <vector>

#include "core/convert.h"
#include "kernels_simd/elementwise.h"
#include "kernels_simd/reduce_driver.h"

namespace mpsim::simd {
namespace {

double compensated_sum(const std::vector<double>& v, bool squares) {
  double sum = 0, comp = 0;
  for (double x : v) {
    const double y = squares ? x * x : x;
    const double t = sum + y;
    comp += std::fabs(sum) >= std::fabs(y) ? (sum - t) + y : (y - t) + sum;
    sum = t;
  }
  return sum + comp;
}

template <class T>
void normalize_groups(bool rms, const KernelCall& call) {
  const TensorView &x = call.inputs[0], &w = call.inputs[1], &b = call.inputs[2],
                   &out = call.outputs[0];
  const std::int64_t nr = call.attrs.scalar("num_reduced", 1).to_int();
  const double eps = call.attrs.scalar("eps", 1e-5).to_double();
  const ReduceWalker wx(x, nr), ww(w, nr), wb(b, nr), wo(out, nr);
  const std::int64_t groups = wx.outputs(), count = wx.count();
  auto run = [&](std::int64_t m0, std::int64_t m1) {
    std::vector<double> v(static_cast<std::size_t>(count)), wv(v.size()), bv(v.size()),
        centered(v.size());
    for (std::int64_t m = m0; m < m1; ++m) {
      wx.walk(m, 0, count, [&](const char* p, std::int64_t r) { v[r] = load_as_double<T>(p); });
      ww.walk(m, 0, count, [&](const char* p, std::int64_t r) { wv[r] = load_as_double<T>(p); });
      wb.walk(m, 0, count, [&](const char* p, std::int64_t r) { bv[r] = load_as_double<T>(p); });
      const double n = static_cast<double>(count);
      const double mean = rms ? 0.0 : compensated_sum(v, false) / n;
      for (std::size_t r = 0; r < v.size(); ++r) centered[r] = v[r] - mean;
      const double rstd = 1.0 / std::sqrt(compensated_sum(centered, true) / n + eps);
      wo.walk(m, 0, count, [&](const char* p, std::int64_t r) {
        const double y = centered[r] * rstd * wv[r] + (rms ? 0.0 : bv[r]);
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

// batch_norm (inference): every input is expanded to the output's shape.
KernelStatus batch_norm_kernel(const KernelCall& call) {
  const double eps = call.attrs.scalar("eps", 1e-5).to_double();
  const TensorView& out = call.outputs[0];
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
