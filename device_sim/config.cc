#include "device_sim/config.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/env.h"
#include "core/error.h"

namespace mpsim::mps {
namespace {

constexpr std::size_t kGiB = std::size_t{1} << 30;

// Base memory configuration of each chip and its published bandwidth and f32 rate (Apple's
// figures; the M3 Max and M4 Max rows are the 40-core GPU parts, which ship with 48 GB).
constexpr std::array<ChipProfile, 7> kProfiles = {{
    {"M1", 8 * kGiB, 68.25, 2.6, 2.6},
    {"M1 Max", 32 * kGiB, 400, 10.4, 10.4},
    {"M2", 8 * kGiB, 100, 3.6, 3.6},
    {"M2 Max", 32 * kGiB, 400, 13.6, 13.6},
    {"M2 Ultra", 64 * kGiB, 800, 27.2, 27.2},
    {"M3 Max", 48 * kGiB, 400, 16.4, 16.4},
    {"M4 Max", 48 * kGiB, 546, 18.4, 18.4},
}};
constexpr std::string_view kDefaultProfile = "M2 Max";

// Fixed cost of one command in the roofline model: encoding plus a kernel launch on Apple GPUs
// is a few microseconds; 5 us is the figure the simulated times use for every chip.
constexpr double kLaunchOverheadS = 5e-6;

std::string normalize(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

void warn(const std::string& what) { std::fprintf(stderr, "mpsim warning: %s\n", what.c_str()); }

// A ratio variable in [0, 2]; the default when unset or malformed.
double ratio_from_env(const char* var, double fallback) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const double r = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(r >= 0 && r <= 2)) {
    warn(std::string(var) + "='" + v + "' ignored: expected a number in [0, 2]");
    return fallback;
  }
  return r;
}

}  // namespace

std::span<const ChipProfile> chip_profiles() { return kProfiles; }

namespace detail {

std::optional<std::size_t> parse_memory_size(std::string_view text) {
  std::size_t i = 0;
  unsigned long long value = 0;
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (value > (~0ull - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
  }
  const std::string unit = normalize(text.substr(i));
  int shift = 0;
  if (unit == "k" || unit == "kb" || unit == "kib") {
    shift = 10;
  } else if (unit == "m" || unit == "mb" || unit == "mib") {
    shift = 20;
  } else if (unit == "g" || unit == "gb" || unit == "gib") {
    shift = 30;
  } else if (unit == "t" || unit == "tb" || unit == "tib") {
    shift = 40;
  } else if (!unit.empty() && unit != "b") {
    return std::nullopt;
  }
  if (value == 0 || (shift != 0 && value > (~0ull >> shift))) return std::nullopt;
  return static_cast<std::size_t>(value << shift);
}

const ChipProfile* find_profile(std::string_view name) {
  const std::string key = normalize(name);
  for (const ChipProfile& p : kProfiles) {
    if (normalize(p.name) == key) return &p;
  }
  return nullptr;
}

DeviceProperties make_properties(const ChipProfile& profile, std::size_t memory_bytes) {
  DeviceProperties p;
  p.name = "Apple " + std::string(profile.name) + " (simulated)";
  p.profile = std::string(profile.name);
  p.memory_bytes = memory_bytes;
  p.recommended_max_memory = memory_bytes / 4 * 3;
  p.max_buffer_length = memory_bytes / 2;
  p.bandwidth_bytes_per_s = profile.bandwidth_gb_s * 1e9;
  p.fp32_flops_per_s = profile.fp32_tflops * 1e12;
  p.fp16_flops_per_s = profile.fp16_tflops * 1e12;
  p.launch_overhead_s = kLaunchOverheadS;
  return p;
}

const StartupConfig& startup_config() {
  static const StartupConfig config = [] {
    StartupConfig c;
    const ChipProfile* profile = find_profile(kDefaultProfile);
    if (const char* v = std::getenv("MPSIM_MPS_PROFILE"); v != nullptr && *v != '\0') {
      if (const ChipProfile* p = find_profile(v)) {
        profile = p;
      } else {
        std::string names;
        for (const ChipProfile& p2 : kProfiles)
          names += (names.empty() ? "" : ", ") + std::string(p2.name);
        warn("MPSIM_MPS_PROFILE='" + std::string(v) + "' ignored: expected one of " + names);
      }
    }
    std::size_t memory = profile->memory_bytes;
    if (const char* v = std::getenv("MPSIM_MPS_MEMORY"); v != nullptr && *v != '\0') {
      if (std::optional<std::size_t> m = parse_memory_size(v)) {
        memory = *m;
      } else {
        warn("MPSIM_MPS_MEMORY='" + std::string(v) +
             "' ignored: expected a size such as 8G, 512M or a byte count");
      }
    }
    c.properties = make_properties(*profile, memory);
    c.high_watermark_ratio = ratio_from_env("MPSIM_MPS_HIGH_WATERMARK_RATIO", 1.7);
    c.low_watermark_ratio = ratio_from_env("MPSIM_MPS_LOW_WATERMARK_RATIO", 1.4);
    if (c.high_watermark_ratio != 0 && c.low_watermark_ratio > c.high_watermark_ratio) {
      warn("MPSIM_MPS_LOW_WATERMARK_RATIO is above the high watermark ratio; using the high one");
      c.low_watermark_ratio = c.high_watermark_ratio;
    }
    c.strict = mpsim::detail::env_flag("MPSIM_MPS_STRICT", false);
    if (const char* v = std::getenv("MPSIM_MPS_DISABLE_OPS")) {
      std::string_view list(v);
      while (!list.empty()) {
        const std::size_t comma = list.find(',');
        const std::string_view name = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        if (name.empty()) continue;
        try {
          c.disabled_ops.push_back(find_op(name));
        } catch (const Error& e) {
          warn(std::string("MPSIM_MPS_DISABLE_OPS: ") + e.what());
        }
      }
    }
    if (const char* v = std::getenv("MPSIM_ALLOC_TRACE")) c.alloc_trace_path = v;
    return c;
  }();
  return config;
}

}  // namespace detail
}  // namespace mpsim::mps
