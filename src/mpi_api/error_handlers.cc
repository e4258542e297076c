// User error handlers and error codes (error_handlers.h), and the MPI
// calls that make and call them.
#include "mpi_api/error_handlers.h"

#include <deque>
#include <map>
#include <mutex>

#include "mpi_api/state.h"
#include "mpi_api/windows.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

constexpr MPI_Errhandler kFirstUserHandler = 3;  // after NULL, FATAL and RETURN

struct UserErrhandler {
  MPI_Comm_errhandler_function* comm_fn = nullptr;  // one of the two is set
  MPI_Win_errhandler_function* win_fn = nullptr;
  // Handles the program holds: one from its creation, one more from each
  // MPI_Comm_get_errhandler / MPI_Win_get_errhandler, one less per
  // MPI_Errhandler_free. At 0 the handle is dead to the program; objects
  // it was set on keep it (entries are never reused).
  int handles = 1;
};

struct UserCode {
  int error_class;
  std::string text;
};

// Any thread may report an error: one lock for both tables.
struct ErrorTables {
  std::mutex mutex;
  std::deque<UserErrhandler> handlers;  // handle - kFirstUserHandler
  std::map<int, UserCode> codes;        // user codes and classes
  int last_used = MPI_ERR_LASTCODE;     // MPI_LASTUSEDCODE points here
};

ErrorTables& tables() {
  static ErrorTables t;
  return t;
}

// The entry of a user handle, or null (lock held).
UserErrhandler* find_handler(ErrorTables& t, MPI_Errhandler handler) {
  if (handler < kFirstUserHandler) return nullptr;
  const auto i = static_cast<std::size_t>(handler - kFirstUserHandler);
  return i < t.handlers.size() ? &t.handlers[i] : nullptr;
}

MPI_Errhandler add_handler(UserErrhandler h) {
  ErrorTables& t = tables();
  std::lock_guard lock(t.mutex);
  t.handlers.push_back(h);
  return kFirstUserHandler + static_cast<MPI_Errhandler>(t.handlers.size() - 1);
}

}  // namespace

namespace tagwire::mpi {

Status check_errhandler(MPI_Errhandler handler, bool for_window) {
  if (handler == MPI_ERRORS_ARE_FATAL || handler == MPI_ERRORS_RETURN) return Status::ok();
  ErrorTables& t = tables();
  std::lock_guard lock(t.mutex);
  const UserErrhandler* h = find_handler(t, handler);
  if (h == nullptr) {
    return {ErrorCode::kInvalidArgument,
            "error handler " + std::to_string(handler) + " is not a valid handle"};
  }
  if ((h->win_fn != nullptr) != for_window) {
    return {ErrorCode::kInvalidArgument, std::string("error handler ") + std::to_string(handler) +
                                             " was made for " +
                                             (for_window ? "communicators" : "windows") + " (MPI_" +
                                             (for_window ? "Comm" : "Win") + "_create_errhandler)"};
  }
  return Status::ok();
}

bool is_user_errhandler(MPI_Errhandler handler) {
  return handler >= kFirstUserHandler;
}

void call_user_errhandler(MPI_Errhandler handler, MPI_Comm comm, MPI_Win win, int code) {
  UserErrhandler h;
  {
    ErrorTables& t = tables();
    std::lock_guard lock(t.mutex);
    const UserErrhandler* found = find_handler(t, handler);
    if (found == nullptr) return;
    h = *found;
  }
  // Outside the lock: the handler may call MPI, even report again.
  if (h.win_fn != nullptr) {
    h.win_fn(&win, &code);
  } else if (h.comm_fn != nullptr) {
    h.comm_fn(&comm, &code);
  }
}

Status free_errhandler(MPI_Errhandler handler) {
  if (handler == MPI_ERRORS_ARE_FATAL || handler == MPI_ERRORS_RETURN) return Status::ok();
  ErrorTables& t = tables();
  std::lock_guard lock(t.mutex);
  UserErrhandler* h = find_handler(t, handler);
  if (h == nullptr || h->handles == 0) {
    return {ErrorCode::kInvalidArgument,
            "error handler " + std::to_string(handler) + " is not a live handle"};
  }
  --h->handles;  // objects that use it keep it
  return Status::ok();
}

MPI_Errhandler hand_out_errhandler(MPI_Errhandler handler) {
  ErrorTables& t = tables();
  std::lock_guard lock(t.mutex);
  if (UserErrhandler* h = find_handler(t, handler)) ++h->handles;
  return handler;
}

std::optional<int> class_of_code(int code) {
  if (code >= 0 && code <= MPI_ERR_LASTCODE) return code;
  ErrorTables& t = tables();
  std::lock_guard lock(t.mutex);
  auto it = t.codes.find(code);
  if (it == t.codes.end()) return std::nullopt;
  return it->second.error_class;
}

std::optional<std::string> user_error_string(int code) {
  ErrorTables& t = tables();
  std::lock_guard lock(t.mutex);
  auto it = t.codes.find(code);
  if (it == t.codes.end()) return std::nullopt;
  return it->second.text;
}

int add_error_class() {
  ErrorTables& t = tables();
  std::lock_guard lock(t.mutex);
  const int code = ++t.last_used;
  t.codes[code] = UserCode{code, ""};  // a class is its own class
  return code;
}

Result<int> add_error_code(int error_class) {
  ErrorTables& t = tables();
  std::lock_guard lock(t.mutex);
  const bool predefined = error_class >= 0 && error_class <= MPI_ERR_LASTCODE;
  auto it = t.codes.find(error_class);
  if (!predefined && (it == t.codes.end() || it->second.error_class != error_class)) {
    return Status(ErrorCode::kInvalidArgument,
                  std::to_string(error_class) +
                      " is not an error class (predefined, or from MPI_Add_error_class)");
  }
  const int code = ++t.last_used;
  t.codes[code] = UserCode{error_class, ""};
  return code;
}

Status set_error_string(int code, const char* text) {
  if (text == nullptr) return {ErrorCode::kInvalidArgument, "a null string"};
  if (std::char_traits<char>::length(text) >= MPI_MAX_ERROR_STRING) {
    return {ErrorCode::kInvalidArgument, "error string longer than MPI_MAX_ERROR_STRING - 1"};
  }
  ErrorTables& t = tables();
  std::lock_guard lock(t.mutex);
  auto it = t.codes.find(code);
  if (it == t.codes.end()) {
    return {ErrorCode::kInvalidArgument,
            "error code " + std::to_string(code) +
                (code >= 0 && code <= MPI_ERR_LASTCODE
                     ? " is predefined: its string cannot be changed"
                     : " was not made by MPI_Add_error_class or MPI_Add_error_code")};
  }
  it->second.text = text;
  return Status::ok();
}

int* last_used_code() {
  return &tables().last_used;
}

}  // namespace tagwire::mpi

extern "C" {

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* comm_errhandler_fn,
                               MPI_Errhandler* errhandler) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (comm_errhandler_fn == nullptr || errhandler == nullptr) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "a null function or handle pointer"});
  }
  *errhandler = add_handler({comm_errhandler_fn, nullptr});
  return MPI_SUCCESS;
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn,
                              MPI_Errhandler* errhandler) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (win_errhandler_fn == nullptr || errhandler == nullptr) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "a null function or handle pointer"});
  }
  *errhandler = add_handler({nullptr, win_errhandler_fn});
  return MPI_SUCCESS;
}

// The communicator's handler, called with `errorcode` as if an MPI call on
// it had failed with that code: MPI_ERRORS_ARE_FATAL ends the job.
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  invoke_errhandler(find_comm(comm)->errhandler, __func__, errorcode,
                    "error code " + std::to_string(errorcode) + " raised by the program", comm,
                    MPI_WIN_NULL);
  return MPI_SUCCESS;  // the handler was called and returned
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  invoke_errhandler((*entry)->errhandler, __func__, errorcode,
                    "error code " + std::to_string(errorcode) + " raised by the program",
                    MPI_COMM_WORLD, win);
  return MPI_SUCCESS;  // the handler was called and returned
}

int MPI_Add_error_class(int* errorclass) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (errorclass == nullptr) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "errorclass is NULL"});
  }
  *errorclass = add_error_class();
  return MPI_SUCCESS;
}

int MPI_Add_error_code(int errorclass, int* errorcode) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (errorcode == nullptr) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "errorcode is NULL"});
  }
  auto code = add_error_code(errorclass);
  TW_MPI_TRY(MPI_COMM_WORLD, code.status());
  *errorcode = *code;
  return MPI_SUCCESS;
}

int MPI_Add_error_string(int errorcode, const char* string) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  TW_MPI_TRY(MPI_COMM_WORLD, set_error_string(errorcode, string));
  return MPI_SUCCESS;
}

}  // extern "C"
