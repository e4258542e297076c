// General active-target synchronisation (MPI_Win_post / start / complete /
// wait / test; window.h).
//
// Every rank of a window counts, in its lock words, the posts each other
// rank made to it and the completions each other rank sent it: one word
// per (peer, kind), so each word has one writer, which knows its value and
// adds one with a single compare-and-swap that always takes. A target's
// post adds one to each origin's post count of it; an origin's start
// waits until each target's count passes what it has taken; complete
// flushes the epoch's accesses to their targets and then adds to each
// target's completion count; wait (or test) waits for each origin's. Like
// the locks, this needs nothing from the other side's application.
#include <atomic>
#include <string>

#include "engine/engine.h"

namespace tagwire::engine {

namespace {

unsigned post_word(const Window& w, int from) {
  (void)w;
  return kWindowLockWords + static_cast<unsigned>(from);
}

unsigned complete_word(const Window& w, int from) {
  return kWindowLockWords + static_cast<unsigned>(w.ranks.size()) + static_cast<unsigned>(from);
}

// A count in this rank's own words, written by a peer's NIC or CPU.
std::uint64_t own_word(const Window& w, unsigned word) {
  auto* words = reinterpret_cast<std::uint64_t*>(w.lock_words->address());
  return std::atomic_ref<std::uint64_t>(words[word]).load(std::memory_order_acquire);
}

Status check_group(const Window& w, std::span<const int> group, const char* what) {
  for (int r : group) {
    if (r < 0 || static_cast<std::size_t>(r) >= w.ranks.size()) {
      return {ErrorCode::kInvalidGroup, std::string(what) + ": rank " + std::to_string(r) +
                                            " of the group is not in the window's group"};
    }
  }
  return Status::ok();
}

}  // namespace

// Adds one to word `word` of `target`, which only this rank writes.
Status Engine::bump_word(Window* w, int target, unsigned word, std::uint64_t* sent) {
  auto old = lock_word_cas(w, target, word, *sent, *sent + 1);
  if (!old) return old.status();
  if (*old != *sent) {
    return {ErrorCode::kInternal, "a PSCW count at rank " + std::to_string(target) + " holds " +
                                      std::to_string(*old) + ", not the " + std::to_string(*sent) +
                                      " this rank sent"};
  }
  ++*sent;
  return Status::ok();
}

// Waits until `from`'s count in this rank's word passes `*taken`, and
// takes one. A dead `from` ends the wait.
Status Engine::take_word(Window* w, int from, unsigned word, std::uint64_t* taken,
                         const char* what) {
  const int peer = w->comm->world_rank(from);
  bool dead = false;
  progress_until([&] { return own_word(*w, word) > *taken || (dead = is_dead(peer)); });
  if (dead) {
    EngineGuard lock(mutex_);
    return peer_failed_status(peer).with_context(what);
  }
  ++*taken;
  return Status::ok();
}

Status Engine::win_post(Window* w, std::span<const int> origins) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  TAGWIRE_RETURN_IF_ERROR(check_group(*w, origins, "MPI_Win_post"));
  if (w->exposure_open) {
    return {ErrorCode::kRmaSync, "MPI_Win_post: an exposure epoch is already open"};
  }
  const int me = w->comm->rank();
  for (int o : origins) {
    const auto i = static_cast<std::size_t>(o);
    TAGWIRE_RETURN_IF_ERROR(
        bump_word(w, o, post_word(*w, me), &w->posts_sent[i]).with_context("MPI_Win_post"));
  }
  w->exposure_group.assign(origins.begin(), origins.end());
  w->exposure_open = true;
  return Status::ok();
}

Status Engine::win_start(Window* w, std::span<const int> targets) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  TAGWIRE_RETURN_IF_ERROR(check_group(*w, targets, "MPI_Win_start"));
  if (w->access_open) {
    return {ErrorCode::kRmaSync, "MPI_Win_start: an access epoch is already open"};
  }
  for (int t : targets) {
    const auto i = static_cast<std::size_t>(t);
    TAGWIRE_RETURN_IF_ERROR(take_word(w, t, post_word(*w, t), &w->posts_taken[i], "MPI_Win_start"));
  }
  w->access_group.assign(targets.begin(), targets.end());
  for (int t : targets) w->in_access_group[static_cast<std::size_t>(t)] = 1;
  w->access_open = true;
  return Status::ok();
}

Status Engine::win_complete(Window* w) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  if (!w->access_open) return {ErrorCode::kRmaSync, "MPI_Win_complete without MPI_Win_start"};
  // The accesses are in the targets' memory before any target hears.
  Status first = win_flush(w).with_context("MPI_Win_complete");
  const int me = w->comm->rank();
  for (int t : w->access_group) {
    const auto i = static_cast<std::size_t>(t);
    Status s = bump_word(w, t, complete_word(*w, me), &w->completes_sent[i])
                   .with_context("MPI_Win_complete");
    if (first.is_ok()) first = s;
    w->in_access_group[i] = 0;
  }
  w->access_group.clear();
  w->access_open = false;
  return first;
}

Result<bool> Engine::win_test(Window* w, bool block) {
  if (w == nullptr) return Status(ErrorCode::kInvalidWindow, "null window");
  if (!w->exposure_open) {
    return Status(ErrorCode::kRmaSync, "MPI_Win_wait / MPI_Win_test without MPI_Win_post");
  }
  if (!block) {
    for (int o : w->exposure_group) {
      const auto i = static_cast<std::size_t>(o);
      if (own_word(*w, complete_word(*w, o)) <= w->completes_taken[i]) {
        EngineGuard lock(mutex_);
        (void)progress_locked();
        return false;
      }
    }
  }
  Status first = Status::ok();
  for (int o : w->exposure_group) {
    const auto i = static_cast<std::size_t>(o);
    Status s = take_word(w, o, complete_word(*w, o), &w->completes_taken[i], "MPI_Win_wait");
    if (first.is_ok()) first = s;
  }
  w->exposure_group.clear();
  w->exposure_open = false;
  if (!first.is_ok()) return first;
  return true;
}

}  // namespace tagwire::engine
