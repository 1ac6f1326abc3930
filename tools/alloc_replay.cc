// `mpsim alloc-replay`: the command line, and the replay of a trace against our allocators
// and peer mallocs (alloc_peers.h): statistics, a timeline, runs under a memory limit, the
// smallest limit that fits. --stress runs alloc_stress.cc instead.
#include "tools/alloc_replay.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "allocator/buddy_allocator.h"
#include "allocator/caching_allocator.h"
#include "allocator/trace.h"
#include "base/output_file.h"
#include "core/error.h"
#include "tools/alloc_peers.h"
#include "tools/alloc_replay_common.h"
#include "tools/cli_checks.h"
#include "tools/commands.h"

namespace mpsim::tools {
namespace {

using Args = AllocReplayArgs;

using json = nlohmann::ordered_json;

// The allocators a replay can drive: our own two (invariant checks, limits) and the peers.
constexpr const char* kAllocatorNames[] = {"buddy",    "caching",  "malloc",
                                           "jemalloc", "mimalloc", "tbbmalloc"};

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
        // AsSizeValue reads "-1" as 2^64 - 1 and leaves a number beyond 2^64 - 1 for CLI11 to
        // saturate: both are refused.
        std::uint64_t bytes = 0;
        if (error.empty() &&
            std::from_chars(value.data(), value.data() + value.size(), bytes).ec ==
                std::errc::result_out_of_range) {
          return "'" + given + "' is too large: sizes go up to 2^64 - 1 bytes (16 EiB)";
        }
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
  std::ostringstream out;
  out << "allocator,event,requested,allocated,reserved\n";
  for (const TimelineRow& r : rows) {
    out << args.allocators[r.allocator] << ',' << r.event << ',' << r.requested << ','
        << r.allocated << ',' << r.reserved << '\n';
  }
  const std::string text = out.str();
  const std::string inputs[] = {args.trace};
  write_output_file(  // Note [safe outputs]
      args.timeline, "alloc-replay --timeline",
      [&](int fd) { return write_all(fd, text.data(), text.size()); }, inputs);
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
  Progress progress("alloc-replay", !args.json && isatty(STDERR_FILENO) == 1);
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
          ->check(integer_in(1, 8));
  CLI::Option* ops = app.add_option("--ops", args.ops, "stress: operations (default 1000000)")
                         ->check(integer_in(1, std::uint64_t{1} << 40));
  CLI::Option* seed = app.add_option("--seed", args.seed, "stress: random seed (default 1)")
                          ->check(integer_in(0, UINT64_MAX));
  CLI::Option* check_every =
      app.add_option("--check-every", args.check_every,
                     "stress: check invariants every N operations (default 100000)")
          ->check(integer_in(1, UINT64_MAX));
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
    return args.stress ? run_alloc_stress(args) : run_replay(args);
  } catch (const Error& e) {
    std::fprintf(stderr, "mpsim alloc-replay: error: %s\n", e.what());
    return kExitBadInput;
  }
}

}  // namespace mpsim::tools
