#include "device_sim/command_queue.h"

#include <chrono>
#include <thread>
#include <utility>

namespace mpsim::mps::detail {
namespace {

// Note [spin then block]
// The host and the queue's worker hand each other work once per command, and commands come in
// bursts of small ops. Blocking at once is slow there: a condition variable wake-up costs a
// futex call on each side plus scheduler latency, and std::mutex sleeps on a futex as soon as
// it finds the lock held, which it often does since both threads take mu_ every command.
// So both waits spin briefly before they block:
// - waiting for a command or a completion (spin_until): poll an atomic counter for kSpin, then
//   sleep on the condition variable. The poll is bounded, so an idle device costs no CPU, and
//   it yields the core between rounds: on a busy machine a poller that keeps its core starves
//   the very thread it waits for.
// - taking mu_ (lock_briefly): try it for a few microseconds with a pause between tries, then
//   block. mu_ is held for a few deque operations only.
// Correctness does not depend on either spin: each ends in the blocking primitive, and every
// shared field is read under mu_ or through the atomics the spins poll. TSan runs the queue's
// suites (MpsQueue.*, among them ManyThreadsSubmitConcurrentlyWithoutLossOrLeak; scripts/test.sh
// --tsan). The figures (a bimodal per-op time without the lock's spin, the round trip without
// the yield) are in docs/device.md, "Launch overhead"; they are measured by
// `device_bench --benchmark_filter=MpsTinyOp --benchmark_repetitions=10`.
constexpr std::chrono::microseconds kSpin{50};

template <class Pred>
bool spin_until(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  do {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
    }
    std::this_thread::yield();
  } while (std::chrono::steady_clock::now() < deadline);
  return pred();
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void lock_briefly(std::unique_lock<std::mutex>& lock) {
  for (int i = 0; i < 256; ++i) {
    if (lock.try_lock()) return;
    cpu_relax();
  }
  lock.lock();
}

}  // namespace

CommandQueue::CommandQueue() = default;

CommandQueue::~CommandQueue() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    holds_ = 0;
  }
  work_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::uint64_t CommandQueue::submit(Command command) {
  std::uint64_t seq;
  bool wake;
  std::vector<Command> done;
  {
    std::unique_lock lock(mu_, std::defer_lock);
    lock_briefly(lock);  // Note [spin then block]
    pending_.push_back(std::move(command));
    if (!worker_.joinable()) {
      worker_ = std::thread([this] { run(); });
      worker_id_.store(worker_.get_id(), std::memory_order_release);
    }
    seq = ++submitted_;
    published_.store(seq, std::memory_order_release);
    wake = worker_sleeping_;
    done.swap(completed_commands_);
  }
  if (wake) work_cv_.notify_one();
  return seq;  // `done` is destroyed here, outside the lock
}

void CommandQueue::wait_for(std::uint64_t seq) {
  if (!spin_until([&] { return completed(seq); })) {
    std::unique_lock lock(mu_);
    ++waiters_;
    done_cv_.wait(lock, [&] { return completed(seq); });
    --waiters_;
  }
  drain_completed();
}

void CommandQueue::drain_completed() {
  std::vector<Command> done;
  {
    std::unique_lock lock(mu_, std::defer_lock);
    lock_briefly(lock);  // Note [spin then block]
    done.swap(completed_commands_);
  }
}

void CommandQueue::wait_idle() {
  std::uint64_t last;
  {
    std::lock_guard lock(mu_);
    last = submitted_;
  }
  wait_for(last);
}

std::exception_ptr CommandQueue::take_error() {
  std::lock_guard lock(mu_);
  return std::exchange(error_, nullptr);
}

void CommandQueue::hold() {
  std::lock_guard lock(mu_);
  ++holds_;
}

void CommandQueue::release() {
  {
    std::lock_guard lock(mu_);
    --holds_;
  }
  work_cv_.notify_all();
}

void CommandQueue::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (pending_.empty() && !stop_ && holds_ == 0) {
      const std::uint64_t seen = submitted_;
      lock.unlock();
      spin_until([&] { return published_.load(std::memory_order_acquire) != seen; });
      lock_briefly(lock);  // Note [spin then block]
    }
    worker_sleeping_ = true;
    work_cv_.wait(
        lock, [&] { return (!pending_.empty() && holds_ == 0) || (stop_ && pending_.empty()); });
    worker_sleeping_ = false;
    if (pending_.empty()) return;  // stopping
    Command command = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    std::exception_ptr error;
    try {
      command();
    } catch (...) {
      error = std::current_exception();
    }
    lock_briefly(lock);  // Note [spin then block]
    completed_commands_.push_back(std::move(command));
    if (error && !error_) error_ = error;
    completed_.fetch_add(1, std::memory_order_acq_rel);
    if (waiters_ > 0) done_cv_.notify_all();
  }
}

}  // namespace mpsim::mps::detail
