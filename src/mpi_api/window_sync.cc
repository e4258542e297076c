// Passive-target synchronisation (MPI_Win_lock / unlock, lock_all /
// unlock_all, the flush family, MPI_Win_sync) and general active target
// (MPI_Win_post / start / complete / wait / test), over the engine's lock
// words (engine/window.h). Neither asks the peer's application for help.
#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "common/full_fence.h"
#include "mpi_api/state.h"
#include "mpi_api/windows.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

// MPI_MODE_NOCHECK is the one assertion a lock takes.
Status check_lock_assert(int assert) {
  if ((assert & ~MPI_MODE_NOCHECK) != 0) {
    return {ErrorCode::kInvalidArgument,
            "assertion " + std::to_string(assert) + " has bits other than MPI_MODE_NOCHECK"};
  }
  return Status::ok();
}

[[gnu::cold, gnu::noinline]] Status not_in_window(const WinEntry& entry, int rank) {
  return {ErrorCode::kInvalidRank, "rank " + std::to_string(rank) + " is not in the window's " +
                                       std::to_string(entry.members.size()) + "-rank group"};
}

// A flush names a rank of the window's group (or MPI_PROC_NULL).
[[gnu::always_inline]] inline Status check_flush_rank(const WinEntry& entry, int rank) {
  if (rank == MPI_PROC_NULL) return Status::ok();
  if (rank < 0 || static_cast<std::size_t>(rank) >= entry.members.size()) [[unlikely]]
    return not_in_window(entry, rank);
  return Status::ok();
}

// A group's members as ranks of the window's group (post and start).
Result<std::vector<int>> window_ranks_of(const WinEntry& entry, MPI_Group group) {
  auto members = group_members(group);
  if (!members) return members.status();
  std::vector<int> ranks;
  ranks.reserve(members->size());
  for (int world : *members) {
    auto it = std::find(entry.members.begin(), entry.members.end(), world);
    if (it == entry.members.end()) {
      return Status(ErrorCode::kInvalidGroup, "world rank " + std::to_string(world) +
                                                  " of the group is not in the window's group");
    }
    ranks.push_back(static_cast<int>(it - entry.members.begin()));
  }
  return ranks;
}

// Post and start take MPI_MODE_NOCHECK, NOSTORE and NOPUT (post) as hints:
// the counts are kept whatever they say.
Status check_epoch_assert(int assert, int allowed) {
  if ((assert & ~allowed) != 0) {
    return {ErrorCode::kInvalidArgument,
            "assertion " + std::to_string(assert) + " has bits this call does not take"};
  }
  return Status::ok();
}

}  // namespace

extern "C" {

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, check_epoch_assert(assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT));
  auto ranks = window_ranks_of(**entry, group);
  TW_WIN_TRY(win, ranks.status());
  TW_WIN_TRY(win, E().win_post((*entry)->window, *ranks));
  return MPI_SUCCESS;
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, check_epoch_assert(assert, MPI_MODE_NOCHECK));
  auto ranks = window_ranks_of(**entry, group);
  TW_WIN_TRY(win, ranks.status());
  TW_WIN_TRY(win, E().win_start((*entry)->window, *ranks));
  return MPI_SUCCESS;
}

int MPI_Win_complete(MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, E().win_complete((*entry)->window));
  return MPI_SUCCESS;
}

int MPI_Win_wait(MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, E().win_test((*entry)->window, true).status());
  return MPI_SUCCESS;
}

int MPI_Win_test(MPI_Win win, int* flag) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  auto done = E().win_test((*entry)->window, false);
  TW_WIN_TRY(win, done.status());
  *flag = *done ? 1 : 0;
  return MPI_SUCCESS;
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED) {
    TW_WIN_TRY(win, Status(ErrorCode::kInvalidArgument,
                           "lock type " + std::to_string(lock_type) +
                               " is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED"));
  }
  TW_WIN_TRY(win, check_lock_assert(assert));
  TW_WIN_TRY(win, E().win_lock((*entry)->window, rank, lock_type == MPI_LOCK_EXCLUSIVE,
                               (assert& MPI_MODE_NOCHECK) == 0));
  return MPI_SUCCESS;
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, E().win_unlock((*entry)->window, rank));
  return MPI_SUCCESS;
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, check_lock_assert(assert));
  TW_WIN_TRY(win, E().win_lock_all((*entry)->window, (assert& MPI_MODE_NOCHECK) == 0));
  return MPI_SUCCESS;
}

int MPI_Win_unlock_all(MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, E().win_unlock_all((*entry)->window));
  return MPI_SUCCESS;
}

// Every flush completes all of this rank's accesses to the window, not
// only those to `rank`: the transports flush per process, and more than
// asked is never wrong.
int MPI_Win_flush(int rank, MPI_Win win) {
  // Nothing to wait for or report, on a valid target: done.
  if (WinEntry* e = live_window(win); e != nullptr && rank >= 0 &&
                                      static_cast<std::size_t>(rank) < e->members.size() &&
                                      E().flushed(e->window)) {
    return MPI_SUCCESS;
  }
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, check_flush_rank(**entry, rank));
  // What failed with another target's death is not this flush's to report.
  TW_WIN_TRY(win, E().win_flush((*entry)->window, rank >= 0 ? rank : -1));
  return MPI_SUCCESS;
}

int MPI_Win_flush_all(MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, E().win_flush((*entry)->window));
  return MPI_SUCCESS;
}

int MPI_Win_flush_local(int rank, MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, check_flush_rank(**entry, rank));
  TW_WIN_TRY(win, E().win_flush_local((*entry)->window, rank >= 0 ? rank : -1));
  return MPI_SUCCESS;
}

int MPI_Win_flush_local_all(MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, E().win_flush_local((*entry)->window));
  return MPI_SUCCESS;
}

// The public and private copies of a window are one memory here; what is
// left is ordering this thread's loads and stores around the call.
int MPI_Win_sync(MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  static std::atomic<unsigned> sync_point{0};  // what TSan's stand-in touches
  full_fence(sync_point);
  return MPI_SUCCESS;
}

}  // extern "C"
