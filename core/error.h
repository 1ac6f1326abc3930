// The error hierarchy of mpsim (Error, ShapeError, DTypeError, DeviceError, OutOfMemoryError,
// NotImplementedError, InvalidArgument) and MPSIM_CHECK, for everything above the allocators.
// They live in base/error.h, below allocator/, which raises them too.
#pragma once

#include "base/error.h"
