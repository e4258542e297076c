// IdleBackoff: how a blocking call waits for the network. It polls, and
// gives its core away (sched_yield) only after it has gone kSpinBeforeYield
// without news.
//
// Why time and not a count of polls: the count (64 empty polls) was shorter
// than one shared-memory round trip for messages from 256 B up, so a
// blocking ping-pong yielded on nearly every message, and a yield is a
// system call, in a paravirtualized guest a slow one: 512 B latency was
// 2.1 us against 0.7 for UCX's own perftest, with sched_yield and the
// kernel's entry path the top of the profile. Oversubscribed jobs (more
// ranks than cores) still give way to the peer they wait for within
// kSpinBeforeYield, far inside a scheduler time slice.
#pragma once

#include <sched.h>

#include <chrono>

namespace tagwire::engine {

class IdleBackoff {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kSpinBeforeYield = std::chrono::microseconds(50);
  // The clock is read once per this many idle polls, not for each.
  static constexpr unsigned kPollsPerLook = 64;

  // After one poll; `progressed`: it did something, so waiting starts over.
  void turn(bool progressed) {
    if (progressed) {
      idle_polls_ = 0;
      return;
    }
    if (++idle_polls_ % kPollsPerLook == 0) pause();
  }

  // After a run of polls that brought nothing the caller waits for:
  // yields once the wait has lasted kSpinBeforeYield.
  void pause() {
    const Clock::time_point now = Clock::now();
    if (!waiting_) {
      waiting_ = true;
      since_ = now;
    } else if (now - since_ >= kSpinBeforeYield) {
      sched_yield();
    }
  }

 private:
  unsigned idle_polls_ = 0;
  bool waiting_ = false;
  Clock::time_point since_{};
};

}  // namespace tagwire::engine
