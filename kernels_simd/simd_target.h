// Which Highway SIMD target the kernels run on, and restricting it at run time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mpsim::simd {

// Our names for Highway's targets: "scalar" (EMU128), "sse4", "avx2", "avx512" (AVX3 and
// AVX3_DL), "neon", "sve", "sve2". Highway's own names (lower case) are accepted too.

// The target dynamic dispatch uses now, e.g. "avx512".
std::string current_target();
// Targets compiled into this build that this CPU can run, best first.
std::vector<std::string> available_targets();
// Allows only the listed targets (comma-separated), e.g. "avx2" or "scalar,sse4"; the best
// allowed one is used. Throws InvalidArgument for an unknown name or when none is available.
// MPSIM_SIMD_TARGETS applies this at start-up.
void restrict_targets(std::string_view spec);
// Lifts any restriction.
void reset_targets();

}  // namespace mpsim::simd
