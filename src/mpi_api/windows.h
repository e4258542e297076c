// What the window calls share (windows.cc: creation, fence, put and get,
// attributes; window_sync.cc: passive target; accumulates.cc).
#pragma once

#include "common/status.h"
#include "mpi.h"
#include "mpi_api/state.h"

namespace tagwire::mpi {

// Why a handle names no window (MPI not initialized or finalized, or
// MPI_ERR_WIN): window_of's slow path.
Status no_window(MPI_Win win);

// The window behind a live handle, or null (window_of then says why):
// for the paths that go on to the general one whenever anything is off.
[[gnu::always_inline]] inline WinEntry* live_window(MPI_Win win) {
  State& st = state();
  if (st.initialized && !st.finalized) [[likely]] {
    if (std::unique_ptr<WinEntry>* entry = st.windows.find(win)) return entry->get();
  }
  return nullptr;
}

// The window behind a handle, or the error. Inline: every one-sided call
// starts here, twice for an access and its flush (out of line with its
// checks, ~50 instructions each of an 8-byte MPI_Fetch_and_op + flush's
// 1,200; docs/measurements.md).
[[gnu::always_inline]] inline Result<WinEntry*> window_of(MPI_Win win) {
  if (WinEntry* entry = live_window(win)) [[likely]]
    return entry;
  return no_window(win);
}

// Reports through the window's error handler (MPI_ERRORS_ARE_FATAL unless
// set), or MPI_COMM_WORLD's when the handle names no window.
int report_win(MPI_Win win, const char* function, const Status& s);

// A target displacement must not be negative (MPI_ERR_RMA_RANGE).
Status negative_displacement(MPI_Aint disp);
inline Status check_displacement(MPI_Aint disp) {
  return disp < 0 ? negative_displacement(disp) : Status::ok();
}

}  // namespace tagwire::mpi

#define TW_WIN_TRY(win, status_expr)                                               \
  do {                                                                             \
    ::tagwire::Status tw_s_ = (status_expr);                                       \
    if (!tw_s_.is_ok()) return ::tagwire::mpi::report_win((win), __func__, tw_s_); \
  } while (0)
