// Collectives, blocking and nonblocking, over the engine's point-to-point.
//
// Each call writes its operation down as a schedule (engine/schedule.h):
// rounds of sends, receives and local steps (copies, reductions). A
// blocking call runs it to the end; the nonblocking one (MPI_Ibcast, ...)
// starts it as a request that the engine's progress moves on, so it
// advances in MPI_Test / MPI_Wait, in any other call that polls, and on the
// engine's helper thread while the application computes. The algorithms:
// broadcast and reduce along a binomial tree (mpi_api/rooted_tree.h; flat
// through the root where ranks outnumber cores, Engine::flat_collectives),
// allreduce by recursive doubling in a power-of-two group where ranks
// have cores (allreduce_doubling; a small blocking one, and a small
// blocking all-to-all, without a schedule: allreduce_direct,
// alltoall_direct), and the rest built on them or linear
// through a root (gather, scatter,
// the all-to-alls pair by pair); all traffic on the communicator's
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
#include <optional>
#include <string>
#include <vector>

#include "mpi_api/collective_algorithms.h"
#include "mpi_api/collective_blocks.h"
#include "mpi_api/reduce_ops.h"
#include "mpi_api/reduction.h"
#include "mpi_api/rooted_tree.h"
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
  kBarrierTag,  // an intercommunicator's (the engine has its own otherwise)
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
// The persistent collectives' blocks (MPI_Bcast_init ...) lie past those,
// up to the largest tag, by a count of their own: one lives across any
// number of nonblocking calls. With one count for both, the 16,384th
// nonblocking call after an init took the persistent one's block, and
// their messages met (a tree bcast's child took an Ibarrier's signal: both
// hung). Blocks come round again after about 16.7 M inits on one
// communicator, a clash only with a persistent request that old.
constexpr int kFirstPersistentTag =
    kFirstInstanceTag + static_cast<int>(kInstances) * kInstanceTags;
constexpr std::uint32_t kPersistentInstances =
    static_cast<std::uint32_t>((engine::kTagUpperBound - kFirstPersistentTag + 1) / kInstanceTags);

// Block `count++ % instances` of the range from `first`.
int take_block(std::uint32_t* count, int first, std::uint32_t instances) {
  const std::uint32_t k = count == nullptr ? 0 : (*count)++ % instances;
  return first + static_cast<int>(k) * kInstanceTags;
}

int instance_tag(MPI_Comm comm) {
  CommEntry* entry = find_comm(comm);
  return take_block(entry == nullptr ? nullptr : &entry->nonblocking_collectives, kFirstInstanceTag,
                    kInstances);
}

int persistent_tag(MPI_Comm comm) {
  CommEntry* entry = find_comm(comm);
  return take_block(entry == nullptr ? nullptr : &entry->persistent_collectives,
                    kFirstPersistentTag, kPersistentInstances);
}

// A schedule `build(schedule, tag)` writes down, on the heap (a
// nonblocking or persistent call's, which outlives the call).
template <typename Build>
Result<std::unique_ptr<Schedule>> written_down(engine::Communicator* comm, int tag,
                                               const Build& build) {
  auto schedule = std::make_unique<Schedule>(comm);
  Status s = build(*schedule, tag);
  schedule->close();
  if (!s.is_ok()) return s;
  return schedule;
}

// Builds a collective's schedule with `build(schedule, tag)` and runs it
// (no `request`: the blocking call, on `blocking_tag`) or starts it and
// hands out its request (the nonblocking call, whose request argument is
// checked before anything starts).
template <typename Build>
int collective(const char* function, MPI_Comm comm, std::optional<MPI_Request*> request,
               int blocking_tag, Build&& build) {
  if (request && *request == nullptr) {
    return report(comm, function, Status(ErrorCode::kInvalidArgument, "request is NULL"));
  }
  auto c = comm_of(comm);
  if (!c) return report(comm, function, c.status());
  if (!request) {  // on the stack: one allocation fewer per call
    Schedule schedule(*c);
    Status s = build(schedule, blocking_tag);
    schedule.close();
    if (s.is_ok()) s = E().run_schedule(schedule);
    return s.is_ok() ? MPI_SUCCESS : report(comm, function, s);
  }
  auto schedule = written_down(*c, instance_tag(comm), build);
  if (!schedule) return report(comm, function, schedule.status());
  auto r = E().start_schedule(std::move(schedule).value());
  if (!r) return report(comm, function, r.status());
  **request = E().hand_out(*r);
  return MPI_SUCCESS;
}

// A root within the caller's group.
// MPI-4's persistent collectives (MPI_Bcast_init ...): `build` (which
// holds copies of the call's arguments) writes a schedule down at every
// MPI_Start, on one tag block of their own range taken now (every rank
// initializes its persistent collectives in the same order), and once
// now, so that a bad argument is reported by the call that passed it.
template <typename Build>
int persistent_collective(const char* function, MPI_Comm comm, MPI_Request* request, Build build) {
  if (request == nullptr) {
    return report(comm, function, Status(ErrorCode::kInvalidArgument, "request is NULL"));
  }
  auto c = comm_of(comm);
  if (!c) return report(comm, function, c.status());
  engine::Communicator* communicator = *c;
  const int tag = persistent_tag(comm);
  auto make = [communicator, tag, build] { return written_down(communicator, tag, build); };
  if (auto trial = make(); !trial) return report(comm, function, trial.status());
  auto r = E().schedule_init(communicator, std::move(make));
  if (!r) return report(comm, function, r.status());
  *request = E().hand_out(*r);
  return MPI_SUCCESS;
}

Status check_group_root(const engine::Communicator* comm, int root) {
  if (root < 0 || root >= comm->size()) {
    return {ErrorCode::kInvalidRank, "root " + std::to_string(root) +
                                         " is outside a communicator of size " +
                                         std::to_string(comm->size())};
  }
  return Status::ok();
}

Status check_root(const Schedule& s, int root) {
  return s.comm()->inter() ? check_inter_root(s, root) : check_group_root(s.comm(), root);
}

}  // namespace

namespace tagwire::mpi {

Status bcast(Schedule& s, int tag, void* buffer, const Typed& t, int root) {
  engine::Communicator* comm = s.comm();
  TAGWIRE_RETURN_IF_ERROR(check_group_root(comm, root));
  const RootedTree tree = RootedTree::of(comm->size(), comm->rank(), root, E().flat_collectives());
  // The packed bytes this rank passes on: packed once at the root; a rank
  // inside the tree forwards what it received, packed as it came.
  const void* packed = nullptr;
  if (tree.parent < 0) {
    packed = packed_source(s, buffer, t);
  } else {
    packed = receive_typed(s, buffer, t, tree.parent, tag);
    if (tree.children.empty()) return Status::ok();
    s.next_round();
  }
  // The largest subtree first: its path is the longest.
  for (auto c = tree.children.rbegin(); c != tree.children.rend(); ++c) {
    s.send(packed, t.bytes, *c, tag);
  }
  return Status::ok();
}

// A reduction's operands as the schedule's typed steps move them (the
// same layout, count and bytes: nothing looked up twice).
Typed typed_of(const Reduction& r) {
  Typed t;
  t.layout = r.layout;
  t.count = r.count;
  t.bytes = r.bytes;
  t.extent = r.layout != nullptr ? r.layout->extent()
             : r.count > 0       ? static_cast<std::ptrdiff_t>(r.bytes / r.count)
                                 : 0;
  return t;
}

// Every rank's contribution `mine` reduced at the root, in rank order (a
// non-commutative operation's; the result does not depend on arrival
// order). Each rank combines its own operand and its children's results
// in the order of their ranks: on the flat shape the root's children are
// every other rank; the binomial tree is rooted at rank 0, whatever the
// root, since there each subtree holds consecutive ranks, and a root other
// than 0 gets the result from rank 0 (one message more than a tree rooted
// at it, which would not keep rank order). The root gets the packed result
// in scratch, once the schedule's steps so far have run; the others null.
Result<unsigned char*> reduce_to_root(Schedule& s, int tag, const void* mine, const Reduction& r,
                                      int root) {
  engine::Communicator* comm = s.comm();
  const Typed t = typed_of(r);
  const int me = comm->rank();
  const bool flat = E().flat_collectives();
  const int top = flat ? root : 0;  // where this tree ends
  const RootedTree tree = RootedTree::of(comm->size(), me, top, flat);
  const std::size_t bytes = r.bytes;
  unsigned char* result = nullptr;  // at `top`: every operand reduced
  if (tree.children.empty() && tree.parent >= 0) {
    send_typed(s, mine, t, tree.parent, tag);  // a leaf's operand as it is
  } else {
    // One part per operand, this rank's and its children's, by rank.
    std::vector<int> ranks = tree.children;
    ranks.push_back(me);
    std::sort(ranks.begin(), ranks.end());
    const std::size_t parts = ranks.size();
    unsigned char* acc = s.scratch(parts * bytes);
    for (std::size_t k = 0; k < parts; ++k) {
      unsigned char* part = acc + k * bytes;
      if (ranks[k] == me) {
        TAGWIRE_RETURN_IF_ERROR(copy_typed(s, mine, t, part, raw_bytes(bytes)));
      } else {
        s.receive(part, bytes, ranks[k], tag);
      }
    }
    if (parts > 1) {
      s.next_round();
      s.local([=] {
        for (std::size_t k = 1; k < parts; ++k) {
          TAGWIRE_RETURN_IF_ERROR(combine_packed(r, acc, acc + k * bytes));
        }
        return Status::ok();
      });
    }
    if (tree.parent >= 0) {
      s.send(acc, bytes, tree.parent, tag);
    } else {
      result = acc;
    }
  }
  if (top == root) return result;
  if (me == top) {
    s.send(result, bytes, root, tag);
    return nullptr;
  }
  if (me != root) return nullptr;
  unsigned char* relayed = s.scratch(bytes);
  s.receive(relayed, bytes, top, tag);
  s.next_round();
  return relayed;
}

// The packed `result` into `buffer` when its turn comes.
Status unpack_step(Schedule& s, const Reduction& r, const unsigned char* result, void* buffer) {
  return copy_typed(s, result, raw_bytes(r.bytes), buffer, typed_of(r));
}

}  // namespace tagwire::mpi

namespace {

// Root: recvbuf = op over every rank's contribution, in rank order.
Status reduce(Schedule& s, int tag, const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype type, MPI_Op op, int root) {
  if (s.comm()->inter()) return inter_reduce(s, tag, sendbuf, recvbuf, count, type, op, root);
  TAGWIRE_RETURN_IF_ERROR(check_root(s, root));
  auto r = reduction_of(op, count, type);
  if (!r) return r.status();
  const void* mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  auto result = reduce_to_root(s, tag, mine, *r, root);
  if (!result) return result.status();
  return *result != nullptr ? unpack_step(s, *r, *result, recvbuf) : Status::ok();
}

// The largest operand allreduce_direct takes (on its stack).
constexpr std::size_t kDirectAllreduceMaxBytes = 8192;

// allreduce_doubling's rounds for a predefined operation (they commute,
// so the two partners' `a OP b` and `b OP a` are the same bits) on an
// operand whose packed bytes are the buffer's own: the result builds up in
// recvbuf itself. The first round sends `mine` from where it is and
// receives the partner's into recvbuf (into scratch when they are one
// buffer, in place), so no operand is copied: at 1 MiB the copy in and
// the copy out were a fifth of the call.
Status allreduce_doubling_in_recvbuf(Schedule& s, int tag, const void* mine, void* recvbuf,
                                     const Reduction& r) {
  const int me = s.comm()->rank();
  const int n = s.comm()->size();
  const std::size_t bytes = r.bytes;
  auto* acc = static_cast<unsigned char*>(recvbuf);
  unsigned char* theirs = nullptr;  // one buffer for every round's receive
  for (int bit = 1; bit < n; bit <<= 1) {
    const int partner = me ^ bit;
    const bool first = bit == 1;
    // First round, not in place: the partner's operand lands in recvbuf
    // while `mine` stays where it is; otherwise it lands in scratch.
    const bool into_acc = first && mine != recvbuf;
    if (!into_acc && theirs == nullptr) theirs = s.scratch(bytes);
    s.send(first ? mine : acc, bytes, partner, tag);
    s.receive(into_acc ? acc : theirs, bytes, partner, tag);
    s.next_round();
    const void* other = into_acc ? mine : theirs;  // acc = other OP acc
    s.local([r, other, acc] { return reduce_packed(r, other, acc); });
  }
  return Status::ok();
}

// From this operand size a power-of-two allreduce of a predefined
// operation halves (allreduce_halving) instead of doubling, in groups of
// 4 and more. At 2 ranks halving is two exchanges of half the operand
// where doubling is one of all of it: 21-22 us against 16-18 at 64 KiB,
// level at 256 KiB and 1 MiB (2026-12-02), so 2 ranks keep doubling.
constexpr std::size_t kHalvingFromBytes = std::size_t{64} << 10;

// Whether allreduce halves: what decides it is the same at every rank
// (the group, the operand's size and its element type, never its layout),
// since the two send different messages.
bool halves(int n, const Reduction& r) {
  return n > 2 && (n & (n - 1)) == 0 && r.bytes >= kHalvingFromBytes && reducible_in_parts(r) &&
         r.elements >= static_cast<std::size_t>(n);
}

// Rabenseifner's allreduce for a power-of-two group and a predefined
// operation: a reduce-scatter by recursive halving (in round k a rank
// keeps half of the range it holds, sends the other half to the rank
// whose number differs in bit log2 n - k, and reduces what that rank sends
// of its own half), after which rank i holds block i of the result, then
// an allgather by recursive doubling of the blocks. Each rank sends and
// combines (n-1)/n of the operand where doubling sends and combines it
// log2 n times: where ranks share cores, their total work is the time
// (4 ranks on 2 cores, 1 MiB: 1.1-1.4 ms doubling against Open MPI's
// 0.74-0.87, 2026-12-02). Each block is reduced by one rank only, so every
// rank gets the same bits whatever the operation's rounding.
Status allreduce_halving(Schedule& s, int tag, const void* mine, void* recvbuf,
                         const Reduction& r) {
  const int me = s.comm()->rank();
  const int n = s.comm()->size();
  const std::size_t size = r.bytes / r.elements;  // of one element
  // Block b's first byte; blocks split the elements as evenly as may be.
  const auto at = [&r, n, size](int b) {
    return r.elements * static_cast<std::size_t>(b) / static_cast<std::size_t>(n) * size;
  };
  // The reduction of the bytes [from, to) of the operand.
  const auto part = [&r, size](std::size_t from, std::size_t to) {
    Reduction sub = r;
    sub.bytes = to - from;
    sub.elements = sub.count = sub.bytes / size;
    return sub;
  };
  // The operand, packed, accumulates in place (recvbuf when its bytes are
  // the buffer's own). The first round reads `mine` where it is and
  // receives the partner's half into the accumulator, as doubling does.
  const bool packed_in_recvbuf = r.layout == nullptr;
  auto* acc = packed_in_recvbuf ? static_cast<unsigned char*>(recvbuf) : s.scratch(r.bytes);
  const unsigned char* first = static_cast<const unsigned char*>(mine);
  if (!packed_in_recvbuf) {
    TAGWIRE_RETURN_IF_ERROR(copy_typed(s, mine, typed_of(r), acc, raw_bytes(r.bytes)));
    first = acc;
  }
  unsigned char* theirs = nullptr;  // every later round's receive (half at most)
  int lo = 0;
  int hi = n;
  for (int bit = n / 2; bit >= 1; bit /= 2) {
    const int partner = me ^ bit;
    const int mid = lo + (hi - lo) / 2;
    const bool lower = (me & bit) == 0;
    const std::size_t keep_from = at(lower ? lo : mid), keep_to = at(lower ? mid : hi);
    const std::size_t send_from = at(lower ? mid : lo), send_to = at(lower ? hi : mid);
    const bool from_mine = bit == n / 2 && first != acc;
    if (!from_mine && theirs == nullptr)
      theirs = s.scratch(std::max(at(n / 2), r.bytes - at(n / 2)));
    const unsigned char* out = (from_mine ? first : acc) + send_from;
    unsigned char* in = from_mine ? acc + keep_from : theirs;
    s.send(out, send_to - send_from, partner, tag);
    s.receive(in, keep_to - keep_from, partner, tag);
    s.next_round();
    const Reduction sub = part(keep_from, keep_to);
    const unsigned char* other = from_mine ? first + keep_from : theirs;  // acc = other OP acc
    unsigned char* into = acc + keep_from;
    s.local([sub, other, into] { return reduce_packed(sub, other, into); });
    if (lower) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  // Rank me holds block me; the ranges double back to the whole.
  for (int bit = 1; bit < n; bit *= 2) {
    const int partner = me ^ bit;
    const int width = hi - lo;
    const int their_lo = (me & bit) == 0 ? hi : lo - width;
    s.send(acc + at(lo), at(hi) - at(lo), partner, tag);
    s.receive(acc + at(their_lo), at(their_lo + width) - at(their_lo), partner, tag);
    s.next_round();
    lo = std::min(lo, their_lo);
    hi = lo + 2 * width;
  }
  return packed_in_recvbuf ? Status::ok() : unpack_step(s, r, acc, recvbuf);
}

// Recursive doubling, for a power-of-two group: in round k every rank
// swaps what it has so far with the rank whose number differs in bit k and
// combines the two, so after log2 n rounds each holds the whole result:
// log2 n message times where reduce-then-broadcast takes twice that (at 2
// ranks one exchange instead of a message there and one back). What each
// holds covers a run of consecutive ranks, and the lower run's goes on the
// left, so a non-commutative operation gets rank order. The bracketing
// differs from the tree's, which an associative operation (MPI-3.1
// §5.9.5) does not see.
Status allreduce_doubling(Schedule& s, int tag, const void* mine, void* recvbuf,
                          const Reduction& r) {
  const int me = s.comm()->rank();
  const int n = s.comm()->size();
  const std::size_t bytes = r.bytes;
  if (r.layout == nullptr && r.op < kFirstUserOp) {
    return allreduce_doubling_in_recvbuf(s, tag, mine, recvbuf, r);
  }
  unsigned char* have = s.scratch(bytes);  // this rank's run's reduction so far
  TAGWIRE_RETURN_IF_ERROR(copy_typed(s, mine, typed_of(r), have, raw_bytes(bytes)));
  for (int bit = 1; bit < n; bit <<= 1) {
    const int partner = me ^ bit;
    unsigned char* theirs = s.scratch(bytes);
    s.send(have, bytes, partner, tag);
    s.receive(theirs, bytes, partner, tag);
    s.next_round();
    // combine_packed(r, acc, next): acc = acc OP next, next overwritten.
    unsigned char* left = partner < me ? theirs : have;
    unsigned char* right = partner < me ? have : theirs;
    s.local([r, left, right] { return combine_packed(r, left, right); });
    have = left;
  }
  return unpack_step(s, r, have, recvbuf);
}

// An allreduce's buffers: NULL with elements to hold was written through
// (a segfault at 2 ranks, found 2026-12-02).
Status check_allreduce_buffers(const void* sendbuf, void* recvbuf, std::size_t bytes) {
  if (bytes > 0 && (recvbuf == nullptr || sendbuf == nullptr)) {
    return {ErrorCode::kInvalidBuffer, recvbuf == nullptr ? "receive buffer is NULL with a count"
                                                          : "send buffer is NULL with a count"};
  }
  return Status::ok();
}

// Where ranks outnumber cores, the operand sizes at which allreduce
// doubles all the same: 4 ranks on 2 cores, 64 KiB took 105-112 us
// doubling against 106-132 flat, 1 MiB 651-765 against 862-937, and 8 KiB
// 23-28 against 14-15 (coll_latency, 2026-12-02). Up to 2 KiB the
// doubling's direct path (allreduce_direct: no schedule, no requests)
// wins back what its extra waits cost: 8 B 8.0-8.8 us against 8.3-10.1
// flat through the schedule, 256 B 8.1-9.3 against 9.7-10.4, 2 KiB
// 9.8-11.4 against 8.5-11.7 (six interleaved pairs, 2026-12-02; Open MPI
// 7.0-13.3 at 8 B in the same sitting).
constexpr std::size_t kDoublingCrowdedUpToBytes = 2048;
constexpr std::size_t kDoublingCrowdedFromBytes = std::size_t{64} << 10;

// Whether allreduce doubles in a group of n (see allreduce).
bool doubles(int n, std::size_t bytes) {
  return n > 1 && (n & (n - 1)) == 0 &&
         (n == 2 || !E().flat_collectives() || bytes <= kDoublingCrowdedUpToBytes ||
          bytes >= kDoublingCrowdedFromBytes);
}

// A blocking MPI_Allreduce that doubles, of an operand whose packed bytes
// are the buffer's own: allreduce_doubling's exchanges made here and now
// (Engine::exchange, which sends and receives small ones without
// requests), with no schedule written down. The schedule, its steps and
// its requests were three quarters of an 8-byte allreduce at 2 ranks
// outside the wait (callgrind, 2026-12-01). The same messages as the
// schedule's (tag, context, partners, order), so ranks may take either
// path. Null when the call is not such a one.
std::optional<Status> allreduce_direct(engine::Communicator* comm, const void* sendbuf,
                                       void* recvbuf, int count, MPI_Datatype type, MPI_Op op) {
  if (comm->inter()) return std::nullopt;
  auto r = reduction_of(op, count, type);
  if (!r) return r.status();
  const int n = comm->size();
  const std::size_t bytes = r->bytes;
  if (r->layout != nullptr || !doubles(n, bytes) || bytes > kDirectAllreduceMaxBytes) {
    return std::nullopt;
  }
  TAGWIRE_RETURN_IF_ERROR(check_allreduce_buffers(sendbuf, recvbuf, bytes));
  auto* have = static_cast<unsigned char*>(recvbuf);
  if (sendbuf != MPI_IN_PLACE && bytes > 0) std::memmove(have, sendbuf, bytes);
  alignas(16) unsigned char theirs[kDirectAllreduceMaxBytes];
  const int me = comm->rank();
  for (int bit = 1; bit < n; bit <<= 1) {
    const int partner = me ^ bit;
    TAGWIRE_RETURN_IF_ERROR(E().collective_exchange(comm, partner, {have, bytes}, partner,
                                                    {theirs, bytes}, kReduceTag));
    // The lower run's operand on the left (reduce_packed: inout = in OP
    // inout), so both partners compute the same bits in rank order.
    if (partner < me) {
      TAGWIRE_RETURN_IF_ERROR(reduce_packed(*r, theirs, have));
    } else {
      TAGWIRE_RETURN_IF_ERROR(reduce_packed(*r, have, theirs));
      std::memcpy(have, theirs, bytes);
    }
  }
  return Status::ok();
}

Status allreduce(Schedule& s, int tag, const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype type, MPI_Op op) {
  if (s.comm()->inter()) return inter_allreduce(s, tag, sendbuf, recvbuf, count, type, op);
  auto r = reduction_of(op, count, type);
  if (!r) return r.status();
  TAGWIRE_RETURN_IF_ERROR(check_allreduce_buffers(sendbuf, recvbuf, r->bytes));
  // With MPI_IN_PLACE every rank contributes what recvbuf holds (a
  // non-root's send completes in the first round, before the broadcast
  // overwrites it).
  const void* mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  // Where every rank has a core (and always at 2 ranks, where both shapes
  // keep both ranks busy alike), a power-of-two group doubles; flat, the
  // ranks that would swap must each be scheduled every round, which only
  // a large operand's copies outweigh (kDoublingCrowdedFromBytes).
  // Any size: log2 n exchanges of the whole operand where the tree moves
  // it 2 log2 n times. (Once capped at 8 KiB: at 1 MiB two ranks took 8.6
  // ms, every call faulting its 2 MiB of fresh scratch in page by page;
  // engine/scratch_pool.h keeps it now, and the common case needs none.)
  if (halves(s.comm()->size(), *r)) return allreduce_halving(s, tag, mine, recvbuf, *r);
  if (doubles(s.comm()->size(), r->bytes)) {
    return allreduce_doubling(s, tag, mine, recvbuf, *r);
  }
  auto result = reduce_to_root(s, tag, mine, *r, 0);
  if (!result) return result.status();
  s.next_round();
  // Back down the same tree: rank 0 sends the packed result, every other
  // rank receives it into recvbuf (unpacked there, if its layout asks).
  if (*result == nullptr) return bcast(s, tag, recvbuf, typed_of(*r), 0);
  TAGWIRE_RETURN_IF_ERROR(bcast(s, tag, *result, raw_bytes(r->bytes), 0));
  return unpack_step(s, *r, *result, recvbuf);
}

}  // namespace

namespace tagwire::mpi {

// Root: rank r receives blocks.type[r] from sendbuf + offset[r] (`blocks`
// is read at the root only) into `mine` at recvbuf. In place (the root's
// recvbuf is MPI_IN_PLACE): its block stays put.
Status scatter(Schedule& s, int tag, const void* sendbuf, const Blocks& blocks, void* recvbuf,
               const Typed& mine, int root) {
  engine::Communicator* comm = s.comm();
  TAGWIRE_RETURN_IF_ERROR(check_group_root(comm, root));
  if (comm->rank() != root) {
    receive_typed(s, recvbuf, mine, root, tag);
    return Status::ok();
  }
  const auto* in = static_cast<const unsigned char*>(sendbuf);
  for (int peer = 0; peer < comm->size(); ++peer) {
    const auto i = static_cast<std::size_t>(peer);
    if (peer != root) {
      send_typed(s, in + blocks.offset[i], blocks.type[i], peer, tag);
    } else if (recvbuf != MPI_IN_PLACE) {
      TAGWIRE_RETURN_IF_ERROR(copy_typed(s, in + blocks.offset[i], blocks.type[i], recvbuf, mine));
    }
  }
  return Status::ok();
}

}  // namespace tagwire::mpi

namespace {

// Root: rank r's block lands as blocks.type[r] at recvbuf + offset[r];
// the others send `mine` from sendbuf. In place (the root's sendbuf is
// MPI_IN_PLACE): its block is there already.
Status gatherv(Schedule& s, int tag, const void* sendbuf, const Typed& mine, void* recvbuf,
               const Blocks& blocks, int root) {
  engine::Communicator* comm = s.comm();
  if (comm->inter()) return inter_gatherv(s, tag, sendbuf, mine, recvbuf, blocks, root);
  TAGWIRE_RETURN_IF_ERROR(check_group_root(comm, root));
  if (comm->rank() != root) {
    send_typed(s, sendbuf, mine, root, tag);
    return Status::ok();
  }
  auto* out = static_cast<unsigned char*>(recvbuf);
  for (int peer = 0; peer < comm->size(); ++peer) {
    const auto i = static_cast<std::size_t>(peer);
    if (peer != root) {
      receive_typed(s, out + blocks.offset[i], blocks.type[i], peer, tag);
    } else if (sendbuf != MPI_IN_PLACE) {
      TAGWIRE_RETURN_IF_ERROR(copy_typed(s, sendbuf, mine, out + blocks.offset[i], blocks.type[i]));
    }
  }
  return Status::ok();
}

// Every rank sends its part to every other directly (the all-to-alls,
// allgatherv): send block p from out to p, recv block p into in from p.
Status exchange_blocks(Schedule& s, int tag, const void* out, const Blocks& send, void* in,
                       const Blocks& recv) {
  engine::Communicator* comm = s.comm();
  if (comm->inter()) return inter_exchange(s, tag, out, send, in, recv);
  const int me = comm->rank();
  const auto* from = static_cast<const unsigned char*>(out);
  auto* to = static_cast<unsigned char*>(in);
  for (int peer = 0; peer < comm->size(); ++peer) {
    if (peer == me) continue;
    const auto i = static_cast<std::size_t>(peer);
    receive_typed(s, to + recv.offset[i], recv.type[i], peer, tag);
    send_typed(s, from + send.offset[i], send.type[i], peer, tag);
  }
  // This rank's own block last, so that its copy overlaps the transfers
  // the sends above have started (1 MiB at 2 ranks: the copy first made
  // the peer wait for it).
  const auto i = static_cast<std::size_t>(me);
  return copy_typed(s, from + send.offset[i], send.type[i], to + recv.offset[i], recv.type[i]);
}

// Prefix reductions along the ranks, in rank order (a chain: rank r waits
// for r-1's prefix, so a non-commutative operation keeps its order).
// Inclusive: recvbuf = v0 op ... op v_r; exclusive: v0 op ... op v_{r-1}
// (rank 0's recvbuf is left alone).
Status scan(Schedule& s, int tag, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
            MPI_Op op, bool inclusive) {
  if (s.comm()->inter()) {
    return {ErrorCode::kInvalidComm, std::string(inclusive ? "MPI_Scan" : "MPI_Exscan") +
                                         " on an intercommunicator (MPI-3.1 §5.11: "
                                         "intracommunicators only)"};
  }
  auto reduction = reduction_of(op, count, type);
  if (!reduction) return reduction.status();
  const Reduction& r = *reduction;
  const std::size_t bytes = r.bytes;
  const int me = s.comm()->rank();
  // What goes on, packed: prefix op own (rank 0: own). Packed at the call,
  // before recvbuf is written (in place, own is recvbuf).
  unsigned char* onward = s.scratch(bytes);
  pack_operand(r, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, onward);
  unsigned char* prefix = nullptr;
  if (me > 0) {
    prefix = s.scratch(bytes);
    unsigned char* acc = s.scratch(bytes);
    s.receive(prefix, bytes, me - 1, tag);
    s.next_round();
    s.local([=] {
      // prefix stays for the exclusive scan; combine overwrites its second.
      if (bytes > 0) std::memcpy(acc, prefix, bytes);
      TAGWIRE_RETURN_IF_ERROR(combine_packed(r, acc, onward));
      if (bytes > 0) std::memcpy(onward, acc, bytes);
      return Status::ok();
    });
  }
  if (me + 1 < s.comm()->size()) s.send(onward, bytes, me + 1, tag);
  if (inclusive) return unpack_step(s, r, onward, recvbuf);
  return me > 0 ? unpack_step(s, r, prefix, recvbuf) : Status::ok();
}

// MPI_Reduce_scatter(_block): the whole vector reduced at rank 0, then
// scattered from its packed bytes in the given blocks. In place: the input
// is in recvbuf.
Status reduce_scatter(Schedule& s, int tag, const void* sendbuf, void* recvbuf,
                      const std::vector<int>& counts, MPI_Datatype type, MPI_Op op) {
  long long total = 0;
  for (int c : counts) {
    if (c < 0) return {ErrorCode::kInvalidCount, "a negative receive count"};
    total += c;
  }
  if (total > INT32_MAX) return {ErrorCode::kInvalidCount, "more than INT_MAX elements in all"};
  auto r = reduction_of(op, static_cast<int>(total), type);
  if (!r) return r.status();
  const auto me = static_cast<std::size_t>(s.comm()->rank());
  auto mine = typed(counts[me], type);
  if (!mine) return mine.status();
  const std::size_t size = total == 0 ? 0 : r->bytes / static_cast<std::size_t>(total);
  Blocks packed;  // of the reduced vector, at the root
  std::size_t at = 0;
  for (int c : counts) {
    packed.type.push_back(raw_bytes(static_cast<std::size_t>(c) * size));
    packed.offset.push_back(static_cast<std::ptrdiff_t>(at));
    at += static_cast<std::size_t>(c) * size;
  }
  if (s.comm()->inter()) TAGWIRE_RETURN_IF_ERROR(not_in_place(sendbuf));
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  auto reduced = reduce_to_root(s, tag, input, *r, 0);
  if (!reduced) return reduced.status();
  s.next_round();
  if (!s.comm()->inter()) return scatter(s, tag, *reduced, packed, recvbuf, *mine, 0);
  // An intercommunicator's group scatters the other group's reduction
  // (MPI-3.1 §5.10: both groups reduce vectors of the same length).
  unsigned char* theirs = leaders_swap(s, tag, *reduced, r->bytes);
  s.next_round();
  return scatter(s, tag, theirs, packed, recvbuf, *mine, 0);
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
  if (entry != nullptr && entry->graph) {
    // MPI-3.1 §7.6: on a graph, both ways are the rank's neighbours in
    // MPI_Graph_neighbors' order (the standard asks for a symmetric graph).
    const auto mine = entry->graph->neighbors((*comm_of(comm))->rank());
    n.sources.assign(mine.begin(), mine.end());
    n.destinations = n.sources;
    n.receive_tags.assign(n.sources.size(), tag);
    n.send_tags.assign(n.destinations.size(), tag);
    return n;
  }
  if (entry == nullptr || !entry->cart) {
    return Status(ErrorCode::kInvalidTopology,
                  "a neighborhood collective needs a Cartesian, graph or distributed graph "
                  "topology");
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

// One block to each destination, one from each source.
void neighbor_exchange(Schedule& s, const Neighbors& n, const void* sendbuf, const Blocks& send,
                       void* recvbuf, const Blocks& recv) {
  for (std::size_t i = 0; i < n.sources.size(); ++i) {
    receive_typed(s, static_cast<unsigned char*>(recvbuf) + recv.offset[i], recv.type[i],
                  n.sources[i], n.receive_tags[i]);
  }
  for (std::size_t j = 0; j < n.destinations.size(); ++j) {
    send_typed(s, static_cast<const unsigned char*>(sendbuf) + send.offset[j], send.type[j],
               n.destinations[j], n.send_tags[j]);
  }
}

// One block of `each` elements of `type`, sent to every destination
// (the allgathers' send side: every block at offset 0).
Result<Blocks> same_block_for_each(std::size_t count, int each, MPI_Datatype type) {
  auto send = even_blocks(count, each, type);
  if (send) std::fill(send->offset.begin(), send->offset.end(), 0);
  return send;
}

// A neighborhood collective: its neighbours (on `tag`) and, from them,
// its blocks (functions of the neighbour counts).
template <typename SendBlocks, typename ReceiveBlocks>
Status neighbor_schedule(Schedule& s, int tag, MPI_Comm comm, const void* sendbuf,
                         const SendBlocks& send_blocks, void* recvbuf,
                         const ReceiveBlocks& receive_blocks) {
  auto n = neighbors_of(comm, tag);
  if (!n) return n.status();
  Result<Blocks> send = send_blocks(n->destinations.size());
  if (!send) return send.status();
  Result<Blocks> recv = receive_blocks(n->sources.size());
  if (!recv) return recv.status();
  neighbor_exchange(s, *n, sendbuf, *send, recvbuf, *recv);
  return Status::ok();
}

template <typename SendBlocks, typename ReceiveBlocks>
int neighbor_call(const char* function, MPI_Comm comm, std::optional<MPI_Request*> request,
                  const void* sendbuf, SendBlocks&& send_blocks, void* recvbuf,
                  ReceiveBlocks&& receive_blocks) {
  return collective(function, comm, request, kNeighborTag, [&](Schedule& s, int tag) {
    return neighbor_schedule(s, tag, comm, sendbuf, send_blocks, recvbuf, receive_blocks);
  });
}

// The persistent form (MPI-4): the block functions hold copies of the
// call's arguments.
template <typename SendBlocks, typename ReceiveBlocks>
int neighbor_init(const char* function, MPI_Comm comm, MPI_Request* request, const void* sendbuf,
                  SendBlocks send_blocks, void* recvbuf, ReceiveBlocks receive_blocks) {
  return persistent_collective(function, comm, request, [=](Schedule& s, int tag) {
    return neighbor_schedule(s, tag, comm, sendbuf, send_blocks, recvbuf, receive_blocks);
  });
}

}  // namespace

namespace {

Status bcast_call(Schedule& s, int tag, void* buffer, int count, MPI_Datatype type, int root) {
  if (s.comm()->inter()) {
    TAGWIRE_RETURN_IF_ERROR(check_inter_root(s, root));
    if (root == MPI_PROC_NULL) return Status::ok();  // nothing of this rank's counts
  }
  auto t = typed(count, type);
  if (!t) return t.status();
  if (s.comm()->inter()) return inter_bcast(s, tag, buffer, *t, root);
  return bcast(s, tag, buffer, *t, root);
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

// How many blocks a buffer of the call holds: one per member, of the
// remote group on an intercommunicator.
std::size_t size_of(const Schedule& s) {
  return s.comm()->inter() ? s.comm()->remote_world_ranks().size()
                           : static_cast<std::size_t>(s.comm()->size());
}

// Whether the root's arguments are this rank's: it is the root (MPI_ROOT
// on an intercommunicator).
bool is_root(const Schedule& s, int root) {
  return s.comm()->inter() ? root == MPI_ROOT : s.comm()->rank() == root;
}

// On an intercommunicator, a rank of the root's group: it neither sends
// nor receives blocks of its own.
bool beside_root(const Schedule& s, int root) {
  return s.comm()->inter() && (root == MPI_ROOT || root == MPI_PROC_NULL);
}

// What this rank sends: nothing to check in place (MPI_IN_PLACE).
Result<Typed> sent_part(const void* sendbuf, int sendcount, MPI_Datatype sendtype) {
  if (sendbuf == MPI_IN_PLACE) return Typed{};
  return typed(sendcount, sendtype);
}

Status gather_call(Schedule& s, int tag, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_root(s, root));
  Blocks blocks;  // the receive arguments count at the root only
  if (is_root(s, root)) {
    auto b = even_blocks(size_of(s), recvcount, recvtype);
    if (!b) return b.status();
    blocks = std::move(b).value();
  }
  auto mine = beside_root(s, root) ? Typed{} : sent_part(sendbuf, sendcount, sendtype);
  if (!mine) return mine.status();
  return gatherv(s, tag, sendbuf, *mine, recvbuf, blocks, root);
}

Status gatherv_call(Schedule& s, int tag, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_root(s, root));
  Blocks blocks;
  if (is_root(s, root)) {
    auto b = blocks_of(size_of(s), recvcounts, displs, recvtype);
    if (!b) return b.status();
    blocks = std::move(b).value();
  }
  auto mine = beside_root(s, root) ? Typed{} : sent_part(sendbuf, sendcount, sendtype);
  if (!mine) return mine.status();
  return gatherv(s, tag, sendbuf, *mine, recvbuf, blocks, root);
}

// The root's own receive: nothing in place at the root.
Result<Typed> received_part(const Schedule& s, int root, const void* recvbuf, int recvcount,
                            MPI_Datatype recvtype) {
  if (beside_root(s, root) || (recvbuf == MPI_IN_PLACE && is_root(s, root))) return Typed{};
  return typed(recvcount, recvtype);
}

Status any_scatter(Schedule& s, int tag, const void* sendbuf, const Blocks& blocks, void* recvbuf,
                   const Typed& mine, int root) {
  if (s.comm()->inter()) return inter_scatter(s, tag, sendbuf, blocks, recvbuf, mine, root);
  return scatter(s, tag, sendbuf, blocks, recvbuf, mine, root);
}

Status scatter_call(Schedule& s, int tag, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_root(s, root));
  Blocks blocks;  // the send arguments count at the root only
  if (is_root(s, root)) {
    auto b = even_blocks(size_of(s), sendcount, sendtype);
    if (!b) return b.status();
    blocks = std::move(b).value();
  }
  auto mine = received_part(s, root, recvbuf, recvcount, recvtype);
  if (!mine) return mine.status();
  return any_scatter(s, tag, sendbuf, blocks, recvbuf, *mine, root);
}

Status scatterv_call(Schedule& s, int tag, const void* sendbuf, const int sendcounts[],
                     const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root) {
  TAGWIRE_RETURN_IF_ERROR(check_root(s, root));
  Blocks blocks;
  if (is_root(s, root)) {
    auto b = blocks_of(size_of(s), sendcounts, displs, sendtype);
    if (!b) return b.status();
    blocks = std::move(b).value();
  }
  auto mine = received_part(s, root, recvbuf, recvcount, recvtype);
  if (!mine) return mine.status();
  return any_scatter(s, tag, sendbuf, blocks, recvbuf, *mine, root);
}

// The allgathers: this rank's block, from sendbuf or (in place) from
// where it sits among the received ones.
Result<std::pair<const void*, Typed>> own_block(const Schedule& s, const void* sendbuf,
                                                int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                                const Blocks& recv) {
  const auto me = static_cast<std::size_t>(s.comm()->rank());
  if (sendbuf == MPI_IN_PLACE) {
    TAGWIRE_RETURN_IF_ERROR(not_in_place(s.comm()->inter() ? sendbuf : nullptr));
    return std::pair<const void*, Typed>{static_cast<unsigned char*>(recvbuf) + recv.offset[me],
                                         recv.type[me]};
  }
  auto t = typed(sendcount, sendtype);
  if (!t) return t.status();
  return std::pair<const void*, Typed>{sendbuf, std::move(t).value()};
}

// This rank's block to every other directly, theirs from each.
Status to_every_peer(Schedule& s, int tag, const std::pair<const void*, Typed>& mine, void* recvbuf,
                     const Blocks& recv) {
  Blocks send;
  send.type.resize(size_of(s));
  for (Typed& t : send.type) t = mine.second;
  send.offset.assign(size_of(s), 0);
  return exchange_blocks(s, tag, mine.first, send, recvbuf, recv);
}

// MPI_Allgather: a gather to rank 0, then its broadcast of the whole (two
// messages per rank, and rank 0's connections only).
Status allgather_call(Schedule& s, int tag, const void* sendbuf, int sendcount,
                      MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  auto recv = even_blocks(size_of(s), recvcount, recvtype);
  if (!recv) return recv.status();
  auto mine = own_block(s, sendbuf, sendcount, sendtype, recvbuf, *recv);
  if (!mine) return mine.status();
  if (s.comm()->inter()) return to_every_peer(s, tag, *mine, recvbuf, *recv);
  // Rank 0 in place: its block is there already.
  const void* out = s.comm()->rank() == 0 && sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : mine->first;
  TAGWIRE_RETURN_IF_ERROR(gatherv(s, tag, out, mine->second, recvbuf, *recv, 0));
  s.next_round();
  return bcast(s, tag, recvbuf, times(recv->type[0], size_of(s)), 0);
}

Status allgatherv_call(Schedule& s, int tag, const void* sendbuf, int sendcount,
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                       const int displs[], MPI_Datatype recvtype) {
  auto recv = blocks_of(size_of(s), recvcounts, displs, recvtype);
  if (!recv) return recv.status();
  auto mine = own_block(s, sendbuf, sendcount, sendtype, recvbuf, *recv);
  if (!mine) return mine.status();
  return to_every_peer(s, tag, *mine, recvbuf, *recv);
}

// The all-to-alls once their blocks are known; in place, what is sent is
// recvbuf's blocks as they are at the call.
Status alltoall_blocks(Schedule& s, int tag, const void* sendbuf, Result<Blocks> send,
                       void* recvbuf, const Result<Blocks>& recv) {
  if (!recv) return recv.status();
  if (s.comm()->inter()) TAGWIRE_RETURN_IF_ERROR(not_in_place(sendbuf));
  if (sendbuf == MPI_IN_PLACE) {
    Blocks sent;
    const unsigned char* out = snapshot(s, recvbuf, *recv, &sent);
    return exchange_blocks(s, tag, out, sent, recvbuf, *recv);
  }
  if (!send) return send.status();
  return exchange_blocks(s, tag, sendbuf, *send, recvbuf, *recv);
}

Status alltoall_call(Schedule& s, int tag, const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  return alltoall_blocks(
      s, tag, sendbuf,
      sendbuf == MPI_IN_PLACE ? Blocks{} : even_blocks(size_of(s), sendcount, sendtype), recvbuf,
      even_blocks(size_of(s), recvcount, recvtype));
}

// The largest block alltoall_direct takes: beyond it the blocks go by
// rendezvous, and the schedule, which posts every transfer at once and
// copies the rank's own block while they run, keeps them all moving.
constexpr std::size_t kDirectAlltoallMaxBytes = 8192;

// A blocking MPI_Alltoall of small blocks whose packed bytes are the
// buffers' own: exchange_blocks' messages (one per peer, on the blocking
// call's tag and context) sent and received here and now, with no
// schedule, its steps or its requests (three quarters of an 8-byte
// all-to-all at 2 ranks outside the wait, as they were of allreduce's).
// Pairwise: in step k a rank sends to rank + k while rank - k's block
// comes in (Engine::exchange, without requests for a small one), so the
// sends and receives of each step pair up exactly and no step waits on a
// later one, whatever the protocol. Where ranks outnumber cores
// (Engine::flat_collectives) every block goes out before the first
// receive waits (Engine::collective_exchange_all), as the schedule's
// all-at-once does: a pairwise step waits for its one partner to be
// scheduled (4 ranks on 2 cores, 8 B: 9.4 us against Open MPI's 7.4
// through the schedule, 2026-12-02). Ranks may mix paths: the messages
// are the schedule's. Null when the call is not such a one (the schedule
// then also reports any error).
std::optional<Status> alltoall_direct(engine::Communicator* comm, const void* sendbuf,
                                      int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                      int recvcount, MPI_Datatype recvtype) {
  if (comm->inter() || sendbuf == MPI_IN_PLACE) return std::nullopt;
  const int n = comm->size();
  auto send = typed(sendcount, sendtype);
  auto recv = typed(recvcount, recvtype);
  if (!send || !recv || send->layout != nullptr || recv->layout != nullptr) return std::nullopt;
  const std::size_t bytes = recv->bytes;
  if (send->bytes != bytes || bytes > kDirectAlltoallMaxBytes) return std::nullopt;
  if (bytes > 0 && (sendbuf == nullptr || recvbuf == nullptr)) return std::nullopt;
  const auto* out = static_cast<const unsigned char*>(sendbuf);
  auto* in = static_cast<unsigned char*>(recvbuf);
  // Block p's offset, as even_blocks places it.
  const std::ptrdiff_t out_stride = static_cast<std::ptrdiff_t>(sendcount) * send->extent;
  const std::ptrdiff_t in_stride = static_cast<std::ptrdiff_t>(recvcount) * recv->extent;
  const int me = comm->rank();
  if (bytes > 0) std::memmove(in + me * in_stride, out + me * out_stride, bytes);
  if (n != 2 && E().flat_collectives()) {
    std::vector<engine::Engine::Outgoing> sends;
    std::vector<engine::Engine::Incoming> receives;
    sends.reserve(static_cast<std::size_t>(n - 1));
    receives.reserve(static_cast<std::size_t>(n - 1));
    for (int k = 1; k < n; ++k) {
      const int to = (me + k) % n;
      const int from = (me + n - k) % n;
      sends.push_back({to, {out + to * out_stride, bytes}});
      receives.push_back({from, {in + from * in_stride, bytes}});
    }
    return E().collective_exchange_all(comm, sends, receives, kAlltoallTag);
  }
  for (int k = 1; k < n; ++k) {
    const int to = (me + k) % n;
    const int from = (me + n - k) % n;
    TAGWIRE_RETURN_IF_ERROR(E().collective_exchange(comm, to, {out + to * out_stride, bytes}, from,
                                                    {in + from * in_stride, bytes}, kAlltoallTag));
  }
  return Status::ok();
}

Status alltoallv_call(Schedule& s, int tag, const void* sendbuf, const int sendcounts[],
                      const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int rdispls[], MPI_Datatype recvtype) {
  return alltoall_blocks(
      s, tag, sendbuf,
      sendbuf == MPI_IN_PLACE ? Blocks{} : blocks_of(size_of(s), sendcounts, sdispls, sendtype),
      recvbuf, blocks_of(size_of(s), recvcounts, rdispls, recvtype));
}

// Per-peer datatypes, displacements in bytes (MPI-3.1 §5.8).
Status alltoallw_call(Schedule& s, int tag, const void* sendbuf, const int sendcounts[],
                      const int sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                      const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[]) {
  return alltoall_blocks(
      s, tag, sendbuf,
      sendbuf == MPI_IN_PLACE ? Blocks{}
                              : typed_blocks(size_of(s), sendcounts, sdispls, sendtypes, "send"),
      recvbuf, typed_blocks(size_of(s), recvcounts, rdispls, recvtypes, "receive"));
}

}  // namespace

extern "C" {

// Each collective: the blocking call (on its kind's tag), then the
// nonblocking one (a tag block of its own, the request last), both from
// one builder.

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kBcastTag, [&](Schedule& s, int tag) {
    return bcast_call(s, tag, buffer, count, type, root);
  });
}
int MPI_Ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return bcast_call(s, tag, buffer, count, type, root);
  });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kReduceTag, [&](Schedule& s, int tag) {
    return reduce(s, tag, sendbuf, recvbuf, count, type, op, root);
  });
}
int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return reduce(s, tag, sendbuf, recvbuf, count, type, op, root);
  });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  if (auto c = comm_of(comm); c) {
    if (auto done = allreduce_direct(*c, sendbuf, recvbuf, count, type, op)) {
      return done->is_ok() ? MPI_SUCCESS : report(comm, __func__, *done);
    }
  }
  return collective(__func__, comm, std::nullopt, kReduceTag, [&](Schedule& s, int tag) {
    return allreduce(s, tag, sendbuf, recvbuf, count, type, op);
  });
}
int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return allreduce(s, tag, sendbuf, recvbuf, count, type, op);
  });
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kScanTag, [&](Schedule& s, int tag) {
    return scan(s, tag, sendbuf, recvbuf, count, type, op, true);
  });
}
int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return scan(s, tag, sendbuf, recvbuf, count, type, op, true);
  });
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kScanTag, [&](Schedule& s, int tag) {
    return scan(s, tag, sendbuf, recvbuf, count, type, op, false);
  });
}
int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return scan(s, tag, sendbuf, recvbuf, count, type, op, false);
  });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kReduceTag, [&](Schedule& s, int tag) {
    return reduce_scatter_block_call(s, tag, sendbuf, recvbuf, recvcount, type, op);
  });
}
int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return reduce_scatter_block_call(s, tag, sendbuf, recvbuf, recvcount, type, op);
  });
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kReduceTag, [&](Schedule& s, int tag) {
    return reduce_scatter_call(s, tag, sendbuf, recvbuf, recvcounts, type, op);
  });
}
int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return reduce_scatter_call(s, tag, sendbuf, recvbuf, recvcounts, type, op);
  });
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kGatherTag, [&](Schedule& s, int tag) {
    return gather_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return gather_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kGatherTag, [&](Schedule& s, int tag) {
    return gatherv_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                        root);
  });
}
int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return gatherv_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                        root);
  });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kScatterTag, [&](Schedule& s, int tag) {
    return scatter_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return scatter_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kScatterTag, [&](Schedule& s, int tag) {
    return scatterv_call(s, tag, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                         recvtype, root);
  });
}
int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return scatterv_call(s, tag, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                         recvtype, root);
  });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kGatherTag, [&](Schedule& s, int tag) {
    return allgather_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return allgather_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kAllgathervTag, [&](Schedule& s, int tag) {
    return allgatherv_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype);
  });
}
int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return allgatherv_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype);
  });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (auto c = comm_of(comm); c) {
    if (auto done =
            alltoall_direct(*c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)) {
      return done->is_ok() ? MPI_SUCCESS : report(comm, __func__, *done);
    }
  }
  return collective(__func__, comm, std::nullopt, kAlltoallTag, [&](Schedule& s, int tag) {
    return alltoall_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return alltoall_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kAlltoallTag, [&](Schedule& s, int tag) {
    return alltoallv_call(s, tag, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                          rdispls, recvtype);
  });
}
int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return alltoallv_call(s, tag, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                          rdispls, recvtype);
  });
}

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return collective(__func__, comm, std::nullopt, kAlltoallTag, [&](Schedule& s, int tag) {
    return alltoallw_call(s, tag, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                          rdispls, recvtypes);
  });
}
int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    return alltoallw_call(s, tag, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                          rdispls, recvtypes);
  });
}

int MPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return neighbor_call(
      __func__, comm, std::nullopt, sendbuf,
      [&](std::size_t destinations) {
        return same_block_for_each(destinations, sendcount, sendtype);
      },
      recvbuf, [&](std::size_t sources) { return even_blocks(sources, recvcount, recvtype); });
}
int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  return neighbor_call(
      __func__, comm, request, sendbuf,
      [&](std::size_t destinations) {
        return same_block_for_each(destinations, sendcount, sendtype);
      },
      recvbuf, [&](std::size_t sources) { return even_blocks(sources, recvcount, recvtype); });
}

int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm) {
  return neighbor_call(
      __func__, comm, std::nullopt, sendbuf,
      [&](std::size_t destinations) {
        return same_block_for_each(destinations, sendcount, sendtype);
      },
      recvbuf,
      [&](std::size_t sources) { return blocks_of(sources, recvcounts, displs, recvtype); });
}
int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return neighbor_call(
      __func__, comm, request, sendbuf,
      [&](std::size_t destinations) {
        return same_block_for_each(destinations, sendcount, sendtype);
      },
      recvbuf,
      [&](std::size_t sources) { return blocks_of(sources, recvcounts, displs, recvtype); });
}

int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return neighbor_call(
      __func__, comm, std::nullopt, sendbuf,
      [&](std::size_t destinations) { return even_blocks(destinations, sendcount, sendtype); },
      recvbuf, [&](std::size_t sources) { return even_blocks(sources, recvcount, recvtype); });
}
int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request* request) {
  return neighbor_call(
      __func__, comm, request, sendbuf,
      [&](std::size_t destinations) { return even_blocks(destinations, sendcount, sendtype); },
      recvbuf, [&](std::size_t sources) { return even_blocks(sources, recvcount, recvtype); });
}

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return neighbor_call(
      __func__, comm, std::nullopt, sendbuf,
      [&](std::size_t destinations) {
        return blocks_of(destinations, sendcounts, sdispls, sendtype);
      },
      recvbuf,
      [&](std::size_t sources) { return blocks_of(sources, recvcounts, rdispls, recvtype); });
}
int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  return neighbor_call(
      __func__, comm, request, sendbuf,
      [&](std::size_t destinations) {
        return blocks_of(destinations, sendcounts, sdispls, sendtype);
      },
      recvbuf,
      [&](std::size_t sources) { return blocks_of(sources, recvcounts, rdispls, recvtype); });
}

int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm) {
  return neighbor_call(
      __func__, comm, std::nullopt, sendbuf,
      [&](std::size_t destinations) {
        return typed_blocks(destinations, sendcounts, sdispls, sendtypes, "send");
      },
      recvbuf,
      [&](std::size_t sources) {
        return typed_blocks(sources, recvcounts, rdispls, recvtypes, "receive");
      });
}
int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request* request) {
  return neighbor_call(
      __func__, comm, request, sendbuf,
      [&](std::size_t destinations) {
        return typed_blocks(destinations, sendcounts, sdispls, sendtypes, "send");
      },
      recvbuf,
      [&](std::size_t sources) {
        return typed_blocks(sources, recvcounts, rdispls, recvtypes, "receive");
      });
}

// MPI_Barrier on an intracommunicator is the engine's own; on an
// intercommunicator, and nonblocking, it is a schedule like the others.
int MPI_Barrier(MPI_Comm comm) {
  auto c = comm_of(comm);
  if (c && !(*c)->inter()) {
    TW_MPI_TRY(comm, E().barrier(*c));
    return MPI_SUCCESS;
  }
  return collective(__func__, comm, std::nullopt, kBarrierTag,
                    [&](Schedule& s, int tag) { return inter_barrier(s, tag); });
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return collective(__func__, comm, request, 0, [&](Schedule& s, int tag) {
    if (s.comm()->inter()) return inter_barrier(s, tag);
    dissemination_barrier(s, tag);
    return Status::ok();
  });
}

// The persistent forms (MPI-4): the same builders, their arguments copied.

int MPI_Barrier_init(MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [](Schedule& s, int tag) {
    if (s.comm()->inter()) return inter_barrier(s, tag);
    dissemination_barrier(s, tag);
    return Status::ok();
  });
}

int MPI_Bcast_init(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Info,
                   MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return bcast_call(s, tag, buffer, count, type, root);
  });
}

int MPI_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    int root, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return reduce(s, tag, sendbuf, recvbuf, count, type, op, root);
  });
}

int MPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return allreduce(s, tag, sendbuf, recvbuf, count, type, op);
  });
}

int MPI_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return scan(s, tag, sendbuf, recvbuf, count, type, op, true);
  });
}

int MPI_Exscan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return scan(s, tag, sendbuf, recvbuf, count, type, op, false);
  });
}

int MPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                  MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info,
                                  MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return reduce_scatter_block_call(s, tag, sendbuf, recvbuf, recvcount, type, op);
  });
}

int MPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[],
                            MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info,
                            MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return reduce_scatter_call(s, tag, sendbuf, recvbuf, recvcounts, type, op);
  });
}

int MPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info,
                    MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return gather_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int MPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return gatherv_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                        root);
  });
}

int MPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info,
                     MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return scatter_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

int MPI_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return scatterv_call(s, tag, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                         recvtype, root);
  });
}

int MPI_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                       MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return allgather_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int MPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return allgatherv_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype);
  });
}

int MPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                      MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return alltoall_call(s, tag, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int MPI_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                       MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return alltoallv_call(s, tag, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                          rdispls, recvtype);
  });
}

int MPI_Alltoallw_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info,
                       MPI_Request* request) {
  return persistent_collective(__func__, comm, request, [=](Schedule& s, int tag) {
    return alltoallw_call(s, tag, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                          rdispls, recvtypes);
  });
}

int MPI_Neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info, MPI_Request* request) {
  return neighbor_init(
      __func__, comm, request, sendbuf,
      [=](std::size_t destinations) {
        return same_block_for_each(destinations, sendcount, sendtype);
      },
      recvbuf, [=](std::size_t sources) { return even_blocks(sources, recvcount, recvtype); });
}

int MPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                                 MPI_Request* request) {
  return neighbor_init(
      __func__, comm, request, sendbuf,
      [=](std::size_t destinations) {
        return same_block_for_each(destinations, sendcount, sendtype);
      },
      recvbuf,
      [=](std::size_t sources) { return blocks_of(sources, recvcounts, displs, recvtype); });
}

int MPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Info, MPI_Request* request) {
  return neighbor_init(
      __func__, comm, request, sendbuf,
      [=](std::size_t destinations) { return even_blocks(destinations, sendcount, sendtype); },
      recvbuf, [=](std::size_t sources) { return even_blocks(sources, recvcount, recvtype); });
}

int MPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                                MPI_Request* request) {
  return neighbor_init(
      __func__, comm, request, sendbuf,
      [=](std::size_t destinations) {
        return blocks_of(destinations, sendcounts, sdispls, sendtype);
      },
      recvbuf,
      [=](std::size_t sources) { return blocks_of(sources, recvcounts, rdispls, recvtype); });
}

int MPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info,
                                MPI_Request* request) {
  return neighbor_init(
      __func__, comm, request, sendbuf,
      [=](std::size_t destinations) {
        return typed_blocks(destinations, sendcounts, sdispls, sendtypes, "send");
      },
      recvbuf,
      [=](std::size_t sources) {
        return typed_blocks(sources, recvcounts, rdispls, recvtypes, "receive");
      });
}

int MPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype type, MPI_Op op) {
  auto r = reduction_of(op, count, type);
  TW_MPI_TRY(MPI_COMM_WORLD, r.status());
  if (op >= kFirstUserOp) {  // the function takes the buffers as they are
    TW_MPI_TRY(MPI_COMM_WORLD, apply_op(op, type, inbuf, inoutbuf, r->count));
    return MPI_SUCCESS;
  }
  if (r->layout == nullptr) {  // contiguous: combined in place, element by element
    TW_MPI_TRY(MPI_COMM_WORLD, reduce_packed(*r, inbuf, inoutbuf));
    return MPI_SUCCESS;
  }
  std::vector<unsigned char> in(r->bytes);
  std::vector<unsigned char> inout(r->bytes);
  pack_operand(*r, inbuf, in.data());
  pack_operand(*r, inoutbuf, inout.data());
  TW_MPI_TRY(MPI_COMM_WORLD, reduce_packed(*r, in.data(), inout.data()));
  unpack_operand(*r, inout.data(), inoutbuf);
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
