// Allocation traces: the text format, a recorder that wraps any allocator, and a replayer that
// drives any allocator with a trace and measures it.
//
// Format, one event a line, `#` starts a comment line:
//   a <id> <bytes> [<t_ns>]   allocate <bytes>, remember the block as <id>
//   f <id> [<t_ns>]           free block <id>
// <t_ns> (nanoseconds since recording began) is optional; replay ignores it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>
#include <vector>

#include "allocator/allocator.h"

namespace mpsim::alloc {

struct TraceEvent {
  bool is_alloc = false;
  std::uint64_t id = 0;
  std::size_t bytes = 0;  // allocations only
  std::uint64_t t_ns = 0;
};

struct Trace {
  std::vector<TraceEvent> events;
};

// Throws InvalidArgument naming the line for a malformed line, a reused live id or a free of an
// id that is not live; `source` names the input in those messages.
Trace parse_trace(std::istream& in, const std::string& source);
// Throws InvalidArgument when the file cannot be opened.
Trace read_trace(const std::string& path);
void write_trace(const Trace& trace, std::ostream& out);

// Forwards every call to `inner` and appends one trace line per allocate/free to `out`, with
// the block id as the trace id and a timestamp. Thread-safe: lines are written under a mutex,
// after the inner call returns, so the order of lines is an order in which the calls completed.
// A call that throws records nothing. `inner` and `out` must outlive the recorder.
class TracingAllocator final : public Allocator {
 public:
  TracingAllocator(Allocator& inner, std::ostream& out);

  Block allocate(std::size_t size, std::size_t alignment) override;
  void free(const Block& block) override;
  AllocatorStats stats() const override { return inner_.stats(); }
  void reset_peak_stats() override { inner_.reset_peak_stats(); }
  void empty_cache() override { inner_.empty_cache(); }
  void set_limit(std::size_t bytes) override { inner_.set_limit(bytes); }
  const char* name() const override { return inner_.name(); }

 private:
  std::uint64_t now_ns() const;

  Allocator& inner_;
  std::ostream& out_;
  std::mutex mu_;
  const std::int64_t start_ns_;
};

struct ReplayResult {
  std::size_t events = 0;
  std::size_t allocs = 0;
  std::size_t frees = 0;
  std::size_t peak_requested_bytes = 0;  // recounted from the trace
  std::size_t peak_reserved_bytes = 0;   // the allocator's stats().peak_reserved_bytes
  double ns_per_alloc = 0;               // mean wall time of allocate, timer overhead removed
  double ns_per_free = 0;
  std::size_t invariant_checks = 0;
  std::size_t invariant_violations = 0;
  std::string first_violation;  // empty when there is none
};

// Calls after each event (when set); returns the violated invariants, empty when all hold.
using InvariantChecker = std::function<std::vector<std::string>()>;

// Replays `trace` against `allocator` (alignment kDefaultReplayAlignment), frees the blocks
// still live at its end, and reports. Peaks are taken from a reset_peak_stats() at the start.
// When `check` is set it runs after every event and timings then include no checker time.
// Allocation failures propagate (OutOfMemoryError).
inline constexpr std::size_t kDefaultReplayAlignment = 256;
ReplayResult replay(const Trace& trace, Allocator& allocator, const InvariantChecker& check = {});

}  // namespace mpsim::alloc
