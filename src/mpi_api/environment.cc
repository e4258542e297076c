// MPI environment, error handling and communicators.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

int copy_string(const std::string& text, char* out, int capacity, int* length) {
  std::size_t n = std::min<std::size_t>(text.size(), static_cast<std::size_t>(capacity - 1));
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  *length = static_cast<int>(n);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Init_thread(int* /*argc*/, char*** /*argv*/, int required, int* provided) {
  State& st = state();
  if (st.initialized) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kConfig, "MPI_Init called twice"});
  }
  auto engine = engine::Engine::create_from_environment();
  if (!engine) {
    std::fprintf(stderr, "[tagwire] MPI_Init failed: %s\n", engine.status().to_string().c_str());
    std::fflush(nullptr);  // every stream: the user's buffered output must not be lost
    std::_Exit(1);
  }
  st.engine = std::move(engine).value();
  st.world.comm = st.engine->world();
  st.self.comm = st.engine->self();
  st.initialized = true;
  // Honest level: one thread calls MPI (the progress thread is internal).
  st.thread_level = required < MPI_THREAD_FUNNELED ? required : MPI_THREAD_FUNNELED;
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
  Status s = st.engine->finalize();
  st.engine.reset();
  st.finalized = true;
  TW_MPI_TRY(MPI_COMM_WORLD, s);
  return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm /*comm*/, int errorcode) {
  std::fprintf(stderr, "[tagwire %d] MPI_Abort(%d) called; aborting the job\n",
               state().engine ? state().engine->world_rank() : -1, errorcode);
  std::fflush(nullptr);  // every stream: the user's buffered output must not be lost
  // A non-zero exit makes the launcher stop every other rank.
  std::_Exit(errorcode == 0 ? 1 : errorcode);
}

int MPI_Query_thread(int* provided) {
  *provided = state().thread_level;
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

int MPI_Get_version(int* version, int* subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int MPI_Get_library_version(char* version, int* resultlen) {
  return copy_string("Tagwire 0.1.0 (MPI point-to-point over UCX)", version,
                     MPI_MAX_LIBRARY_VERSION_STRING, resultlen);
}

int MPI_Error_class(int errorcode, int* errorclass) {
  if (errorcode < 0 || errorcode > MPI_ERR_LASTCODE) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "unknown error code"});
  }
  *errorclass = errorcode;  // codes are classes
  return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char* string, int* resultlen) {
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
    case MPI_ERR_TRUNCATE:
      text = "message truncated";
      break;
    case MPI_ERR_OTHER:
      text = "other error (see the message printed by Tagwire)";
      break;
    case MPI_ERR_INTERN:
      text = "internal error";
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
    default:
      break;
  }
  return copy_string(text, string, MPI_MAX_ERROR_STRING, resultlen);
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  if (errhandler != MPI_ERRORS_ARE_FATAL && errhandler != MPI_ERRORS_RETURN) {
    return report(comm, __func__, {ErrorCode::kInvalidArgument, "unknown error handler"});
  }
  find_comm(comm)->errhandler = errhandler;
  return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  *errhandler = find_comm(comm)->errhandler;
  return MPI_SUCCESS;
}

int MPI_Errhandler_free(MPI_Errhandler* errhandler) {
  *errhandler = MPI_ERRHANDLER_NULL;  // predefined handlers only: nothing to release
  return MPI_SUCCESS;
}

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  *rank = (*c)->rank();
  return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  *size = (*c)->size();
  return MPI_SUCCESS;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  auto dup = state().engine->comm_dup(*c);
  TW_MPI_TRY(comm, dup.status());
  *newcomm = state().comms.add(CommEntry{*dup, find_comm(comm)->errhandler});
  return MPI_SUCCESS;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  auto split = state().engine->comm_split(*c, color, key);
  TW_MPI_TRY(comm, split.status());
  *newcomm = *split == nullptr ? MPI_COMM_NULL
                               : state().comms.add(CommEntry{*split, find_comm(comm)->errhandler});
  return MPI_SUCCESS;
}

int MPI_Comm_free(MPI_Comm* comm) {
  auto c = comm_of(*comm);
  TW_MPI_TRY(*comm, c.status());
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
    return report(*comm, __func__,
                  {ErrorCode::kInvalidComm, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed"});
  }
  TW_MPI_TRY(*comm, state().engine->comm_free(*c));
  state().comms.remove(*comm);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  auto a = comm_of(comm1);
  TW_MPI_TRY(comm1, a.status());
  auto b = comm_of(comm2);
  TW_MPI_TRY(comm2, b.status());
  if (comm1 == comm2) {
    *result = MPI_IDENT;
  } else if ((*a)->world_ranks() == (*b)->world_ranks()) {
    *result = MPI_CONGRUENT;
  } else {
    auto x = (*a)->world_ranks(), y = (*b)->world_ranks();
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    *result = x == y ? MPI_SIMILAR : MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

int MPI_Barrier(MPI_Comm comm) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  TW_MPI_TRY(comm, state().engine->barrier(*c));
  return MPI_SUCCESS;
}

}  // extern "C"
