// The simulated "mps" device: its properties, memory API (torch.mps names), events, support
// table, strict mode, profiler and fault injection. See docs/device.md.
//
// Every function here acts on the one simulated device, mps:0, and is thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/op_list.h"

namespace mpsim::mps {

// ---- Properties and chip profiles ----

// Published figures of one Apple chip (its base memory configuration). Apple GPUs run f16 at
// the f32 rate, so both throughputs are equal.
struct ChipProfile {
  std::string_view name;     // "M2 Max", as MPSIM_MPS_PROFILE spells it
  std::size_t memory_bytes;  // unified memory
  double bandwidth_gb_s;     // memory bandwidth, 1e9 bytes/s
  double fp32_tflops;        // 1e12 flop/s
  double fp16_tflops;
};
std::span<const ChipProfile> chip_profiles();

// What the simulated device reports; fixed at start-up from MPSIM_MPS_PROFILE (default
// "M2 Max") and MPSIM_MPS_MEMORY ("8G", "512M", "64K" or bytes).
struct DeviceProperties {
  std::string name;                        // "Apple M2 Max (simulated)"
  std::string profile;                     // "M2 Max"
  std::size_t memory_bytes = 0;            // unified memory size
  std::size_t recommended_max_memory = 0;  // Metal's recommendedMaxWorkingSetSize: 75%
  std::size_t max_buffer_length = 0;       // modelled as half the unified memory
  double bandwidth_bytes_per_s = 0;
  double fp32_flops_per_s = 0;
  double fp16_flops_per_s = 0;
  double launch_overhead_s = 0;  // fixed cost per command in the roofline model
};
const DeviceProperties& properties();

// ---- Device and memory API (torch.mps) ----

bool is_available();
int device_count();
// Waits for every queued command; rethrows the first failure raised inside one since the last
// synchronization (its message names the op).
void synchronize();

std::size_t current_allocated_memory();  // bytes held by tensors (allocator-rounded)
std::size_t driver_allocated_memory();   // bytes the device holds from the system (reserved)
std::size_t recommended_max_memory();
std::size_t memory_allocated();  // as current_allocated_memory
std::size_t memory_reserved();   // as driver_allocated_memory
std::size_t max_memory_allocated();
std::size_t max_memory_reserved();
void reset_peak_memory_stats();
// Every allocator counter by name ("allocated_bytes", "reserved_bytes", "num_allocs", ...).
std::map<std::string, double> memory_stats();
// Returns cached blocks and free arena memory to the system (after the queue drains).
void empty_cache();
// Caps memory at `fraction` x recommended_max_memory (this is the high watermark ratio);
// 0 lifts the cap. Throws InvalidArgument outside [0, 2], as PyTorch.
void set_per_process_memory_fraction(double fraction);
// The watermark ratios in force (x recommended_max_memory). Start-up values:
// MPSIM_MPS_HIGH_WATERMARK_RATIO (1.7) and MPSIM_MPS_LOW_WATERMARK_RATIO (1.4). Above the low
// one an allocation first frees cached memory; above the high one it fails with
// OutOfMemoryError. Throws InvalidArgument unless 0 <= low <= high <= 2 (0 = no limit).
void set_watermark_ratios(double high, double low);
double high_watermark_ratio();
double low_watermark_ratio();

// ---- Restrictions ----

// Limits the real device enforces, lowerable for tests: one op's tensor may hold at most
// max_ndarray_bytes (MPS's NDArray limit, 2^32 bytes); one buffer at most max_buffer_length.
struct Limits {
  std::size_t max_ndarray_bytes = std::size_t{1} << 32;
  std::size_t max_buffer_length = 0;  // properties().max_buffer_length at start-up
};
Limits limits();
void set_limits(const Limits& limits);

// ---- Support table ----

// Whether the device runs (op, dtype) itself; false sends the call to the cpu fallback (or
// NotImplementedError). By default everything the cpu kernels implement except float64, minus
// the ops named in MPSIM_MPS_DISABLE_OPS (comma-separated op names).
bool supports(OpId op, DType dtype);
void set_op_enabled(OpId op, bool enabled);
bool op_enabled(OpId op);

// ---- Strict mode ----

// MPSIM_MPS_STRICT=1 or set_strict(true). Models a device whose allocator reuses freed blocks
// at once and reports (throws DeviceError naming the ops) host access to a buffer a queued
// command has yet to write, host access to freed memory a queued command still uses, and a
// stale data_ptr() handed back to from_blob_copy. See docs/device.md, "Strict mode", for what is
// detected and what is not.
void set_strict(bool enabled);
bool strict();

// ---- Events ----

// A marker in the device queue (torch.mps.Event). Copies share one event.
class Event {
 public:
  Event();
  // Enqueues the marker; it completes when every command submitted before it has.
  void record();
  // Makes later commands wait for this event (a no-op when it has not been recorded).
  void wait();
  // True when the recorded marker has completed (or the event was never recorded).
  bool query() const;
  // Blocks until the recorded marker has completed; rethrows a queued failure, as
  // synchronize().
  void synchronize() const;
  // Milliseconds from this event to `end`, both recorded and completed; InvalidArgument
  // otherwise.
  double elapsed_time(const Event& end) const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// ---- Profiler ----

struct OpRecord {
  std::string op;
  std::vector<std::string> shapes;  // inputs then outputs, "[2, 3]"
  DType dtype = DType::Float32;     // the compute dtype
  Device device;
  bool fallback = false;       // ran on the cpu fallback path
  std::int64_t queued_ns = 0;  // since the profiler started
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::size_t bytes = 0;          // bytes read and written
  double flops = 0;               // modelled floating-point operations
  double simulated_device_s = 0;  // roofline time on the chosen profile
};

struct OpSummary {
  std::string op;
  std::int64_t calls = 0;
  std::int64_t fallbacks = 0;
  double wall_s = 0;  // sum of end - start
  double simulated_device_s = 0;
  std::size_t bytes = 0;
  double flops = 0;
};

namespace profiler {
// Clears the records and starts recording every mps op (queued and fallback).
void start();
void stop();
bool enabled();
std::vector<OpRecord> records();
// One row per op, in order of first appearance.
std::vector<OpSummary> summary();
// A fixed-width text table of summary().
std::string summary_table();
// The records as Chrome trace JSON (chrome://tracing, Perfetto): one complete event ("X") per
// op on the queue's track, fallbacks on the cpu track.
std::string chrome_trace_json();
// Writes chrome_trace_json() to `path`; InvalidArgument when it cannot be written.
void export_chrome_trace(const std::string& path);
}  // namespace profiler

// ---- Fault injection (tests) ----

// The `n`-th device allocation from now (1 = the next) fails with OutOfMemoryError; 0 cancels.
void fail_allocation(std::int64_t n);
// The `n`-th command submitted from now fails when it runs, with an Error that names its op
// and surfaces at the next synchronization; 0 cancels.
void fail_command(std::int64_t n);

// While a QueueHold lives the queue starts no new command (commands are still accepted):
// tests use it to observe in-flight state deterministically. Synchronizing while holding
// blocks forever.
class QueueHold {
 public:
  QueueHold();
  ~QueueHold();
  QueueHold(const QueueHold&) = delete;
  QueueHold& operator=(const QueueHold&) = delete;
};

}  // namespace mpsim::mps
