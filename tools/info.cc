#include <cstdio>
#include <string>

#include "core/mpsim.h"
#include "device_sim/mps.h"
#include "kernels_simd/simd_target.h"
#include "kernels_simd/unary.h"
#include "tools/commands.h"

namespace mpsim::tools {

int info_main(int, char**) {
  std::string targets;
  for (const std::string& t : simd::available_targets())
    targets += (targets.empty() ? "" : ", ") + t;
  std::printf("mpsim %s\n", MPSIM_VERSION);
  std::printf("simd target:       %s (available: %s; restrict with MPSIM_SIMD_TARGETS)\n",
              simd::current_target().c_str(), targets.c_str());
  std::printf("threads:           %d\n", num_threads());
  std::printf("precision:         %s (MPSIM_PRECISION=golden|fast; fast float32 kernels %s)\n",
              std::string(precision_name(precision())).c_str(),
              simd::unary_fast_available() ? "on this target" : "not on this target: golden");
  if (has_backend(DeviceType::MPS)) {
    const mps::DeviceProperties& p = mps::properties();
    std::printf(
        "devices:           cpu, mps:0 (%s, %.1f GiB unified memory; MPSIM_MPS_PROFILE, "
        "MPSIM_MPS_MEMORY)\n",
        p.name.c_str(), static_cast<double>(p.memory_bytes) / (1 << 30));
  } else {
    std::printf("devices:           cpu\n");
  }
  std::printf("fallback to cpu:   %s\n", fallback_enabled() ? "enabled" : "disabled");
  return 0;
}

}  // namespace mpsim::tools
