// Collectives on an intercommunicator (MPI-3.1 §5.2.2), as schedules:
// within each group they reuse the intracommunicator algorithms through
// the group's leader (its rank 0); between the groups they move data with
// the schedule's remote steps, whose tags cannot meet a step within the
// group on the shared collective context (Schedule::kRemoteTagBit).
#include <string>

#include "engine/communicator.h"
#include "mpi_api/collective_algorithms.h"

namespace tagwire::mpi {

namespace {

// A rooted operation's roles: the root (MPI_ROOT), the rest of its group
// (MPI_PROC_NULL: nothing to do), and the other group (the root's rank).
enum class Role { kRoot, kIdle, kOther };

Role role_of(int root) {
  if (root == MPI_ROOT) return Role::kRoot;
  if (root == MPI_PROC_NULL) return Role::kIdle;
  return Role::kOther;
}

int remote_size(const engine::Schedule& s) {
  return static_cast<int>(s.comm()->remote_world_ranks().size());
}

bool leader(const engine::Schedule& s) {
  return s.comm()->rank() == 0;
}

}  // namespace

Status not_in_place(const void* buffer) {
  if (buffer != MPI_IN_PLACE) return Status::ok();
  return {ErrorCode::kInvalidArgument,
          "MPI_IN_PLACE on an intercommunicator (MPI-3.1 §5.2.2: intracommunicators only)"};
}

Status check_inter_root(const engine::Schedule& s, int root) {
  if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < remote_size(s))) {
    return Status::ok();
  }
  return {ErrorCode::kInvalidRank,
          "root " + std::to_string(root) +
              " on an intercommunicator is none of MPI_ROOT, MPI_PROC_NULL or a rank of the "
              "remote group of size " +
              std::to_string(remote_size(s))};
}

unsigned char* leaders_swap(engine::Schedule& s, int tag, const unsigned char* ours,
                            std::size_t bytes) {
  if (!leader(s)) return nullptr;
  unsigned char* theirs = s.scratch(bytes);
  s.send_remote(ours, bytes, 0, tag);
  s.receive_remote(theirs, bytes, 0, tag);
  return theirs;
}

// Every member has entered once its leader has heard from its own group
// and from the other leader, who has heard from the other group; the
// leader's word then releases its group.
Status inter_barrier(engine::Schedule& s, int tag) {
  const int n = s.comm()->size();
  if (leader(s)) {
    for (int peer = 1; peer < n; ++peer) s.receive(nullptr, 0, peer, tag);
  } else {
    s.send(nullptr, 0, 0, tag);
  }
  s.next_round();
  leaders_swap(s, tag, nullptr, 0);
  s.next_round();
  return bcast(s, tag, nullptr, raw_bytes(0), 0);
}

// The root to the other group's leader, which broadcasts in its group.
Status inter_bcast(engine::Schedule& s, int tag, void* buffer, const Typed& t, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_inter_root(s, root));
  switch (role_of(root)) {
    case Role::kRoot:
      send_typed(s, buffer, t, 0, tag, Group::kRemote);
      return Status::ok();
    case Role::kIdle:
      return Status::ok();
    case Role::kOther:
      break;
  }
  if (leader(s)) receive_typed(s, buffer, t, root, tag, Group::kRemote);
  s.next_round();
  return bcast(s, tag, buffer, t, 0);
}

// The other group reduces at its leader, which sends the result to the
// root. Only the root's receive arguments and the other group's send
// arguments count.
Status inter_reduce(engine::Schedule& s, int tag, const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype type, MPI_Op op, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_inter_root(s, root));
  const Role role = role_of(root);
  if (role == Role::kIdle) return Status::ok();
  if (role == Role::kOther) TAGWIRE_RETURN_IF_ERROR(not_in_place(sendbuf));
  auto r = reduction_of(op, count, type);
  if (!r) return r.status();
  if (role == Role::kRoot) {
    unsigned char* result = s.scratch(r->bytes);
    s.receive_remote(result, r->bytes, 0, tag);
    s.next_round();
    return unpack_step(s, *r, result, recvbuf);
  }
  auto result = reduce_to_root(s, tag, sendbuf, *r, 0);
  if (!result) return result.status();
  if (*result != nullptr) {
    s.next_round();
    s.send_remote(*result, r->bytes, root, tag);
  }
  return Status::ok();
}

// Each group reduces at its leader; the leaders swap their results and
// broadcast the other group's in their own.
Status inter_allreduce(engine::Schedule& s, int tag, const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype type, MPI_Op op) {
  TAGWIRE_RETURN_IF_ERROR(not_in_place(sendbuf));
  auto r = reduction_of(op, count, type);
  if (!r) return r.status();
  auto ours = reduce_to_root(s, tag, sendbuf, *r, 0);
  if (!ours) return ours.status();
  s.next_round();
  unsigned char* theirs = leaders_swap(s, tag, *ours, r->bytes);
  if (theirs == nullptr) theirs = s.scratch(r->bytes);
  s.next_round();
  TAGWIRE_RETURN_IF_ERROR(bcast(s, tag, theirs, raw_bytes(r->bytes), 0));
  s.next_round();  // what the leader sent has arrived
  return unpack_step(s, *r, theirs, recvbuf);
}

Status inter_gatherv(engine::Schedule& s, int tag, const void* sendbuf, const Typed& mine,
                     void* recvbuf, const Blocks& blocks, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_inter_root(s, root));
  switch (role_of(root)) {
    case Role::kRoot:
      for (int peer = 0; peer < remote_size(s); ++peer) {
        const auto i = static_cast<std::size_t>(peer);
        receive_typed(s, static_cast<unsigned char*>(recvbuf) + blocks.offset[i], blocks.type[i],
                      peer, tag, Group::kRemote);
      }
      break;
    case Role::kIdle:
      break;
    case Role::kOther:
      TAGWIRE_RETURN_IF_ERROR(not_in_place(sendbuf));
      send_typed(s, sendbuf, mine, root, tag, Group::kRemote);
      break;
  }
  return Status::ok();
}

Status inter_scatter(engine::Schedule& s, int tag, const void* sendbuf, const Blocks& blocks,
                     void* recvbuf, const Typed& mine, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_inter_root(s, root));
  switch (role_of(root)) {
    case Role::kRoot:
      for (int peer = 0; peer < remote_size(s); ++peer) {
        const auto i = static_cast<std::size_t>(peer);
        send_typed(s, static_cast<const unsigned char*>(sendbuf) + blocks.offset[i], blocks.type[i],
                   peer, tag, Group::kRemote);
      }
      break;
    case Role::kIdle:
      break;
    case Role::kOther:
      TAGWIRE_RETURN_IF_ERROR(not_in_place(recvbuf));
      receive_typed(s, recvbuf, mine, root, tag, Group::kRemote);
      break;
  }
  return Status::ok();
}

Status inter_exchange(engine::Schedule& s, int tag, const void* out, const Blocks& send, void* in,
                      const Blocks& recv) {
  const auto* from = static_cast<const unsigned char*>(out);
  auto* to = static_cast<unsigned char*>(in);
  for (int peer = 0; peer < remote_size(s); ++peer) {
    const auto i = static_cast<std::size_t>(peer);
    receive_typed(s, to + recv.offset[i], recv.type[i], peer, tag, Group::kRemote);
    send_typed(s, from + send.offset[i], send.type[i], peer, tag, Group::kRemote);
  }
  return Status::ok();
}

}  // namespace tagwire::mpi
