// MPI communicators: size, rank, dup, split, create from a group, free,
// compare, names, idup. Intercommunicators: intercommunicators.cc.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/host_identity.h"
#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

MPI_Comm tagwire::mpi::add_comm(engine::Communicator* comm, MPI_Comm parent) {
  CommEntry entry;
  entry.comm = comm;
  entry.errhandler = find_comm(parent)->errhandler;
  return state().comms.add(std::move(entry));
}

namespace {

// A duplicate's handle, with the attributes the parent's copy callbacks
// give it; if one fails, the duplicate is freed again and the error returned.
Result<MPI_Comm> add_duplicate(MPI_Comm parent, engine::Communicator* dup) {
  const MPI_Comm made = add_comm(dup, parent);
  if (const CommEntry* from = find_comm(parent); from != nullptr) {
    find_comm(made)->cart = from->cart;  // a duplicate keeps the topology
    find_comm(made)->dist_graph = from->dist_graph;
    find_comm(made)->graph = from->graph;
    find_comm(made)->hints = from->hints;  // MPI-3.1 §6.4.2: the hints too
  }
  Status copied = copy_attributes(parent, *find_comm(made));
  if (!copied.is_ok()) {
    MPI_Comm undo = made;
    (void)MPI_Comm_free(&undo);
    return copied;
  }
  return made;
}

}  // namespace

extern "C" {

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  *rank = (*c)->rank();
  return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  *size = (*c)->size();
  return MPI_SUCCESS;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  auto dup = state().engine->comm_dup(*c);
  TW_MPI_TRY(comm, dup.status());
  auto made = add_duplicate(comm, *dup);
  if (!made) return report(comm, __func__, made.status());
  *newcomm = *made;
  return MPI_SUCCESS;
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  // The engine hands out an id from the communicator's idup block with no
  // communication, so the duplicate exists at once and the request is
  // complete when returned: nothing can deadlock on it, whatever the other
  // members do before they call MPI_Comm_idup. (Past the block, or on a
  // communicator that was itself made by MPI_Comm_idup, the engine agrees
  // an id as MPI_Comm_dup does, and this call waits for the other members.)
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  if (request == nullptr || newcomm == nullptr) {
    return report(comm, __func__, {ErrorCode::kInvalidArgument, "a null output argument"});
  }
  auto dup = state().engine->comm_idup(*c);
  TW_MPI_TRY(comm, dup.status());
  auto made = add_duplicate(comm, *dup);
  if (!made) return report(comm, __func__, made.status());
  // A request that is already complete (an operation with MPI_PROC_NULL).
  auto done =
      state().engine->isend(nullptr, 0, engine::kProcNull, 0, *dup, engine::SendMode::kStandard);
  TW_MPI_TRY(comm, done.status());
  *request = state().engine->hand_out(*done);
  *newcomm = *made;
  return MPI_SUCCESS;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  auto split = state().engine->comm_split(*c, color, key);
  TW_MPI_TRY(comm, split.status());
  *newcomm = *split == nullptr ? MPI_COMM_NULL : add_comm(*split, comm);
  return MPI_SUCCESS;
}

// MPI_COMM_TYPE_SHARED: the ranks that can share memory with this one
// (the same host identity, the test the shared-memory transport uses),
// ordered by key then rank; MPI_UNDEFINED: MPI_COMM_NULL. The color is the
// lowest rank of comm on this host, agreed through an allgather of a hash
// of the host identity.
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  (void)info;  // no hints are read
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED) {
    return report(
        comm, __func__,
        {ErrorCode::kInvalidArgument, "split_type " + std::to_string(split_type) +
                                          " is neither MPI_COMM_TYPE_SHARED nor MPI_UNDEFINED"});
  }
  const std::uint64_t mine = std::hash<std::string>{}(host_identity());
  std::vector<std::uint64_t> hosts(static_cast<std::size_t>((*c)->size()));
  const int rc = MPI_Allgather(&mine, 1, MPI_UINT64_T, hosts.data(), 1, MPI_UINT64_T, comm);
  if (rc != MPI_SUCCESS) return rc;
  const int color =
      split_type == MPI_UNDEFINED
          ? MPI_UNDEFINED
          : static_cast<int>(std::find(hosts.begin(), hosts.end(), mine) - hosts.begin());
  return MPI_Comm_split(comm, color, key, newcomm);
}

// Collective over comm: the members of `group` (a subset of comm) get a
// communicator ordered as the group; the others get MPI_COMM_NULL.
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  auto members = group_members(group);
  TW_MPI_TRY(comm, members.status());
  const auto& parent = (*c)->world_ranks();
  int key = -1;
  for (std::size_t i = 0; i < members->size(); ++i) {
    const int w = (*members)[i];
    if (std::find(parent.begin(), parent.end(), w) == parent.end()) {
      return report(comm, __func__,
                    {ErrorCode::kInvalidGroup, "the group has world rank " + std::to_string(w) +
                                                   ", which is not in the communicator"});
    }
    if (w == state().engine->world_rank()) key = static_cast<int>(i);
  }
  // On an intracommunicator each rank may pass its own group, as long as
  // the groups are disjoint (MPI-2.2): one communicator per group, told
  // apart by its smallest world rank. (On an intercommunicator, one color:
  // the split pairs each side's group with the other's.)
  const int color =
      (*c)->inter() || members->empty() ? 0 : *std::min_element(members->begin(), members->end());
  auto split = state().engine->comm_split(*c, key < 0 ? MPI_UNDEFINED : color, key);
  TW_MPI_TRY(comm, split.status());
  *newcomm = *split == nullptr ? MPI_COMM_NULL : add_comm(*split, comm);
  return MPI_SUCCESS;
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  auto members = group_members(group);
  TW_MPI_TRY(comm, members.status());
  const auto& parent = (*c)->world_ranks();
  for (int w : *members) {
    if (std::find(parent.begin(), parent.end(), w) == parent.end()) {
      return report(comm, __func__,
                    {ErrorCode::kInvalidGroup, "the group has world rank " + std::to_string(w) +
                                                   ", which is not in the communicator"});
    }
  }
  // Collective over the group's members only; MPI_COMM_NULL elsewhere.
  auto made = state().engine->comm_create_group(*c, *members, tag);
  TW_MPI_TRY(comm, made.status());
  *newcomm = *made == nullptr ? MPI_COMM_NULL : add_comm(*made, comm);
  return MPI_SUCCESS;
}

int MPI_Comm_free(MPI_Comm* comm) {
  auto c = comm_of(*comm);
  TW_MPI_TRY(*comm, c.status());
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
    return report(*comm, __func__,
                  {ErrorCode::kInvalidComm, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed"});
  }
  TW_MPI_TRY(*comm, delete_attributes(*comm));
  TW_MPI_TRY(*comm, state().engine->comm_free(*c));
  state().comms.remove(*comm);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

// MPI-3.1 §10.5.4, on any communicator but the two predefined ones: the
// program has completed and matched its communication on `comm` (as
// before MPI_Finalize), the barrier sees that every member got there, and
// the communicator goes as MPI_Comm_free lets it go. Through PMPI, so a
// profiler sees the one call it was given.
int MPI_Comm_disconnect(MPI_Comm* comm) {
  if (comm == nullptr) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "a null communicator pointer"});
  }
  TW_MPI_TRY(*comm, comm_of(*comm).status());
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
    return report(
        *comm, __func__,
        {ErrorCode::kInvalidComm, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be disconnected"});
  }
  if (const int rc = PMPI_Barrier(*comm); rc != MPI_SUCCESS) return rc;
  return PMPI_Comm_free(comm);
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  auto a = comm_of(comm1);
  TW_MPI_TRY(comm1, a.status());
  auto b = comm_of(comm2);
  TW_MPI_TRY(comm2, b.status());
  const int members = compare_members((*a)->world_ranks(), (*b)->world_ranks());
  *result = comm1 == comm2 ? MPI_IDENT : members == MPI_IDENT ? MPI_CONGRUENT : members;
  return MPI_SUCCESS;
}

int MPI_Comm_set_name(MPI_Comm comm, const char* name) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  if (name == nullptr) {
    return report(comm, __func__, {ErrorCode::kInvalidArgument, "a null name"});
  }
  find_comm(comm)->name = object_name(name);
  return MPI_SUCCESS;
}

int MPI_Comm_get_name(MPI_Comm comm, char* name, int* resultlen) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  const CommEntry* entry = find_comm(comm);
  std::string text = entry->name;
  if (text.empty() && comm == MPI_COMM_WORLD) text = "MPI_COMM_WORLD";
  if (text.empty() && comm == MPI_COMM_SELF) text = "MPI_COMM_SELF";
  return copy_string(text, name, MPI_MAX_OBJECT_NAME, resultlen);
}

}  // extern "C"
