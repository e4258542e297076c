// DeadPeers: the ranks this rank knows to be gone (the launcher's report,
// or the transport's word that a peer is unreachable), and the error every
// operation that needs one of them completes with (peer_failure.cc).
#pragma once

#include <map>
#include <set>
#include <string>

#include "common/status.h"

namespace tagwire::engine {

class DeadPeers {
 public:
  // Inline, and an empty set first: every send and control message asks.
  bool any() const { return !dead_.empty(); }
  bool contains(int world_rank) const { return any() && dead_.count(world_rank) != 0; }
  // True if the rank was not known dead yet. `why`: the transport's reason
  // (ok: the launcher reported it dead).
  bool add(int world_rank, const Status& why = Status::ok()) {
    if (!dead_.insert(world_rank).second) return false;
    if (!why.is_ok()) unreachable_.emplace(world_rank, why);
    return true;
  }
  // The error an operation that needs the rank completes with.
  Status status_for(int world_rank) const {
    if (auto it = unreachable_.find(world_rank); it != unreachable_.end()) {
      return {ErrorCode::kPeerFailed,
              "rank " + std::to_string(world_rank) + " is unreachable: " + it->second.message()};
    }
    return {ErrorCode::kPeerFailed, "rank " + std::to_string(world_rank) + " died"};
  }

 private:
  std::set<int> dead_;
  std::map<int, Status> unreachable_;  // dead by the transport's word: why
};

}  // namespace tagwire::engine
