#include "device_sim/command_queue.h"

#include <chrono>
#include <thread>
#include <utility>

namespace mpsim::mps::detail {
namespace {

// Note [queue latency]
// A condition variable wake-up costs a futex call on each side and, when the other thread
// sleeps, a few microseconds of scheduler latency. Commands come in bursts (one per op), so
// the idle worker and a waiting host thread first poll an atomic counter for a short while and
// only then sleep. The poll is bounded so an idle device costs no CPU, and it yields the core
// between rounds: on a busy machine a poller that keeps its core starves the very thread it
// waits for (measured: a 108 us round trip without the yield on 2 loaded cores).
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

// Note [brief locks]
// The host (submit) and the worker (taking a command, recording its completion) hold mu_ for a
// few deque operations at a time, but they do so every command, so in a burst of small ops one
// often finds the other inside. std::mutex then sleeps on a futex at once, and the sleeper
// wakes microseconds later: in a burst of tiny ops that made the host sleep on every few
// commands and the per-op time bimodal (1.3 or 6-9 us from run to run). Taking mu_ first
// tries it for a few microseconds with a pause between tries, and only then blocks.
// `device_bench --benchmark_filter=MpsTinyOpSteadyState --benchmark_repetitions=10`.
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

CommandQueue::CommandQueue() : worker_([this] { run(); }) {}

CommandQueue::~CommandQueue() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    holds_ = 0;
  }
  work_cv_.notify_all();
  worker_.join();
}

std::uint64_t CommandQueue::submit(Command command) {
  std::uint64_t seq;
  bool wake;
  std::vector<Command> done;
  {
    std::unique_lock lock(mu_, std::defer_lock);
    lock_briefly(lock);  // Note [brief locks]
    pending_.push_back(std::move(command));
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
    lock_briefly(lock);  // Note [brief locks]
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
      lock_briefly(lock);  // Note [brief locks]
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
    lock_briefly(lock);  // Note [brief locks]
    completed_commands_.push_back(std::move(command));
    if (error && !error_) error_ = error;
    completed_.fetch_add(1, std::memory_order_acq_rel);
    if (waiters_ > 0) done_cv_.notify_all();
  }
}

}  // namespace mpsim::mps::detail
