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

enum CollectiveTag : int {
  kBcastTag = 10,
  kReduceTag,
  kGatherTag,
  kAlltoallTag,
  kScatterTag,
  kAllgathervTag,
  kScanTag,
  // Neighborhood collectives: a distributed graph's edges all take this
  // one (messages between two ranks match in order, as MPICH does it); a
  // Cartesian grid's take one per dimension and direction after it, so a
  // rank that is both neighbours along a periodic dimension of size 2
  // still receives each block in the right place.
  kNeighborTag,
};

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
        combine(op, type, acc.data(), parts[r].data(), static_cast<std::size_t>(count), *bytes));
  }
  if (*bytes > 0) std::memcpy(recvbuf, acc.data(), *bytes);
  return Status::ok();
}

// Byte sizes and offsets of per-rank blocks given in elements of `type`
// (the v-collectives' counts and displacements).
struct Blocks {
  std::vector<std::size_t> size, offset;
};

Result<Blocks> blocks_of(int n, const int counts[], const int displs[], MPI_Datatype type) {
  if (counts == nullptr || displs == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "the counts or displacements array is NULL");
  }
  Blocks b;
  for (int i = 0; i < n; ++i) {
    auto size = contiguous_bytes_of(counts[i], type);
    if (!size) return size.status().with_context("count of rank " + std::to_string(i));
    auto offset = contiguous_bytes_of(displs[i], type);
    if (!offset) return offset.status().with_context("displacement of rank " + std::to_string(i));
    b.size.push_back(*size);
    b.offset.push_back(*offset);
  }
  return b;
}

Blocks even_blocks(int n, std::size_t block) {
  Blocks b;
  for (int i = 0; i < n; ++i) {
    b.size.push_back(block);
    b.offset.push_back(static_cast<std::size_t>(i) * block);
  }
  return b;
}

// Root: rank r receives blocks.size[r] bytes from sendbuf + offset[r]
// (`blocks` is read at the root only) into recvcount elements of
// recvtype. In place (the root's recvbuf is MPI_IN_PLACE): its block
// stays put.
Status scatter(const void* sendbuf, const Blocks& blocks, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, engine::Communicator* comm) {
  TAGWIRE_RETURN_IF_ERROR(check_root(comm, root));
  std::size_t mine = 0;
  if (recvbuf != MPI_IN_PLACE || comm->rank() != root) {
    auto recv = contiguous_bytes_of(recvcount, recvtype);
    if (!recv) return recv.status();
    mine = *recv;
  }
  std::vector<engine::Request*> requests;
  if (comm->rank() != root) {
    TAGWIRE_RETURN_IF_ERROR(
        post(requests, RequestKind::kReceive, recvbuf, mine, root, kScatterTag, comm));
    return wait_all(requests);
  }
  const auto* in = static_cast<const unsigned char*>(sendbuf);
  for (int peer = 0; peer < comm->size(); ++peer) {
    const auto i = static_cast<std::size_t>(peer);
    if (peer == root) {
      if (recvbuf != MPI_IN_PLACE && blocks.size[i] > 0) {
        if (blocks.size[i] > mine) {
          return {ErrorCode::kTruncate, "the root's own block is larger than its receive count"};
        }
        std::memcpy(recvbuf, in + blocks.offset[i], blocks.size[i]);
      }
      continue;
    }
    TAGWIRE_RETURN_IF_ERROR(post(requests, RequestKind::kSend, in + blocks.offset[i],
                                 blocks.size[i], peer, kScatterTag, comm));
  }
  return wait_all(requests);
}

// Root: rank r's block lands at recvbuf + offset[r]; the others send
// `mine` bytes. In place (the root's sendbuf is MPI_IN_PLACE): its block
// is there already.
Status gatherv(const void* sendbuf, std::size_t mine, void* recvbuf, const Blocks& blocks, int root,
               engine::Communicator* comm) {
  TAGWIRE_RETURN_IF_ERROR(check_root(comm, root));
  std::vector<engine::Request*> requests;
  if (comm->rank() != root) {
    TAGWIRE_RETURN_IF_ERROR(
        post(requests, RequestKind::kSend, sendbuf, mine, root, kGatherTag, comm));
    return wait_all(requests);
  }
  auto* out = static_cast<unsigned char*>(recvbuf);
  for (int peer = 0; peer < comm->size(); ++peer) {
    const auto i = static_cast<std::size_t>(peer);
    if (peer == root) {
      if (sendbuf != MPI_IN_PLACE && mine > 0) {
        if (mine > blocks.size[i]) {
          return {ErrorCode::kTruncate, "the root's own block is larger than its receive count"};
        }
        std::memcpy(out + blocks.offset[i], sendbuf, mine);
      }
      continue;
    }
    TAGWIRE_RETURN_IF_ERROR(post(requests, RequestKind::kReceive, out + blocks.offset[i],
                                 blocks.size[i], peer, kGatherTag, comm));
  }
  return wait_all(requests);
}

// Root: recvbuf[r] = rank r's block. In place: the root's block is there.
Status gather(const void* sendbuf, std::size_t block, void* recvbuf, int root,
              engine::Communicator* comm) {
  return gatherv(sendbuf, block, recvbuf, even_blocks(comm->size(), block), root, comm);
}

// MPI_IN_PLACE in the all-to-alls: what is sent is what recvbuf holds,
// laid out as it is received, so it is copied out before any of it is
// overwritten. Returns the copy's bytes.
const unsigned char* copy_for_in_place(void* recvbuf, const Blocks& recv,
                                       std::vector<unsigned char>* copy) {
  std::size_t span = 0;
  for (std::size_t i = 0; i < recv.size.size(); ++i) {
    span = std::max(span, recv.offset[i] + recv.size[i]);
  }
  const auto* in = static_cast<const unsigned char*>(recvbuf);
  copy->assign(in, in + span);
  return copy->data();
}

// Every rank sends its part to every other directly (the all-to-alls,
// allgatherv): out + send.offset[p] to p, into in + recv.offset[p] from p.
Status exchange_blocks(const unsigned char* out, const Blocks& send, unsigned char* in,
                       const Blocks& recv, int tag, engine::Communicator* comm) {
  std::vector<engine::Request*> requests;
  const int me = comm->rank();
  for (int peer = 0; peer < comm->size(); ++peer) {
    const auto i = static_cast<std::size_t>(peer);
    if (peer == me) {
      if (send.size[i] > recv.size[i]) {
        return {ErrorCode::kTruncate, "this rank's block to itself is larger than its receive"};
      }
      if (send.size[i] > 0 && out + send.offset[i] != in + recv.offset[i]) {
        std::memmove(in + recv.offset[i], out + send.offset[i], send.size[i]);
      }
      continue;
    }
    TAGWIRE_RETURN_IF_ERROR(
        post(requests, RequestKind::kReceive, in + recv.offset[i], recv.size[i], peer, tag, comm));
    TAGWIRE_RETURN_IF_ERROR(
        post(requests, RequestKind::kSend, out + send.offset[i], send.size[i], peer, tag, comm));
  }
  return wait_all(requests);
}

// Prefix reductions along the ranks, in rank order (a chain: rank r waits
// for r-1's prefix, so a non-commutative operation keeps its order).
// Inclusive: recvbuf = v0 op ... op v_r; exclusive: v0 op ... op v_{r-1}
// (rank 0's recvbuf is left alone).
Status scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
            bool inclusive, engine::Communicator* comm) {
  TAGWIRE_RETURN_IF_ERROR(check_op(op, type));
  auto bytes = contiguous_bytes_of(count, type);
  if (!bytes) return bytes.status();
  const int me = comm->rank();
  const auto* own = static_cast<const unsigned char*>(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf);
  // What goes on: prefix op own (rank 0: own). Copied before recvbuf is
  // written (in place, own is recvbuf).
  std::vector<unsigned char> onward(own, own + *bytes);
  std::vector<unsigned char> prefix(*bytes);
  std::vector<engine::Request*> requests;
  if (me > 0) {
    TAGWIRE_RETURN_IF_ERROR(
        post(requests, RequestKind::kReceive, prefix.data(), *bytes, me - 1, kScanTag, comm));
    TAGWIRE_RETURN_IF_ERROR(wait_all(requests));
    requests.clear();
    std::vector<unsigned char> acc = prefix;  // prefix stays for the exclusive scan
    TAGWIRE_RETURN_IF_ERROR(
        combine(op, type, acc.data(), onward.data(), static_cast<std::size_t>(count), *bytes));
    onward.swap(acc);
  }
  if (me + 1 < comm->size()) {
    TAGWIRE_RETURN_IF_ERROR(
        post(requests, RequestKind::kSend, onward.data(), *bytes, me + 1, kScanTag, comm));
  }
  if (*bytes > 0) {
    if (inclusive) {
      std::memcpy(recvbuf, onward.data(), *bytes);
    } else if (me > 0) {
      std::memcpy(recvbuf, prefix.data(), *bytes);
    }
  }
  return wait_all(requests);
}

// MPI_Reduce_scatter(_block): the whole vector reduced at rank 0, then
// scattered in the given blocks. In place: the input is in recvbuf.
Status reduce_scatter(const void* sendbuf, void* recvbuf, const std::vector<int>& counts,
                      MPI_Datatype type, MPI_Op op, engine::Communicator* comm) {
  long long total = 0;
  for (int c : counts) {
    if (c < 0) return {ErrorCode::kInvalidCount, "a negative receive count"};
    total += c;
  }
  if (total > INT32_MAX) return {ErrorCode::kInvalidCount, "more than INT_MAX elements in all"};
  auto whole = contiguous_bytes_of(static_cast<int>(total), type);
  if (!whole) return whole.status();
  std::vector<int> displs(counts.size());
  for (std::size_t i = 1; i < counts.size(); ++i) displs[i] = displs[i - 1] + counts[i - 1];
  auto blocks = blocks_of(comm->size(), counts.data(), displs.data(), type);
  if (!blocks) return blocks.status();
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  std::vector<unsigned char> reduced(comm->rank() == 0 ? *whole : 0);
  TAGWIRE_RETURN_IF_ERROR(
      reduce(input, reduced.data(), static_cast<int>(total), type, op, 0, comm));
  const auto me = static_cast<std::size_t>(comm->rank());
  return scatter(reduced.data(), *blocks, recvbuf, counts[me], type, 0, comm);
}

// A rank's neighbours for the neighborhood collectives, in the standard's
// order (MPI-3.1 §7.6): a distributed graph's sources and destinations as
// given; on a Cartesian grid, for each dimension the rank one below then
// the one above (MPI_PROC_NULL off a non-periodic edge), both ways. Each
// edge's tag: what the neighbour at the other end posts for it.
struct Neighbors {
  std::vector<int> sources, destinations;
  std::vector<int> receive_tags, send_tags;
};

Result<Neighbors> neighbors_of(MPI_Comm comm) {
  const CommEntry* entry = find_comm(comm);
  Neighbors n;
  if (entry != nullptr && entry->dist_graph) {
    n.sources = entry->dist_graph->sources;
    n.destinations = entry->dist_graph->destinations;
    n.receive_tags.assign(n.sources.size(), kNeighborTag);
    n.send_tags.assign(n.destinations.size(), kNeighborTag);
    return n;
  }
  if (entry == nullptr || !entry->cart) {
    return Status(ErrorCode::kInvalidTopology,
                  "a neighborhood collective needs a Cartesian or distributed graph topology");
  }
  for (int d = 0; d < static_cast<int>(entry->cart->dims.size()); ++d) {
    int below = MPI_PROC_NULL, above = MPI_PROC_NULL;
    if (PMPI_Cart_shift(comm, d, 1, &below, &above) != MPI_SUCCESS) {
      return Status(ErrorCode::kInternal, "MPI_Cart_shift failed on a Cartesian communicator");
    }
    const int downward = kNeighborTag + 1 + 2 * d, upward = downward + 1;
    // Block 2d goes down and comes from below (sent upward there); block
    // 2d + 1 goes up and comes from above (sent downward there).
    n.sources.insert(n.sources.end(), {below, above});
    n.receive_tags.insert(n.receive_tags.end(), {upward, downward});
    n.destinations.insert(n.destinations.end(), {below, above});
    n.send_tags.insert(n.send_tags.end(), {downward, upward});
  }
  return n;
}

// One block to each destination, one from each source (contiguous bytes).
Status neighbor_exchange(const Neighbors& n, const std::vector<const unsigned char*>& out,
                         const std::vector<std::size_t>& out_bytes,
                         const std::vector<unsigned char*>& in,
                         const std::vector<std::size_t>& in_bytes, engine::Communicator* comm) {
  std::vector<engine::Request*> requests;
  for (std::size_t i = 0; i < n.sources.size(); ++i) {
    TAGWIRE_RETURN_IF_ERROR(post(requests, RequestKind::kReceive, in[i], in_bytes[i], n.sources[i],
                                 n.receive_tags[i], comm));
  }
  for (std::size_t j = 0; j < n.destinations.size(); ++j) {
    TAGWIRE_RETURN_IF_ERROR(post(requests, RequestKind::kSend, out[j], out_bytes[j],
                                 n.destinations[j], n.send_tags[j], comm));
  }
  return wait_all(requests);
}

// The blocks of a neighborhood call, block i at the buffer + offset[i]
// bytes: packed one after another (regular_blocks), placed by counts and
// displacements in `type`'s elements (varying_blocks), or by byte
// displacements (MPI_Neighbor_alltoallw).
struct NeighborBlocks {
  std::vector<std::size_t> bytes, offset;
};

Result<NeighborBlocks> regular_blocks(std::size_t count, int each, MPI_Datatype type) {
  auto block = contiguous_bytes_of(each, type);
  if (!block) return block.status();
  NeighborBlocks b;
  for (std::size_t i = 0; i < count; ++i) {
    b.bytes.push_back(*block);
    b.offset.push_back(i * *block);
  }
  return b;
}

Result<NeighborBlocks> varying_blocks(std::size_t count, const int counts[], const int displs[],
                                      MPI_Datatype type) {
  if (count > 0 && (counts == nullptr || displs == nullptr)) {
    return Status(ErrorCode::kInvalidArgument, "the counts or displacements array is NULL");
  }
  auto blocks = blocks_of(static_cast<int>(count), counts, displs, type);
  if (!blocks) return blocks.status();
  return NeighborBlocks{std::move(blocks->size), std::move(blocks->offset)};
}

// One block of `each` elements of `type`, sent to every destination
// (the allgathers' send side: every block at offset 0).
Result<NeighborBlocks> same_block_for_each(std::size_t count, int each, MPI_Datatype type) {
  auto send = regular_blocks(count, each, type);
  if (send) std::fill(send->offset.begin(), send->offset.end(), 0);
  return send;
}

template <typename T>
std::vector<T> at_offsets(T base, const NeighborBlocks& b) {
  std::vector<T> out;
  for (std::size_t off : b.offset) out.push_back(base + off);
  return out;
}

// The whole of a neighborhood collective once its blocks are known.
int neighbor_call(const char* function, MPI_Comm comm, const Neighbors& n, const void* sendbuf,
                  const Result<NeighborBlocks>& send, void* recvbuf,
                  const Result<NeighborBlocks>& recv) {
  auto c = comm_of(comm);
  if (!send) return report(comm, function, send.status());
  if (!recv) return report(comm, function, recv.status());
  const auto* out = static_cast<const unsigned char*>(sendbuf);
  auto* in = static_cast<unsigned char*>(recvbuf);
  Status s = neighbor_exchange(n, at_offsets(out, *send), send->bytes, at_offsets(in, *recv),
                               recv->bytes, *c);
  return s.is_ok() ? MPI_SUCCESS : report(comm, function, s);
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
  const Blocks blocks = even_blocks((*c)->size(), *block);
  std::vector<unsigned char> in_place_copy;
  const auto* out = static_cast<const unsigned char*>(sendbuf);
  if (sendbuf == MPI_IN_PLACE) {
    out = copy_for_in_place(recvbuf, blocks, &in_place_copy);
  } else {
    TW_MPI_TRY(comm, contiguous_bytes_of(sendcount, sendtype).status());
  }
  TW_MPI_TRY(comm, exchange_blocks(out, blocks, static_cast<unsigned char*>(recvbuf), blocks,
                                   kAlltoallTag, *c));
  return MPI_SUCCESS;
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  TW_MPI_TRY(comm, check_root(*c, root));
  Blocks blocks;
  if ((*c)->rank() == root) {
    auto block = contiguous_bytes_of(sendcount, sendtype);
    TW_MPI_TRY(comm, block.status());
    blocks = even_blocks((*c)->size(), *block);
  }
  TW_MPI_TRY(comm, scatter(sendbuf, blocks, recvbuf, recvcount, recvtype, root, *c));
  return MPI_SUCCESS;
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  TW_MPI_TRY(comm, check_root(*c, root));
  Blocks blocks;
  if ((*c)->rank() == root) {
    auto b = blocks_of((*c)->size(), sendcounts, displs, sendtype);
    TW_MPI_TRY(comm, b.status());
    blocks = std::move(b).value();
  }
  TW_MPI_TRY(comm, scatter(sendbuf, blocks, recvbuf, recvcount, recvtype, root, *c));
  return MPI_SUCCESS;
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  TW_MPI_TRY(comm, check_root(*c, root));
  Blocks blocks;
  std::size_t mine = 0;
  if ((*c)->rank() == root) {
    auto b = blocks_of((*c)->size(), recvcounts, displs, recvtype);
    TW_MPI_TRY(comm, b.status());
    blocks = std::move(b).value();
  }
  if (sendbuf != MPI_IN_PLACE) {
    auto sent = contiguous_bytes_of(sendcount, sendtype);
    TW_MPI_TRY(comm, sent.status());
    mine = *sent;
  }
  TW_MPI_TRY(comm, gatherv(sendbuf, mine, recvbuf, blocks, root, *c));
  return MPI_SUCCESS;
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  const int n = (*c)->size();
  const auto me = static_cast<std::size_t>((*c)->rank());
  auto recv = blocks_of(n, recvcounts, displs, recvtype);
  TW_MPI_TRY(comm, recv.status());
  // What this rank sends every peer: its own block, from sendbuf or (in
  // place) from where it sits in recvbuf.
  auto* in = static_cast<unsigned char*>(recvbuf);
  const unsigned char* out = in + recv->offset[me];
  std::size_t mine = recv->size[me];
  if (sendbuf != MPI_IN_PLACE) {
    auto sent = contiguous_bytes_of(sendcount, sendtype);
    TW_MPI_TRY(comm, sent.status());
    out = static_cast<const unsigned char*>(sendbuf);
    mine = *sent;
  }
  Blocks send;
  send.size.assign(static_cast<std::size_t>(n), mine);
  send.offset.assign(static_cast<std::size_t>(n), 0);
  if (sendbuf == MPI_IN_PLACE) send.offset[me] = 0;
  TW_MPI_TRY(comm, exchange_blocks(out, send, in, *recv, kAllgathervTag, *c));
  return MPI_SUCCESS;
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  const int n = (*c)->size();
  auto recv = blocks_of(n, recvcounts, rdispls, recvtype);
  TW_MPI_TRY(comm, recv.status());
  std::vector<unsigned char> in_place_copy;
  const unsigned char* out = static_cast<const unsigned char*>(sendbuf);
  Blocks send;
  if (sendbuf == MPI_IN_PLACE) {
    out = copy_for_in_place(recvbuf, *recv, &in_place_copy);
    send = *recv;
  } else {
    auto s = blocks_of(n, sendcounts, sdispls, sendtype);
    TW_MPI_TRY(comm, s.status());
    send = std::move(s).value();
  }
  TW_MPI_TRY(comm, exchange_blocks(out, send, static_cast<unsigned char*>(recvbuf), *recv,
                                   kAlltoallTag, *c));
  return MPI_SUCCESS;
}

// Per-peer datatypes, displacements in bytes (MPI-3.1 §5.8).
int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  const int n = (*c)->size();
  auto layout = [&](const int counts[], const int displs[], const MPI_Datatype types[],
                    const char* what) -> Result<Blocks> {
    if (counts == nullptr || displs == nullptr || types == nullptr) {
      return Status(ErrorCode::kInvalidArgument,
                    std::string("a ") + what + " counts, displacements or types array is NULL");
    }
    Blocks b;
    for (int i = 0; i < n; ++i) {
      auto size = contiguous_bytes_of(counts[i], types[i]);
      if (!size)
        return size.status().with_context(std::string(what) + " to/from rank " + std::to_string(i));
      if (displs[i] < 0) return Status(ErrorCode::kInvalidArgument, "a negative displacement");
      b.size.push_back(*size);
      b.offset.push_back(static_cast<std::size_t>(displs[i]));
    }
    return b;
  };
  auto recv = layout(recvcounts, rdispls, recvtypes, "receive");
  TW_MPI_TRY(comm, recv.status());
  std::vector<unsigned char> in_place_copy;
  const unsigned char* out = static_cast<const unsigned char*>(sendbuf);
  Blocks send;
  if (sendbuf == MPI_IN_PLACE) {
    out = copy_for_in_place(recvbuf, *recv, &in_place_copy);
    send = *recv;
  } else {
    auto s = layout(sendcounts, sdispls, sendtypes, "send");
    TW_MPI_TRY(comm, s.status());
    send = std::move(s).value();
  }
  TW_MPI_TRY(comm, exchange_blocks(out, send, static_cast<unsigned char*>(recvbuf), *recv,
                                   kAlltoallTag, *c));
  return MPI_SUCCESS;
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  TW_MPI_TRY(comm, scan(sendbuf, recvbuf, count, type, op, true, *c));
  return MPI_SUCCESS;
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  TW_MPI_TRY(comm, scan(sendbuf, recvbuf, count, type, op, false, *c));
  return MPI_SUCCESS;
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  TW_MPI_TRY(comm,
             reduce_scatter(sendbuf, recvbuf,
                            std::vector<int>(static_cast<std::size_t>((*c)->size()), recvcount),
                            type, op, *c));
  return MPI_SUCCESS;
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  if (recvcounts == nullptr) {
    TW_MPI_TRY(comm, Status(ErrorCode::kInvalidArgument, "recvcounts is NULL"));
  }
  TW_MPI_TRY(comm,
             reduce_scatter(sendbuf, recvbuf,
                            std::vector<int>(recvcounts, recvcounts + (*c)->size()), type, op, *c));
  return MPI_SUCCESS;
}

int MPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype type, MPI_Op op) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_op(op, type));
  auto bytes = contiguous_bytes_of(count, type);
  TW_MPI_TRY(MPI_COMM_WORLD, bytes.status());
  TW_MPI_TRY(MPI_COMM_WORLD, apply_op(op, type, inbuf, inoutbuf, static_cast<std::size_t>(count)));
  return MPI_SUCCESS;
}

int MPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  if (op == nullptr) TW_MPI_TRY(MPI_COMM_WORLD, Status(ErrorCode::kInvalidArgument, "op is NULL"));
  auto created = create_user_op(user_fn, commute != 0);
  TW_MPI_TRY(MPI_COMM_WORLD, created.status());
  *op = *created;
  return MPI_SUCCESS;
}

int MPI_Op_free(MPI_Op* op) {
  if (op == nullptr) TW_MPI_TRY(MPI_COMM_WORLD, Status(ErrorCode::kInvalidArgument, "op is NULL"));
  TW_MPI_TRY(MPI_COMM_WORLD, free_user_op(*op));
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

int MPI_Op_commutative(MPI_Op op, int* commute) {
  if (commute == nullptr) {
    TW_MPI_TRY(MPI_COMM_WORLD, Status(ErrorCode::kInvalidArgument, "commute is NULL"));
  }
  auto commutes = op_commutes(op);
  TW_MPI_TRY(MPI_COMM_WORLD, commutes.status());
  *commute = *commutes ? 1 : 0;
  return MPI_SUCCESS;
}

int MPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  auto n = neighbors_of(comm);
  TW_MPI_TRY(comm, n.status());
  return neighbor_call(__func__, comm, *n, sendbuf,
                       same_block_for_each(n->destinations.size(), sendcount, sendtype), recvbuf,
                       regular_blocks(n->sources.size(), recvcount, recvtype));
}

int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  auto n = neighbors_of(comm);
  TW_MPI_TRY(comm, n.status());
  return neighbor_call(__func__, comm, *n, sendbuf,
                       same_block_for_each(n->destinations.size(), sendcount, sendtype), recvbuf,
                       varying_blocks(n->sources.size(), recvcounts, displs, recvtype));
}

int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  auto n = neighbors_of(comm);
  TW_MPI_TRY(comm, n.status());
  return neighbor_call(__func__, comm, *n, sendbuf,
                       regular_blocks(n->destinations.size(), sendcount, sendtype), recvbuf,
                       regular_blocks(n->sources.size(), recvcount, recvtype));
}

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  auto n = neighbors_of(comm);
  TW_MPI_TRY(comm, n.status());
  return neighbor_call(__func__, comm, *n, sendbuf,
                       varying_blocks(n->destinations.size(), sendcounts, sdispls, sendtype),
                       recvbuf, varying_blocks(n->sources.size(), recvcounts, rdispls, recvtype));
}

int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  auto n = neighbors_of(comm);
  TW_MPI_TRY(comm, n.status());
  // Each block its own type, displacements in bytes.
  auto blocks = [](std::size_t count, const int counts[], const MPI_Aint displs[],
                   const MPI_Datatype types[]) -> Result<NeighborBlocks> {
    if (count > 0 && (counts == nullptr || displs == nullptr || types == nullptr)) {
      return Status(ErrorCode::kInvalidArgument, "a counts, displacements or types array is NULL");
    }
    NeighborBlocks b;
    for (std::size_t i = 0; i < count; ++i) {
      auto bytes = contiguous_bytes_of(counts[i], types[i]);
      if (!bytes) return bytes.status().with_context("block " + std::to_string(i));
      if (displs[i] < 0) {
        return Status(ErrorCode::kInvalidArgument,
                      "negative displacement " + std::to_string(displs[i]));
      }
      b.bytes.push_back(*bytes);
      b.offset.push_back(static_cast<std::size_t>(displs[i]));
    }
    return b;
  };
  return neighbor_call(__func__, comm, *n, sendbuf,
                       blocks(n->destinations.size(), sendcounts, sdispls, sendtypes), recvbuf,
                       blocks(n->sources.size(), recvcounts, rdispls, recvtypes));
}

}  // extern "C"
