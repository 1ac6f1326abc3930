// Libraries to link: the `mpsim_allocator` objects (or libmpsim) and ${CMAKE_DL_LIBS} (dlopen).
// The peers are loaded at run time, so none is a link dependency: jemalloc from
// libjemalloc.so.2 (Debian libjemalloc2), mimalloc from libmimalloc.so.2 (libmimalloc2.0),
// tbbmalloc from libtbbmalloc.so.2 (libtbbmalloc2); glibc malloc is the process's own.
#include "tools/alloc_replay.h"

#include <dlfcn.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "allocator/buddy_allocator.h"
#include "allocator/caching_allocator.h"
#include "allocator/trace.h"
#include "core/error.h"
#include "tools/commands.h"

namespace mpsim::tools {
namespace {

using alloc::AllocatorStats;
using alloc::Block;

using json = nlohmann::ordered_json;

// The allocators a replay can drive: our own two (invariant checks, limits) and the peers.
constexpr const char* kAllocatorNames[] = {"buddy",    "caching",  "malloc",
                                           "jemalloc", "mimalloc", "tbbmalloc"};

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  std::size_t resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// A peer malloc behind the Allocator interface. It has no common statistics API, so reserved
// memory is measured the same way for every peer: when `touch` is on, allocate() writes one
// byte per page of each block (so the pages the peer hands out become resident) and samples the
// process's resident set after every allocate and free; reserved_bytes is the resident set over
// the baseline taken at reset_peak_stats(), peak_reserved_bytes its peak. Timed passes run with
// touch off.
class PeerAllocator final : public alloc::Allocator {
 public:
  using AlignedMalloc = void* (*)(std::size_t alignment, std::size_t size);
  using Free = void (*)(void*);

  PeerAllocator(const char* name, AlignedMalloc allocate, Free release)
      : name_(name), allocate_(allocate), free_(release) {}

  void set_touch(bool touch) { touch_ = touch; }

  Block allocate(std::size_t size, std::size_t alignment) override {
    const std::size_t bytes =
        std::max<std::size_t>((size + alignment - 1) / alignment, 1) * alignment;
    void* ptr = allocate_(alignment, bytes);
    if (ptr == nullptr) throw OutOfMemoryError(std::string("[") + name_ + "] returned null");
    std::lock_guard lock(mu_);
    stats_.requested_bytes += size;
    stats_.allocated_bytes += bytes;
    stats_.active_blocks += 1;
    stats_.num_allocs += 1;
    if (touch_) {
      for (std::size_t i = 0; i < bytes; i += 4096) static_cast<volatile char*>(ptr)[i] = 1;
      sample_resident();
    }
    return Block{ptr, bytes, next_id_++, size};
  }
  void free(const Block& block) override {
    free_(block.ptr);
    std::lock_guard lock(mu_);
    stats_.requested_bytes -= block.requested;
    stats_.allocated_bytes -= block.size;
    stats_.active_blocks -= 1;
    stats_.num_frees += 1;
    if (touch_) sample_resident();
  }
  AllocatorStats stats() const override {
    std::lock_guard lock(mu_);
    return stats_;
  }
  void reset_peak_stats() override {
    std::lock_guard lock(mu_);
    baseline_ = resident_bytes();
    stats_.reserved_bytes = 0;
    stats_.peak_reserved_bytes = 0;
  }
  void set_limit(std::size_t) override {}
  const char* name() const override { return name_; }

 private:
  // Called with mu_ held.
  void sample_resident() {
    const std::size_t rss = resident_bytes();
    stats_.reserved_bytes = rss > baseline_ ? rss - baseline_ : 0;
    stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  }

  const char* name_;
  AlignedMalloc allocate_;
  Free free_;
  bool touch_ = false;
  std::size_t baseline_ = 0;
  mutable std::mutex mu_;
  AllocatorStats stats_;
  std::uint64_t next_id_ = 1;
};

// Loaded peer entry points; the handles stay open for the life of the process because blocks
// may outlive any scope here.
struct PeerFunctions {
  PeerAllocator::AlignedMalloc allocate = nullptr;
  PeerAllocator::Free release = nullptr;
};

void* glibc_aligned(std::size_t alignment, std::size_t size) {
  return std::aligned_alloc(alignment, size);
}
void glibc_free(void* p) { std::free(p); }

// Swaps (size, alignment) order for the libraries whose aligned malloc takes size first.
template <auto& kFn>
void* size_first(std::size_t alignment, std::size_t size) {
  return kFn(size, alignment);
}
void* (*g_mi_malloc_aligned)(std::size_t, std::size_t) = nullptr;
void* (*g_scalable_aligned_malloc)(std::size_t, std::size_t) = nullptr;

bool load_peer(const std::string& name, PeerFunctions& out, std::string& error) {
  if (name == "malloc") {
    out = {glibc_aligned, glibc_free};
    return true;
  }
  struct Library {
    const char* name;
    const char* soname;
    const char* allocate;
    const char* release;
  };
  static constexpr Library kLibraries[] = {
      {"jemalloc", "libjemalloc.so.2", "aligned_alloc", "free"},
      {"mimalloc", "libmimalloc.so.2", "mi_malloc_aligned", "mi_free"},
      {"tbbmalloc", "libtbbmalloc.so.2", "scalable_aligned_malloc", "scalable_aligned_free"},
  };
  for (const Library& lib : kLibraries) {
    if (name != lib.name) continue;
    void* handle = dlopen(lib.soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      // jemalloc's initial-exec TLS needs static TLS room that glibc reserves only on request.
      error = std::string(lib.name) + " is not installed or cannot be loaded (" + dlerror() +
              "); for jemalloc's static TLS run with "
              "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384";
      return false;
    }
    void* allocate = dlsym(handle, lib.allocate);
    void* release = dlsym(handle, lib.release);
    if (allocate == nullptr || release == nullptr) {
      error = std::string(lib.soname) + " lacks " + lib.allocate + " or " + lib.release;
      return false;
    }
    out.release = reinterpret_cast<PeerAllocator::Free>(release);
    if (name == "jemalloc") {
      out.allocate = reinterpret_cast<PeerAllocator::AlignedMalloc>(allocate);
    } else if (name == "mimalloc") {
      g_mi_malloc_aligned = reinterpret_cast<void* (*)(std::size_t, std::size_t)>(allocate);
      out.allocate = size_first<g_mi_malloc_aligned>;
    } else {
      g_scalable_aligned_malloc = reinterpret_cast<void* (*)(std::size_t, std::size_t)>(allocate);
      out.allocate = size_first<g_scalable_aligned_malloc>;
    }
    return true;
  }
  error = "unknown allocator '" + name + "'";
  return false;
}

// A progress line on stderr for long work, shown only when stderr is a terminal and the output
// is text (--json output stays machine-readable, a log file stays clean). Redrawn at most every
// 100 ms; cleared by done() or at destruction.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { done(); }

  // `what` names the work ("buddy: timed pass"); `done_count` of `total` `unit` are through.
  void update(const std::string& what, std::uint64_t done_count, std::uint64_t total,
              const char* unit = "events") {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    const double percent =
        total == 0 ? 100.0 : 100.0 * static_cast<double>(done_count) / static_cast<double>(total);
    std::fprintf(stderr, "\r\033[Kalloc-replay: %s: %llu / %llu %s (%.0f%%)", what.c_str(),
                 static_cast<unsigned long long>(done_count),
                 static_cast<unsigned long long>(total), unit, percent);
    std::fflush(stderr);
  }
  void done() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }
  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_;
};

// A byte count as CLI11's AsSizeValue reads it ("8G", "8GiB", "8gb", "512k", "1048576": every
// unit a power of 1024, case-insensitive), with one message for every malformed value.
CLI::Validator size_value(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& value) {
        const std::string given = value;
        std::string error;
        try {
          error = CLI::AsSizeValue(/*kb_is_1000=*/false)(value);
        } catch (const CLI::ValidationError&) {
          error = "malformed";
        }
        // AsSizeValue reads "-1" as 2^64 - 1.
        if (!error.empty() || given.find('-') != std::string::npos) {
          return "expected a byte count or a size with a unit of 1024 (K, M, G, T; KiB and KB "
                 "alike), such as 8G, 512MiB or 1048576, not '" +
                 given + "'";
        }
        if (!allow_zero && value == "0") return std::string("must be at least 1 byte, not 0");
        return std::string();
      },
      "SIZE", "SIZE");
}

struct Args {
  std::string trace;
  std::vector<std::string> allocators;
  bool json = false;
  bool stress = false;
  int threads = 4;
  std::uint64_t ops = 1'000'000;
  std::uint64_t seed = 1;
  std::uint64_t check_every = 100'000;
  std::uint64_t cache_bytes = alloc::CacheOptions{}.max_cached_bytes;
  std::string timeline;     // empty: no timeline
  std::uint64_t limit = 0;  // 0: no limit
  bool min_limit = false;
};

// The allocators of our own that replay and stress can drive, with their invariant checks and
// a limit (Allocator::set_limit); a peer malloc has neither.
bool is_own_allocator(const std::string& name) { return name == "buddy" || name == "caching"; }

// A fresh allocator of our own and its invariant checker.
struct OwnAllocator {
  std::unique_ptr<alloc::Allocator> allocator;
  alloc::InvariantChecker check;
};

OwnAllocator make_own(const std::string& name, std::uint64_t cache_bytes) {
  if (name == "caching") {
    auto caching = std::make_unique<alloc::CachingAllocator>(
        alloc::BuddyOptions{}, alloc::CacheOptions{.max_cached_bytes = cache_bytes});
    alloc::CachingAllocator* p = caching.get();
    return {std::move(caching), [p] { return p->check_invariants(); }};
  }
  auto buddy = std::make_unique<alloc::BuddyAllocator>();
  alloc::BuddyAllocator* p = buddy.get();
  return {std::move(buddy), [p] { return p->check_invariants(); }};
}

// Limits count reserved memory, which both of our allocators hold in whole commit granules
// (dedicated regions are rounded to it too): every limit between two multiples of the granule
// behaves as the lower one, so --min-limit searches over granules.
std::size_t limit_granule() { return alloc::BuddyOptions{}.commit_granule; }

std::string bytes_text(std::size_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  char buf[64];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f %s", v, kUnits[unit]);
  }
  return buf;
}

// One row of the timeline: the figures after an event.
struct TimelineRow {
  std::size_t allocator = 0;  // index into Args::allocators
  std::size_t event = 0;
  std::size_t requested = 0;
  std::size_t allocated = 0;
  std::size_t reserved = 0;
};

alloc::ReplayOptions replay_options(alloc::ReplayObserver observe,
                                    alloc::InvariantChecker check = {}, bool stop_at_oom = false) {
  alloc::ReplayOptions options;
  options.check = std::move(check);
  options.observe = std::move(observe);
  options.stop_at_oom = stop_at_oom;
  return options;
}

struct MinLimit {
  bool found = false;  // false: no limit up to kMaxLimit lets the trace run
  std::size_t bytes = 0;
  std::size_t probes = 0;
};

// What the replay of one allocator found.
struct AllocatorReport {
  std::string name;
  alloc::ReplayResult timed;    // no limit, no checks
  alloc::ReplayResult checked;  // under the limit when there is one; invariants (own only)
  std::optional<MinLimit> min_limit;
};

// Bisects, over whole granules, the smallest limit under which the whole trace replays on a
// fresh `name` allocator. Invariant kept: `lo` granules fail, `hi` granules fit; it starts from
// lo = the granules below the peak requested bytes (reserved memory covers every live block, so
// a smaller limit cannot fit) and hi = the unlimited run's peak reserved (the limited run is the
// same run, never over it). The answer therefore fits and one granule less fails; it is the
// smallest fitting limit when fitting is monotone in the limit, which the allocators do not
// guarantee (a lower limit releases the cache earlier and may place blocks differently).
MinLimit find_min_limit(const alloc::Trace& trace, const Args& args, const std::string& name,
                        std::size_t peak_requested, std::size_t peak_reserved, Progress& progress) {
  constexpr std::size_t kMaxLimit = std::size_t{1} << 50;
  const std::size_t granule = limit_granule();
  MinLimit result;
  if (peak_requested == 0) {
    result.found = true;
    return result;
  }
  auto fits = [&](std::size_t granules) {
    ++result.probes;
    const std::string what = name + ": min-limit probe " + std::to_string(result.probes) + " at " +
                             bytes_text(granules * granule);
    OwnAllocator own = make_own(name, args.cache_bytes);
    own.allocator->set_limit(granules * granule);
    const alloc::ReplayResult r =
        alloc::replay(trace, *own.allocator,
                      replay_options(
                          [&](const alloc::ReplayStep& step) {
                            progress.update(what, step.index + 1, trace.events.size());
                          },
                          {}, /*stop_at_oom=*/true));
    return !r.failure.has_value();
  };
  std::size_t lo = (peak_requested - 1) / granule;
  std::size_t hi = std::max((peak_reserved + granule - 1) / granule, lo + 1);
  while (!fits(hi)) {
    lo = hi;
    hi *= 2;
    if (hi * granule > kMaxLimit) return result;
  }
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  result.found = true;
  result.bytes = hi * granule;
  return result;
}

AllocatorReport replay_one(const alloc::Trace& trace, const Args& args, std::size_t index,
                           std::vector<TimelineRow>* timeline, Progress& progress) {
  const std::string& name = args.allocators[index];
  AllocatorReport report;
  report.name = name;
  const std::size_t total = trace.events.size();
  auto observer = [&](const std::string& what, alloc::Allocator* sampled) {
    return [&, what, sampled](const alloc::ReplayStep& step) {
      progress.update(what, step.index + 1, total);
      if (sampled != nullptr) {
        const alloc::AllocatorStats s = sampled->stats();
        timeline->push_back(TimelineRow{.allocator = index,
                                        .event = step.index,
                                        .requested = step.requested_bytes,
                                        .allocated = s.allocated_bytes,
                                        .reserved = s.reserved_bytes});
      }
    };
  };
  if (is_own_allocator(name)) {
    {
      OwnAllocator own = make_own(name, args.cache_bytes);
      report.timed = alloc::replay(trace, *own.allocator,
                                   replay_options(observer(name + ": timed pass", nullptr)));
    }
    {
      OwnAllocator own = make_own(name, args.cache_bytes);
      if (args.limit != 0) own.allocator->set_limit(args.limit);
      report.checked = alloc::replay(
          trace, *own.allocator,
          replay_options(observer(name + ": checked pass",
                                  timeline != nullptr ? own.allocator.get() : nullptr),
                         own.check, /*stop_at_oom=*/args.limit != 0));
    }
    if (args.min_limit) {
      report.min_limit = find_min_limit(trace, args, name, report.timed.peak_requested_bytes,
                                        report.timed.peak_reserved_bytes, progress);
    }
  } else {
    PeerFunctions fns;
    std::string error;
    if (!load_peer(name, fns, error)) throw InvalidArgument(error);
    const char* stable_name = *std::find_if(std::begin(kAllocatorNames), std::end(kAllocatorNames),
                                            [&](const char* n) { return name == n; });
    PeerAllocator peer(stable_name, fns.allocate, fns.release);
    report.timed =
        alloc::replay(trace, peer, replay_options(observer(name + ": timed pass", nullptr)));
    peer.set_touch(true);
    report.checked = alloc::replay(trace, peer,
                                   replay_options(observer(name + ": resident-set pass",
                                                           timeline != nullptr ? &peer : nullptr)));
    report.timed.peak_reserved_bytes = report.checked.peak_reserved_bytes;
  }
  return report;
}

double reserved_ratio(const alloc::ReplayResult& r) {
  return static_cast<double>(r.peak_reserved_bytes) /
         static_cast<double>(std::max<std::size_t>(r.peak_requested_bytes, 1));
}

json report_json(const Args& args, const AllocatorReport& r) {
  const bool own = is_own_allocator(r.name);
  json j = {{"allocator", r.name},
            {"peak_reserved_bytes", r.timed.peak_reserved_bytes},
            {"peak_reserved_measure", own ? "committed granules" : "resident set, pages touched"},
            {"ratio", reserved_ratio(r.timed)},
            {"ns_per_alloc", r.timed.ns_per_alloc},
            {"ns_per_free", r.timed.ns_per_free}};
  if (own) {
    j["invariant_checks"] = r.checked.invariant_checks;
    j["invariant_violations"] = r.checked.invariant_violations;
    if (!r.checked.first_violation.empty()) j["first_violation"] = r.checked.first_violation;
  } else {
    j["invariant_checks"] = nullptr;
    j["invariant_violations"] = nullptr;
  }
  if (args.limit != 0) {
    json limit = {{"bytes", args.limit}, {"fits", !r.checked.failure.has_value()}};
    if (const auto& f = r.checked.failure) {
      limit["first_failure"] = {{"event", f->event},
                                {"id", f->id},
                                {"bytes", f->bytes},
                                {"requested_in_use_bytes", f->requested_in_use},
                                {"allocated_in_use_bytes", f->allocated_in_use},
                                {"reserved_bytes", f->reserved},
                                {"message", f->message}};
    } else {
      limit["first_failure"] = nullptr;
      limit["peak_reserved_bytes"] = r.checked.peak_reserved_bytes;
    }
    j["limit"] = std::move(limit);
  }
  if (r.min_limit) {
    j["min_limit"] = {{"bytes", r.min_limit->found ? json(r.min_limit->bytes) : json(nullptr)},
                      {"granule_bytes", limit_granule()},
                      {"probes", r.min_limit->probes}};
  }
  return j;
}

void print_report(const Args& args, const AllocatorReport& r) {
  const bool own = is_own_allocator(r.name);
  std::printf("\nallocator            %s\n", r.name.c_str());
  std::printf("peak reserved        %s (%zu B)%s\n",
              bytes_text(r.timed.peak_reserved_bytes).c_str(), r.timed.peak_reserved_bytes,
              own ? "" : ", resident set, pages touched");
  std::printf("reserved / requested %.4f\nns per alloc         %.1f\nns per free          %.1f\n",
              reserved_ratio(r.timed), r.timed.ns_per_alloc, r.timed.ns_per_free);
  if (own) {
    std::printf("invariant checks     %zu, violations %zu%s%s\n", r.checked.invariant_checks,
                r.checked.invariant_violations, r.checked.first_violation.empty() ? "" : ": ",
                r.checked.first_violation.c_str());
  } else {
    std::printf("invariant checks     none (a peer exposes no invariants)\n");
  }
  if (args.limit != 0) {
    if (const auto& f = r.checked.failure) {
      std::printf(
          "under the limit      fails at event %zu (a %llu %zu = %s): in use %s requested, %s "
          "allocated; %s reserved\n",
          f->event, static_cast<unsigned long long>(f->id), f->bytes, bytes_text(f->bytes).c_str(),
          bytes_text(f->requested_in_use).c_str(), bytes_text(f->allocated_in_use).c_str(),
          bytes_text(f->reserved).c_str());
    } else {
      std::printf("under the limit      fits: no event fails (peak reserved %s)\n",
                  bytes_text(r.checked.peak_reserved_bytes).c_str());
    }
  }
  if (r.min_limit) {
    if (r.min_limit->found) {
      std::printf("min limit            %s (%zu B; one %s granule less fails; %zu replays)\n",
                  bytes_text(r.min_limit->bytes).c_str(), r.min_limit->bytes,
                  bytes_text(limit_granule()).c_str(), r.min_limit->probes);
    } else {
      std::printf("min limit            none up to 1 PiB (%zu replays)\n", r.min_limit->probes);
    }
  }
}

// Writes the timeline as CSV, long format: one row per allocator and event.
void write_timeline(const Args& args, const std::vector<TimelineRow>& rows) {
  std::ofstream out(args.timeline);
  if (!out) {
    throw InvalidArgument("[alloc-replay] cannot write the timeline '" + args.timeline +
                          "': " + std::strerror(errno));
  }
  out << "allocator,event,requested,allocated,reserved\n";
  for (const TimelineRow& r : rows) {
    out << args.allocators[r.allocator] << ',' << r.event << ',' << r.requested << ','
        << r.allocated << ',' << r.reserved << '\n';
  }
  if (!out.flush()) {
    throw InvalidArgument("[alloc-replay] cannot write the timeline '" + args.timeline + "'");
  }
}

int run_replay(const Args& args) {
  const alloc::Trace trace = alloc::read_trace(args.trace);
  if (!args.timeline.empty()) {
    const std::filesystem::path path(args.timeline);
    const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec) || !std::filesystem::is_directory(dir, ec)) {
      throw InvalidArgument("[alloc-replay] cannot write the timeline '" + args.timeline +
                            "': not a file in an existing directory");
    }
  }
  Progress progress(!args.json && isatty(STDERR_FILENO) == 1);
  std::vector<TimelineRow> timeline;
  std::vector<AllocatorReport> reports;
  for (std::size_t i = 0; i < args.allocators.size(); ++i) {
    reports.push_back(
        replay_one(trace, args, i, args.timeline.empty() ? nullptr : &timeline, progress));
  }
  progress.done();
  if (!args.timeline.empty()) write_timeline(args, timeline);

  const alloc::ReplayResult& first = reports.front().timed;
  if (args.json) {
    json j = {{"trace", args.trace},
              {"events", first.events},
              {"allocs", first.allocs},
              {"frees", first.frees},
              {"peak_requested_bytes", first.peak_requested_bytes},
              {"limit_bytes", args.limit != 0 ? json(args.limit) : json(nullptr)},
              {"timeline", args.timeline.empty() ? json(nullptr) : json(args.timeline)}};
    json list = json::array();
    for (const AllocatorReport& r : reports) list.push_back(report_json(args, r));
    j["allocators"] = std::move(list);
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("trace                %s (%zu events)\npeak requested       %s (%zu B)\n",
                args.trace.c_str(), first.events, bytes_text(first.peak_requested_bytes).c_str(),
                first.peak_requested_bytes);
    if (args.limit != 0) {
      std::printf("limit                %s (%llu B)\n", bytes_text(args.limit).c_str(),
                  static_cast<unsigned long long>(args.limit));
    }
    for (const AllocatorReport& r : reports) print_report(args, r);
    if (!args.timeline.empty()) std::printf("\ntimeline             %s\n", args.timeline.c_str());
  }
  const bool clean = std::all_of(reports.begin(), reports.end(), [](const AllocatorReport& r) {
    return r.checked.invariant_violations == 0 && !r.checked.failure;
  });
  return clean ? kExitOk : kExitFailed;
}

// Random multi-threaded workload: each thread allocates with log-uniform sizes in
// [kMinSize, kMaxSize] and frees a random live block, half and half, holding at most
// kMaxLivePerThread blocks (so 4 threads stay near 1.3 GiB live at worst). Every block carries
// its id in its first and last 8 bytes, checked at free: an overlap of two live blocks shows
// as a corrupted id. Invariants are checked every `check_every` operations, process-wide.
int run_stress(const Args& args) {
  constexpr double kMinSize = 256;
  constexpr double kMaxSize = 64.0 * 1024 * 1024;
  constexpr std::size_t kMaxLivePerThread = 32;
  // Only the chosen allocator is constructed.
  std::optional<alloc::BuddyAllocator> buddy;
  std::optional<alloc::CachingAllocator> caching;
  alloc::Allocator* allocator = nullptr;
  alloc::InvariantChecker invariants;
  if (args.allocators.front() == "caching") {
    allocator = &caching.emplace(alloc::BuddyOptions{},
                                 alloc::CacheOptions{.max_cached_bytes = args.cache_bytes});
    invariants = [&] { return caching->check_invariants(); };
  } else {
    allocator = &buddy.emplace();
    invariants = [&] { return buddy->check_invariants(); };
  }
  std::atomic<std::uint64_t> done_ops{0};
  std::atomic<std::uint64_t> corrupted{0};
  std::atomic<std::uint64_t> violations{0};
  std::atomic<std::uint64_t> checks{0};
  std::mutex error_mu;
  std::string first_error;
  auto check = [&] {
    const std::vector<std::string> errors = invariants();
    checks.fetch_add(1);
    if (!errors.empty()) {
      violations.fetch_add(errors.size());
      std::lock_guard lock(error_mu);
      if (first_error.empty()) first_error = errors.front();
    }
  };
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> running{args.threads};
  std::vector<std::thread> threads;
  for (int t = 0; t < args.threads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(args.seed * 1000003 + static_cast<std::uint64_t>(t));
      std::uniform_real_distribution<double> log_size(std::log(kMinSize), std::log(kMaxSize));
      std::vector<Block> live;
      const std::uint64_t ops = args.ops / static_cast<std::uint64_t>(args.threads) +
                                (static_cast<std::uint64_t>(t) < args.ops % args.threads ? 1 : 0);
      auto release = [&](std::size_t i) {
        const Block b = live[i];
        std::uint64_t head = 0;
        std::uint64_t tail = 0;
        std::memcpy(&head, b.ptr, 8);
        std::memcpy(&tail, static_cast<char*>(b.ptr) + b.size - 8, 8);
        if (head != b.id || tail != b.id) corrupted.fetch_add(1);
        allocator->free(b);
        live[i] = live.back();
        live.pop_back();
      };
      for (std::uint64_t i = 0; i < ops; ++i) {
        if (live.size() < kMaxLivePerThread && (live.empty() || rng() % 2 == 0)) {
          const auto size = static_cast<std::size_t>(std::exp(log_size(rng)));
          const Block b = allocator->allocate(size, 256);
          std::memcpy(b.ptr, &b.id, 8);
          std::memcpy(static_cast<char*>(b.ptr) + b.size - 8, &b.id, 8);
          live.push_back(b);
        } else {
          release(rng() % live.size());
        }
        if (done_ops.fetch_add(1) % args.check_every == args.check_every - 1) check();
      }
      while (!live.empty()) release(live.size() - 1);
      running.fetch_sub(1);
    });
  }
  {
    Progress progress(!args.json && isatty(STDERR_FILENO) == 1);
    const std::string what = "stress, " + args.allocators.front();
    while (progress.enabled() && running.load() > 0) {
      progress.update(what, std::min(done_ops.load(), args.ops), args.ops, "operations");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  check();
  const AllocatorStats s = allocator->stats();
  const double ratio = static_cast<double>(s.peak_reserved_bytes) /
                       static_cast<double>(std::max<std::size_t>(s.peak_requested_bytes, 1));
  if (args.json) {
    const json j = {{"allocator", args.allocators.front()},
                    {"mode", "stress"},
                    {"threads", args.threads},
                    {"ops", args.ops},
                    {"seed", args.seed},
                    {"ops_per_second", static_cast<double>(args.ops) / seconds},
                    {"peak_requested_bytes", s.peak_requested_bytes},
                    {"peak_reserved_bytes", s.peak_reserved_bytes},
                    {"ratio", ratio},
                    {"num_splits", s.num_splits},
                    {"num_merges", s.num_merges},
                    {"invariant_checks", checks.load()},
                    {"invariant_violations", violations.load()},
                    {"corrupted_blocks", corrupted.load()}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("stress               %s, %d threads, %llu ops, seed %llu, %.2f s (%.2f M ops/s)\n",
                args.allocators.front().c_str(), args.threads,
                static_cast<unsigned long long>(args.ops),
                static_cast<unsigned long long>(args.seed), seconds, args.ops / seconds / 1e6);
    std::printf(
        "peak requested       %.2f MiB\npeak reserved        %.2f MiB\n"
        "reserved / requested %.4f\nsplits / merges      %llu / %llu\n",
        s.peak_requested_bytes / 1048576.0, s.peak_reserved_bytes / 1048576.0, ratio,
        static_cast<unsigned long long>(s.num_splits),
        static_cast<unsigned long long>(s.num_merges));
    std::printf("invariant checks     %llu, violations %llu%s%s\ncorrupted blocks     %llu\n",
                static_cast<unsigned long long>(checks.load()),
                static_cast<unsigned long long>(violations.load()), first_error.empty() ? "" : ": ",
                first_error.c_str(), static_cast<unsigned long long>(corrupted.load()));
  }
  return violations.load() == 0 && corrupted.load() == 0 && s.active_blocks == 0 ? kExitOk
                                                                                 : kExitFailed;
}

}  // namespace

int alloc_replay_main(int argc, char** argv) {
  Args args;
  CLI::App app(
      "Replays an allocation trace against one or more allocators (peak reserved over peak "
      "requested, ns per call, invariants after every event; a timeline; runs under a memory "
      "limit), or stresses one allocator with a random multi-threaded workload. See "
      "docs/allocator.md.",
      "mpsim alloc-replay");
  app.add_option("trace", args.trace, "the trace file: 'a <id> <bytes>' / 'f <id>' lines");
  CLI::Option* stress = app.add_flag("--stress", args.stress,
                                     "run the random multi-threaded workload instead of a trace");
  app.add_option("--allocator", args.allocators,
                 "allocators to replay, comma-separated or repeated (default buddy; --stress "
                 "takes one of buddy, caching)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::IsMember(
          std::vector<std::string>(std::begin(kAllocatorNames), std::end(kAllocatorNames))));
  app.add_option("--cache-bytes", args.cache_bytes,
                 "the caching allocator's cache cap in bytes (default 32 MiB; 0 turns it off)")
      ->transform(size_value(/*allow_zero=*/true));
  CLI::Option* timeline = app.add_option(
      "--timeline", args.timeline,
      "write requested, allocated and reserved bytes after every event, per allocator, to this "
      "CSV file (allocator,event,requested,allocated,reserved)");
  CLI::Option* limit =
      app.add_option("--limit", args.limit,
                     "replay under this memory limit (bytes, or K/M/G/T units of 1024: 8G, "
                     "512MiB) and report the first event that fails")
          ->transform(size_value(/*allow_zero=*/false));
  CLI::Option* min_limit = app.add_flag(
      "--min-limit", args.min_limit,
      "bisect the smallest limit (in commit granules) under which the whole trace runs");
  app.add_flag("--json", args.json, "print one JSON object instead of text");
  CLI::Option* threads =
      app.add_option("--threads", args.threads, "stress: threads (1..8, default 4)")
          ->check(CLI::Range(1, 8));
  CLI::Option* ops = app.add_option("--ops", args.ops, "stress: operations (default 1000000)")
                         ->check(CLI::PositiveNumber);
  CLI::Option* seed = app.add_option("--seed", args.seed, "stress: random seed (default 1)");
  CLI::Option* check_every =
      app.add_option("--check-every", args.check_every,
                     "stress: check invariants every N operations (default 100000)")
          ->check(CLI::PositiveNumber);
  for (CLI::Option* o : {timeline, limit, min_limit}) stress->excludes(o);
  for (CLI::Option* o : {threads, ops, seed, check_every}) o->needs(stress);

  auto usage_error = [](const std::string& message) {
    std::fprintf(stderr, "mpsim alloc-replay: error: %s (see mpsim alloc-replay --help)\n",
                 message.c_str());
    return kExitBadInput;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return usage_error(e.what());
  }
  if (args.stress == !args.trace.empty()) return usage_error("give either a TRACE or --stress");
  if (args.allocators.empty()) args.allocators.push_back("buddy");
  if (args.stress && (args.allocators.size() != 1 || !is_own_allocator(args.allocators[0]))) {
    return usage_error("--stress drives one allocator, buddy or caching");
  }
  for (const std::string& name : args.allocators) {
    if (!is_own_allocator(name) && (args.limit != 0 || args.min_limit)) {
      return usage_error(
          "--limit and --min-limit drive allocators with a limit (buddy, caching); '" + name +
          "' has none");
    }
  }
  try {
    return args.stress ? run_stress(args) : run_replay(args);
  } catch (const Error& e) {
    std::fprintf(stderr, "mpsim alloc-replay: error: %s\n", e.what());
    return kExitBadInput;
  }
}

}  // namespace mpsim::tools
