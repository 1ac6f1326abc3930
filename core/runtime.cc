#include "core/runtime.h"

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <memory>
#include <mutex>
#include <string>

#include "core/error.h"

namespace mpsim {
namespace {
std::mutex g_mu;
std::unique_ptr<tbb::global_control> g_limit;
}  // namespace

void set_num_threads(int n) {
  if (n < 1)
    throw InvalidArgument("[set_num_threads] expected a positive count, got " + std::to_string(n));
  std::lock_guard lock(g_mu);
  g_limit.reset();
  g_limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                  static_cast<std::size_t>(n));
}

int num_threads() {
  return static_cast<int>(
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

}  // namespace mpsim
