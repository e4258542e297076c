// Communicator: a group of world ranks and the contexts that keep its
// traffic apart. Each communicator has two contexts: one for user
// point-to-point, one for the engine's own collectives (barrier, the
// agreement behind dup and split), so neither can match the other.
//
// An intercommunicator also has a remote group: its point-to-point ranks
// name the remote group's members, and a message's source is its sender's
// rank in the sender's own (local) group, which is exactly the remote rank
// the receiver names. The engine's own collectives on it stay within the
// local group or span both groups explicitly (merge, dup).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "matching/envelope.h"

namespace tagwire::engine {

// Context ids reserved after each agreed communicator's own: kIdupBlock for
// its nonblocking duplicates (MPI_Comm_idup), and kIdupBlock more for each
// of those duplicates' own, so that an idup of an idup needs no agreement
// either. (MPICH's idup_with_info idups two idup'd communicators in
// opposite orders on odd and even ranks: an agreement there deadlocks.)
// Deeper than that, an idup agrees as MPI_Comm_dup does.
inline constexpr std::uint32_t kIdupBlock = 7;
inline constexpr std::uint32_t kIdupReserve = kIdupBlock * (1 + kIdupBlock);

class Communicator {
 public:
  Communicator(std::uint32_t id, std::vector<int> world_ranks, int rank)
      : id_(id), world_ranks_(std::move(world_ranks)), rank_(rank) {}
  // An intercommunicator.
  Communicator(std::uint32_t id, std::vector<int> world_ranks, int rank,
               std::vector<int> remote_world_ranks)
      : id_(id),
        world_ranks_(std::move(world_ranks)),
        rank_(rank),
        remote_world_ranks_(std::move(remote_world_ranks)) {}

  std::uint32_t id() const { return id_; }
  matching::ContextId p2p_context() const { return id_ * 2; }
  matching::ContextId collective_context() const { return id_ * 2 + 1; }
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(world_ranks_.size()); }
  int world_rank(int rank) const { return world_ranks_[static_cast<std::size_t>(rank)]; }
  const std::vector<int>& world_ranks() const { return world_ranks_; }

  // MPI_Comm_idup without communication: a communicator made by an
  // agreement owns the kIdupReserve ids after its own (every member's
  // agreement reserved them): its duplicates' ids, handed out in order,
  // then a block for each duplicate's own (`nested`). MPI has all members
  // call collectives on a communicator in the same order, so each member
  // hands out the same id to the same idup. Nothing once the block is used
  // up.
  void set_idup_block(std::uint32_t first, bool nested) {
    idup_first_ = idup_next_ = first;
    idup_end_ = first + kIdupBlock;
    nested_first_ = nested ? idup_end_ : 0;
  }
  struct IdupIds {
    std::uint32_t id;
    std::optional<std::uint32_t> block;  // the duplicate's own idup block
  };
  std::optional<IdupIds> take_idup_id() {
    if (idup_next_ == idup_end_) return std::nullopt;
    const std::uint32_t id = idup_next_++;
    if (nested_first_ == 0) return IdupIds{id, std::nullopt};
    return IdupIds{id, nested_first_ + kIdupBlock * (id - idup_first_)};
  }

  bool inter() const { return !remote_world_ranks_.empty(); }
  const std::vector<int>& remote_world_ranks() const { return remote_world_ranks_; }
  // The world ranks a peer rank names: the remote group's for
  // point-to-point on an intercommunicator, the local group's otherwise
  // (and always for the engine's own collectives).
  const std::vector<int>& peer_group(bool collective) const {
    return inter() && !collective ? remote_world_ranks_ : world_ranks_;
  }
  int peer_world_rank(int peer, bool collective) const {
    return peer_group(collective)[static_cast<std::size_t>(peer)];
  }

 private:
  std::uint32_t id_;
  std::vector<int> world_ranks_;
  int rank_;
  std::vector<int> remote_world_ranks_;  // empty: an intracommunicator
  std::uint32_t idup_first_ = 0, idup_next_ = 0, idup_end_ = 0;
  std::uint32_t nested_first_ = 0;  // 0: the duplicates get no block
};

}  // namespace tagwire::engine
