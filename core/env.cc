#include "core/env.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mpsim::detail {

std::optional<bool> parse_flag(std::string_view text) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  return std::nullopt;
}

bool env_flag(const char* var, bool fallback) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return fallback;
  if (std::optional<bool> f = parse_flag(v)) return *f;
  warn_bad_env(var, v, "1, true, yes, on, 0, false, no or off");
  return fallback;
}

void warn_bad_env(std::string_view var, std::string_view value, std::string_view expected) {
  std::string line = "mpsim warning: ";  // appended: GCC 12 warns falsely (-Wrestrict) on a + chain
  line += var;
  line += "='";
  line += value;
  line += "' ignored: expected ";
  line += expected;
  line += "\n";
  std::fputs(line.c_str(), stderr);
}

}  // namespace mpsim::detail
