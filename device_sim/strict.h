// Strict mode's hazard tracker (MPSIM_MPS_STRICT=1, mps::set_strict): what the command queue
// and the device allocator report to it, and the host calls it checks. Internal to device_sim;
// docs/device.md, "Strict mode", states what is and is not detected.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "allocator/allocator.h"
#include "core/backend.h"

namespace mpsim::mps::detail {

// Note [strict mode]
// Outside strict mode a queued command owns the tensors of its call, so a buffer the user drops
// returns to the allocator only when the last command using it completes: a freed block is
// never reused under a queued command, and no tensor outlives its storage.
//
// Strict mode models the device without that safety net, as raw Metal with unretained
// references (or a caching allocator without pending frees) behaves, and reports where the
// net was needed:
// - A command holds its buffers through "shadow" storages that alias the user's blocks, so the
//   user's storage dies when the user drops it and its block goes back to the allocator at once
//   (eager reuse). The memory itself stays mapped: the cache only returns arenas to the system
//   once the queue is idle (empty_cache, the out-of-memory retry), and the low-watermark
//   collection is skipped while such a block exists.
// - Each in-flight command registers the byte ranges it reads and writes. A host pointer
//   (Tensor::data_ptr) into a range a queued command writes is a race; into a range the host
//   freed while a queued command still uses it is reuse of freed memory: the host would
//   overwrite bytes that command has yet to read (or read bytes it has yet to write).
// - Freed blocks are poisoned (0xFF: NaN for floats, -1 for integers) and remembered until
//   they are served again, so a stale host pointer handed back to mpsim (from_blob_copy's
//   source) is reported as use after free.
// Every check runs on a host thread before the memory is touched, so a reported hazard never
// becomes an actual race.
class StrictTracker {
 public:
  // One command's registration; end() unregisters it.
  using Token = std::uint64_t;

  void set_enabled(bool on);
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  // Whether the allocator must report allocations and frees: strict mode is on or a command
  // submitted in strict mode is still in flight.
  bool watching() const { return watching_.load(std::memory_order_relaxed); }

  // Registers the storages `call` reads and writes, and replaces the call's tensors with views
  // of shadow storages (Note [strict mode]). Called before the command is submitted.
  Token begin(OpCall& call);
  // The command finished running: its ranges are no longer in use.
  void end(Token token);

  // From the device allocator, on a host thread, for every block in watching mode.
  void on_allocate(const alloc::Block& block);
  void on_free(const alloc::Block& block);
  // True while a block freed under a queued command may still be read by it.
  bool has_freed_in_flight() const;

  // Throw DeviceError naming the ops: `storage` (data_ptr) or [data, data + nbytes)
  // (from_blob_copy's source) is written by a queued command, was freed under one, or is freed.
  void check_host_access(const Storage& storage) const;
  void check_host_read(const void* data, std::size_t nbytes) const;

 private:
  struct Use {
    const std::byte* begin;
    const std::byte* end;
    OpId op;
    bool writes;
    bool host_freed = false;  // the user released the storage while the command was queued
    Token token;
  };
  struct Freed {
    const std::byte* end;
    OpId last_op;  // the last strict-mode command that used the block
    bool used = false;
  };

  void check_range(const char* call, const std::byte* begin, const std::byte* end) const;
  void update_watching();

  std::atomic<bool> enabled_{false};
  std::atomic<bool> watching_{false};
  mutable std::mutex mu_;
  Token next_token_ = 0;
  std::vector<Use> uses_;                     // of the commands in flight
  std::map<const std::byte*, OpId> last_op_;  // block start -> last op using it (live blocks)
  std::map<const std::byte*, Freed> freed_;   // block start -> freed, not yet served again
};

}  // namespace mpsim::mps::detail
