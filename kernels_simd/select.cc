// where(cond, a, b) and clamp(x, min, max): memory-bound selections the compiler vectorizes;
// they run on the shared elementwise driver (Note [fixed blocks]).
#include "kernels_simd/select.h"

#include <cmath>
#include <cstring>

#include "kernels_simd/elementwise.h"

namespace mpsim::simd {
namespace {

template <class T>
T load(const char* p) {
  return *reinterpret_cast<const T*>(p);
}

KernelStatus where_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const std::size_t size = dtype_size(out.dtype);
  for_each_row<4>({&out, &call.inputs[0], &call.inputs[1], &call.inputs[2]},
                  [&](const RowPointers<4>& r, std::int64_t n) {
                    for (std::int64_t i = 0; i < n; ++i) {
                      const char* src = load<bool>(r.ptr[1] + i * r.stride[1])
                                            ? r.ptr[2] + i * r.stride[2]
                                            : r.ptr[3] + i * r.stride[3];
                      std::memcpy(r.ptr[0] + i * r.stride[0], src, size);
                    }
                  });
  return KernelStatus::Ok;
}

// clamp = minimum(maximum(x, lo), hi) with NaN propagation from x and from either bound; for
// lo > hi every element becomes hi, as PyTorch.
template <class T>
T clamp_one(T x, T lo, T hi, bool has_lo, bool has_hi) {
  if constexpr (Float16Like<T>) {
    return T(clamp_one(static_cast<float>(x), static_cast<float>(lo), static_cast<float>(hi),
                       has_lo, has_hi));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return x;
    if (has_lo && (std::isnan(lo) || x < lo)) x = lo;
    if (has_hi && (std::isnan(hi) || x > hi)) x = hi;
    return x;
  } else {
    if (has_lo && x < lo) x = lo;
    if (has_hi && x > hi) x = hi;
    return x;
  }
}

KernelStatus clamp_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const bool has_lo = call.attrs.scalar("has_min", false).to_int() != 0;
  const bool has_hi = call.attrs.scalar("has_max", false).to_int() != 0;
  visit_dtype(out.dtype, [&]<class T>() {
    for_each_row<4>({&out, &call.inputs[0], &call.inputs[1], &call.inputs[2]},
                    [&](const RowPointers<4>& r, std::int64_t n) {
                      for (std::int64_t i = 0; i < n; ++i) {
                        *reinterpret_cast<T*>(r.ptr[0] + i * r.stride[0]) =
                            clamp_one(load<T>(r.ptr[1] + i * r.stride[1]),
                                      load<T>(r.ptr[2] + i * r.stride[2]),
                                      load<T>(r.ptr[3] + i * r.stride[3]), has_lo, has_hi);
                      }
                    });
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_select_kernels(KernelTable& table) {
  table.set(op_id("where"), &where_kernel, kAllDTypes);
  table.set(op_id("clamp"), &clamp_kernel, kNumericDTypes);
}

}  // namespace mpsim::simd
