// Collectives, blocking and nonblocking, over the engine's point-to-point.
//
// Each call writes its operation down as a schedule (engine/schedule.h):
// rounds of sends, receives and local steps (copies, reductions). A
// blocking call runs it to the end; the nonblocking one (MPI_Ibcast, ...)
// starts it as a request that the engine's progress moves on, so it
// advances in MPI_Test / MPI_Wait, in any other call that polls, and on the
// engine's helper thread while the application computes. The algorithms
// are the simple, correct ones (speed is not the point yet): linear
// fan-out and fan-in through the root, all traffic on the communicator's
// collective context so that no user receive can take it.
//
// Tags. Every rank of a communicator calls its collectives in the same
// order, and messages from one source are received in order, so one tag
// per kind of blocking collective is enough. Nonblocking ones may be many
// at once, each with rounds of its own: each takes a block of tags of its
// own, from the communicator's count of nonblocking collectives.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "mpi_api/reduce_ops.h"
#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;
using engine::Schedule;

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
// The nonblocking collectives' tags: block k of kInstanceTags tags from
// kFirstInstanceTag for the k-th (modulo kInstances) on a communicator.
// A Cartesian neighborhood needs 1 + 2 x its dimensions of a block.
constexpr int kFirstInstanceTag = 1 << 20;
constexpr int kInstanceTags = 64;
constexpr std::uint32_t kInstances = 1u << 14;

int instance_tag(MPI_Comm comm) {
  CommEntry* entry = find_comm(comm);
  const std::uint32_t k = entry == nullptr ? 0 : entry->nonblocking_collectives++ % kInstances;
  return kFirstInstanceTag + static_cast<int>(k) * kInstanceTags;
}

// Builds a collective's schedule with `build(schedule, tag)` and runs it
// (request null: the blocking call, on `blocking_tag`) or starts it and
// hands out its request (the nonblocking call).
template <typename Build>
int collective(const char* function, MPI_Comm comm, MPI_Request* request, int blocking_tag,
               Build&& build) {
  auto c = comm_of(comm);
  if (!c) return report(comm, function, c.status());
  auto schedule = std::make_unique<Schedule>(*c);
  Status s = build(*schedule, request == nullptr ? blocking_tag : instance_tag(comm));
  if (s.is_ok() && request == nullptr) s = E().run_schedule(*schedule);
  if (s.is_ok() && request != nullptr) {
    auto r = E().start_schedule(std::move(schedule));
    if (r) {
      *request = E().hand_out(*r);
      return MPI_SUCCESS;
    }
    s = r.status();
  }
  return s.is_ok() ? MPI_SUCCESS : report(comm, function, s);
}

// A nonblocking call's request argument, checked before anything starts.
Status check_request_out(const MPI_Request* request) {
  if (request == nullptr) return {ErrorCode::kInvalidArgument, "request is NULL"};
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

Status bcast(Schedule& s, int tag, void* buffer, std::size_t bytes, int root) {
  engine::Communicator* comm = s.comm();
  TAGWIRE_RETURN_IF_ERROR(check_root(comm, root));
  if (comm->rank() != root) {
    s.receive(buffer, bytes, root, tag);
    return Status::ok();
  }
  for (int peer = 0; peer < comm->size(); ++peer) {
    if (peer != root) s.send(buffer, bytes, peer, tag);
  }
  return Status::ok();
}

// Root: recvbuf = op over every rank's contribution, in rank order.
Status reduce(Schedule& s, int tag, const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype type, MPI_Op op, int root) {
  engine::Communicator* comm = s.comm();
  TAGWIRE_RETURN_IF_ERROR(check_root(comm, root));
  TAGWIRE_RETURN_IF_ERROR(check_op(op, type));
  auto size = contiguous_bytes_of(count, type);
  if (!size) return size.status();
  const std::size_t bytes = *size;
  if (comm->rank() != root) {
    s.send(sendbuf, bytes, root, tag);
    return Status::ok();
  }
  // Every contribution is received first, then combined in rank order so
  // that the result does not depend on arrival order.
  const int n = comm->size();
  unsigned char* parts = s.scratch(static_cast<std::size_t>(n) * bytes);
  const auto part = [parts, bytes](int r) { return parts + static_cast<std::size_t>(r) * bytes; };
  s.copy(part(root), sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, bytes);
  for (int peer = 0; peer < n; ++peer) {
    if (peer != root) s.receive(part(peer), bytes, peer, tag);
  }
  s.next_round();
  s.local([=] {
    for (int r = 1; r < n; ++r) {
      TAGWIRE_RETURN_IF_ERROR(
          combine(op, type, part(0), part(r), static_cast<std::size_t>(count), bytes));
    }
    if (bytes > 0) std::memcpy(recvbuf, part(0), bytes);
    return Status::ok();
  });
  return Status::ok();
}

Status allreduce(Schedule& s, int tag, const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype type, MPI_Op op) {
  auto bytes = contiguous_bytes_of(count, type);
  if (!bytes) return bytes.status();
  // Non-root ranks with MPI_IN_PLACE contribute what recvbuf holds (their
  // send completes in the first round, before the broadcast overwrites it).
  const void* mine = sendbuf == MPI_IN_PLACE && s.comm()->rank() != 0 ? recvbuf : sendbuf;
  TAGWIRE_RETURN_IF_ERROR(reduce(s, tag, mine, recvbuf, count, type, op, 0));
  s.next_round();
  return bcast(s, tag, recvbuf, *bytes, 0);
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
Status scatter(Schedule& s, int tag, const void* sendbuf, const Blocks& blocks, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root) {
  engine::Communicator* comm = s.comm();
  TAGWIRE_RETURN_IF_ERROR(check_root(comm, root));
  std::size_t mine = 0;
  if (recvbuf != MPI_IN_PLACE || comm->rank() != root) {
    auto recv = contiguous_bytes_of(recvcount, recvtype);
    if (!recv) return recv.status();
    mine = *recv;
  }
  if (comm->rank() != root) {
    s.receive(recvbuf, mine, root, tag);
    return Status::ok();
  }
  const auto* in = static_cast<const unsigned char*>(sendbuf);
  for (int peer = 0; peer < comm->size(); ++peer) {
    const auto i = static_cast<std::size_t>(peer);
    if (peer != root) {
      s.send(in + blocks.offset[i], blocks.size[i], peer, tag);
    } else if (recvbuf != MPI_IN_PLACE && blocks.size[i] > 0) {
      if (blocks.size[i] > mine) {
        return {ErrorCode::kTruncate, "the root's own block is larger than its receive count"};
      }
      s.copy(recvbuf, in + blocks.offset[i], blocks.size[i]);
    }
  }
  return Status::ok();
}

// Root: rank r's block lands at recvbuf + offset[r]; the others send
// `mine` bytes. In place (the root's sendbuf is MPI_IN_PLACE): its block
// is there already.
Status gatherv(Schedule& s, int tag, const void* sendbuf, std::size_t mine, void* recvbuf,
               const Blocks& blocks, int root) {
  engine::Communicator* comm = s.comm();
  TAGWIRE_RETURN_IF_ERROR(check_root(comm, root));
  if (comm->rank() != root) {
    s.send(sendbuf, mine, root, tag);
    return Status::ok();
  }
  auto* out = static_cast<unsigned char*>(recvbuf);
  for (int peer = 0; peer < comm->size(); ++peer) {
    const auto i = static_cast<std::size_t>(peer);
    if (peer != root) {
      s.receive(out + blocks.offset[i], blocks.size[i], peer, tag);
    } else if (sendbuf != MPI_IN_PLACE && mine > 0) {
      if (mine > blocks.size[i]) {
        return {ErrorCode::kTruncate, "the root's own block is larger than its receive count"};
      }
      s.copy(out + blocks.offset[i], sendbuf, mine);
    }
  }
  return Status::ok();
}

// MPI_IN_PLACE in the all-to-alls: what is sent is what recvbuf holds,
// laid out as it is received, so it is copied (now, at the call) before
// any of it is overwritten. Returns the copy's bytes, which the schedule
// keeps.
const unsigned char* copy_for_in_place(Schedule& s, void* recvbuf, const Blocks& recv) {
  std::size_t span = 0;
  for (std::size_t i = 0; i < recv.size.size(); ++i) {
    span = std::max(span, recv.offset[i] + recv.size[i]);
  }
  return s.keep(recvbuf, span);
}

// Every rank sends its part to every other directly (the all-to-alls,
// allgatherv): out + send.offset[p] to p, into in + recv.offset[p] from p.
Status exchange_blocks(Schedule& s, int tag, const unsigned char* out, const Blocks& send,
                       unsigned char* in, const Blocks& recv) {
  engine::Communicator* comm = s.comm();
  const int me = comm->rank();
  for (int peer = 0; peer < comm->size(); ++peer) {
    const auto i = static_cast<std::size_t>(peer);
    if (peer == me) {
      if (send.size[i] > recv.size[i]) {
        return {ErrorCode::kTruncate, "this rank's block to itself is larger than its receive"};
      }
      s.copy(in + recv.offset[i], out + send.offset[i], send.size[i]);
      continue;
    }
    s.receive(in + recv.offset[i], recv.size[i], peer, tag);
    s.send(out + send.offset[i], send.size[i], peer, tag);
  }
  return Status::ok();
}

// Prefix reductions along the ranks, in rank order (a chain: rank r waits
// for r-1's prefix, so a non-commutative operation keeps its order).
// Inclusive: recvbuf = v0 op ... op v_r; exclusive: v0 op ... op v_{r-1}
// (rank 0's recvbuf is left alone).
Status scan(Schedule& s, int tag, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
            MPI_Op op, bool inclusive) {
  TAGWIRE_RETURN_IF_ERROR(check_op(op, type));
  auto size = contiguous_bytes_of(count, type);
  if (!size) return size.status();
  const std::size_t bytes = *size;
  const int me = s.comm()->rank();
  // What goes on: prefix op own (rank 0: own). Copied at the call, before
  // recvbuf is written (in place, own is recvbuf).
  unsigned char* onward = s.keep(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, bytes);
  unsigned char* prefix = nullptr;
  if (me > 0) {
    prefix = s.scratch(bytes);
    unsigned char* acc = s.scratch(bytes);
    s.receive(prefix, bytes, me - 1, tag);
    s.next_round();
    s.local([=] {
      // prefix stays for the exclusive scan; combine overwrites its second.
      if (bytes > 0) std::memcpy(acc, prefix, bytes);
      TAGWIRE_RETURN_IF_ERROR(
          combine(op, type, acc, onward, static_cast<std::size_t>(count), bytes));
      if (bytes > 0) std::memcpy(onward, acc, bytes);
      return Status::ok();
    });
  }
  if (me + 1 < s.comm()->size()) s.send(onward, bytes, me + 1, tag);
  if (inclusive) {
    s.copy(recvbuf, onward, bytes);
  } else if (me > 0) {
    s.copy(recvbuf, prefix, bytes);
  }
  return Status::ok();
}

// MPI_Reduce_scatter(_block): the whole vector reduced at rank 0, then
// scattered in the given blocks. In place: the input is in recvbuf.
Status reduce_scatter(Schedule& s, int tag, const void* sendbuf, void* recvbuf,
                      const std::vector<int>& counts, MPI_Datatype type, MPI_Op op) {
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
  auto blocks = blocks_of(s.comm()->size(), counts.data(), displs.data(), type);
  if (!blocks) return blocks.status();
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  unsigned char* reduced = s.comm()->rank() == 0 ? s.scratch(*whole) : nullptr;
  TAGWIRE_RETURN_IF_ERROR(reduce(s, tag, input, reduced, static_cast<int>(total), type, op, 0));
  s.next_round();
  const auto me = static_cast<std::size_t>(s.comm()->rank());
  return scatter(s, tag, reduced, *blocks, recvbuf, counts[me], type, 0);
}

// MPI_Ibarrier's rounds (MPI_Barrier is the engine's own): in round k
// each rank signals rank + 2^k and hears from rank - 2^k; after
// ceil(log2 n) rounds everyone has heard, transitively, from everyone.
void dissemination_barrier(Schedule& s, int tag) {
  const int n = s.comm()->size();
  const int me = s.comm()->rank();
  for (int d = 1; d < n; d <<= 1) {
    s.send(nullptr, 0, (me + d) % n, tag);
    s.receive(nullptr, 0, (me + n - d) % n, tag);
    s.next_round();
  }
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

Result<Neighbors> neighbors_of(MPI_Comm comm, int tag) {
  const CommEntry* entry = find_comm(comm);
  Neighbors n;
  if (entry != nullptr && entry->dist_graph) {
    n.sources = entry->dist_graph->sources;
    n.destinations = entry->dist_graph->destinations;
    n.receive_tags.assign(n.sources.size(), tag);
    n.send_tags.assign(n.destinations.size(), tag);
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
    if (2 * d + 2 >= kInstanceTags) {
      return Status(ErrorCode::kUnsupported, "a neighborhood collective on a grid of more than " +
                                                 std::to_string(kInstanceTags / 2 - 1) +
                                                 " dimensions");
    }
    const int downward = tag + 1 + 2 * d, upward = downward + 1;
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
void neighbor_exchange(Schedule& s, const Neighbors& n,
                       const std::vector<const unsigned char*>& out,
                       const std::vector<std::size_t>& out_bytes,
                       const std::vector<unsigned char*>& in,
                       const std::vector<std::size_t>& in_bytes) {
  for (std::size_t i = 0; i < n.sources.size(); ++i) {
    s.receive(in[i], in_bytes[i], n.sources[i], n.receive_tags[i]);
  }
  for (std::size_t j = 0; j < n.destinations.size(); ++j) {
    s.send(out[j], out_bytes[j], n.destinations[j], n.send_tags[j]);
  }
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

// A neighborhood collective: its neighbours (on `tag`) and, from them,
// its blocks, `send` and `recv` (functions of the neighbour counts).
template <typename SendBlocks, typename ReceiveBlocks>
int neighbor_call(const char* function, MPI_Comm comm, MPI_Request* request, const void* sendbuf,
                  SendBlocks&& send_blocks, void* recvbuf, ReceiveBlocks&& receive_blocks) {
  return collective(function, comm, request, kNeighborTag, [&](Schedule& s, int tag) -> Status {
    auto n = neighbors_of(comm, tag);
    if (!n) return n.status();
    Result<NeighborBlocks> send = send_blocks(n->destinations.size());
    if (!send) return send.status();
    Result<NeighborBlocks> recv = receive_blocks(n->sources.size());
    if (!recv) return recv.status();
    const auto* out = static_cast<const unsigned char*>(sendbuf);
    auto* in = static_cast<unsigned char*>(recvbuf);
    neighbor_exchange(s, *n, at_offsets(out, *send), send->bytes, at_offsets(in, *recv),
                      recv->bytes);
    return Status::ok();
  });
}

// MPI_Neighbor_alltoallw's blocks: each its own type, displacements in
// bytes.
Result<NeighborBlocks> typed_blocks(std::size_t count, const int counts[], const MPI_Aint displs[],
                                    const MPI_Datatype types[]) {
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
}

}  // namespace

namespace {

Status bcast_call(Schedule& s, int tag, void* buffer, int count, MPI_Datatype type, int root) {
  auto bytes = contiguous_bytes_of(count, type);
  if (!bytes) return bytes.status();
  return bcast(s, tag, buffer, *bytes, root);
}

Status reduce_scatter_block_call(Schedule& s, int tag, const void* sendbuf, void* recvbuf,
                                 int recvcount, MPI_Datatype type, MPI_Op op) {
  return reduce_scatter(s, tag, sendbuf, recvbuf,
                        std::vector<int>(static_cast<std::size_t>(s.comm()->size()), recvcount),
                        type, op);
}

Status reduce_scatter_call(Schedule& s, int tag, const void* sendbuf, void* recvbuf,
                           const int recvcounts[], MPI_Datatype type, MPI_Op op) {
  if (recvcounts == nullptr) return {ErrorCode::kInvalidArgument, "recvcounts is NULL"};
  return reduce_scatter(s, tag, sendbuf, recvbuf,
                        std::vector<int>(recvcounts, recvcounts + s.comm()->size()), type, op);
}

Status gather_call(Schedule& s, int tag, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_root(s.comm(), root));
  const bool is_root = s.comm()->rank() == root;
  auto block =
      is_root ? contiguous_bytes_of(recvcount, recvtype) : contiguous_bytes_of(sendcount, sendtype);
  if (!block) return block.status();
  return gatherv(s, tag, sendbuf, *block, recvbuf, even_blocks(s.comm()->size(), *block), root);
}

Status allgather_call(Schedule& s, int tag, const void* sendbuf, int sendcount,
                      MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  auto block = contiguous_bytes_of(recvcount, recvtype);
  if (!block) return block.status();
  if (sendbuf != MPI_IN_PLACE) {
    auto sent = contiguous_bytes_of(sendcount, sendtype);
    if (!sent) return sent.status();
  }
  const int me = s.comm()->rank();
  const int n = s.comm()->size();
  // In place: my block already sits at recvbuf[rank]; send it from there.
  const void* mine = sendbuf == MPI_IN_PLACE ? static_cast<unsigned char*>(recvbuf) +
                                                   static_cast<std::size_t>(me) * *block
                                             : sendbuf;
  TAGWIRE_RETURN_IF_ERROR(gatherv(s, tag, me == 0 && sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : mine,
                                  *block, recvbuf, even_blocks(n, *block), 0));
  s.next_round();
  return bcast(s, tag, recvbuf, *block * static_cast<std::size_t>(n), 0);
}

Status alltoall_call(Schedule& s, int tag, const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  auto block = contiguous_bytes_of(recvcount, recvtype);
  if (!block) return block.status();
  const Blocks blocks = even_blocks(s.comm()->size(), *block);
  const auto* out = static_cast<const unsigned char*>(sendbuf);
  if (sendbuf == MPI_IN_PLACE) {
    out = copy_for_in_place(s, recvbuf, blocks);
  } else {
    auto sent = contiguous_bytes_of(sendcount, sendtype);
    if (!sent) return sent.status();
  }
  return exchange_blocks(s, tag, out, blocks, static_cast<unsigned char*>(recvbuf), blocks);
}

Status scatter_call(Schedule& s, int tag, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_root(s.comm(), root));
  Blocks blocks;
  if (s.comm()->rank() == root) {
    auto block = contiguous_bytes_of(sendcount, sendtype);
    if (!block) return block.status();
    blocks = even_blocks(s.comm()->size(), *block);
  }
  return scatter(s, tag, sendbuf, blocks, recvbuf, recvcount, recvtype, root);
}

Status scatterv_call(Schedule& s, int tag, const void* sendbuf, const int sendcounts[],
                     const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_root(s.comm(), root));
  Blocks blocks;
  if (s.comm()->rank() == root) {
    auto b = blocks_of(s.comm()->size(), sendcounts, displs, sendtype);
    if (!b) return b.status();
    blocks = std::move(b).value();
  }
  return scatter(s, tag, sendbuf, blocks, recvbuf, recvcount, recvtype, root);
}

Status gatherv_call(Schedule& s, int tag, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_root(s.comm(), root));
  Blocks blocks;
  std::size_t mine = 0;
  if (s.comm()->rank() == root) {
    auto b = blocks_of(s.comm()->size(), recvcounts, displs, recvtype);
    if (!b) return b.status();
    blocks = std::move(b).value();
  }
  if (sendbuf != MPI_IN_PLACE) {
    auto sent = contiguous_bytes_of(sendcount, sendtype);
    if (!sent) return sent.status();
    mine = *sent;
  }
  return gatherv(s, tag, sendbuf, mine, recvbuf, blocks, root);
}

Status allgatherv_call(Schedule& s, int tag, const void* sendbuf, int sendcount,
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                       const int displs[], MPI_Datatype recvtype) {
  const int n = s.comm()->size();
  const auto me = static_cast<std::size_t>(s.comm()->rank());
  auto recv = blocks_of(n, recvcounts, displs, recvtype);
  if (!recv) return recv.status();
  // What this rank sends every peer: its own block, from sendbuf or (in
  // place) from where it sits in recvbuf.
  auto* in = static_cast<unsigned char*>(recvbuf);
  const unsigned char* out = in + recv->offset[me];
  std::size_t mine = recv->size[me];
  if (sendbuf != MPI_IN_PLACE) {
    auto sent = contiguous_bytes_of(sendcount, sendtype);
    if (!sent) return sent.status();
    out = static_cast<const unsigned char*>(sendbuf);
    mine = *sent;
  }
  Blocks send;
  send.size.assign(static_cast<std::size_t>(n), mine);
  send.offset.assign(static_cast<std::size_t>(n), 0);
  return exchange_blocks(s, tag, out, send, in, *recv);
}

Status alltoallv_call(Schedule& s, int tag, const void* sendbuf, const int sendcounts[],
                      const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int rdispls[], MPI_Datatype recvtype) {
  const int n = s.comm()->size();
  auto recv = blocks_of(n, recvcounts, rdispls, recvtype);
  if (!recv) return recv.status();
  const auto* out = static_cast<const unsigned char*>(sendbuf);
  Blocks send;
  if (sendbuf == MPI_IN_PLACE) {
    out = copy_for_in_place(s, recvbuf, *recv);
    send = *recv;
  } else {
    auto b = blocks_of(n, sendcounts, sdispls, sendtype);
    if (!b) return b.status();
    send = std::move(b).value();
  }
  return exchange_blocks(s, tag, out, send, static_cast<unsigned char*>(recvbuf), *recv);
}

// Per-peer datatypes, displacements in bytes (MPI-3.1 §5.8).
Result<Blocks> typed_rank_blocks(int n, const int counts[], const int displs[],
                                 const MPI_Datatype types[], const char* what) {
  if (counts == nullptr || displs == nullptr || types == nullptr) {
    return Status(ErrorCode::kInvalidArgument,
                  std::string("a ") + what + " counts, displacements or types array is NULL");
  }
  Blocks b;
  for (int i = 0; i < n; ++i) {
    auto size = contiguous_bytes_of(counts[i], types[i]);
    if (!size) {
      return size.status().with_context(std::string(what) + " to/from rank " + std::to_string(i));
    }
    if (displs[i] < 0) return Status(ErrorCode::kInvalidArgument, "a negative displacement");
    b.size.push_back(*size);
    b.offset.push_back(static_cast<std::size_t>(displs[i]));
  }
  return b;
}

Status alltoallw_call(Schedule& s, int tag, const void* sendbuf, const int sendcounts[],
                      const int sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                      const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[]) {
  const int n = s.comm()->size();
  auto recv = typed_rank_blocks(n, recvcounts, rdispls, recvtypes, "receive");
  if (!recv) return recv.status();
  const auto* out = static_cast<const unsigned char*>(sendbuf);
  Blocks send;
  if (sendbuf == MPI_IN_PLACE) {
    out = copy_for_in_place(s, recvbuf, *recv);
    send = *recv;
  } else {
    auto b = typed_rank_blocks(n, sendcounts, sdispls, sendtypes, "send");
    if (!b) return b.status();
    send = std::move(b).value();
  }
  return exchange_blocks(s, tag, out, send, static_cast<unsigned char*>(recvbuf), *recv);
}

}  // namespace

extern "C" {

// Each collective: the blocking call (on its kind's tag), then the
// nonblocking one (a tag block of its own, the request last), both from
// one builder.

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kBcastTag, [&](Schedule& s, int tag) {
    return bcast_call(s, tag, buffer, count, type, root);
  });
}
int MPI_Ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return bcast_call(s, tag, buffer, count, type, root);
  });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kReduceTag, [&](Schedule& s, int tag) {
    return reduce(s, tag, sendbuf, recvbuf, count, type, op, root);
  });
}
int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return reduce(s, tag, sendbuf, recvbuf, count, type, op, root);
  });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kReduceTag, [&](Schedule& s, int tag) {
    return allreduce(s, tag, sendbuf, recvbuf, count, type, op);
  });
}
int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return allreduce(s, tag, sendbuf, recvbuf, count, type, op);
  });
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kScanTag, [&](Schedule& s, int tag) {
    return scan(s, tag, sendbuf, recvbuf, count, type, op, true);
  });
}
int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return scan(s, tag, sendbuf, recvbuf, count, type, op, true);
  });
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kScanTag, [&](Schedule& s, int tag) {
    return scan(s, tag, sendbuf, recvbuf, count, type, op, false);
  });
}
int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return scan(s, tag, sendbuf, recvbuf, count, type, op, false);
  });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kReduceTag, [&](Schedule& s, int tag) {
    return reduce_scatter_block_call(s, tag, sendbuf, recvbuf, recvcount, type, op);
  });
}
int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return reduce_scatter_block_call(s, tag, sendbuf, recvbuf, recvcount, type, op);
  });
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kReduceTag, [&](Schedule& s, int tag) {
    return reduce_scatter_call(s, tag, sendbuf, recvbuf, recvcounts, type, op);
  });
}
int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return reduce_scatter_call(s, tag, sendbuf, recvbuf, recvcounts, type, op);
  });
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kGatherTag, [&](Schedule& s, int tag) {
    return gather_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return gather_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kGatherTag, [&](Schedule& s, int tag) {
    return gatherv_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                        root);
  });
}
int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return gatherv_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                        root);
  });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kScatterTag, [&](Schedule& s, int tag) {
    return scatter_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return scatter_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kScatterTag, [&](Schedule& s, int tag) {
    return scatterv_call(s, tag, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                         recvtype, root);
  });
}
int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return scatterv_call(s, tag, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                         recvtype, root);
  });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kGatherTag, [&](Schedule& s, int tag) {
    return allgather_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return allgather_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kAllgathervTag, [&](Schedule& s, int tag) {
    return allgatherv_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype);
  });
}
int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return allgatherv_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype);
  });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kAlltoallTag, [&](Schedule& s, int tag) {
    return alltoall_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return alltoall_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kAlltoallTag, [&](Schedule& s, int tag) {
    return alltoallv_call(s, tag, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                          rdispls, recvtype);
  });
}
int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return alltoallv_call(s, tag, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                          rdispls, recvtype);
  });
}

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return collective(__func__, comm, nullptr, kAlltoallTag, [&](Schedule& s, int tag) {
    return alltoallw_call(s, tag, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                          rdispls, recvtypes);
  });
}
int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return alltoallw_call(s, tag, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                          rdispls, recvtypes);
  });
}

int MPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return neighbor_call(
      __func__, comm, nullptr, sendbuf,
      [&](std::size_t destinations) {
        return same_block_for_each(destinations, sendcount, sendtype);
      },
      recvbuf, [&](std::size_t sources) { return regular_blocks(sources, recvcount, recvtype); });
}
int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return neighbor_call(
      __func__, comm, request, sendbuf,
      [&](std::size_t destinations) {
        return same_block_for_each(destinations, sendcount, sendtype);
      },
      recvbuf, [&](std::size_t sources) { return regular_blocks(sources, recvcount, recvtype); });
}

int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm) {
  return neighbor_call(
      __func__, comm, nullptr, sendbuf,
      [&](std::size_t destinations) {
        return same_block_for_each(destinations, sendcount, sendtype);
      },
      recvbuf,
      [&](std::size_t sources) { return varying_blocks(sources, recvcounts, displs, recvtype); });
}
int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return neighbor_call(
      __func__, comm, request, sendbuf,
      [&](std::size_t destinations) {
        return same_block_for_each(destinations, sendcount, sendtype);
      },
      recvbuf,
      [&](std::size_t sources) { return varying_blocks(sources, recvcounts, displs, recvtype); });
}

int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return neighbor_call(
      __func__, comm, nullptr, sendbuf,
      [&](std::size_t destinations) { return regular_blocks(destinations, sendcount, sendtype); },
      recvbuf, [&](std::size_t sources) { return regular_blocks(sources, recvcount, recvtype); });
}
int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return neighbor_call(
      __func__, comm, request, sendbuf,
      [&](std::size_t destinations) { return regular_blocks(destinations, sendcount, sendtype); },
      recvbuf, [&](std::size_t sources) { return regular_blocks(sources, recvcount, recvtype); });
}

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return neighbor_call(
      __func__, comm, nullptr, sendbuf,
      [&](std::size_t destinations) {
        return varying_blocks(destinations, sendcounts, sdispls, sendtype);
      },
      recvbuf,
      [&](std::size_t sources) { return varying_blocks(sources, recvcounts, rdispls, recvtype); });
}
int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return neighbor_call(
      __func__, comm, request, sendbuf,
      [&](std::size_t destinations) {
        return varying_blocks(destinations, sendcounts, sdispls, sendtype);
      },
      recvbuf,
      [&](std::size_t sources) { return varying_blocks(sources, recvcounts, rdispls, recvtype); });
}

int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm) {
  return neighbor_call(
      __func__, comm, nullptr, sendbuf,
      [&](std::size_t destinations) {
        return typed_blocks(destinations, sendcounts, sdispls, sendtypes);
      },
      recvbuf,
      [&](std::size_t sources) { return typed_blocks(sources, recvcounts, rdispls, recvtypes); });
}
int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return neighbor_call(
      __func__, comm, request, sendbuf,
      [&](std::size_t destinations) {
        return typed_blocks(destinations, sendcounts, sdispls, sendtypes);
      },
      recvbuf,
      [&](std::size_t sources) { return typed_blocks(sources, recvcounts, rdispls, recvtypes); });
}

// MPI_Barrier is the engine's (communicators.cc); its nonblocking form
// is a schedule like the others.
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  TW_MPI_TRY(comm, check_request_out(request));
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    dissemination_barrier(s, tag);
    return Status::ok();
  });
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

}  // extern "C"
