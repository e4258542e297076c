#include "mpi_api/state.h"

#include <unistd.h>

#include "common/log.h"
#include "mpi_api/error_handlers.h"
#include "mpi_api/reduce_ops.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

// LeakSanitizer's hook, asked at exit: a forked child that left its
// parent's engine alone (UCX's endpoints and pools among it, reachable
// only through UCX's own mappings) is not checked for leaks, or the
// child's exit status would say 23 for what was left on purpose. Every
// other process is checked as usual. Only sanitizer runtimes call it.
extern "C" int __lsan_is_turned_off() {
  return tagwire::mpi::g_engine_left_in_child != nullptr ? 1 : 0;
}

namespace tagwire::mpi {

State g_state;

// The engine a forked child leaves alone (State::~State).
engine::Engine* g_engine_left_in_child = nullptr;

State::~State() {
  // A child forked after MPI_Init holds a copy of the parent's engine: its
  // rings, its UCX worker, its sockets are the parent's. Finalizing it
  // would enter the job's barrier as the parent and close the parent's
  // connections (UCX asserts on a worker used across fork). The copy is
  // left as it is; the kernel takes it back with the process, as MPICH and
  // Open MPI leave theirs.
  if (engine != nullptr && ::getpid() != init_pid) g_engine_left_in_child = engine.release();
}

namespace {

using detail::kTypeSizes;
constexpr int kTypeCount = static_cast<int>(sizeof(kTypeSizes) / sizeof(kTypeSizes[0]));
static_assert(kTypeCount == MPI_COMPLEX16 + 1, "Fortran's are the last predefined types");
// No count of a predefined type can pass kMaxMessageBytes: the
// point-to-point calls' predefined_bytes relies on it (no division there).
constexpr bool counts_fit_any_buffer() {
  for (std::size_t size : kTypeSizes) {
    if (size > kMaxMessageBytes / std::numeric_limits<int>::max()) return false;
  }
  return true;
}
static_assert(counts_fit_any_buffer(), "an int count of a predefined type may exceed 2^47 bytes");

// A C type's alignment is the largest power of two dividing its size, up
// to 16 (long double).
std::size_t alignment_of(std::size_t size) {
  return size == 0 ? 1 : std::min<std::size_t>(size & (~size + 1), 16);
}
TypeLayout basic_layout(int type) {
  const std::size_t size = kTypeSizes[type];
  return TypeLayout::basic(size, size, alignment_of(size), type);
}

// A complex type: one element of two reals, aligned as the real is.
bool is_complex(int type) {
  return (type >= MPI_C_FLOAT_COMPLEX && type <= MPI_C_LONG_DOUBLE_COMPLEX) ||
         (type >= MPI_CXX_FLOAT_COMPLEX && type <= MPI_CXX_LONG_DOUBLE_COMPLEX);
}
TypeLayout predefined_value_layout(int type) {
  const std::size_t size = kTypeSizes[type];
  if (!is_complex(type)) return basic_layout(type);
  return TypeLayout::basic(size, size, alignment_of(size / 2), type);
}

// A MINLOC / MAXLOC pair laid out as C lays out ValueIndex<V>, the struct
// the reductions read: the value, the int at its offset, the extent
// padded to the struct's alignment (MPI_DOUBLE_INT: size 12, extent 16).
template <typename V>
TypeLayout pair_layout(int value_type) {
  const TypeLayout value = basic_layout(value_type);
  const TypeLayout index = basic_layout(MPI_INT);
  const int blocks[] = {1, 1};
  const std::ptrdiff_t displacements[] = {offsetof(ValueIndex<V>, value),
                                          offsetof(ValueIndex<V>, index)};
  const TypeLayout* const types[] = {&value, &index};
  TypeLayout pair = TypeLayout::place(blocks, displacements, types, true).value();
  pair.commit();
  return pair;  // its element type is set by predefined_layouts
}

// The predefined layouts, indexed by handle: one run each, but for the
// pairs.
const std::vector<TypeLayout>& predefined_layouts() {
  static const std::vector<TypeLayout> layouts = [] {
    std::vector<TypeLayout> v;
    for (int t = 0; t < MPI_FLOAT_INT; ++t) v.push_back(predefined_value_layout(t));
    v.push_back(pair_layout<float>(MPI_FLOAT));
    v.push_back(pair_layout<double>(MPI_DOUBLE));
    v.push_back(pair_layout<long>(MPI_LONG));
    v.push_back(pair_layout<int>(MPI_INT));
    v.push_back(pair_layout<short>(MPI_SHORT));
    v.push_back(pair_layout<long double>(MPI_LONG_DOUBLE));
    // Fortran's: their C equivalent's layout (its runs say what the
    // bytes are), combined as that type is.
    for (int t = MPI_CHARACTER; t <= MPI_COMPLEX16; ++t) v.push_back(v[c_equivalent(t)]);
    // MPI_PACKED is no element a reduction can combine; Fortran's types
    // combine as their C equivalent.
    for (int t = MPI_CHAR; t <= MPI_COMPLEX16; ++t) {
      if (t != MPI_PACKED) v[static_cast<std::size_t>(t)].set_element_type(c_equivalent(t));
    }
    return v;
  }();
  return layouts;
}

}  // namespace

const std::size_t* const kPredefinedTypeSizes = kTypeSizes;

std::string object_name(const char* name) {
  std::string text(name);
  if (text.size() >= MPI_MAX_OBJECT_NAME) text.resize(MPI_MAX_OBJECT_NAME - 1);
  return text;
}

int copy_string(const std::string& text, char* out, int capacity, int* length) {
  std::size_t n = std::min<std::size_t>(text.size(), static_cast<std::size_t>(capacity - 1));
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  *length = static_cast<int>(n);
  return MPI_SUCCESS;
}

// The one table from a Status code to its MPI error class
// (common/status.h says what each code means).
int error_class(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kOk:
      return MPI_SUCCESS;
    case ErrorCode::kInvalidArgument:
      return MPI_ERR_ARG;
    case ErrorCode::kInvalidRank:
      return MPI_ERR_RANK;
    case ErrorCode::kInvalidTag:
      return MPI_ERR_TAG;
    case ErrorCode::kInvalidCount:
      return MPI_ERR_COUNT;
    case ErrorCode::kInvalidBuffer:
      return MPI_ERR_BUFFER;
    case ErrorCode::kInvalidComm:
      return MPI_ERR_COMM;
    case ErrorCode::kInvalidRequest:
      return MPI_ERR_REQUEST;
    case ErrorCode::kInvalidType:
      return MPI_ERR_TYPE;
    case ErrorCode::kInvalidOp:
      return MPI_ERR_OP;
    case ErrorCode::kInvalidGroup:
      return MPI_ERR_GROUP;
    case ErrorCode::kInvalidKeyval:
      return MPI_ERR_KEYVAL;
    case ErrorCode::kInvalidInfo:
      return MPI_ERR_INFO;
    case ErrorCode::kInvalidTopology:
      return MPI_ERR_TOPOLOGY;
    case ErrorCode::kInvalidDims:
      return MPI_ERR_DIMS;
    case ErrorCode::kInfoKey:
      return MPI_ERR_INFO_KEY;
    case ErrorCode::kInfoValue:
      return MPI_ERR_INFO_VALUE;
    case ErrorCode::kInfoNoKey:
      return MPI_ERR_INFO_NOKEY;
    case ErrorCode::kInvalidWindow:
      return MPI_ERR_WIN;
    case ErrorCode::kRmaRange:
      return MPI_ERR_RMA_RANGE;
    case ErrorCode::kRmaSync:
      return MPI_ERR_RMA_SYNC;
    case ErrorCode::kRmaShared:
      return MPI_ERR_RMA_SHARED;
    case ErrorCode::kRmaFlavor:
      return MPI_ERR_RMA_FLAVOR;
    case ErrorCode::kRmaAttach:
      return MPI_ERR_RMA_ATTACH;
    case ErrorCode::kTruncate:
      return MPI_ERR_TRUNCATE;
    case ErrorCode::kOutOfResources:
      return MPI_ERR_NO_MEM;
    case ErrorCode::kUnsupported:
      return MPI_ERR_UNSUPPORTED_OPERATION;
    case ErrorCode::kPeerFailed:
      return MPI_ERR_PROC_FAILED;
    case ErrorCode::kConversion:
      return MPI_ERR_CONVERSION;
    case ErrorCode::kNotFound:
    case ErrorCode::kProtocol:
    case ErrorCode::kInternal:
      return MPI_ERR_INTERN;
    case ErrorCode::kConfig:
    case ErrorCode::kTransport:
    case ErrorCode::kApplication:
      return MPI_ERR_OTHER;
  }
  return MPI_ERR_UNKNOWN;
}

int report(MPI_Comm comm, const char* function, const Status& s) {
  CommEntry* entry = find_comm(comm);
  return report_through(entry != nullptr ? entry->errhandler : state().world.errhandler, function,
                        s, entry != nullptr ? comm : MPI_COMM_WORLD);
}

std::string line_prefix() {
  const State& st = state();
  return st.engine ? "[tagwire " + std::to_string(st.engine->world_rank()) + "]" : "[tagwire]";
}

int report_through(MPI_Errhandler handler, const char* function, const Status& s, MPI_Comm comm,
                   MPI_Win win) {
  const int code = error_class(s);
  if (handler != MPI_ERRORS_ARE_FATAL && (code == MPI_ERR_OTHER || code == MPI_ERR_INTERN)) {
    // These two classes say nothing of what happened (a setting, a system
    // or transport call, a bug), and the code the program gets is only the
    // class: the message goes to stderr, so MPI_Error_string's "Tagwire
    // printed what" is true.
    TW_WARN("mpi", function << " returns MPI error class " << code << ": " << s.to_string());
  }
  return invoke_errhandler(handler, function, code, s.to_string(), comm, win);
}

int invoke_errhandler(MPI_Errhandler handler, const char* function, int code,
                      const std::string& message, MPI_Comm comm, MPI_Win win) {
  if (handler == MPI_ERRORS_RETURN) return code;
  if (is_user_errhandler(handler)) {
    call_user_errhandler(handler, comm, win, code);
    return code;
  }
  std::fprintf(stderr, "%s %s failed: %s (MPI error class %d); aborting the job\n",
               line_prefix().c_str(), function, message.c_str(),
               class_of_code(code).value_or(code));
  std::fflush(nullptr);  // every stream: the user's buffered output must not be lost
  // The launcher sees a non-zero exit and stops every other rank.
  std::_Exit(code == 0 ? 1 : code);
}

Status check_initialized() {
  if (!state().initialized) return {ErrorCode::kConfig, "MPI_Init has not been called"};
  if (state().finalized) return {ErrorCode::kConfig, "MPI_Finalize has already been called"};
  return Status::ok();
}

CommEntry* find_comm(MPI_Comm comm) {
  State& st = state();
  if (comm == MPI_COMM_WORLD) return st.world.comm ? &st.world : nullptr;
  if (comm == MPI_COMM_SELF) return st.self.comm ? &st.self : nullptr;
  return st.comms.find(comm);
}

Result<engine::Communicator*> comm_of(MPI_Comm comm) {
  if (engine::Communicator* world = world_comm_of(comm)) return world;  // the common case
  TAGWIRE_RETURN_IF_ERROR(check_initialized());
  CommEntry* entry = find_comm(comm);
  if (entry == nullptr) {
    return Status(ErrorCode::kInvalidComm,
                  comm == MPI_COMM_NULL
                      ? "MPI_COMM_NULL is not a communicator"
                      : "communicator handle " + std::to_string(comm) + " is not valid (freed?)");
  }
  return entry->comm;
}

Result<const TypeLayout*> layout_of(MPI_Datatype datatype, bool need_commit) {
  const TypeLayout* layout = nullptr;
  if (datatype > MPI_DATATYPE_NULL && datatype < kTypeCount) {
    layout = &predefined_layouts()[static_cast<std::size_t>(datatype)];
  } else if (auto* derived = state().types.find(datatype)) {
    layout = derived->get();
  }
  if (layout == nullptr) {
    return Status(ErrorCode::kInvalidType, datatype == MPI_DATATYPE_NULL
                                               ? std::string("MPI_DATATYPE_NULL is not a datatype")
                                               : "datatype handle " + std::to_string(datatype) +
                                                     " is not a valid datatype (freed?)");
  }
  if (need_commit && !layout->committed()) {
    return Status(ErrorCode::kInvalidType,
                  "datatype " + std::to_string(datatype) + " is used before MPI_Type_commit");
  }
  return layout;
}

Result<std::size_t> type_size(MPI_Datatype datatype) {
  auto layout = layout_of(datatype, false);
  if (!layout) return layout.status();
  return (*layout)->size();
}

Result<std::size_t> bytes_of(int count, MPI_Datatype datatype) {
  if (count < 0) {
    return Status(ErrorCode::kInvalidCount, "count " + std::to_string(count) + " is negative");
  }
  auto layout = layout_of(datatype, true);
  if (!layout) return layout.status();
  const std::size_t size = (*layout)->size();
  if (size != 0 && static_cast<std::size_t>(count) > kMaxMessageBytes / size) {
    return Status(ErrorCode::kInvalidCount, "count " + std::to_string(count) + " of a " +
                                                std::to_string(size) +
                                                "-byte datatype exceeds any buffer (2^47 bytes)");
  }
  return static_cast<std::size_t>(count) * size;
}

Status check_pack_room(const char* call, bool packing, std::size_t bytes, std::int64_t position,
                       std::int64_t size) {
  if (position >= 0 && size >= 0 && position <= size &&
      bytes <= static_cast<std::uint64_t>(size - position)) {
    return Status::ok();
  }
  return Status(ErrorCode::kTruncate, std::string(call) + ": " + std::to_string(bytes) +
                                          (packing ? " bytes do not fit" : " bytes wanted") +
                                          " at position " + std::to_string(position) +
                                          " of a buffer of " + std::to_string(size));
}

}  // namespace tagwire::mpi
