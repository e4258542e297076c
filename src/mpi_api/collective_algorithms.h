// The collectives' algorithms as schedule builders (engine/schedule.h):
// the intracommunicator ones (collectives.cc) that the intercommunicator
// ones (intercomm_collectives.cc) run within each group, and those.
//
// On an intercommunicator (MPI-3.1 §5.2.2) every rank's buffers hold one
// block per member of the remote group; a rooted operation's root passes
// MPI_ROOT, the rest of its group MPI_PROC_NULL, and the other group the
// root's rank there. The algorithms go through each group's rank 0 (its
// leader) where data must be combined or spread within a group, and
// straight to the remote ranks where every pair exchanges anyway.
#pragma once

#include <cstddef>

#include "common/status.h"
#include "engine/schedule.h"
#include "mpi.h"
#include "mpi_api/collective_blocks.h"
#include "mpi_api/reduction.h"

namespace tagwire::mpi {

// ----- within one group (the caller's own; collectives.cc)

// `t` at `buffer` from `root` to every member.
Status bcast(engine::Schedule& s, int tag, void* buffer, const Typed& t, int root);
// Every member's `mine` reduced at `root`, in rank order: the root gets
// the packed result in scratch (ready once the steps so far have run),
// the others null.
Result<unsigned char*> reduce_to_root(engine::Schedule& s, int tag, const void* mine,
                                      const Reduction& r, int root);
// The packed `result` into `buffer` laid out as `r` says, when its turn
// comes.
Status unpack_step(engine::Schedule& s, const Reduction& r, const unsigned char* result,
                   void* buffer);
// A reduction's operands as the typed steps move them.
Typed typed_of(const Reduction& r);
// `root`'s blocks (read at the root only) to every member, the member's
// own as `mine` at recvbuf.
Status scatter(engine::Schedule& s, int tag, const void* sendbuf, const Blocks& blocks,
               void* recvbuf, const Typed& mine, int root);

// ----- intercommunicators (intercomm_collectives.cc)

// A rooted operation's root argument: kInvalidRank for a value that is
// none of MPI_ROOT, MPI_PROC_NULL or a rank of the remote group.
Status check_inter_root(const engine::Schedule& s, int root);
// MPI_IN_PLACE, which no intercommunicator collective takes: kInvalidArgument.
Status not_in_place(const void* buffer);
Status inter_barrier(engine::Schedule& s, int tag);
Status inter_bcast(engine::Schedule& s, int tag, void* buffer, const Typed& t, int root);
// The root gets the reduction of the other group's contributions.
Status inter_reduce(engine::Schedule& s, int tag, const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype type, MPI_Op op, int root);
// Each group gets the reduction of the other group's contributions.
Status inter_allreduce(engine::Schedule& s, int tag, const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype type, MPI_Op op);
// The leaders (rank 0 of each group) swap `bytes` bytes: a leader sends
// `ours` and gets scratch that holds the other leader's once this round
// has run; every other rank gets null.
unsigned char* leaders_swap(engine::Schedule& s, int tag, const unsigned char* ours,
                            std::size_t bytes);
// The root receives remote rank i's `mine` as block i.
Status inter_gatherv(engine::Schedule& s, int tag, const void* sendbuf, const Typed& mine,
                     void* recvbuf, const Blocks& blocks, int root);
// The root sends block i to remote rank i.
Status inter_scatter(engine::Schedule& s, int tag, const void* sendbuf, const Blocks& blocks,
                     void* recvbuf, const Typed& mine, int root);
// Block i of `send` to remote rank i, block i of `recv` from it (the
// allgathers and all-to-alls).
Status inter_exchange(engine::Schedule& s, int tag, const void* out, const Blocks& send, void* in,
                      const Blocks& recv);

}  // namespace tagwire::mpi
