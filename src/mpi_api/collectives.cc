// Collectives, groups and communicator attributes.
//
// The collectives are the simple, correct algorithms the issue asks for
// (speed is not the point yet): linear fan-out and fan-in through the
// root, all traffic on the communicator's collective context so that no
// user receive can take it. Every rank of a communicator calls collectives
// in the same order, and messages from one source are received in order,
// so one tag per kind of collective is enough.
#include <algorithm>
#include <cstring>
#include <vector>

#include "mpi_api/reduce_ops.h"
#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;
using engine::RequestKind;

namespace {

enum CollectiveTag : int { kBcastTag = 10, kReduceTag, kGatherTag, kAlltoallTag };

Status wait_all(const std::vector<engine::Request*>& requests) {
  std::vector<engine::MessageStatus> statuses(requests.size());
  return E().wait_all(requests, statuses);
}

Status post(std::vector<engine::Request*>& out, RequestKind kind, const void* buffer,
            std::size_t bytes, int peer, int tag, engine::Communicator* comm) {
  auto r = E().post_collective(kind, const_cast<void*>(buffer), bytes, peer, tag, comm);
  if (!r) return r.status();
  out.push_back(*r);
  return Status::ok();
}

Status check_root(engine::Communicator* comm, int root) {
  if (root < 0 || root >= comm->size()) {
    return {ErrorCode::kInvalidRank, "root " + std::to_string(root) +
                                         " is outside a communicator of size " +
                                         std::to_string(comm->size())};
  }
  return Status::ok();
}

Status bcast(void* buffer, std::size_t bytes, int root, engine::Communicator* comm) {
  TAGWIRE_RETURN_IF_ERROR(check_root(comm, root));
  std::vector<engine::Request*> requests;
  if (comm->rank() == root) {
    for (int peer = 0; peer < comm->size(); ++peer) {
      if (peer != root) {
        TAGWIRE_RETURN_IF_ERROR(
            post(requests, RequestKind::kSend, buffer, bytes, peer, kBcastTag, comm));
      }
    }
  } else {
    TAGWIRE_RETURN_IF_ERROR(
        post(requests, RequestKind::kReceive, buffer, bytes, root, kBcastTag, comm));
  }
  return wait_all(requests);
}

// Root: recvbuf = op over every rank's contribution, in rank order.
Status reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
              engine::Communicator* comm) {
  TAGWIRE_RETURN_IF_ERROR(check_root(comm, root));
  TAGWIRE_RETURN_IF_ERROR(check_op(op, type));
  auto bytes = contiguous_bytes_of(count, type);
  if (!bytes) return bytes.status();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (comm->rank() != root) {
    std::vector<engine::Request*> requests;
    TAGWIRE_RETURN_IF_ERROR(
        post(requests, RequestKind::kSend, sendbuf, *bytes, root, kReduceTag, comm));
    return wait_all(requests);
  }
  // Receive every contribution first, then combine in rank order so that
  // the result does not depend on arrival order.
  const std::size_t n = static_cast<std::size_t>(comm->size());
  std::vector<std::vector<unsigned char>> parts(n);
  std::vector<engine::Request*> requests;
  for (int peer = 0; peer < comm->size(); ++peer) {
    if (peer == root) continue;
    parts[static_cast<std::size_t>(peer)].resize(*bytes);
    TAGWIRE_RETURN_IF_ERROR(post(requests, RequestKind::kReceive,
                                 parts[static_cast<std::size_t>(peer)].data(), *bytes, peer,
                                 kReduceTag, comm));
  }
  TAGWIRE_RETURN_IF_ERROR(wait_all(requests));
  const auto* mine = static_cast<const unsigned char*>(in_place ? recvbuf : sendbuf);
  parts[static_cast<std::size_t>(root)].assign(mine, mine + *bytes);
  std::vector<unsigned char> acc = parts[0];
  for (std::size_t r = 1; r < n; ++r) {
    TAGWIRE_RETURN_IF_ERROR(
        apply_op(op, type, parts[r].data(), acc.data(), static_cast<std::size_t>(count)));
  }
  if (*bytes > 0) std::memcpy(recvbuf, acc.data(), *bytes);
  return Status::ok();
}

// Root: recvbuf[r] = rank r's block. In place: the root's block is there.
Status gather(const void* sendbuf, std::size_t block, void* recvbuf, int root,
              engine::Communicator* comm) {
  TAGWIRE_RETURN_IF_ERROR(check_root(comm, root));
  std::vector<engine::Request*> requests;
  if (comm->rank() != root) {
    TAGWIRE_RETURN_IF_ERROR(
        post(requests, RequestKind::kSend, sendbuf, block, root, kGatherTag, comm));
    return wait_all(requests);
  }
  auto* out = static_cast<unsigned char*>(recvbuf);
  for (int peer = 0; peer < comm->size(); ++peer) {
    if (peer == root) continue;
    TAGWIRE_RETURN_IF_ERROR(post(requests, RequestKind::kReceive,
                                 out + static_cast<std::size_t>(peer) * block, block, peer,
                                 kGatherTag, comm));
  }
  if (sendbuf != MPI_IN_PLACE && block > 0) {
    std::memcpy(out + static_cast<std::size_t>(root) * block, sendbuf, block);
  }
  return wait_all(requests);
}

}  // namespace

extern "C" {

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  auto bytes = contiguous_bytes_of(count, type);
  TW_MPI_TRY(comm, bytes.status());
  TW_MPI_TRY(comm, bcast(buffer, *bytes, root, *c));
  return MPI_SUCCESS;
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  TW_MPI_TRY(comm, reduce(sendbuf, recvbuf, count, type, op, root, *c));
  return MPI_SUCCESS;
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  auto bytes = contiguous_bytes_of(count, type);
  TW_MPI_TRY(comm, bytes.status());
  // Non-root ranks with MPI_IN_PLACE contribute what recvbuf holds (their
  // send completes inside reduce(), before the broadcast overwrites it).
  const void* mine = sendbuf == MPI_IN_PLACE && (*c)->rank() != 0 ? recvbuf : sendbuf;
  TW_MPI_TRY(comm, reduce(mine, recvbuf, count, type, op, 0, *c));
  TW_MPI_TRY(comm, bcast(recvbuf, *bytes, 0, *c));
  return MPI_SUCCESS;
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  const bool is_root = (*c)->rank() == root;
  auto block =
      is_root ? contiguous_bytes_of(recvcount, recvtype) : contiguous_bytes_of(sendcount, sendtype);
  TW_MPI_TRY(comm, block.status());
  TW_MPI_TRY(comm, gather(sendbuf, *block, recvbuf, root, *c));
  return MPI_SUCCESS;
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  auto block = contiguous_bytes_of(recvcount, recvtype);
  TW_MPI_TRY(comm, block.status());
  if (sendbuf != MPI_IN_PLACE) {
    auto sent = contiguous_bytes_of(sendcount, sendtype);
    TW_MPI_TRY(comm, sent.status());
  }
  // In place: my block already sits at recvbuf[rank]; send it from there.
  const void* mine = sendbuf == MPI_IN_PLACE ? static_cast<unsigned char*>(recvbuf) +
                                                   static_cast<std::size_t>((*c)->rank()) * *block
                                             : sendbuf;
  TW_MPI_TRY(comm, gather((*c)->rank() == 0 && sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : mine,
                          *block, recvbuf, 0, *c));
  TW_MPI_TRY(comm, bcast(recvbuf, *block * static_cast<std::size_t>((*c)->size()), 0, *c));
  return MPI_SUCCESS;
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  auto block = contiguous_bytes_of(recvcount, recvtype);
  TW_MPI_TRY(comm, block.status());
  const std::size_t n = static_cast<std::size_t>((*c)->size());
  std::vector<unsigned char> in_place_copy;
  const auto* out = static_cast<const unsigned char*>(sendbuf);
  if (sendbuf == MPI_IN_PLACE) {
    in_place_copy.assign(static_cast<unsigned char*>(recvbuf),
                         static_cast<unsigned char*>(recvbuf) + *block * n);
    out = in_place_copy.data();
  } else {
    TW_MPI_TRY(comm, contiguous_bytes_of(sendcount, sendtype).status());
  }
  auto* in = static_cast<unsigned char*>(recvbuf);
  std::vector<engine::Request*> requests;
  const int me = (*c)->rank();
  for (int peer = 0; peer < (*c)->size(); ++peer) {
    const std::size_t at = static_cast<std::size_t>(peer) * *block;
    if (peer == me) {
      if (*block > 0) std::memmove(in + at, out + at, *block);
      continue;
    }
    TW_MPI_TRY(comm,
               post(requests, RequestKind::kReceive, in + at, *block, peer, kAlltoallTag, *c));
    TW_MPI_TRY(comm, post(requests, RequestKind::kSend, out + at, *block, peer, kAlltoallTag, *c));
  }
  TW_MPI_TRY(comm, wait_all(requests));
  return MPI_SUCCESS;
}

}  // extern "C"
