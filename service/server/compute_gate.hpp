// Admits at most `slots` CPU-bound computations (planner searches) at once, in arrival order.
// Without it, 64 connections asking at once time-slice 64 searches over a few cores: every answer
// comes late and the unluckiest very late. With it, searches run one per core and the rest wait
// their turn, so the slowest answer is near the typical one.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace linkwise::server {

class ComputeGate {
 public:
  explicit ComputeGate(unsigned slots) : slots_(slots == 0 ? 1 : slots) {}

  class Pass {
   public:
    explicit Pass(ComputeGate& gate) : gate_(gate) { gate_.enter(); }
    ~Pass() { gate_.leave(); }
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;

   private:
    ComputeGate& gate_;
  };

 private:
  void enter() {
    std::unique_lock lock(mutex_);
    const std::uint64_t ticket = next_ticket_++;
    turn_.wait(lock, [&] { return ticket < finished_ + slots_; });
  }
  void leave() {
    {
      std::lock_guard lock(mutex_);
      ++finished_;
    }
    turn_.notify_all();
  }

  const std::uint64_t slots_;
  std::mutex mutex_;
  std::condition_variable turn_;
  std::uint64_t next_ticket_ = 0;
  std::uint64_t finished_ = 0;
};

}  // namespace linkwise::server
