#include "device_sim/strict.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "core/error.h"

namespace mpsim::mps::detail {
namespace {

// Serves one existing block, once, so that a Storage can alias memory another Storage owns:
// the shadow a strict-mode command holds instead of the user's storage. Freeing is the real
// owner's business.
class AliasAllocator final : public alloc::Allocator {
 public:
  explicit AliasAllocator(const alloc::Block& block) : block_(block) {}
  alloc::Block allocate(std::size_t, std::size_t) override { return block_; }
  void free(const alloc::Block&) override {}
  alloc::AllocatorStats stats() const override { return {}; }
  void reset_peak_stats() override {}
  void set_limit(std::size_t) override {}
  const char* name() const override { return "mps-command-alias"; }

 private:
  alloc::Block block_;
};

struct Shadow {
  Shadow(const Storage& user)
      : alias(alloc::Block{user.data(), user.nbytes(), 0, user.nbytes()}),
        storage(user.device(), alias, user.nbytes()) {}
  AliasAllocator alias;  // outlives `storage`, which frees through it
  Storage storage;
};

std::string address(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

}  // namespace

void StrictTracker::set_enabled(bool on) {
  std::lock_guard lock(mu_);
  enabled_.store(on);
  if (!on) {
    last_op_.clear();
    freed_.clear();
  }
  update_watching();
}

void StrictTracker::update_watching() {
  watching_.store(enabled_.load() || !uses_.empty() || !freed_.empty());
}

StrictTracker::Token StrictTracker::begin(OpCall& call) {
  // One shadow per distinct storage: an in-place op reads and writes the same one.
  std::vector<std::pair<const Storage*, std::shared_ptr<Storage>>> shadows;
  auto shadow_of = [&](const Tensor& t) {
    for (const auto& [user, shadow] : shadows) {
      if (user == t.storage().get()) return shadow;
    }
    auto holder = std::make_shared<Shadow>(*t.storage());
    std::shared_ptr<Storage> shadow(holder, &holder->storage);
    shadows.emplace_back(t.storage().get(), shadow);
    return shadow;
  };
  // The user's tensors leave the call here and may be the last owners of their storages: they
  // die after the lock is released, since their storages' frees come back to on_free.
  std::vector<Tensor> originals;
  std::lock_guard lock(mu_);
  const Token token = ++next_token_;
  auto record = [&](std::vector<Tensor>& list, bool writes) {
    for (Tensor& t : list) {
      if (!t.defined()) continue;
      const Storage& s = *t.storage();
      const auto* begin = static_cast<const std::byte*>(s.data());
      if (begin != nullptr && s.nbytes() > 0) {
        uses_.push_back(Use{begin, begin + s.nbytes(), call.op, writes, false, token});
        last_op_[begin] = call.op;
      }
      Tensor shadow(shadow_of(t), t.sizes(), t.strides(), t.storage_offset(), t.dtype());
      originals.push_back(std::exchange(t, std::move(shadow)));
    }
  };
  record(call.inputs, false);
  record(call.outputs, true);
  update_watching();
  return token;
}

void StrictTracker::end(Token token) {
  std::lock_guard lock(mu_);
  std::erase_if(uses_, [&](const Use& u) { return u.token == token; });
  update_watching();
}

void StrictTracker::on_allocate(const alloc::Block& block) {
  const auto* begin = static_cast<const std::byte*>(block.ptr);
  const auto* end = begin + block.size;
  std::lock_guard lock(mu_);
  // The block is served again: a pointer into it is no longer a pointer into freed memory.
  auto it = freed_.lower_bound(begin);
  if (it != freed_.begin() && std::prev(it)->second.end > begin) --it;
  while (it != freed_.end() && it->first < end) it = freed_.erase(it);
  update_watching();
}

void StrictTracker::on_free(const alloc::Block& block) {
  auto* begin = static_cast<std::byte*>(block.ptr);
  const std::byte* end = begin + block.size;
  std::lock_guard lock(mu_);
  bool in_use = false;
  for (Use& u : uses_) {
    if (u.begin < end && begin < u.end) {
      u.host_freed = true;
      in_use = true;
    }
  }
  if (!enabled_.load()) return;
  Freed freed{end, OpId(), false};
  if (auto it = last_op_.find(begin); it != last_op_.end()) {
    freed = Freed{end, it->second, true};
    last_op_.erase(it);
  }
  freed_[begin] = freed;
  // Poison, unless a queued command still reads or writes the bytes (that would be the race).
  if (!in_use) std::memset(begin, 0xFF, block.size);
  update_watching();
}

bool StrictTracker::has_freed_in_flight() const {
  std::lock_guard lock(mu_);
  for (const Use& u : uses_) {
    if (u.host_freed) return true;
  }
  return false;
}

void StrictTracker::check_host_access(const Storage& storage) const {
  const auto* begin = static_cast<const std::byte*>(storage.data());
  if (begin == nullptr || storage.nbytes() == 0) return;
  check_range("data_ptr", begin, begin + storage.nbytes());
}

void StrictTracker::check_host_read(const void* data, std::size_t nbytes) const {
  const auto* begin = static_cast<const std::byte*>(data);
  if (begin == nullptr || nbytes == 0) return;
  check_range("from_blob_copy", begin, begin + nbytes);
  std::lock_guard lock(mu_);
  auto it = freed_.upper_bound(begin);
  if (it != freed_.begin() && std::prev(it)->second.end > begin) --it;
  if (it == freed_.end() || it->first >= begin + nbytes) return;
  const Freed& f = it->second;
  throw DeviceError("[from_blob_copy] strict mode: use after free: the host pointer " +
                    address(data) + " points into mps memory whose tensor's storage was freed" +
                    (f.used ? " (last used by '" + std::string(f.last_op.name()) + "')" : "") +
                    "; a pointer from data_ptr() is valid only while its tensor lives");
}

void StrictTracker::check_range(const char* call, const std::byte* begin,
                                const std::byte* end) const {
  std::lock_guard lock(mu_);
  const Use* write = nullptr;
  int writes = 0;
  for (const Use& u : uses_) {
    if (!(u.begin < end && begin < u.end)) continue;
    if (u.host_freed) {
      throw DeviceError(
          std::string("[") + call +
          "] strict mode: reuse of freed memory: this mps buffer lies in memory the host freed "
          "while queued command '" +
          std::string(u.op.name()) + "' still " + (u.writes ? "writes" : "reads") +
          " it; on a device without deferred frees the host would " +
          (u.writes ? "read bytes that command has yet to write"
                    : "overwrite bytes that command has yet to read") +
          ". Keep the tensor alive or call mpsim::mps::synchronize() before freeing it");
    }
    if (u.writes) {
      write = &u;
      ++writes;
    }
  }
  if (write == nullptr) return;
  throw DeviceError(std::string("[") + call + "] strict mode: host access to an mps buffer that " +
                    std::to_string(writes) + " queued command(s) (last: '" +
                    std::string(write->op.name()) +
                    "') have yet to write; call mpsim::mps::synchronize() first, or read it "
                    "through to(cpu)/to_vector, which synchronize");
}

}  // namespace mpsim::mps::detail
