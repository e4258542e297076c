// MPI environment and error handling.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "cancel/send_cancel_factory.h"
#include "common/build_info.h"
#include "mpi_api/error_handlers.h"
#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

void on_report_signal(int /*signal*/) {
  engine::Engine::ask_for_pending_report();
}

// SIGUSR1 makes every rank print its pending operations (kill -USR1, or
// tagwire-run when --timeout fires): SIGUSR1 would otherwise end the
// process. A program that handles SIGUSR1 itself keeps it.
void take_report_signal() {
  struct sigaction old {};
  if (::sigaction(SIGUSR1, nullptr, &old) != 0) return;
  if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) return;
  struct sigaction report {};
  report.sa_handler = on_report_signal;
  report.sa_flags = SA_RESTART;
  ::sigemptyset(&report.sa_mask);
  (void)::sigaction(SIGUSR1, &report, nullptr);
}

// A process that leaves (exit, or a return from main) after MPI_Init and
// before MPI_Finalize ends the whole job at once, as MPI_Abort does: the
// other ranks are told, so none waits for it, and the job's status is its
// exit status (1 for 0: leaving without MPI_Finalize is a failure). No
// collective runs here: finalizing from an exit handler made the others'
// own barrier complete as if this rank had entered it. Registered at
// MPI_Init with glibc's on_exit, which passes the status; it runs before
// the library's static destructors, which therefore never see an engine
// that was not finalized (a forked child's copy aside: State::~State).
void on_exit_without_finalize(int status, void* /*unused*/) {
  State& st = state();
  if (!st.initialized || st.finalized || st.engine == nullptr || ::getpid() != st.init_pid) return;
  const int code = (status & 0xff) == 0 ? 1 : status & 0xff;
  const int rank = st.engine->world_rank();
  std::fprintf(stderr,
               "%s exited with status %d without calling MPI_Finalize; ending the job with status "
               "%d\n",
               line_prefix().c_str(), status, code);
  std::fflush(nullptr);
  st.engine->abort_job(code,
                       "rank " + std::to_string(rank) + " exited with status " +
                           std::to_string(status) + " without MPI_Finalize",
                       /*left=*/true);
  std::_Exit(code);
}

}  // namespace

extern "C" {

int MPI_Init_thread(int* /*argc*/, char*** /*argv*/, int required, int* provided) {
  State& st = state();
  if (st.initialized) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kConfig, "MPI_Init called twice"});
  }
  auto engine = engine::Engine::create_from_environment(cancel::kSendCancelLayer);
  if (!engine) {
    std::fprintf(stderr, "[tagwire] MPI_Init failed: %s\n", engine.status().to_string().c_str());
    std::fflush(nullptr);  // every stream: the user's buffered output must not be lost
    std::_Exit(1);
  }
  st.engine = std::move(engine).value();
  st.init_pid = ::getpid();
  take_report_signal();
  (void)::on_exit(&on_exit_without_finalize, nullptr);
  st.world.comm = st.engine->world();
  st.self.comm = st.engine->self();
  st.initialized = true;
  st.main_thread = std::this_thread::get_id();
  // Whatever is asked for, up to MPI_THREAD_MULTIPLE (engine.h says what
  // that covers). SERIALIZED is provided as MULTIPLE: the same locks.
  st.thread_level = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                    : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                     : required;
  if (st.thread_level >= MPI_THREAD_SERIALIZED) {
    st.engine->allow_application_threads();
    enable_threads();
  }
  if (provided != nullptr) *provided = st.thread_level;
  return MPI_SUCCESS;
}

int MPI_Init(int* argc, char*** argv) {
  int provided = 0;
  return MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

int MPI_Initialized(int* flag) {
  *flag = state().initialized ? 1 : 0;
  return MPI_SUCCESS;
}

int MPI_Finalized(int* flag) {
  *flag = state().finalized ? 1 : 0;
  return MPI_SUCCESS;
}

int MPI_Finalize(void) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  State& st = state();
  // MPI 8.7.1: attributes on MPI_COMM_SELF are deleted first (libraries
  // hang their clean-up on it), while the library is still usable.
  TW_MPI_TRY(MPI_COMM_WORLD, delete_attributes(MPI_COMM_SELF));
  Status s = st.engine->finalize();
  st.final_counters = st.engine->counters();
  st.final_config = st.engine->config();
  st.final_transport_counters = st.engine->transport_counters();
  st.engine.reset();
  st.finalized = true;
  TW_MPI_TRY(MPI_COMM_WORLD, s);
  return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm /*comm*/, int errorcode) {
  // An abort is a failure: a code of 0 (or one whose low byte is 0, all an
  // exit status keeps) still ends the job with a non-zero status.
  const int code = (errorcode & 0xff) == 0 ? 1 : errorcode & 0xff;
  State& st = state();
  std::fprintf(stderr, "%s MPI_Abort(%d) called; aborting the job\n", line_prefix().c_str(),
               errorcode);
  std::fflush(nullptr);  // every stream: the user's buffered output must not be lost
  // The launcher ends the others now and keeps the code; without one (or
  // in a forked child, whose engine is the parent's) the exit says it.
  if (st.engine != nullptr && ::getpid() == st.init_pid) {
    st.engine->abort_job(code, "MPI_Abort(" + std::to_string(errorcode) + ") on rank " +
                                   std::to_string(st.engine->world_rank()));
  }
  std::_Exit(code);
}

int MPI_Query_thread(int* provided) {
  *provided = state().thread_level;
  return MPI_SUCCESS;
}

int MPI_Is_thread_main(int* flag) {
  *flag = std::this_thread::get_id() == state().main_thread ? 1 : 0;
  return MPI_SUCCESS;
}

double MPI_Wtime(void) {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double MPI_Wtick(void) {
  return 1e-9;
}

int MPI_Get_processor_name(char* name, int* resultlen) {
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  ::gethostname(host, sizeof(host) - 1);
  return copy_string(host, name, MPI_MAX_PROCESSOR_NAME, resultlen);
}

// A profiling library that wraps it sees the level; without one the call
// does nothing, as the standard allows.
int MPI_Pcontrol(const int /*level*/, ...) {
  return MPI_SUCCESS;
}

int MPI_Get_version(int* version, int* subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int MPI_Get_library_version(char* version, int* resultlen) {
  // What was built, not what a header claims: "Tagwire 0.1.0 (MPI 3.1;
  // transports shm ucx verbs)".
  const std::string text = "Tagwire " + std::string(build_info::version()) +
                           " (MPI 3.1; transports " + std::string(build_info::transports()) + ")";
  return copy_string(text, version, MPI_MAX_LIBRARY_VERSION_STRING, resultlen);
}

int MPI_Error_class(int errorcode, int* errorclass) {
  // Predefined codes are classes; a user code has the class it was added to.
  const std::optional<int> found = class_of_code(errorcode);
  if (!found) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "unknown error code " + std::to_string(errorcode)});
  }
  *errorclass = *found;
  return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  if (std::optional<std::string> user = user_error_string(errorcode)) {
    return copy_string(*user, string, MPI_MAX_ERROR_STRING, resultlen);
  }
  const char* text = "unknown error";
  switch (errorcode) {
    case MPI_SUCCESS:
      text = "no error";
      break;
    case MPI_ERR_BUFFER:
      text = "invalid buffer (or not enough attached buffer space)";
      break;
    case MPI_ERR_COUNT:
      text = "invalid count";
      break;
    case MPI_ERR_TYPE:
      text = "invalid datatype";
      break;
    case MPI_ERR_TAG:
      text = "invalid tag";
      break;
    case MPI_ERR_COMM:
      text = "invalid communicator";
      break;
    case MPI_ERR_RANK:
      text = "invalid rank";
      break;
    case MPI_ERR_REQUEST:
      text = "invalid request";
      break;
    case MPI_ERR_ARG:
      text = "invalid argument";
      break;
    case MPI_ERR_GROUP:
      text = "invalid group";
      break;
    case MPI_ERR_KEYVAL:
      text = "invalid attribute key";
      break;
    case MPI_ERR_INFO:
      text = "invalid info object";
      break;
    case MPI_ERR_INFO_KEY:
      text = "info key empty or longer than MPI_MAX_INFO_KEY";
      break;
    case MPI_ERR_INFO_VALUE:
      text = "info value longer than MPI_MAX_INFO_VAL";
      break;
    case MPI_ERR_INFO_NOKEY:
      text = "no such info key";
      break;
    case MPI_ERR_WIN:
      text = "invalid window";
      break;
    case MPI_ERR_RMA_RANGE:
      text = "target memory is outside the window";
      break;
    case MPI_ERR_RMA_SYNC:
      text = "RMA call outside an access epoch";
      break;
    case MPI_ERR_RMA_SHARED:
      text = "the window's ranks cannot share memory (not all on one host)";
      break;
    case MPI_ERR_RMA_ATTACH:
      text = "memory cannot be attached (overlaps attached memory, or too many regions)";
      break;
    case MPI_ERR_RMA_FLAVOR:
      text = "the call does not apply to this kind (flavor) of window";
      break;
    case MPI_ERR_TOPOLOGY:
      text = "invalid topology: the communicator has none, or not the one the call needs";
      break;
    case MPI_ERR_DIMS:
      text = "invalid dimensions: a size or grid that does not fit";
      break;
    case MPI_ERR_TRUNCATE:
      text = "message truncated";
      break;
    case MPI_ERR_OTHER:
      text = "other error: a setting, a system call or the transport failed (Tagwire printed what)";
      break;
    case MPI_ERR_INTERN:
      text = "internal error (Tagwire printed what)";
      break;
    case MPI_ERR_IN_STATUS:
      text = "error code is in status";
      break;
    case MPI_ERR_NO_MEM:
      text = "out of memory or resources";
      break;
    case MPI_ERR_UNSUPPORTED_OPERATION:
      text = "operation not supported by this build";
      break;
    case MPI_ERR_PROC_FAILED:
      text = "a peer process failed";
      break;
    case MPI_T_ERR_NOT_INITIALIZED:
      text = "MPI_T is not initialized (MPI_T_init_thread)";
      break;
    case MPI_T_ERR_INVALID_INDEX:
      text = "no MPI_T variable has this index";
      break;
    case MPI_T_ERR_INVALID_HANDLE:
      text = "invalid MPI_T handle";
      break;
    case MPI_T_ERR_INVALID_SESSION:
      text = "invalid MPI_T session";
      break;
    case MPI_T_ERR_PVAR_NO_STARTSTOP:
      text = "this performance variable is continuous: it cannot be started or stopped";
      break;
    case MPI_T_ERR_PVAR_NO_WRITE:
      text = "this performance variable is read-only";
      break;
    case MPI_T_ERR_INVALID_NAME:
      text = "no MPI_T variable of this class has this name";
      break;
    case MPI_T_ERR_INVALID:
      text = "invalid MPI_T argument (or, for a control variable, TAGWIRE_* is invalid)";
      break;
    case MPI_T_ERR_CVAR_SET_NEVER:
      text = "this control variable is read-only (set its TAGWIRE_* environment variable)";
      break;
    case MPI_ERR_ACCESS:
      text = "permission denied";
      break;
    case MPI_ERR_AMODE:
      text = "invalid file access mode";
      break;
    case MPI_ERR_ASSERT:
      text = "invalid assertion argument";
      break;
    case MPI_ERR_BAD_FILE:
      text = "invalid file name";
      break;
    case MPI_ERR_BASE:
      text = "invalid base address (not from MPI_Alloc_mem)";
      break;
    case MPI_ERR_CONVERSION:
      text = "a data conversion function failed";
      break;
    case MPI_ERR_DISP:
      text = "invalid displacement or displacement unit";
      break;
    case MPI_ERR_DUP_DATAREP:
      text = "data representation already defined";
      break;
    case MPI_ERR_FILE:
      text = "invalid file handle";
      break;
    case MPI_ERR_FILE_EXISTS:
      text = "file exists";
      break;
    case MPI_ERR_FILE_IN_USE:
      text = "file in use by some process";
      break;
    case MPI_ERR_IO:
      text = "input/output error";
      break;
    case MPI_ERR_LOCKTYPE:
      text = "invalid lock type";
      break;
    case MPI_ERR_NAME:
      text = "service name not published";
      break;
    case MPI_ERR_NOT_SAME:
      text = "collective argument not the same on every process";
      break;
    case MPI_ERR_NO_SPACE:
      text = "not enough space";
      break;
    case MPI_ERR_NO_SUCH_FILE:
      text = "no such file";
      break;
    case MPI_ERR_PORT:
      text = "invalid port name";
      break;
    case MPI_ERR_QUOTA:
      text = "quota exceeded";
      break;
    case MPI_ERR_READ_ONLY:
      text = "read-only file or file system";
      break;
    case MPI_ERR_RMA_CONFLICT:
      text = "conflicting accesses to a window";
      break;
    case MPI_ERR_SERVICE:
      text = "invalid service name";
      break;
    case MPI_ERR_SIZE:
      text = "invalid size";
      break;
    case MPI_ERR_SPAWN:
      text = "processes could not be spawned";
      break;
    case MPI_ERR_UNSUPPORTED_DATAREP:
      text = "unsupported data representation";
      break;
    case MPI_T_ERR_CANNOT_INIT:
      text = "MPI_T cannot be initialized";
      break;
    case MPI_T_ERR_CVAR_SET_NOT_NOW:
      text = "this control variable cannot be set now";
      break;
    case MPI_T_ERR_INVALID_ITEM:
      text = "no item of this MPI_T enumeration has this index";
      break;
    case MPI_T_ERR_MEMORY:
      text = "MPI_T is out of memory";
      break;
    case MPI_T_ERR_OUT_OF_HANDLES:
      text = "MPI_T has no handles left";
      break;
    case MPI_T_ERR_OUT_OF_SESSIONS:
      text = "MPI_T has no sessions left";
      break;
    case MPI_T_ERR_PVAR_NO_ATOMIC:
      text = "this performance variable cannot be read and reset at once";
      break;
    default:
      break;
  }
  return copy_string(text, string, MPI_MAX_ERROR_STRING, resultlen);
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  TW_MPI_TRY(comm, check_errhandler(errhandler, /*for_window=*/false));
  find_comm(comm)->errhandler = errhandler;
  return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  *errhandler = hand_out_errhandler(find_comm(comm)->errhandler);
  return MPI_SUCCESS;
}

int MPI_Errhandler_free(MPI_Errhandler* errhandler) {
  if (errhandler == nullptr) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "a null handle pointer"});
  }
  TW_MPI_TRY(MPI_COMM_WORLD, free_errhandler(*errhandler));
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"
