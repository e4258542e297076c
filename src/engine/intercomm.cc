// Intercommunicators: creation from two disjoint intracommunicators, dup,
// and merge. Point-to-point on them needs nothing here (Communicator maps a
// peer to the remote group); what needs care is agreeing on a context id
// that is free at every member of both groups, which is the same
// max-of-next-free agreement as dup, run over both groups at once.
#include <algorithm>

#include "engine/engine.h"

namespace tagwire::engine {

namespace {

// The order both sides compute alike: the group holding the lower world
// rank first.
std::vector<int> union_of(const std::vector<int>& a, const std::vector<int>& b) {
  const bool a_first =
      *std::min_element(a.begin(), a.end()) < *std::min_element(b.begin(), b.end());
  std::vector<int> all = a_first ? a : b;
  const std::vector<int>& rest = a_first ? b : a;
  all.insert(all.end(), rest.begin(), rest.end());
  return all;
}

int index_of(const std::vector<int>& members, int world_rank) {
  return static_cast<int>(std::find(members.begin(), members.end(), world_rank) - members.begin());
}

}  // namespace

std::vector<int> Engine::both_groups(const Communicator& inter) {
  return union_of(inter.world_ranks(), inter.remote_world_ranks());
}

Communicator* Engine::adopt(std::unique_ptr<Communicator> comm, bool agreed) {
  // The ids after an agreed one are its communicator's idup ids
  // (agree_context_id reserved them). An idup's own id lies in its
  // parent's block, and its own block, if any, was set from there.
  if (agreed) comm->set_idup_block(comm->id() + 1, true);
  EngineGuard lock(mutex_);
  comms_.push_back(std::move(comm));
  return comms_.back().get();
}

Result<Communicator*> Engine::intercomm_create(Communicator* local, const std::vector<int>& remote,
                                               int tag) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(local));
  TAGWIRE_RETURN_IF_ERROR(check_tag(tag, false));
  if (local->inter()) return not_on_intercomm("MPI_Intercomm_create's local communicator");
  if (remote.empty()) return Status(ErrorCode::kInvalidArgument, "an empty remote group");
  for (int w : remote) {
    if (w < 0 || w >= world_->size()) {
      return Status(ErrorCode::kInvalidRank,
                    "remote group member " + std::to_string(w) + " is not a rank of this job");
    }
    if (std::find(local->world_ranks().begin(), local->world_ranks().end(), w) !=
        local->world_ranks().end()) {
      return Status(ErrorCode::kInvalidArgument,
                    "world rank " + std::to_string(w) +
                        " is in both groups (an intercommunicator's groups are disjoint)");
    }
  }
  // The members of both groups agree, on a scratch communicator of their
  // own (as comm_create_group does): world's collective context, a tag of
  // the user's.
  const std::vector<int> all = union_of(local->world_ranks(), remote);
  Communicator scratch(world_->id(), all, index_of(all, world_->rank()));
  auto id = agree_context_id(&scratch, kCollectiveTag + 1 + tag);
  if (!id) return id.status();
  return adopt(std::make_unique<Communicator>(*id, local->world_ranks(), local->rank(), remote));
}

Result<Communicator*> Engine::intercomm_dup(Communicator* inter) {
  const std::vector<int> all = both_groups(*inter);
  Communicator scratch(inter->id(), all, index_of(all, world_->rank()));
  auto id = agree_context_id(&scratch, kCollectiveTag);
  if (!id) return id.status();
  return adopt(std::make_unique<Communicator>(*id, inter->world_ranks(), inter->rank(),
                                              inter->remote_world_ranks()));
}

Result<Communicator*> Engine::intercomm_split(Communicator* inter, int color, int key) {
  const std::vector<int> all = both_groups(*inter);
  Communicator scratch(inter->id(), all, index_of(all, world_->rank()));
  const std::int32_t mine[2] = {color, key};
  auto every = allgather(&scratch, {reinterpret_cast<const std::uint8_t*>(mine), sizeof(mine)},
                         kCollectiveTag);
  if (!every) return every.status();
  // One id for every color's communicator: they are disjoint, and each
  // member belongs to one of them.
  auto id = agree_context_id(&scratch, kCollectiveTag);
  if (!id) return id.status();
  if (color == kUndefinedColor) return static_cast<Communicator*>(nullptr);
  // Each member's (color, key), by its rank in `group`.
  const auto of_my_color = [&](const std::vector<int>& group) {
    return members_of_color(group, color, [&](int r) {
      const int world = group[static_cast<std::size_t>(r)];
      return (*every)[static_cast<std::size_t>(index_of(all, world))].data();
    });
  };
  std::vector<int> local = of_my_color(inter->world_ranks());
  std::vector<int> remote = of_my_color(inter->remote_world_ranks());
  if (remote.empty()) return static_cast<Communicator*>(nullptr);
  const int my_rank = index_of(local, world_->rank());
  return adopt(std::make_unique<Communicator>(*id, std::move(local), my_rank, std::move(remote)));
}

Result<Communicator*> Engine::intercomm_merge(Communicator* inter, bool high) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(inter));
  if (!inter->inter()) {
    return Status(ErrorCode::kInvalidComm, "MPI_Intercomm_merge of an intracommunicator");
  }
  const std::vector<int> all = both_groups(*inter);
  Communicator scratch(inter->id(), all, index_of(all, world_->rank()));
  const std::uint8_t mine = high ? 1 : 0;
  auto highs = allgather(&scratch, {&mine, 1}, kCollectiveTag);
  if (!highs) return highs.status();
  // Each group's choice, as its first member made it (MPI: the same
  // throughout a group).
  auto high_of = [&](const std::vector<int>& group) {
    return (*highs)[static_cast<std::size_t>(index_of(all, group.front()))][0] != 0;
  };
  const bool local_high = high_of(inter->world_ranks());
  const bool remote_high = high_of(inter->remote_world_ranks());
  std::vector<int> merged;
  if (local_high == remote_high) {
    merged = all;
  } else {
    merged = local_high ? inter->remote_world_ranks() : inter->world_ranks();
    const auto& second = local_high ? inter->world_ranks() : inter->remote_world_ranks();
    merged.insert(merged.end(), second.begin(), second.end());
  }
  const int my_rank = index_of(merged, world_->rank());
  // Ranks are numbered differently here than in the exchange above, on the
  // same context: another tag, so that a fast member's agreement message
  // cannot be taken by a slow member still exchanging.
  Communicator ordered(inter->id(), merged, my_rank);
  auto id = agree_context_id(&ordered, kCollectiveTag + 1);
  if (!id) return id.status();
  return adopt(std::make_unique<Communicator>(*id, std::move(merged), my_rank));
}

}  // namespace tagwire::engine
