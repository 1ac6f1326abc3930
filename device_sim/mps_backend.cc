// The simulated mps backend: the kernels_simd kernels run on an in-order command queue over
// unified memory. It registers itself once, here, and lists its kernel families explicitly.
// Also the mps:: device API of mps.h that is not the profiler's.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "core/backend.h"
#include "core/error.h"
#include "device_sim/command_queue.h"
#include "device_sim/config.h"
#include "device_sim/device_allocator.h"
#include "device_sim/mps.h"
#include "device_sim/profiler.h"
#include "device_sim/strict.h"
#include "kernels_simd/kernels.h"

namespace mpsim::mps {
namespace detail {
namespace {

class MpsBackend final : public Backend {
 public:
  MpsBackend()
      : config_(startup_config()),
        max_ndarray_bytes_(Limits{}.max_ndarray_bytes),
        max_buffer_length_(config_.properties.max_buffer_length),
        allocator_(
            WatermarkOptions{config_.properties.recommended_max_memory,
                             config_.high_watermark_ratio, config_.low_watermark_ratio},
            config_.alloc_trace_path, [this] { queue_.wait_idle(); }, strict_) {
    strict_.set_enabled(config_.strict);
    simd::register_all_kernels(table_);  // the cpu kernels, run on the device's queue
    for (auto& e : enabled_) e.store(true);
    for (OpId op : config_.disabled_ops) enabled_[op.index()].store(false);
  }

  DeviceType type() const override { return DeviceType::MPS; }
  std::string_view name() const override { return "mps"; }
  alloc::Allocator& allocator(int) override { return allocator_; }

  bool supports(OpId op, DType dtype) const override {
    return dtype != DType::Float64 && dtype != DType::Complex128 && enabled_[op.index()].load(std::memory_order_relaxed) &&
           table_.supports(op, dtype);
  }

  void execute(OpCall call) override {
    check_ndarray_limit(call);
    std::optional<OpRecord> record;
    const std::uint64_t session = profiler().session();
    if (profiler().enabled()) {
      record = make_record(call, false, config_.properties);
      record->queued_ns = profiler().now_ns();
    }
    const bool inject = fail_command_countdown_.load(std::memory_order_relaxed) > 0 &&
                        fail_command_countdown_.fetch_sub(1) == 1;
    std::optional<StrictTracker::Token> tracked;
    if (strict_.enabled()) tracked = strict_.begin(call);
    queue_.submit([this, call = std::move(call), record = std::move(record), session, inject,
                   tracked]() mutable {
      if (record) record->start_ns = profiler().now_ns();
      std::exception_ptr error;
      try {
        if (inject) {
          throw DeviceError("[" + std::string(call.op.name()) +
                            "] injected command failure (mps::fail_command)");
        }
        run_kernel(table_, call);
      } catch (const Error&) {
        error = std::current_exception();
      } catch (const std::exception& e) {
        error = std::make_exception_ptr(DeviceError("[" + std::string(call.op.name()) +
                                                    "] the command failed on mps:0: " + e.what()));
      }
      if (tracked) strict_.end(*tracked);
      if (record) {
        record->end_ns = profiler().now_ns();
        profiler().add(session, std::move(*record));
      }
      if (error) std::rethrow_exception(error);
    });
  }

  void synchronize() override {
    queue_.wait_idle();
    rethrow_queued_error();
  }

  void execute_fallback(OpCall call, Backend& cpu) override {
    synchronize();
    if (!profiler().enabled()) {
      cpu.execute(std::move(call));
      return;
    }
    const std::uint64_t session = profiler().session();
    OpRecord record = make_record(call, true, config_.properties);
    record.queued_ns = record.start_ns = profiler().now_ns();
    cpu.execute(std::move(call));
    record.end_ns = profiler().now_ns();
    profiler().add(session, std::move(record));
  }

  void check_allocation(const Shape&, DType dtype, std::size_t nbytes) const override {
    if (dtype == DType::Float64) {
      throw DTypeError(
          "[mps] Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't "
          "support float64. Please use float32 instead.");
    }
    if (dtype == DType::Complex128) {
      throw DTypeError(
          "[mps] Cannot convert a MPS Tensor to complex128 dtype as the MPS framework doesn't "
          "support complex128. Please use complex64 instead.");
    }
    const std::size_t max = max_buffer_length_.load(std::memory_order_relaxed);
    if (nbytes > max) {
      throw DeviceError("[mps] Invalid buffer size: a buffer of " + std::to_string(nbytes) +
                        " bytes exceeds the device's max buffer length of " + std::to_string(max) +
                        " bytes");
    }
  }

  // Strict mode's checks (Note [strict mode] in device_sim/strict.h). The worker's own kernels
  // ask for the pointers of their (shadow) storages too, and are exempt.
  void check_host_access(const Storage& storage) const override {
    if (!strict_.watching() || queue_.on_worker_thread()) return;
    strict_.check_host_access(storage);
  }

  void check_host_read(const void* data, std::size_t nbytes) const override {
    if (strict_.watching()) strict_.check_host_read(data, nbytes);
  }

  void rethrow_queued_error() {
    if (std::exception_ptr e = queue_.take_error()) std::rethrow_exception(e);
  }

  CommandQueue& queue() { return queue_; }
  DeviceAllocator& device_allocator() { return allocator_; }
  const StartupConfig& config() const { return config_; }
  void set_op_enabled(OpId op, bool on) { enabled_[op.index()].store(on); }
  bool op_enabled(OpId op) const { return enabled_[op.index()].load(); }
  void set_strict(bool on) { strict_.set_enabled(on); }
  bool strict() const { return strict_.enabled(); }
  void fail_command(std::int64_t n) { fail_command_countdown_.store(n); }
  Limits limits() const { return Limits{max_ndarray_bytes_.load(), max_buffer_length_.load()}; }
  void set_limits(const Limits& l) {
    max_ndarray_bytes_.store(l.max_ndarray_bytes);
    max_buffer_length_.store(l.max_buffer_length);
  }

 private:
  void check_ndarray_limit(const OpCall& call) const {
    const std::size_t max = max_ndarray_bytes_.load(std::memory_order_relaxed);
    auto check = [&](const std::vector<Tensor>& list, const char* role) {
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i].nbytes() <= max) continue;
        throw DeviceError("[" + std::string(call.op.name()) + "] MPS: total bytes of NDArray > " +
                          std::to_string(max) + ": " + role + " " + std::to_string(i) +
                          " of shape " + list[i].sizes().to_string() + " and dtype " +
                          std::string(dtype_name(list[i].dtype())) + " holds " +
                          std::to_string(list[i].nbytes()) + " bytes");
      }
    };
    check(call.inputs, "input");
    check(call.outputs, "output");
  }

  const StartupConfig& config_;
  KernelTable table_;
  std::array<std::atomic<bool>, kNumOps> enabled_;
  std::atomic<std::size_t> max_ndarray_bytes_;
  std::atomic<std::size_t> max_buffer_length_;
  std::atomic<std::int64_t> fail_command_countdown_{0};
  StrictTracker strict_;
  DeviceAllocator allocator_;  // reports to strict_
  // Last: its worker runs commands that use every member above.
  CommandQueue queue_;
};

MpsBackend& device() {
  static MpsBackend* backend = new MpsBackend();  // lives for the whole process
  return *backend;
}

[[maybe_unused]] const bool kRegistered = [] {
  register_backend(DeviceType::MPS, &device());
  return true;
}();

}  // namespace
}  // namespace detail

using detail::device;

const DeviceProperties& properties() { return detail::startup_config().properties; }
bool is_available() { return true; }
int device_count() { return 1; }
void synchronize() { device().synchronize(); }

namespace {
// The allocator's figures once completed commands have released their buffers
// (Note [completed commands]).
alloc::AllocatorStats settled_stats() {
  device().queue().drain_completed();
  return device().device_allocator().stats();
}
}  // namespace

std::size_t current_allocated_memory() { return settled_stats().allocated_bytes; }
std::size_t driver_allocated_memory() { return settled_stats().reserved_bytes; }
std::size_t recommended_max_memory() { return properties().recommended_max_memory; }
std::size_t memory_allocated() { return current_allocated_memory(); }
std::size_t memory_reserved() { return driver_allocated_memory(); }
std::size_t max_memory_allocated() { return settled_stats().peak_allocated_bytes; }
std::size_t max_memory_reserved() { return settled_stats().peak_reserved_bytes; }
void reset_peak_memory_stats() { device().device_allocator().reset_peak_stats(); }

std::map<std::string, double> memory_stats() {
  const detail::DeviceAllocator& a = device().device_allocator();
  const alloc::AllocatorStats s = settled_stats();
  auto d = [](auto v) { return static_cast<double>(v); };
  return {
      {"requested_bytes", d(s.requested_bytes)},
      {"allocated_bytes", d(s.allocated_bytes)},
      {"reserved_bytes", d(s.reserved_bytes)},
      {"peak_requested_bytes", d(s.peak_requested_bytes)},
      {"peak_allocated_bytes", d(s.peak_allocated_bytes)},
      {"peak_reserved_bytes", d(s.peak_reserved_bytes)},
      {"active_blocks", d(s.active_blocks)},
      {"peak_active_blocks", d(s.peak_active_blocks)},
      {"num_allocs", d(s.num_allocs)},
      {"num_frees", d(s.num_frees)},
      {"num_ooms", d(s.num_ooms)},
      {"num_splits", d(s.num_splits)},
      {"num_merges", d(s.num_merges)},
      {"num_alloc_retries", d(s.num_alloc_retries)},
      {"num_arenas", d(s.num_arenas)},
      {"arena_free_bytes", d(s.arena_free_bytes)},
      {"largest_free_block", d(s.largest_free_block)},
      {"cached_bytes", d(s.cached_bytes)},
      {"cached_blocks", d(s.cached_blocks)},
      {"num_cache_hits", d(s.num_cache_hits)},
      {"num_cache_evictions", d(s.num_cache_evictions)},
      {"internal_fragmentation_bytes", d(s.internal_fragmentation_bytes())},
      {"external_fragmentation", s.external_fragmentation()},
      {"num_low_watermark_collections", d(a.low_watermark_collections())},
      {"recommended_max_memory", d(recommended_max_memory())},
      {"high_watermark_ratio", a.high_ratio()},
      {"low_watermark_ratio", a.low_ratio()},
  };
}

void empty_cache() {
  device().queue().wait_idle();
  device().device_allocator().empty_cache();
}

// As torch.mps: the fraction becomes the high watermark ratio; the low one follows it down.
void set_per_process_memory_fraction(double fraction) {
  if (!(fraction >= 0 && fraction <= 2)) {
    throw InvalidArgument("[set_per_process_memory_fraction] Invalid fraction value: " +
                          std::to_string(fraction) + ". Allowed range: 0~2");
  }
  detail::DeviceAllocator& a = device().device_allocator();
  a.set_watermark_ratios(fraction,
                         fraction == 0 ? a.low_ratio() : std::min(a.low_ratio(), fraction));
}

void set_watermark_ratios(double high, double low) {
  device().device_allocator().set_watermark_ratios(high, low);
}
double high_watermark_ratio() { return device().device_allocator().high_ratio(); }
double low_watermark_ratio() { return device().device_allocator().low_ratio(); }

Limits limits() { return device().limits(); }
void set_limits(const Limits& l) { device().set_limits(l); }

bool supports(OpId op, DType dtype) { return device().supports(op, dtype); }
void set_op_enabled(OpId op, bool enabled) { device().set_op_enabled(op, enabled); }
bool op_enabled(OpId op) { return device().op_enabled(op); }

void set_strict(bool enabled) { device().set_strict(enabled); }
bool strict() { return device().strict(); }

void fail_allocation(std::int64_t n) { device().device_allocator().fail_allocation(n); }
void fail_command(std::int64_t n) { device().fail_command(n); }

QueueHold::QueueHold() { device().queue().hold(); }
QueueHold::~QueueHold() { device().queue().release(); }

// ---- events ----

struct Event::State {
  mutable std::mutex mu;
  std::uint64_t seq = 0;  // 0: not recorded
  // Written by the marker on the worker, read once `seq` has completed.
  std::shared_ptr<std::atomic<std::int64_t>> time_ns;
};

Event::Event() : state_(std::make_shared<State>()) {}

void Event::record() {
  auto time = std::make_shared<std::atomic<std::int64_t>>(0);
  std::lock_guard lock(state_->mu);
  state_->time_ns = time;
  state_->seq = device().queue().submit([time] {
    time->store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count());
  });
}

// With one in-order queue every command submitted after this call already runs after the
// recorded marker: there is nothing further to order (torch.mps.Event.wait parity).
void Event::wait() {}

bool Event::query() const {
  std::lock_guard lock(state_->mu);
  return device().queue().completed(state_->seq);
}

void Event::synchronize() const {
  std::uint64_t seq;
  {
    std::lock_guard lock(state_->mu);
    seq = state_->seq;
  }
  device().queue().wait_for(seq);
  device().rethrow_queued_error();
}

double Event::elapsed_time(const Event& end) const {
  auto completed_time = [](const State& s, const char* which) {
    std::lock_guard lock(s.mu);
    if (s.seq == 0 || !device().queue().completed(s.seq)) {
      throw InvalidArgument(std::string("[elapsed_time] the ") + which +
                            " event has not been recorded or has not completed; synchronize it "
                            "first");
    }
    return s.time_ns->load();
  };
  const std::int64_t t0 = completed_time(*state_, "start");
  const std::int64_t t1 = completed_time(*end.state_, "end");
  return static_cast<double>(t1 - t0) * 1e-6;
}

}  // namespace mpsim::mps
