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
#include <optional>
#include <string>
#include <vector>

#include "allocator/allocator.h"

namespace mpsim::alloc {

struct TraceEvent {
  bool is_alloc = false;
  std::uint64_t id = 0;
  std::size_t bytes = 0;  // allocations only
  std::uint64_t t_ns = 0;
  std::size_t line = 0;  // its line in the source (parse_trace); 0 when not read from text
};

struct Trace {
  std::vector<TraceEvent> events;
  std::string source;  // the file or name it was read from (parse_trace), for messages
};

// The largest allocation a trace may record: 2^62 bytes, beyond any memory.
inline constexpr std::uint64_t kMaxTraceBytes = std::uint64_t{1} << 62;

// Throws InvalidArgument naming the line for a malformed line (a field that is not a whole
// non-negative decimal within 64 bits, a size above kMaxTraceBytes), a reused live id or a free
// of an id that is not live; `source` names the input in those messages.
Trace parse_trace(std::istream& in, const std::string& source);
// Throws InvalidArgument naming the path and the reason when it is a directory, cannot be opened
// or cannot be read to its end.
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

// The allocation that failed when a replay under a limit ran out of memory (ReplayOptions::
// stop_at_oom). requested_in_use and allocated_in_use are what was live when the request came;
// reserved is what the allocator held after the failed call (it may have released its cache).
struct ReplayFailure {
  std::size_t event = 0;             // index of the failing event among the trace's events, from 0
  std::uint64_t id = 0;              // the event's trace id
  std::size_t bytes = 0;             // the request
  std::size_t requested_in_use = 0;  // live requested bytes, recounted from the trace
  std::size_t allocated_in_use = 0;  // the allocator's allocated_bytes
  std::size_t reserved = 0;          // the allocator's reserved_bytes
  std::string message;               // the OutOfMemoryError's text
};

struct ReplayResult {
  std::size_t events = 0;  // events applied (all of them, unless `failure` is set)
  std::size_t allocs = 0;
  std::size_t frees = 0;
  std::size_t peak_requested_bytes = 0;  // recounted from the trace
  std::size_t peak_reserved_bytes = 0;   // the allocator's stats().peak_reserved_bytes
  double ns_per_alloc = 0;               // mean wall time of allocate, timer overhead removed
  double ns_per_free = 0;
  std::size_t invariant_checks = 0;
  std::size_t invariant_violations = 0;
  std::string first_violation;           // empty when there is none
  std::optional<ReplayFailure> failure;  // set only with ReplayOptions::stop_at_oom
};

// Calls after each event (when set); returns the violated invariants, empty when all hold.
using InvariantChecker = std::function<std::vector<std::string>()>;

// What a ReplayObserver sees after each applied event.
struct ReplayStep {
  std::size_t index = 0;            // the event's index among the trace's events, from 0
  std::size_t requested_bytes = 0;  // live requested bytes after it, recounted from the trace
};
using ReplayObserver = std::function<void(const ReplayStep&)>;

struct ReplayOptions {
  // Runs after every event; timings then include no checker time.
  InvariantChecker check;
  // Runs after every applied event, outside the timed calls (timelines, progress).
  ReplayObserver observe;
  // When set, an OutOfMemoryError ends the replay: the result's `failure` describes the request,
  // the checker runs once more (a failed call must leave the allocator consistent), and the
  // blocks still live are freed. When clear, the error propagates.
  bool stop_at_oom = false;
};

// Replays `trace` against `allocator` (alignment kDefaultReplayAlignment), frees the blocks
// still live at its end, and reports. Peaks are taken from a reset_peak_stats() at the start.
inline constexpr std::size_t kDefaultReplayAlignment = 256;
ReplayResult replay(const Trace& trace, Allocator& allocator, const ReplayOptions& options);
// The same with only an invariant checker; allocation failures propagate (OutOfMemoryError).
ReplayResult replay(const Trace& trace, Allocator& allocator, const InvariantChecker& check = {});

}  // namespace mpsim::alloc
