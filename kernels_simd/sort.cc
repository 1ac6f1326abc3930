// The sort family: each contiguous row of the last dim ordered (a stable sort of indices by
// value, NaN after every number ascending and before every number descending), rows in
// parallel. The result does not depend on the thread count.
#include "kernels_simd/sort.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "kernels_simd/order_key.h"

namespace mpsim::simd {

namespace {

KernelStatus sort_kernel(const KernelCall& call) {
  const bool descending = call.params_as<SortParams>().descending;
  const TensorView& in = call.inputs[0];
  const TensorView& values = call.outputs[0];
  auto* indices = call.outputs[1].ptr<std::int64_t>();
  const std::int64_t n = in.sizes.empty() ? 1 : in.sizes.back();
  const std::int64_t rows = n == 0 ? 0 : in.numel() / n;
  visit_dtype(in.dtype, [&]<class T>() {
    const T* src = in.ptr<T>();
    T* dst = values.ptr<T>();
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows), [&](const auto& range) {
      std::vector<std::int64_t> order(static_cast<std::size_t>(n));
      for (std::int64_t r = range.begin(); r < range.end(); ++r) {
        const T* row = src + r * n;
        std::iota(order.begin(), order.end(), std::int64_t{0});
        auto before = [&](std::int64_t a, std::int64_t b) {
          const auto x = order_key(row[a]), y = order_key(row[b]);
          if (descending) return (is_nan_key(x) && !is_nan_key(y)) || x > y;
          return (!is_nan_key(x) && is_nan_key(y)) || x < y;
        };
        std::stable_sort(order.begin(), order.end(), before);
        for (std::int64_t i = 0; i < n; ++i) {
          dst[r * n + i] = row[order[static_cast<std::size_t>(i)]];
          indices[r * n + i] = order[static_cast<std::size_t>(i)];
        }
      }
    });
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_sort_kernels(KernelTable& table) {
  table.set(op_id("sort"), &sort_kernel, kAllDTypes);
}

}  // namespace mpsim::simd
