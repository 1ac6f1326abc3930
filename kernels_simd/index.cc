// gather and index_select. The front end hands three same-shaped views: the output, the
// source with a stride of 0 along the gathered dim, and the int64 index broadcast to the
// output; the gathered element is source + index * stride (elements). The kernel checks each
// index against the attribute `size` before it reads (Note [index checks]).
#include "kernels_simd/index.h"

#include <atomic>
#include <cstring>

#include "kernels_simd/elementwise.h"

namespace mpsim::simd {
namespace {

// Note [index checks]
// The index values are checked where they are read, in the kernel, not by a separate pass in
// the front end: a gather of 4M elements reads 32 MB of indices, and a second pass over them
// cost as much as the gather itself. An index outside [0, size) stops its row before any
// source element is read for it and the kernel reports KernelStatus::IndexOutOfRange. On the
// cpu the front end then finds the first bad index (the slow path runs only on error) and
// names it; on mps the error surfaces at the next synchronization, like a device-side assert.
//
// Rows come in two forms (after for_each_row merges dims): an index that is constant along
// the row (index_select of whole rows or runs: stride 0) is one check and one run copy; an
// index that varies (gather) is a load, an unsigned compare and a load per element. Elements
// are moved as unsigned integers of their size, so any dtype gathers bit-exactly.
template <class U>
bool gather_row(const RowPointers<3>& r, std::int64_t n, std::int64_t stride_bytes,
                std::uint64_t size) {
  constexpr std::int64_t e = sizeof(U);
  char* out = r.ptr[0];
  const char* src = r.ptr[1];
  const char* index = r.ptr[2];
  if (r.stride[2] == 0) {
    const std::int64_t i = *reinterpret_cast<const std::int64_t*>(index);
    if (static_cast<std::uint64_t>(i) >= size) return false;
    src += i * stride_bytes;
    if (r.stride[0] == e && r.stride[1] == e) {
      std::memcpy(out, src, static_cast<std::size_t>(n * e));
    } else {
      for (std::int64_t k = 0; k < n; ++k) {
        *reinterpret_cast<U*>(out + k * r.stride[0]) =
            *reinterpret_cast<const U*>(src + k * r.stride[1]);
      }
    }
    return true;
  }
  if (r.stride[0] == e && r.stride[1] == 0 && r.stride[2] == 8) {  // gather along a row
    U* o = reinterpret_cast<U*>(out);
    const std::int64_t* idx = reinterpret_cast<const std::int64_t*>(index);
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t i = idx[k];
      if (static_cast<std::uint64_t>(i) >= size) return false;
      o[k] = *reinterpret_cast<const U*>(src + i * stride_bytes);
    }
    return true;
  }
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t i = *reinterpret_cast<const std::int64_t*>(index + k * r.stride[2]);
    if (static_cast<std::uint64_t>(i) >= size) return false;
    *reinterpret_cast<U*>(out + k * r.stride[0]) =
        *reinterpret_cast<const U*>(src + k * r.stride[1] + i * stride_bytes);
  }
  return true;
}

template <class U>
bool gather_all(const KernelCall& call, std::int64_t stride_bytes, std::uint64_t size) {
  std::atomic<bool> ok{true};
  for_each_row<3>({&call.outputs[0], &call.inputs[0], &call.inputs[1]},
                  [&](const RowPointers<3>& r, std::int64_t n) {
                    if (!gather_row<U>(r, n, stride_bytes, size)) {
                      ok.store(false, std::memory_order_relaxed);
                    }
                  });
  return ok.load();
}

KernelStatus gather_kernel(const KernelCall& call) {
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(call.outputs[0].dtype));
  const GatherParams& p = call.params_as<GatherParams>();
  const std::int64_t stride_bytes = p.stride * elem;
  const auto size = static_cast<std::uint64_t>(p.size);
  bool ok = true;
  switch (elem) {
    case 1:
      ok = gather_all<std::uint8_t>(call, stride_bytes, size);
      break;
    case 2:
      ok = gather_all<std::uint16_t>(call, stride_bytes, size);
      break;
    case 4:
      ok = gather_all<std::uint32_t>(call, stride_bytes, size);
      break;
    default:
      ok = gather_all<std::uint64_t>(call, stride_bytes, size);
      break;
  }
  return ok ? KernelStatus::Ok : KernelStatus::IndexOutOfRange;
}

}  // namespace

void register_index_kernels(KernelTable& table) {
  table.set(op_id("gather"), &gather_kernel, kAllDTypes);
}

}  // namespace mpsim::simd
