// User error handlers (MPI_Comm_create_errhandler, MPI_Win_create_errhandler)
// and the program's own error classes and codes (MPI_Add_error_class,
// _code, _string). Handles 0-2 are MPI_ERRHANDLER_NULL, MPI_ERRORS_ARE_FATAL
// and MPI_ERRORS_RETURN; user handlers follow. A freed user handler stays
// in the table (MPI: the objects that use it keep it), so a handle is
// never reused. User codes start after MPI_ERR_LASTCODE.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "mpi.h"

namespace tagwire::mpi {

// Whether `handler` may be set on a communicator (`for_window` false) or a
// window: a predefined one, or a user handler made for that kind of object.
Status check_errhandler(MPI_Errhandler handler, bool for_window);
bool is_user_errhandler(MPI_Errhandler handler);
// Calls a user handler with the object and `code` (a communicator
// handler on `comm`, a window handler on `win`).
void call_user_errhandler(MPI_Errhandler handler, MPI_Comm comm, MPI_Win win, int code);
// MPI_Errhandler_free of a user handler (kInvalidArgument for a handle
// that names none).
Status free_errhandler(MPI_Errhandler handler);
// `handler` as MPI_Comm_get_errhandler / MPI_Win_get_errhandler return it:
// a user handler counts one more handle, which MPI_Errhandler_free gives
// back (MPI-3.1 §8.3: the caller frees what it got).
MPI_Errhandler hand_out_errhandler(MPI_Errhandler handler);

// The class of a code (a predefined one is its own class; a user code's
// is the class it was added to), or nothing for a code nobody made.
std::optional<int> class_of_code(int code);
// The string MPI_Add_error_string gave a user code ("" when none), or
// nothing for a predefined code.
std::optional<std::string> user_error_string(int code);
int add_error_class();
Result<int> add_error_code(int error_class);
Status set_error_string(int code, const char* text);
// MPI_LASTUSEDCODE's value: the highest code so far.
int* last_used_code();

}  // namespace tagwire::mpi
