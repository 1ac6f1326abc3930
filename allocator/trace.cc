#include "allocator/trace.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <ostream>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "base/error.h"

namespace mpsim::alloc {

namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The cost of the two clock reads around a timed call, taken as the minimum over many pairs
// so that an interrupt cannot inflate it.
double timer_overhead_ns() {
  std::int64_t best = INT64_MAX;
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t t0 = steady_ns();
    const std::int64_t t1 = steady_ns();
    best = std::min(best, t1 - t0);
  }
  return static_cast<double>(best);
}

}  // namespace

Trace parse_trace(std::istream& in, const std::string& source) {
  Trace trace;
  trace.source = source;
  std::unordered_map<std::uint64_t, bool> live;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    auto fail = [&](const std::string& why) {
      throw InvalidArgument("[alloc trace] " + source + ":" + std::to_string(number) + ": " + why +
                            ": '" + printable(line) + "'");
    };
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string w; fields >> w;) words.push_back(std::move(w));
    TraceEvent event;
    event.is_alloc = words[0] == "a";
    const std::size_t required = event.is_alloc ? 3 : 2;
    if ((words[0] != "a" && words[0] != "f") || words.size() < required ||
        words.size() > required + 1) {
      fail("expected 'a <id> <bytes> [t_ns]' or 'f <id> [t_ns]'");
    }
    // Each number whole, decimal, unsigned and within 64 bits: "-5" and 2^64 are errors, not
    // values wrapped modulo 2^64.
    auto number_of = [&](const std::string& word, const char* what) {
      std::uint64_t v = 0;
      const char* end = word.data() + word.size();
      const auto [ptr, ec] = std::from_chars(word.data(), end, v);
      if (ec == std::errc::result_out_of_range) fail(std::string(what) + " exceeds 2^64 - 1");
      if (ec != std::errc() || ptr != end) {
        fail(std::string(what) + " '" + printable(word) + "' is not a non-negative integer");
      }
      return v;
    };
    event.id = number_of(words[1], "the id");
    if (event.is_alloc) {
      event.bytes = number_of(words[2], "the size");
      // No memory holds more; larger requests would overflow the allocators' rounding.
      if (event.bytes > kMaxTraceBytes) {
        fail("the size " + words[2] + " exceeds 2^62 bytes, more than any memory holds");
      }
    }
    if (words.size() == required + 1) event.t_ns = number_of(words[required], "the time");
    event.line = number;
    if (event.is_alloc) {
      if (!live.emplace(event.id, true).second)
        fail("id " + std::to_string(event.id) + " is already live");
    } else if (live.erase(event.id) == 0) {
      fail("free of id " + std::to_string(event.id) + ", which is not live");
    }
    trace.events.push_back(event);
  }
  return trace;
}

Trace read_trace(const std::string& path) {
  auto fail = [&](const std::string& why) {
    throw InvalidArgument("[alloc trace] cannot read '" + path + "': " + why);
  };
  std::error_code ec;
  // A directory opens as a stream on Linux and reads as empty: refuse it by name.
  if (std::filesystem::is_directory(path, ec)) fail("it is a directory, not a trace file");
  errno = 0;
  std::ifstream in(path);
  if (!in) fail(errno != 0 ? std::strerror(errno) : "cannot open it");
  Trace trace = parse_trace(in, path);
  // getline stops at a read error as at the end of the file; only badbit tells them apart.
  if (in.bad()) fail("read error");
  return trace;
}

void write_trace(const Trace& trace, std::ostream& out) {
  for (const TraceEvent& e : trace.events) {
    if (e.is_alloc) {
      out << "a " << e.id << ' ' << e.bytes;
    } else {
      out << "f " << e.id;
    }
    if (e.t_ns != 0) out << ' ' << e.t_ns;
    out << '\n';
  }
}

TracingAllocator::TracingAllocator(Allocator& inner, std::ostream& out)
    : inner_(inner), out_(out), start_ns_(steady_ns()) {}

std::uint64_t TracingAllocator::now_ns() const {
  return static_cast<std::uint64_t>(steady_ns() - start_ns_);
}

Block TracingAllocator::allocate(std::size_t size, std::size_t alignment) {
  Block block = inner_.allocate(size, alignment);
  std::lock_guard lock(mu_);
  // Flushed per event: a recording must survive a process that never destroys its allocator
  // (the devices live for the whole process) or that dies mid-run.
  out_ << "a " << block.id << ' ' << size << ' ' << now_ns() << std::endl;
  return block;
}

void TracingAllocator::free(const Block& block) {
  inner_.free(block);
  std::lock_guard lock(mu_);
  out_ << "f " << block.id << ' ' << now_ns() << std::endl;
}

ReplayResult replay(const Trace& trace, Allocator& allocator, const ReplayOptions& options) {
  ReplayResult result;
  const double overhead = timer_overhead_ns();
  std::unordered_map<std::uint64_t, Block> live;
  live.reserve(trace.events.size());
  allocator.reset_peak_stats();
  std::size_t requested = 0;
  std::int64_t alloc_ns = 0;
  std::int64_t free_ns = 0;
  auto run_check = [&] {
    if (!options.check) return;
    ++result.invariant_checks;
    const std::vector<std::string> errors = options.check();
    if (!errors.empty() && result.first_violation.empty()) result.first_violation = errors.front();
    result.invariant_violations += errors.size();
  };
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const TraceEvent& e = trace.events[i];
    if (e.is_alloc) {
      Block block;
      const std::int64_t t0 = steady_ns();
      try {
        block = allocator.allocate(e.bytes, kDefaultReplayAlignment);
      } catch (const OutOfMemoryError& oom) {
        if (!options.stop_at_oom) {  // name the event that failed, where it is in the file
          std::string where = "[alloc trace] " + (trace.source.empty() ? "trace" : trace.source);
          if (e.line != 0) where += ":" + std::to_string(e.line);
          throw OutOfMemoryError(where + ": allocation of " + std::to_string(e.bytes) +
                                 " bytes (id " + std::to_string(e.id) + ") failed: " + oom.what());
        }
        // A failed call changes no block (allocator.h), so the stats read now are those the
        // request met, except reserved memory that released its free cache before the retry.
        const AllocatorStats now = allocator.stats();
        result.failure = ReplayFailure{.event = i,
                                       .id = e.id,
                                       .bytes = e.bytes,
                                       .requested_in_use = requested,
                                       .allocated_in_use = now.allocated_bytes,
                                       .reserved = now.reserved_bytes,
                                       .message = oom.what()};
        run_check();
        break;
      }
      alloc_ns += steady_ns() - t0;
      live[e.id] = block;
      requested += e.bytes;
      result.peak_requested_bytes = std::max(result.peak_requested_bytes, requested);
      ++result.allocs;
    } else {
      const auto it = live.find(e.id);
      MPSIM_CHECK(it != live.end());  // parse_trace rejects frees of ids that are not live
      const std::int64_t t0 = steady_ns();
      allocator.free(it->second);
      free_ns += steady_ns() - t0;
      requested -= it->second.requested;
      live.erase(it);
      ++result.frees;
    }
    ++result.events;
    run_check();
    if (options.observe) options.observe(ReplayStep{.index = i, .requested_bytes = requested});
  }
  for (const auto& [id, block] : live) allocator.free(block);
  result.peak_reserved_bytes = allocator.stats().peak_reserved_bytes;
  if (result.allocs != 0) {
    result.ns_per_alloc = std::max(
        0.0, static_cast<double>(alloc_ns) / static_cast<double>(result.allocs) - overhead);
  }
  if (result.frees != 0) {
    result.ns_per_free =
        std::max(0.0, static_cast<double>(free_ns) / static_cast<double>(result.frees) - overhead);
  }
  return result;
}

ReplayResult replay(const Trace& trace, Allocator& allocator, const InvariantChecker& check) {
  ReplayOptions options;
  options.check = check;
  return replay(trace, allocator, options);
}

}  // namespace mpsim::alloc
