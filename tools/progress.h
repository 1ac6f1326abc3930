// The progress line of the CLI's long commands (alloc-replay, its stress mode, the demo).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace mpsim::tools {

// A progress line on stderr for long work, shown only when stderr is a terminal and the output
// is text (--json output stays machine-readable, a log file stays clean). Redrawn at most every
// 100 ms (at once when `what` changes); cleared by done() or at destruction.
class Progress {
 public:
  // `command` prefixes the line ("alloc-replay", "demo").
  Progress(const char* command, bool enabled) : command_(command), enabled_(enabled) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { done(); }

  // `what` names the work ("buddy: timed pass"); `done_count` of `total` `unit` are through.
  void update(const std::string& what, std::uint64_t done_count, std::uint64_t total,
              const char* unit = "events") {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && what == what_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    what_ = what;
    shown_ = true;
    const double percent =
        total == 0 ? 100.0 : 100.0 * static_cast<double>(done_count) / static_cast<double>(total);
    std::fprintf(stderr, "\r\033[K%s: %s: %llu / %llu %s (%.0f%%)", command_, what.c_str(),
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
  const char* command_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_;
  std::string what_;
};

}  // namespace mpsim::tools
