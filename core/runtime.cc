#include "core/runtime.h"

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/env.h"
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

namespace {
// MPSIM_NUM_THREADS caps the threads from start-up, as set_num_threads() would: a count from 1
// to 4096; anything else keeps every core and says so (core/env.h).
[[maybe_unused]] const bool kThreadsFromEnvironment = [] {
  const char* v = std::getenv("MPSIM_NUM_THREADS");
  if (v == nullptr || *v == '\0') return false;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 1 || n > 4096) {
    detail::warn_bad_env("MPSIM_NUM_THREADS", v, "a thread count from 1 to 4096");
    return false;
  }
  set_num_threads(static_cast<int>(n));
  return true;
}();
}  // namespace

}  // namespace mpsim

namespace mpsim {
namespace {

Precision precision_from_env() {
  const char* v = std::getenv("MPSIM_PRECISION");
  if (v == nullptr || *v == '\0') return Precision::Golden;
  try {
    return parse_precision(v);
  } catch (const Error&) {
    detail::warn_bad_env("MPSIM_PRECISION", v, "golden or fast");
    return Precision::Golden;  // the default; `mpsim info` shows the precision in force
  }
}

std::atomic<Precision>& process_precision() {
  static std::atomic<Precision> p{precision_from_env()};
  return p;
}

thread_local std::optional<Precision> t_precision;

}  // namespace

std::string_view precision_name(Precision p) { return p == Precision::Fast ? "fast" : "golden"; }

Precision parse_precision(std::string_view name) {
  if (name == "golden") return Precision::Golden;
  if (name == "fast") return Precision::Fast;
  throw InvalidArgument("[precision] expected 'golden' or 'fast', got '" + std::string(name) + "'");
}

void set_precision(Precision p) { process_precision().store(p, std::memory_order_relaxed); }

Precision precision() {
  return t_precision ? *t_precision : process_precision().load(std::memory_order_relaxed);
}

PrecisionGuard::PrecisionGuard(Precision p) : saved_(t_precision) { t_precision = p; }
PrecisionGuard::~PrecisionGuard() { t_precision = saved_; }

}  // namespace mpsim
