// What the window calls share (windows.cc: creation, fence, put and get,
// attributes; window_sync.cc: passive target; accumulates.cc).
#pragma once

#include "common/status.h"
#include "mpi.h"
#include "mpi_api/state.h"

namespace tagwire::mpi {

// The window behind a handle, or MPI_ERR_WIN.
Result<WinEntry*> window_of(MPI_Win win);

// Reports through the window's error handler (MPI_ERRORS_ARE_FATAL unless
// set), or MPI_COMM_WORLD's when the handle names no window.
int report_win(MPI_Win win, const char* function, const Status& s);

// A target displacement must not be negative (MPI_ERR_RMA_RANGE).
Status check_displacement(MPI_Aint disp);

}  // namespace tagwire::mpi

#define TW_WIN_TRY(win, status_expr)                                               \
  do {                                                                             \
    ::tagwire::Status tw_s_ = (status_expr);                                       \
    if (!tw_s_.is_ok()) return ::tagwire::mpi::report_win((win), __func__, tw_s_); \
  } while (0)
