#include "base/error.h"

#include <cstdio>
#include <cstdlib>

namespace mpsim::detail {

void check_failed(const char* expr, const char* file, int line, const char* function) {
  std::fprintf(stderr, "mpsim: internal check failed: %s at %s:%d (%s)\n", expr, file, line,
               function);
  std::abort();
}

}  // namespace mpsim::detail
