// Option checks for the mpsim commands that say the allowed range in words and refuse what does
// not fit the option's type: CLI11's own Range and NonNegativeNumber print the bounds as doubles
// of 309 digits, and its integer parsing saturates 99999999999999999999 to 2^64 - 1.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace mpsim::tools {

// A decimal integer in [lo, hi] (no sign, no exponent, no fraction).
inline CLI::Validator integer_in(std::uint64_t lo, std::uint64_t hi) {
  const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& value) -> std::string {
        std::uint64_t v = 0;
        const char* end = value.data() + value.size();
        const auto [ptr, ec] = std::from_chars(value.data(), end, v);
        if (ec == std::errc::result_out_of_range || (ec == std::errc() && ptr == end && v > hi)) {
          return "'" + value + "' is too large: expected " + range;
        }
        if (ec != std::errc() || ptr != end || value.empty() || v < lo) {
          return "expected " + range + ", not '" + value + "'";
        }
        return {};
      },
      "INT", "INT");
}

// A finite number >= 0.
inline CLI::Validator finite_non_negative() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(v) || v < 0) {
          return "expected a finite number >= 0, not '" + value + "'";
        }
        return {};
      },
      "NUMBER", "NUMBER");
}

}  // namespace mpsim::tools
