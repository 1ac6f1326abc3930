// The device's start-up configuration, read once from the environment (docs/device.md lists
// the variables). Internal to device_sim; the public view is mps.h.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device_sim/mps.h"

namespace mpsim::mps::detail {

struct StartupConfig {
  DeviceProperties properties;
  double high_watermark_ratio = 1.7;  // MPSIM_MPS_HIGH_WATERMARK_RATIO
  double low_watermark_ratio = 1.4;   // MPSIM_MPS_LOW_WATERMARK_RATIO
  bool strict = false;                // MPSIM_MPS_STRICT=1
  std::vector<OpId> disabled_ops;     // MPSIM_MPS_DISABLE_OPS
  std::string alloc_trace_path;       // MPSIM_ALLOC_TRACE
};

// Reads the environment on first use. Start-up cannot throw: a malformed value is reported on
// stderr and its default kept.
const StartupConfig& startup_config();

// "8G", "8GiB", "512M", "64K" (binary units, case-insensitive) or a byte count; nullopt when
// malformed or zero.
std::optional<std::size_t> parse_memory_size(std::string_view text);
// A profile by name, ignoring case, spaces, '-' and '_' ("M2 Max", "m2-max", "M2_MAX").
const ChipProfile* find_profile(std::string_view name);
// The properties of `profile` with `memory_bytes` of unified memory.
DeviceProperties make_properties(const ChipProfile& profile, std::size_t memory_bytes);

}  // namespace mpsim::mps::detail
