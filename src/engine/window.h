// Window: memory exposed to a communicator's ranks for one-sided access
// (MPI-4.1 §12). Put is a remote write and Get a remote read straight into
// or out of the target's registered window (RDMA WRITE / READ on verbs,
// ucp_put / ucp_get on UCX). Two synchronisations open access epochs:
//  - fence (window.cc): MPI_Win_fence completes the epoch's accesses
//    locally, flushes them to their targets and ends with a barrier;
//  - passive target (window_lock.cc): MPI_Win_lock / lock_all take a lock
//    word in the target's window by remote compare-and-swap, with no help
//    from the target's application; unlock flushes, then releases it.
//  - general active target (window_pscw.cc): MPI_Win_post / start /
//    complete / wait count posts and completions in words of the peer's,
//    one per (origin, target) pair, so each has one writer.
// A shared-memory window (window_shared.cc) is one segment that every
// rank maps: each rank's part is also registered as an ordinary window,
// and every rank's view of it is set, so puts, gets and accumulates there
// are a memcpy whatever the transport.
// Accumulates (window_lock.cc) are a read-modify-write of the target's
// memory under a second word of each rank's, the accumulate lock, so that
// they are atomic with respect to each other whatever the operation,
// datatype or transport; except that where every rank's transport has
// remote atomics (the NIC's, on verbs), or every rank maps the window,
// accumulates of 8-byte integers update each word with one atomic instead
// (window_atomics.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "common/shared_segment.h"
#include "common/status.h"
#include "transport/transport.h"

namespace tagwire::engine {

class Communicator;
class Engine;

// Where a rank's window lies, as every other rank learns it at creation.
struct RemoteWindow {
  std::uint64_t base = 0;
  std::uint64_t size = 0;
  std::int32_t disp_unit = 1;
  std::vector<std::uint8_t> key;
  std::uint64_t lock_words = 0;  // address of its WindowLockWord pair
  std::vector<std::uint8_t> lock_key;
  // Where the window and the lock words are in this process when the
  // transport maps them (Transport::map_remote; shm's MPI_Win_allocate):
  // puts, gets and swaps there are a memcpy or a CPU atomic.
  std::uint8_t* view = nullptr;
  std::uint64_t* lock_view = nullptr;

  // Where `bytes` at displacement `disp` (in disp_unit) plus `offset`
  // bytes begin, counted from the window's start, into `at`; false when
  // any of them lies outside it (or the arithmetic overflows).
  [[gnu::always_inline]] bool place(std::uint64_t disp, std::ptrdiff_t offset, std::size_t bytes,
                                    std::uint64_t* at) const {
    std::uint64_t start = 0;
    const bool overflows =
        __builtin_mul_overflow(disp, static_cast<std::uint64_t>(disp_unit), &start);
    // Unsigned: a piece before the window wraps around to a huge offset.
    *at = start + static_cast<std::uint64_t>(offset);
    return !overflows && (offset >= 0) == (*at >= start) && *at <= size && bytes <= size - *at;
  }
};

// Dynamic windows (window_dynamic.cc): memory attached to a rank after
// creation, addressed by its absolute address. Each rank publishes its
// attached regions in a directory (the window's own memory, read by the
// others with the transport's read), and each origin keeps a copy per
// target, checked against the directory's generation (one 16-byte read)
// before each access and fetched again when it changed.
struct DynamicRegion {
  std::uint64_t base = 0;
  std::uint64_t size = 0;
  std::vector<std::uint8_t> key;
  std::uint8_t* view = nullptr;  // mapped here (Transport::map_remote, or this rank's own)
};
struct DynamicTarget {
  bool fetched = false;  // `regions` holds the directory of `generation`
  std::uint64_t generation = 0;
  std::vector<std::shared_ptr<const DynamicRegion>> regions;
};
struct AttachedRegion {
  std::size_t size = 0;
  std::unique_ptr<transport::Registration> registration;
};
struct DynamicWindow {
  std::mutex mutex;  // all below: a rank's threads may attach and access at once
  std::map<std::uint64_t, AttachedRegion> attached;  // this rank's, by base address
  std::vector<DynamicTarget> targets;                // by rank: the copies of their directories
};

// Where one access lands (Engine::rma_target): the address at the target,
// the key that reaches it, and where it is in this process when mapped.
struct RmaTarget {
  std::uint64_t address = 0;
  std::span<const std::uint8_t> key;
  std::uint8_t* view = nullptr;
};

// The two 64-bit words every rank of a window holds for the others'
// compare-and-swap (Transport::allocate_atomic_words).
enum WindowLockWord : unsigned {
  // Passive target: 0 free, kExclusiveLock | (world rank + 1) for an
  // exclusive holder, else the shared holders: bit r for window rank r
  // (windows of up to 63 ranks), or their number (larger windows).
  kPassiveLockWord = 0,
  // Accumulates: 0 free, else world rank + 1 of the holder.
  kAccumulateLockWord = 1,
  kWindowLockWords = 2,
  // Then, for a window of n ranks, n words counting the posts each rank
  // made to this one, and n counting the completions each rank sent it
  // (PSCW: window_pscw.cc).
};
inline constexpr std::uint64_t kExclusiveLock = std::uint64_t{1} << 63;
// All of a rank's words in a window of `ranks` ranks.
constexpr std::size_t window_lock_words(std::size_t ranks) {
  return kWindowLockWords + 2 * ranks;
}

// One transport operation a blocking window call waits for
// (Engine::await).
struct WindowOpWait {
  bool finished = false;
  Status status;
  transport::Completion completion() { return {&WindowOpWait::done, this}; }
  static void done(void* ctx, const Status& s) {
    auto* op = static_cast<WindowOpWait*>(ctx);
    op->status = s;
    op->finished = true;
  }
};

// The error class a rank sent in a window creation's first exchange
// (Engine::win_fail, win_shared_fail); a value out of range reads as
// kInternal.
inline ErrorCode failed_part_code(std::uint32_t sent) {
  return sent <= static_cast<std::uint32_t>(ErrorCode::kInternal) ? static_cast<ErrorCode>(sent)
                                                                  : ErrorCode::kInternal;
}

// What a window's creator asked through its MPI_Info (mpi_api/windows.cc).
struct WindowHints {
  // "tagwire_rma_atomics": this window's 8-byte integer accumulates by
  // atomics (true) or under the lock (false), whatever TAGWIRE_RMA_ATOMICS
  // says; unset: as it says. A window takes atomics only if every rank
  // asks for them.
  std::optional<bool> rma_atomics;
};

// What this rank holds of a target's passive-target lock.
enum class HeldLock : std::uint8_t { kNone, kShared, kExclusive, kUnchecked };

struct Window {
  Engine* engine = nullptr;
  Communicator* comm = nullptr;
  // MPI_Win_allocate_shared (window_shared.cc): the one segment every rank
  // maps, holding all ranks' parts (each rank's `view` in `ranks` says where
  // its part is here); declared before `registration` so that this rank's
  // part is deregistered before it is unmapped.
  SharedSegment shared_memory;
  void* base = nullptr;
  std::size_t size = 0;
  int disp_unit = 1;
  std::unique_ptr<transport::Registration> registration;  // none for an empty window
  std::unique_ptr<transport::Registration> lock_words;    // kWindowLockWords words
  std::vector<RemoteWindow> ranks;                        // by rank in `comm`
  bool epoch_open = false;                                // a fence has opened an access epoch
  std::vector<HeldLock> locks;                            // by target: MPI_Win_lock's
  bool locked_all = false;                                // MPI_Win_lock_all's
  bool unchecked_all = false;                             // ... with MPI_MODE_NOCHECK
  // PSCW: the groups of the open access (start) and exposure (post)
  // epochs, as ranks of `comm`; by rank, whether it is in the access group;
  // and the counts of posts and completions sent and consumed, by peer.
  std::vector<int> access_group, exposure_group;
  std::vector<std::uint8_t> in_access_group;
  bool access_open = false, exposure_open = false;
  std::vector<std::uint64_t> posts_sent, posts_taken, completes_sent, completes_taken;
  std::unique_ptr<DynamicWindow> dynamic;  // MPI_Win_create_dynamic's; `base` is the directory
  // TAGWIRE_RMA_ATOMICS is on at every rank.
  bool rma_atomics = false;
  // Every rank's transport offers word atomics and TAGWIRE_RMA_ATOMICS is on
  // at every rank: 8-byte integer accumulates go word by word through them
  // (Engine::update_words, window_atomics.cc).
  bool word_atomics = false;
  // Every rank maps every rank's part here (shm's MPI_Win_allocate, a
  // shared window), agreed at creation, and TAGWIRE_RMA_ATOMICS is on:
  // 8-byte integer accumulates are CPU atomics on the mappings.
  bool view_atomics = false;
  int pending = 0;         // puts and gets not yet complete locally
  bool unflushed = false;  // a put went through the transport since the last flush (a get is
                           // complete at its target once complete here)
  Status error;            // the first failure among them, reported by the fence
  // The first access that failed because its target died: reported by a
  // flush of every target (flush_all, unlock_all, fence), and by a flush of
  // one target only when that target is dead. A death must not fail the
  // flush of a live target (ULFM's rule: an operation with live ranks
  // succeeds).
  Status lost;

  // Whether an epoch of any kind lets this rank access target `t` now.
  [[gnu::always_inline]] bool may_access(std::size_t t) const {
    return epoch_open || locked_all || locks[t] != HeldLock::kNone ||
           (access_open && in_access_group[t] != 0);
  }
};

}  // namespace tagwire::engine
