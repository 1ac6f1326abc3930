// The public API of mpsim in one include: tensors, ops, dtypes, precision and the runtime
// (core/mpsim.h) and the simulated mps device with its memory API and profiler
// (device_sim/mps.h). An installed mpsim is used as
//
//   find_package(mpsim REQUIRED)
//   target_link_libraries(app PRIVATE mpsim::mpsim)
//
//   #include <mpsim/mpsim.h>
#pragma once

#include "core/mpsim.h"       // IWYU pragma: export
#include "device_sim/mps.h"  // IWYU pragma: export
