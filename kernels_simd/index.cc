// gather and index_select. The front end hands three same-shaped views: the output, the
// source with a stride of 0 along the gathered dim, and the int64 index broadcast to the
// output; the gathered element is source + index * stride (elements). Indices were checked
// by the front end, so the kernel reads only inside the source.
#include "kernels_simd/index.h"

#include "kernels_simd/elementwise.h"

namespace mpsim::simd {
namespace {

KernelStatus gather_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(out.dtype));
  const std::int64_t stride_bytes = call.attrs.scalar("stride", 0).to_int() * elem;
  for_each_row<3>({&out, &call.inputs[0], &call.inputs[1]}, [&](const RowPointers<3>& r,
                                                                std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t index = *reinterpret_cast<const std::int64_t*>(r.ptr[2] + i * r.stride[2]);
      std::memcpy(r.ptr[0] + i * r.stride[0], r.ptr[1] + i * r.stride[1] + index * stride_bytes,
                  static_cast<std::size_t>(elem));
    }
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_index_kernels(KernelTable& table) {
  table.set(op_id("gather"), &gather_kernel, kAllDTypes);
}

}  // namespace mpsim::simd
