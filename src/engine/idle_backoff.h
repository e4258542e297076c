// IdleBackoff: how a blocking call waits for the network. It polls, and
// gives its core away (sched_yield) only after the wait has lasted the
// process's spin budget (set_waiting_policy), chosen from what is true at
// MPI_Init:
//  - a rank with a core of its own (no more ranks on this host than
//    cores, bound to one) spins as Open MPI does, and yields only after a
//    long wait (kSpinWithOwnCore): yielding on every idle poll handed its
//    core to other jobs and cost 0.72 us latency on a machine at load 10;
//  - a rank the launcher did not bind, with cores enough for every rank,
//    yields after each run of idle polls: two ranks may share a core, but
//    mostly they do not, and a yield after every empty poll (a system call
//    each) cost an unbound 8-byte ping-pong 1.29x its latency;
//  - a rank whose peers outnumber the cores yields after its first empty
//    poll: the peer it waits for may need this very core (8 ranks on 2
//    cores: a run of 64 empty polls before each yield made the all-to-all
//    1.2x slower).
//
// Why time and not a count of polls: the count (64 empty polls) was shorter
// than one shared-memory round trip for messages from 256 B up, so a
// blocking ping-pong yielded on nearly every message, and a yield is a
// system call.
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>

namespace tagwire::engine {

inline constexpr auto kSpinWithOwnCore = std::chrono::microseconds(1000);

enum class WaitingPolicy { kSpin, kShareCore, kYield };

// The process's spin budget, in microseconds, and whether an empty poll
// yields at once (one engine per process).
inline std::atomic<long> g_spin_before_yield_us{kSpinWithOwnCore.count()};
inline std::atomic<bool> g_yield_at_once{false};

inline void set_waiting_policy(WaitingPolicy policy) {
  g_spin_before_yield_us = policy == WaitingPolicy::kSpin ? kSpinWithOwnCore.count() : 0;
  g_yield_at_once = policy == WaitingPolicy::kYield;
}

class IdleBackoff {
 public:
  using Clock = std::chrono::steady_clock;
  // The clock is read once per this many idle polls, not for each.
  static constexpr unsigned kPollsPerLook = 64;
  // A spinning wait reads the clock once in this many pauses (pause()).
  static constexpr unsigned kPausesPerLook = 16;

  IdleBackoff()
      : spin_(std::chrono::microseconds(g_spin_before_yield_us.load(std::memory_order_relaxed))),
        at_once_(g_yield_at_once.load(std::memory_order_relaxed)) {}

  // Whether an empty poll gives the core away at once (more ranks than
  // cores: set_waiting_policy(kYield)).
  bool yields_at_once() const { return at_once_; }

  // After one poll; `progressed`: it did something, so waiting starts over.
  void turn(bool progressed) {
    if (progressed) {
      idle_polls_ = 0;
      return;
    }
    if (yields_at_once() || ++idle_polls_ % kPollsPerLook == 0) pause();
  }

  // After a run of polls that brought nothing the caller waits for:
  // yields once the wait has lasted the spin budget. The clock is read once
  // in kPausesPerLook pauses, the first time at the kPausesPerLook-th, so
  // the budget counts from there: where the clock is no vDSO read (a VM on
  // HPET, as ci/rxe-vm's guest is) each read is a system call. Reading it
  // every 64 polls put 9 % of a waiting verbs rank's time in read_hpet, and
  // reading it at the first pause still made one system call per message
  // of a verbs ping-pong, whose waits there last a few hundred polls
  // (docs/measurements.md). A wait shorter than kPausesPerLook pauses
  // reads no clock at all.
  void pause() {
    if (spin_.count() == 0 || spent_) {
      sched_yield();
      return;
    }
    if (++pauses_ % kPausesPerLook != 0) return;
    if (pauses_ == kPausesPerLook) {  // the first look: the budget starts
      since_ = Clock::now();
      return;
    }
    spent_ = Clock::now() - since_ >= spin_;
    if (spent_) sched_yield();
  }

 private:
  std::chrono::microseconds spin_;
  bool at_once_;
  unsigned idle_polls_ = 0;
  bool spent_ = false;  // the spin budget is used up: yield at every pause
  unsigned pauses_ = 0;
  Clock::time_point since_{};
};

}  // namespace tagwire::engine
