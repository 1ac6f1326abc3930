// The device's in-order command queue: one worker thread, started by the first submit, runs
// commands in submission order.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mpsim::mps::detail {

// Thread-safe. A command runs on the worker thread; an exception it throws is captured (the
// first one since the last take_error) and the queue carries on with the next command.
//
// Note [completed commands]
// A completed command is not destroyed on the worker: it goes to a completed list that host
// threads drain (destroying the commands, so the buffers their captures keep alive go back to
// their allocator) in submit() and in every wait. So the memory a command allocated on a host
// thread is freed on a host thread (no cross-thread malloc/free, which contends on the C
// library's arena locks and doubled the launch overhead), and when a wait returns every
// buffer held only by completed commands is back in its allocator.
class CommandQueue {
 public:
  using Command = std::function<void()>;

  CommandQueue();
  // Runs what is queued, then stops the worker.
  ~CommandQueue();
  CommandQueue(const CommandQueue&) = delete;
  CommandQueue& operator=(const CommandQueue&) = delete;

  // Returns the command's sequence number: 1 for the first, then 2, 3, ...
  std::uint64_t submit(Command command);
  // Blocks until the command numbered `seq` (and so every earlier one) has completed, then
  // drains the completed list.
  void wait_for(std::uint64_t seq);
  // Blocks until every command submitted before the call has completed, then drains.
  void wait_idle();
  // Destroys the completed commands (Note [completed commands]).
  void drain_completed();
  bool completed(std::uint64_t seq) const {
    return completed_.load(std::memory_order_acquire) >= seq;
  }
  // The captured failure, cleared; null when there is none.
  std::exception_ptr take_error();
  bool on_worker_thread() const {
    return std::this_thread::get_id() == worker_id_.load(std::memory_order_acquire);
  }

  // While holds are taken the worker starts no new command.
  void hold();
  void release();

 private:
  void run();

  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<Command> pending_;
  std::vector<Command> completed_commands_;
  std::uint64_t submitted_ = 0;
  std::atomic<std::uint64_t> completed_{0};
  // Submissions spin-waited for by an idle worker before it sleeps (Note [spin then block]).
  std::atomic<std::uint64_t> published_{0};
  int holds_ = 0;
  int waiters_ = 0;
  bool worker_sleeping_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  // Started by the first submit (under mu_), not by the constructor: the mps device is built
  // while libmpsim loads, and a process that never uses it starts no thread.
  std::thread worker_;
  std::atomic<std::thread::id> worker_id_{};
};

}  // namespace mpsim::mps::detail
