// The umbrella header: everything a user of mpsim needs.
#pragma once

#include "core/complex_ops.h"     // IWYU pragma: export
#include "core/device.h"          // IWYU pragma: export
#include "core/dispatch.h"        // IWYU pragma: export
#include "core/dtype.h"           // IWYU pragma: export
#include "core/error.h"           // IWYU pragma: export
#include "core/lapack_ops.h"      // IWYU pragma: export
#include "core/ops.h"             // IWYU pragma: export
#include "core/runtime.h"         // IWYU pragma: export
#include "core/scalar.h"          // IWYU pragma: export
#include "core/shape.h"           // IWYU pragma: export
#include "core/tensor.h"          // IWYU pragma: export
#include "core/type_promotion.h"  // IWYU pragma: export
