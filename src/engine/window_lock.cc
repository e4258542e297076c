// Passive-target synchronisation and accumulates (window.h).
//
// Each rank of a window holds two 64-bit words that the others
// compare-and-swap (kWindowLockWords, from the transport's
// allocate_atomic_words: NIC atomics on verbs, UCX atomics, a CPU atomic
// on the shm transport's shared segment). With compare-and-swap alone:
//  - MPI_Win_lock(EXCLUSIVE) swaps 0 for kExclusiveLock | (rank + 1);
//  - MPI_Win_lock(SHARED) sets its holder's bit (its rank in the window)
//    in a word that has no exclusive bit, guessing the word and retrying
//    with what the swap returned; in a window of more than 63 ranks,
//    where the bits would not fit beside the exclusive one, it adds one
//    to a count instead;
//  - an accumulate swaps 0 for rank + 1 in the second word, reads the
//    target's bytes, combines, writes them back, flushes them to the
//    target and frees the word. Every accumulate of every rank takes it, so
//    accumulates to one location are atomic with respect to each other for
//    every operation and datatype, on every transport, and the target's
//    application is never asked to help.
// A holder of an exclusive word is named in it, and so are shared holders
// by their bits, so a waiter learns when the holder it waits for died
// (MPI_ERR_PROC_FAILED) instead of waiting for ever. (Before the bits, a
// shared count did not name its holders, and an exclusive waiter on one
// that died waited for ever.) In a window of more than 63 ranks the
// holders of a shared count are still not named, and such a waiter
// still waits.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/idle_backoff.h"

namespace tagwire::engine {

namespace {

// The world rank an exclusive word's value names, or -1 for none.
int holder_of(std::uint64_t value, bool passive) {
  if (passive && (value & kExclusiveLock) == 0) return -1;
  const std::uint64_t who = value & ~kExclusiveLock;
  return who == 0 ? -1 : static_cast<int>(who - 1);
}

// Whether a window's shared passive locks are bits, one per window rank
// (bit 63 is kExclusiveLock), or a count.
bool shared_holders_named(const Window* w) {
  return w->ranks.size() < 64;
}

// This rank's bit among them.
std::uint64_t shared_holder_bit(const Window* w) {
  return std::uint64_t{1} << w->comm->rank();
}

}  // namespace

Result<std::uint64_t> Engine::lock_word_cas(Window* w, int target, unsigned word,
                                            std::uint64_t expected, std::uint64_t desired) {
  const int peer = w->comm->world_rank(target);
  const RemoteWindow& rw = w->ranks[static_cast<std::size_t>(target)];
  if (rw.lock_view != nullptr) {  // mapped here: the transport's atomic is this one
    {
      EngineGuard lock(mutex_);  // the dead set changes under it
      if (is_dead(peer)) return peer_failed_status(peer);
    }
    std::uint64_t seen = expected;
    std::atomic_ref<std::uint64_t>(rw.lock_view[word])
        .compare_exchange_strong(seen, desired, std::memory_order_acq_rel);
    return seen;
  }
  WindowOpWait op;
  std::uint64_t old = 0;
  {
    EngineGuard lock(mutex_);
    if (peer == world_rank()) {
      auto* words = reinterpret_cast<std::uint64_t*>(w->lock_words->address());
      return transport_->local_compare_and_swap(*w->lock_words, words + word, expected, desired);
    }
    if (is_dead(peer)) return peer_failed_status(peer);
    auto issued = transport_->compare_and_swap(peer, rw.lock_words + word * 8, rw.lock_key,
                                               expected, desired, &old, op.completion());
    if (!issued) return issued.status();
    if (*issued == transport::Issued::kDone) op.finished = true;
  }
  await(op);
  if (!op.status.is_ok()) return op.status;
  return old;
}

// Swaps until the swap takes: first `swap`, then, after each miss, what
// `plan` makes of the value found (nothing: a value this rank cannot have
// left there). A value naming a dead exclusive holder ends the wait.
template <typename Plan>
Status Engine::lock_word_swap(Window* w, int target, unsigned word, WordSwap swap, Plan plan,
                              const char* what) {
  IdleBackoff idle;
  for (;;) {
    auto old = lock_word_cas(w, target, word, swap.expected, swap.desired);
    if (!old) return old.status().with_context(what);
    if (*old == swap.expected) return Status::ok();
    const std::optional<WordSwap> next = plan(*old);
    if (!next) {
      return Status(ErrorCode::kInternal, std::string(what) + ": the lock word holds " +
                                              std::to_string(*old) + ", not a state we left");
    }
    swap = *next;
    int holder = holder_of(*old, word == kPassiveLockWord);
    unsigned n;
    {
      EngineGuard lock(mutex_);
      // Waiting (the next swap expects another value than the one found)
      // for shared holders: one of them dead ends it as a dead exclusive
      // holder does.
      if (holder < 0 && word == kPassiveLockWord && swap.expected != *old &&
          shared_holders_named(w)) {
        for (std::size_t r = 0; r < w->ranks.size() && holder < 0; ++r) {
          const int world = w->comm->world_rank(static_cast<int>(r));
          if (((*old >> r) & 1) != 0 && is_dead(world)) holder = world;
        }
      }
      if (holder >= 0 && is_dead(holder) && word == kAccumulateLockWord) {
        // The library's own lock, taken for one accumulate, whose holder
        // died inside it: that accumulate never finishes, and every later
        // one at this target would fail with it (an operation between
        // live ranks must succeed). Take the word over as if free. (A
        // user's exclusive MPI_Win_lock held by a dead rank stays an
        // error, below: its epoch is the user's.)
        if (const std::optional<WordSwap> fresh = plan(0)) {
          swap = WordSwap{*old, fresh->desired};
          continue;
        }
      }
      if (holder >= 0 && is_dead(holder)) {
        return peer_failed_status(holder).with_context(std::string(what) + ": held by rank " +
                                                       std::to_string(holder) + ", which died");
      }
      n = progress_locked();
    }
    idle.turn(n != 0);
  }
}

std::uint64_t Engine::exclusive_value(unsigned word) const {
  const auto me = static_cast<std::uint64_t>(world_rank()) + 1;
  return word == kPassiveLockWord ? (kExclusiveLock | me) : me;
}

Status Engine::acquire_word(Window* w, int target, unsigned word, bool exclusive) {
  if (exclusive) {
    // Only a free word can be taken: whatever was found, expect 0 again.
    const WordSwap take{0, exclusive_value(word)};
    return lock_word_swap(
        w, target, word, take, [&](std::uint64_t) { return take; },
        word == kAccumulateLockWord ? "the accumulate lock" : "MPI_Win_lock (exclusive)");
  }
  if (word == kPassiveLockWord && shared_holders_named(w)) {
    // Shared: this rank's bit beside the others', once no exclusive
    // holder is there.
    const std::uint64_t bit = shared_holder_bit(w);
    return lock_word_swap(
        w, target, word, WordSwap{0, bit},
        [bit](std::uint64_t found) {
          const std::uint64_t others = (found & kExclusiveLock) != 0 ? 0 : found;
          return std::optional(WordSwap{others, others | bit});
        },
        "MPI_Win_lock (shared)");
  }
  // Shared: one more holder, whatever the count was, once no exclusive
  // holder is there.
  return lock_word_swap(
      w, target, word, WordSwap{0, 1},
      [](std::uint64_t found) {
        const std::uint64_t count = (found & kExclusiveLock) != 0 ? 0 : found;
        return std::optional(WordSwap{count, count + 1});
      },
      "MPI_Win_lock (shared)");
}

Status Engine::release_word(Window* w, int target, unsigned word, bool exclusive) {
  if (exclusive) {
    const std::uint64_t mine = exclusive_value(word);
    auto old = lock_word_cas(w, target, word, mine, 0);
    if (!old) return old.status().with_context("releasing a window lock");
    if (*old != mine) {
      return {ErrorCode::kInternal, "releasing a window lock: it holds " + std::to_string(*old) +
                                        ", not this rank's " + std::to_string(mine)};
    }
    return Status::ok();
  }
  if (word == kPassiveLockWord && shared_holders_named(w)) {
    // Shared: this rank's bit cleared; a word without it (or with an
    // exclusive holder) was not ours to release.
    const std::uint64_t bit = shared_holder_bit(w);
    return lock_word_swap(
        w, target, word, WordSwap{bit, 0},
        [bit](std::uint64_t found) -> std::optional<WordSwap> {
          if ((found & kExclusiveLock) != 0 || (found & bit) == 0) return std::nullopt;
          return WordSwap{found, found & ~bit};
        },
        "MPI_Win_unlock (shared)");
  }
  // Shared: one holder fewer; a count of 0 or an exclusive holder means the
  // word was not ours to release.
  return lock_word_swap(
      w, target, word, WordSwap{1, 0},
      [](std::uint64_t found) -> std::optional<WordSwap> {
        if (found == 0 || (found & kExclusiveLock) != 0) return std::nullopt;
        return WordSwap{found, found - 1};
      },
      "MPI_Win_unlock (shared)");
}

Status Engine::win_lock(Window* w, int target, bool exclusive, bool check) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  TAGWIRE_RETURN_IF_ERROR(check_peer(w->comm, target, false, "target"));
  if (target == kProcNull) return Status::ok();
  HeldLock& held = w->locks[static_cast<std::size_t>(target)];
  if (held != HeldLock::kNone || w->locked_all) {
    return {ErrorCode::kRmaSync, "MPI_Win_lock: this rank already holds a lock on rank " +
                                     std::to_string(target) + " of this window"};
  }
  if (check) TAGWIRE_RETURN_IF_ERROR(acquire_word(w, target, kPassiveLockWord, exclusive));
  held = !check ? HeldLock::kUnchecked : exclusive ? HeldLock::kExclusive : HeldLock::kShared;
  return Status::ok();
}

Status Engine::win_unlock(Window* w, int target) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  TAGWIRE_RETURN_IF_ERROR(check_peer(w->comm, target, false, "target"));
  if (target == kProcNull) return Status::ok();
  HeldLock& held = w->locks[static_cast<std::size_t>(target)];
  if (held == HeldLock::kNone) {
    return {ErrorCode::kRmaSync,
            "MPI_Win_unlock: this rank holds no lock on rank " + std::to_string(target)};
  }
  // Every access of the epoch is at its target before anyone else may in.
  Status flushed = win_flush(w, target);
  Status released = Status::ok();
  if (held != HeldLock::kUnchecked) {
    released = release_word(w, target, kPassiveLockWord, held == HeldLock::kExclusive);
  }
  held = HeldLock::kNone;
  TAGWIRE_RETURN_IF_ERROR(flushed.with_context("MPI_Win_unlock"));
  return released;
}

Status Engine::win_lock_all(Window* w, bool check) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  if (w->locked_all) return {ErrorCode::kRmaSync, "MPI_Win_lock_all: already called"};
  for (HeldLock held : w->locks) {
    if (held != HeldLock::kNone) {
      return {ErrorCode::kRmaSync, "MPI_Win_lock_all while holding MPI_Win_lock on a rank"};
    }
  }
  const int n = static_cast<int>(w->ranks.size());
  for (int t = 0; check && t < n; ++t) {
    Status s = acquire_word(w, t, kPassiveLockWord, false);
    if (!s.is_ok()) {
      for (int u = 0; u < t; ++u) (void)release_word(w, u, kPassiveLockWord, false);
      return s.with_context("MPI_Win_lock_all");
    }
  }
  w->locked_all = true;
  w->unchecked_all = !check;
  return Status::ok();
}

Status Engine::win_unlock_all(Window* w) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  if (!w->locked_all) return {ErrorCode::kRmaSync, "MPI_Win_unlock_all without MPI_Win_lock_all"};
  Status first = win_flush(w).with_context("MPI_Win_unlock_all");
  const int n = static_cast<int>(w->ranks.size());
  for (int t = 0; !w->unchecked_all && t < n; ++t) {
    Status s = release_word(w, t, kPassiveLockWord, false);
    if (first.is_ok()) first = s;
  }
  w->locked_all = false;
  w->unchecked_all = false;
  return first;
}

Status Engine::accumulate(Window* w, int target, std::uint64_t disp, std::size_t bytes,
                          const AccumulateUpdate& update, const char* what,
                          std::span<const ByteRange> written, std::ptrdiff_t offset) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  // The target's bytes: one piece, or, on a dynamic window, one per region
  // they span (regions attached back to back, as a put may span them).
  struct Part {
    std::size_t from = 0;  // in `bytes`
    std::size_t length = 0;
    std::shared_ptr<const DynamicRegion> region;  // holds what `at.key` views
    RmaTarget at;
  };
  std::vector<Part> parts;
  if (w->dynamic && bytes > 0) {
    auto split = dynamic_parts(w, target, disp + static_cast<std::uint64_t>(offset), bytes, what);
    if (!split) return split.status();
    std::size_t from = 0;
    for (DynamicPart& part : *split) {
      parts.push_back({from, part.length, std::move(part.region), {}});
      from += part.length;
    }
  } else {
    parts.push_back({0, bytes, nullptr, {}});  // no regions: the window's one range
  }
  {
    EngineGuard lock(mutex_);
    for (Part& part : parts) {
      auto at = rma_target(w, part.length, target, disp, what, part.region.get(),
                           offset + static_cast<std::ptrdiff_t>(part.from));
      if (!at) return at.status();
      part.at = *at;
    }
    if (target == kProcNull) return Status::ok();
    if (is_dead(w->comm->world_rank(target))) {
      return peer_failed_status(w->comm->world_rank(target));
    }
    if (bytes == 0) return Status::ok();
  }
  const int peer = w->comm->world_rank(target);
  const bool self = peer == world_rank();
  TAGWIRE_RETURN_IF_ERROR(acquire_word(w, target, kAccumulateLockWord, true));
  std::vector<std::uint8_t> current(bytes);
  // One blocking read or write of `length` of the target's bytes from
  // `from`, a transfer per part it touches.
  auto move_part = [&](bool put, const RmaTarget& at, std::size_t from, std::size_t into,
                       std::size_t length) -> Status {
    std::span<std::uint8_t> here(current.data() + from, length);
    if (self || at.view != nullptr) {
      auto* there = (self ? reinterpret_cast<std::uint8_t*>(at.address) : at.view) + into;
      if (put) {
        std::memcpy(there, here.data(), length);
      } else {
        std::memcpy(here.data(), there, length);
      }
      return Status::ok();
    }
    WindowOpWait op;
    {
      EngineGuard lock(mutex_);
      const std::uint64_t address = at.address + into;
      auto issued = put ? transport_->write(peer, here, address, at.key, op.completion())
                        : transport_->read(peer, here, address, at.key, op.completion());
      if (!issued) return issued.status();
      if (put) w->unflushed = true;  // a read is done once here (window.cc)
      if (*issued == transport::Issued::kDone) op.finished = true;
    }
    await(op);
    return op.status;
  };
  auto move = [&](bool put, std::size_t from, std::size_t length) -> Status {
    for (const Part& part : parts) {
      const std::size_t lo = std::max(from, part.from);
      const std::size_t hi = std::min(from + length, part.from + part.length);
      if (lo < hi) TAGWIRE_RETURN_IF_ERROR(move_part(put, part.at, lo, lo - part.from, hi - lo));
    }
    return Status::ok();
  };
  Status s = move(false, 0, bytes);
  if (s.is_ok()) {
    auto write_back = update(current);
    if (!write_back) {
      s = write_back.status();
    } else if (*write_back) {
      if (written.empty()) s = move(true, 0, bytes);
      for (std::size_t i = 0; i < written.size() && s.is_ok(); ++i) {
        if (written[i].offset > bytes || written[i].length > bytes - written[i].offset) {
          s = Status(ErrorCode::kInternal, "an accumulate's write-back lies outside its bytes");
        } else {
          s = move(true, written[i].offset, written[i].length);
        }
      }
      // In the target's memory before the next holder reads it.
      if (s.is_ok() && !self && parts.front().at.view == nullptr) s = win_flush(w, target);
    }
  }
  Status released = release_word(w, target, kAccumulateLockWord, true);
  TAGWIRE_RETURN_IF_ERROR(s.with_context(what));
  return released.with_context(what);
}

}  // namespace tagwire::engine
