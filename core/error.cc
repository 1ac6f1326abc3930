#include "core/error.h"

#include <cstdio>
#include <cstdlib>

namespace mpsim::detail {

void check_failed(const char* expr, const std::source_location& where) {
  std::fprintf(stderr, "mpsim: internal check failed: %s at %s:%u (%s)\n", expr, where.file_name(),
               static_cast<unsigned>(where.line()), where.function_name());
  std::abort();
}

}  // namespace mpsim::detail
