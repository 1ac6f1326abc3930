// Tensors over host memory that mpsim did not allocate (a NumPy array, a DLPack tensor): zero-copy
// views whose owner is released when the last tensor that shares the storage dies.
#pragma once

#include <functional>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace mpsim {

// A cpu tensor of `sizes` and `strides` (in elements, non-negative) whose element 0 is at `data`,
// without copying. `data` must be aligned to the element size (kernels load whole elements; the
// 64-byte alignment of mpsim's own blocks is not required, as for any view with an offset).
// `release` runs exactly once, when the storage dies, on the thread that drops the last reference
// (a Python caller's release must take the GIL itself); it must not throw. If from_blob throws
// (ShapeError, InvalidArgument), `release` has not run and the caller still owns `data`.
// The memory counts in no allocator's stats.
Tensor from_blob(void* data, const Shape& sizes, const Strides& strides, DType dtype,
                 std::function<void()> release);

}  // namespace mpsim
