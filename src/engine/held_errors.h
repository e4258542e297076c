// HeldErrors: transport errors on operations with one peer, held back
// until the launcher says whether that peer died (peer_failure.cc).
//
// A rank's death reaches its peers by two roads: the transport, when an
// operation with it fails (the kernel tears the dead process's queue pairs
// and memory down before its parent learns of the exit: a READ from its
// buffer then ends in a remote access error), and the launcher's notice.
// The first is often first, and says only what the wire saw. README
// promises MPI_ERR_PROC_FAILED for such an operation, so its error waits
// for the verdict, at most a deadline: a death ends it with the peer's
// failure, the deadline with the transport's own error.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "common/status.h"

namespace tagwire::engine {

struct Request;

class HeldErrors {
 public:
  using Clock = std::chrono::steady_clock;
  struct Held {
    Request* request;
    std::uint64_t request_id;  // the request may be recycled: resolve only this one
    int world_peer;
    Clock::time_point deadline;
    Status error;
  };

  bool empty() const { return held_.empty(); }
  void hold(Held h) { held_.push_back(std::move(h)); }
  // The errors held on `world_peer`, now resolved.
  std::vector<Held> take_peer(int world_peer) {
    return take_if([&](const Held& h) { return h.world_peer == world_peer; });
  }
  // The errors whose deadline has passed at `now`.
  std::vector<Held> take_expired(Clock::time_point now) {
    return take_if([&](const Held& h) { return h.deadline <= now; });
  }

 private:
  template <typename Pred>
  std::vector<Held> take_if(Pred pred) {
    std::vector<Held> taken;
    std::vector<Held> kept;
    for (Held& h : held_) (pred(h) ? taken : kept).push_back(std::move(h));
    held_ = std::move(kept);
    return taken;
  }

  std::vector<Held> held_;  // few: only operations a transport error ended
};

}  // namespace tagwire::engine
