// copy (contiguous(), clone(), to(dtype), copy_), fill and arange. Conversions follow
// Note [dtype conversion] in core/convert.h.
#include "kernels_simd/copy.h"

#include <cstring>

#include "core/convert.h"
#include "kernels_simd/elementwise.h"

namespace mpsim::simd {
namespace {

KernelStatus copy_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const TensorView& in = call.inputs[0];
  visit_dtype(out.dtype, [&]<class To>() {
    visit_dtype(in.dtype, [&]<class From>() {
      for_each_row<2>({&out, &in}, [&](const RowPointers<2>& r, std::int64_t n) {
        if constexpr (std::is_same_v<To, From>) {
          if (r.stride[0] == sizeof(To) && r.stride[1] == sizeof(From)) {
            std::memcpy(r.ptr[0], r.ptr[1], static_cast<std::size_t>(n) * sizeof(To));
            return;
          }
        }
        for (std::int64_t i = 0; i < n; ++i) {
          *reinterpret_cast<To*>(r.ptr[0] + i * r.stride[0]) =
              convert<To>(*reinterpret_cast<const From*>(r.ptr[1] + i * r.stride[1]));
        }
      });
    });
  });
  return KernelStatus::Ok;
}

template <class T>
T scalar_as(const Scalar& s) {
  if constexpr (std::is_same_v<T, bool>)
    return s.to_double() != 0;
  else if constexpr (FloatingElement<T>)
    return convert<T>(s.to_double());
  else if (s.is_floating())
    return convert<T>(s.to_double());
  else
    return static_cast<T>(s.to_int());
}

KernelStatus fill_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const Scalar value = call.attrs.scalar("value", 0);
  visit_dtype(out.dtype, [&]<class T>() {
    const T v = scalar_as<T>(value);
    for_each_row<1>({&out}, [&](const RowPointers<1>& r, std::int64_t n) {
      for (std::int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(r.ptr[0] + i * r.stride[0]) = v;
    });
  });
  return KernelStatus::Ok;
}

// out[i] = start + i * step, computed in int64 for integer arguments and in double otherwise
// (PyTorch's accumulate types), then converted once.
KernelStatus arange_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const Scalar start = call.attrs.scalar("start", 0);
  const Scalar step = call.attrs.scalar("step", 1);
  const bool integral = !start.is_floating() && !step.is_floating();
  visit_dtype(out.dtype, [&]<class T>() {
    T* base = out.ptr<T>();
    const std::int64_t stride = out.strides.empty() ? 1 : out.strides[0];
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      base[i * stride] =
          integral ? convert<T>(start.to_int() + i * step.to_int())
                   : convert<T>(start.to_double() + static_cast<double>(i) * step.to_double());
    }
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_copy_kernels(KernelTable& table) {
  table.set(op_id("copy"), &copy_kernel, kAllDTypes);
  table.set(op_id("fill"), &fill_kernel, kAllDTypes);
  table.set(op_id("arange"), &arange_kernel, kAllDTypes);
}

}  // namespace mpsim::simd
