// Admits at most `slots` CPU-bound computations (planner searches) at once, in arrival order.
// Without it, 64 connections asking at once time-slice 64 searches over a few cores: every answer
// comes late and the unluckiest very late. With it, searches run one per core and the rest wait
// their turn, so the slowest answer is near the typical one. A finished search hands its slot to
// the longest-waiting request and wakes that one only (waking every waiter to let one through made
// 60 threads take turns at the lock for each search). The queue is bounded: a request arriving
// when `max_waiting` already wait is refused at once (GateFull, answered 503 with Retry-After), so
// a burst of heavy searches can neither build an unbounded queue nor take every worker thread
// (/healthz and catalog reads keep theirs).
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

namespace linkwise::server {

// Thrown by ComputeGate::Pass when the queue is full; answered 503 with Retry-After.
struct GateFull {
  unsigned waiting;
};

class ComputeGate {
 public:
  ComputeGate(unsigned slots, unsigned max_waiting) : slots_(slots == 0 ? 1 : slots), max_waiting_(max_waiting) {}

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
  struct Waiter {
    std::condition_variable turn;
    bool admitted = false;
  };

  void enter() {
    std::unique_lock lock(mutex_);
    if (running_ < slots_ && waiting_.empty()) {
      ++running_;
      return;
    }
    if (waiting_.size() >= max_waiting_) throw GateFull{static_cast<unsigned>(waiting_.size())};
    Waiter me;
    waiting_.push_back(&me);
    me.turn.wait(lock, [&] { return me.admitted; });
  }
  void leave() {
    std::lock_guard lock(mutex_);
    if (waiting_.empty()) {
      --running_;
      return;
    }
    Waiter* next = waiting_.front();  // the slot passes on: running_ stays
    waiting_.pop_front();
    next->admitted = true;
    next->turn.notify_one();  // under the lock: `next` lives on the waiter's stack until it wakes
  }

  const unsigned slots_;
  const unsigned max_waiting_;
  std::mutex mutex_;
  unsigned running_ = 0;
  std::deque<Waiter*> waiting_;  // arrival order
};

}  // namespace linkwise::server
