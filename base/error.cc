#include "base/error.h"

#include <cstdio>
#include <cstdlib>

namespace mpsim {

std::string printable(std::string_view text) {
  std::string out;
  for (const unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace mpsim

namespace mpsim::detail {

void check_failed(const char* expr, const char* file, int line, const char* function) {
  std::fprintf(stderr, "mpsim: internal check failed: %s at %s:%d (%s)\n", expr, file, line,
               function);
  std::abort();
}

}  // namespace mpsim::detail
