// The device's op profiler: records kept by the queue and the fallback path. Internal; the
// public API is mps::profiler in mps.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/backend.h"
#include "device_sim/mps.h"

namespace mpsim::mps::detail {

// Thread-safe.
class Profiler {
 public:
  // Clears the records and opens a new session.
  void start();
  void stop() { enabled_.store(false); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  // The current session; a record made in one session is dropped if it completes in another.
  std::uint64_t session() const { return session_.load(); }
  // Nanoseconds since start().
  std::int64_t now_ns() const;
  void add(std::uint64_t session, OpRecord record);
  std::vector<OpRecord> records() const;

 private:
  std::atomic<bool> enabled_{false};
  std::atomic<std::int64_t> origin_ns_{0};
  std::atomic<std::uint64_t> session_{0};
  mutable std::mutex mu_;
  std::vector<OpRecord> records_;
};

Profiler& profiler();

// A record of `call` with everything but its times: shapes, bytes touched by its tensors,
// modelled flops (one per output element for arithmetic families, none for copy/fill/arange)
// and the roofline time on `props`: max(bytes / bandwidth, flops / rate) + launch overhead,
// with the f16 rate for f16/bf16 and the f32 rate otherwise.
OpRecord make_record(const OpCall& call, bool fallback, const DeviceProperties& props);

}  // namespace mpsim::mps::detail
