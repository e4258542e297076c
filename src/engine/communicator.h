// Communicator: a group of world ranks and the contexts that keep its
// traffic apart. Each communicator has two contexts: one for user
// point-to-point, one for the engine's own collectives (barrier, the
// agreement behind dup and split), so neither can match the other.
#pragma once

#include <cstdint>
#include <vector>

#include "matching/envelope.h"

namespace tagwire::engine {

class Communicator {
 public:
  Communicator(std::uint32_t id, std::vector<int> world_ranks, int rank)
      : id_(id), world_ranks_(std::move(world_ranks)), rank_(rank) {}

  std::uint32_t id() const { return id_; }
  matching::ContextId p2p_context() const { return id_ * 2; }
  matching::ContextId collective_context() const { return id_ * 2 + 1; }
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(world_ranks_.size()); }
  int world_rank(int rank) const { return world_ranks_[static_cast<std::size_t>(rank)]; }
  const std::vector<int>& world_ranks() const { return world_ranks_; }

 private:
  std::uint32_t id_;
  std::vector<int> world_ranks_;
  int rank_;
};

}  // namespace tagwire::engine
