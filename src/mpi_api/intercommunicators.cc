// MPI intercommunicators: Intercomm_create, Intercomm_merge, and the
// queries (test_inter, remote_size, remote_group). Point-to-point on them
// is the ordinary calls: the engine maps a peer rank to the remote group;
// collectives on them are intercomm_collectives.cc's.
#include <string>
#include <vector>

#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

Status not_inter(MPI_Comm comm) {
  return {ErrorCode::kInvalidComm,
          "communicator " + std::to_string(comm) + " is an intracommunicator"};
}

// The leaders swap their groups' world ranks over the peer communicator;
// returns the remote group's.
Result<std::vector<int>> swap_groups(const std::vector<int>& mine, MPI_Comm peer_comm,
                                     int remote_leader, int tag) {
  int my_size = static_cast<int>(mine.size()), their_size = 0;
  int rc = MPI_Sendrecv(&my_size, 1, MPI_INT, remote_leader, tag, &their_size, 1, MPI_INT,
                        remote_leader, tag, peer_comm, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return Status(ErrorCode::kTransport, "leaders' size exchange failed");
  if (their_size <= 0) return Status(ErrorCode::kInvalidArgument, "the remote group is empty");
  std::vector<int> theirs(static_cast<std::size_t>(their_size));
  rc = MPI_Sendrecv(mine.data(), my_size, MPI_INT, remote_leader, tag, theirs.data(), their_size,
                    MPI_INT, remote_leader, tag, peer_comm, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return Status(ErrorCode::kTransport, "leaders' group exchange failed");
  return theirs;
}

// The local leader's `count` ints to its whole group.
Status broadcast_ints(int* data, int count, int leader, MPI_Comm comm) {
  if (MPI_Bcast(data, count, MPI_INT, leader, comm) == MPI_SUCCESS) return Status::ok();
  return Status(ErrorCode::kTransport, "broadcast of the remote group");
}

}  // namespace

extern "C" {

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm* newintercomm) {
  auto local = comm_of(local_comm);
  TW_MPI_TRY(local_comm, local.status());
  if ((*local)->inter()) {
    return report(local_comm, __func__,
                  {ErrorCode::kInvalidComm, "the local communicator is an intercommunicator"});
  }
  if (local_leader < 0 || local_leader >= (*local)->size()) {
    return report(local_comm, __func__,
                  {ErrorCode::kInvalidRank, "local leader " + std::to_string(local_leader) +
                                                " is outside the local communicator"});
  }
  if (tag < 0) {
    return report(local_comm, __func__,
                  {ErrorCode::kInvalidTag, "tag " + std::to_string(tag) + " is negative"});
  }
  // The leaders learn each other's group; each leader tells its own group.
  // Failures are carried to the whole group in the size (0: failed), so no
  // member is left waiting in the broadcast.
  std::vector<int> remote;
  int remote_size = 0;
  Status leader_status;
  if ((*local)->rank() == local_leader) {
    auto peer = comm_of(peer_comm);
    if (!peer) {
      leader_status = peer.status();
    } else {
      auto theirs = swap_groups((*local)->world_ranks(), peer_comm, remote_leader, tag);
      if (theirs) {
        remote = std::move(theirs).value();
        remote_size = static_cast<int>(remote.size());
      } else {
        leader_status = theirs.status();
      }
    }
  }
  TW_MPI_TRY(local_comm, broadcast_ints(&remote_size, 1, local_leader, local_comm));
  if (remote_size == 0) {
    return report(local_comm, __func__,
                  leader_status.is_ok()
                      ? Status(ErrorCode::kInvalidArgument, "the leaders could not exchange groups")
                      : leader_status);
  }
  remote.resize(static_cast<std::size_t>(remote_size));
  TW_MPI_TRY(local_comm, broadcast_ints(remote.data(), remote_size, local_leader, local_comm));
  auto inter = state().engine->intercomm_create(*local, remote, tag);
  TW_MPI_TRY(local_comm, inter.status());
  *newintercomm = add_comm(*inter, local_comm);
  return MPI_SUCCESS;
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  auto c = comm_of(intercomm);
  TW_MPI_TRY(intercomm, c.status());
  if (!(*c)->inter()) return report(intercomm, __func__, not_inter(intercomm));
  auto merged = state().engine->intercomm_merge(*c, high != 0);
  TW_MPI_TRY(intercomm, merged.status());
  *newintracomm = add_comm(*merged, intercomm);
  return MPI_SUCCESS;
}

int MPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  *flag = (*c)->inter() ? 1 : 0;
  return MPI_SUCCESS;
}

int MPI_Comm_remote_size(MPI_Comm comm, int* size) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  if (!(*c)->inter()) return report(comm, __func__, not_inter(comm));
  *size = static_cast<int>((*c)->remote_world_ranks().size());
  return MPI_SUCCESS;
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  if (!(*c)->inter()) return report(comm, __func__, not_inter(comm));
  *group = state().groups.add((*c)->remote_world_ranks());
  return MPI_SUCCESS;
}

}  // extern "C"
