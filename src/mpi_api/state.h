// The MPI layer's process-wide state and the helpers every MPI_* function
// shares: argument conversion (count x datatype -> bytes), handle lookup,
// Status -> error class, and the error-handler dispatch.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"
#include "mpi.h"
#include "mpi_api/datatype.h"
#include "mpi_api/fortran_types.h"
#include "mpi_api/handles.h"

namespace tagwire::mpi {

struct CommEntry {
  engine::Communicator* comm = nullptr;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::string name;
  std::map<int, void*> attributes;  // user keyval -> value
  // The keys of `attributes`, in the order their values were set: they are
  // deleted last-set first (MPI-3.1 §8.7.1 asks it of MPI_COMM_SELF's at
  // MPI_Finalize, which tools use as an at-exit list).
  std::vector<int> attribute_order;
  // A Cartesian topology (MPI_Cart_create, MPI_Cart_sub; MPI_Comm_dup
  // keeps it): the grid's sizes and periodicity, row-major ranks.
  struct Cartesian {
    std::vector<int> dims, periods;
  };
  std::optional<Cartesian> cart;
  // A distributed graph (MPI_Dist_graph_create_adjacent; MPI_Comm_dup
  // keeps it): this rank's in- and out-edges as given, weights empty when
  // unweighted.
  struct DistGraph {
    std::vector<int> sources, source_weights, destinations, dest_weights;
    bool weighted = false;
  };
  std::optional<DistGraph> dist_graph;
  // A graph (MPI_Graph_create; MPI_Comm_dup keeps it): every node's
  // adjacency, as the MPI-1 calls give it (index[i]: the edges of nodes
  // 0 .. i together).
  struct Graph {
    std::vector<int> index, edges;
    // Node `node`'s neighbours (0 <= node < index.size()), in order.
    std::span<const int> neighbors(int node) const {
      const auto n = static_cast<std::size_t>(node);
      const auto first = static_cast<std::size_t>(n == 0 ? 0 : index[n - 1]);
      return std::span<const int>(edges).subspan(first, static_cast<std::size_t>(index[n]) - first);
    }
  };
  std::optional<Graph> graph;
  // Info hints (MPI_Comm_set_info, MPI_Comm_dup_with_info; MPI_Comm_dup
  // copies them): kept and given back by MPI_Comm_get_info; Tagwire acts
  // on none of them.
  std::vector<std::pair<std::string, std::string>> hints;
  // Nonblocking collectives started on it: each takes a block of tags by
  // this count, the same at every rank (collectives.cc).
  std::uint32_t nonblocking_collectives = 0;
  // Persistent collectives initialized on it: their own blocks, by this
  // count (collectives.cc).
  std::uint32_t persistent_collectives = 0;
};

// A user attribute key (MPI_Comm_create_keyval).
struct Keyval {
  MPI_Comm_copy_attr_function* copy = nullptr;
  MPI_Comm_delete_attr_function* erase = nullptr;
  void* extra_state = nullptr;
  // MPI_Comm_free_keyval: no new use, but attributes already set under it
  // keep their callbacks, so the entry stays (and its number is not reused).
  bool freed = false;
};
// User keyvals start here (below: MPI_TAG_UB and the other predefined ones).
inline constexpr int kFirstUserKeyval = 16;

// An info object: keys in insertion order (MPI_Info_get_nthkey follows it).
using InfoEntries = std::vector<std::pair<std::string, std::string>>;

// Handles of derived datatypes start here (below: predefined).
inline constexpr int kFirstDerivedType = 64;

// A send or receive whose datatype is not contiguous travels through a pack
// buffer: packed at every start (sends), unpacked at completion (receives).
struct Staging {
  std::vector<std::uint8_t> packed;
  void* user_buffer = nullptr;
  std::size_t count = 0;
  std::shared_ptr<const TypeLayout> layout;
  bool receive = false;
};

// A window (windows.cc): the engine's window, what MPI_Win_get_group and
// the predefined attributes return, and the user's attributes.
struct WinEntry {
  engine::Window* window = nullptr;
  std::vector<int> members;  // world ranks of the creating communicator
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::map<int, void*> attributes;
  MPI_Aint size_attribute = 0;                   // MPI_WIN_SIZE points here
  int disp_unit_attribute = 1;                   // MPI_WIN_DISP_UNIT points here
  int flavor_attribute = MPI_WIN_FLAVOR_CREATE;  // MPI_WIN_CREATE_FLAVOR points here
  int model_attribute = MPI_WIN_UNIFIED;         // MPI_WIN_MODEL: one copy of the memory
  std::string name;                              // MPI_Win_set_name's
  // Info hints, from creation and MPI_Win_set_info (MPI_Win_get_info).
  std::vector<std::pair<std::string, std::string>> hints;
};

// A window attribute key (MPI_Win_create_keyval): windows are never
// duplicated, so only the delete callback matters.
struct WinKeyval {
  MPI_Win_delete_attr_function* erase = nullptr;
  void* extra_state = nullptr;
  bool freed = false;
};

// A datatype attribute key (MPI_Type_create_keyval); freed as Keyval.
struct TypeKeyval {
  MPI_Type_copy_attr_function* copy = nullptr;
  MPI_Type_delete_attr_function* erase = nullptr;
  void* extra_state = nullptr;
  bool freed = false;
};

// MPI_Comm_free_keyval, MPI_Type_free_keyval, MPI_Win_free_keyval: the key
// takes no new attribute, and those set under it keep their callbacks (its
// number is never reused). Freeing it again is accepted: a delete callback
// that frees its own key (MPICH's keyval_double_free programs) frees it once
// per attribute, and MPICH allows that while attributes hold the key.
template <typename K>
Status free_keyval(HandleTable<K>& keyvals, int* keyval, const char* kind) {
  if (keyval == nullptr) return Status(ErrorCode::kInvalidArgument, "a null keyval pointer");
  K* k = keyvals.find(*keyval);
  if (k == nullptr) {
    return Status(ErrorCode::kInvalidKeyval, std::string(kind) + " attribute key " +
                                                 std::to_string(*keyval) + " is not a keyval");
  }
  k->freed = true;
  *keyval = MPI_KEYVAL_INVALID;
  return {};
}

struct State {
  // A process that exits with the library initialized tears it down here
  // (engine.h: finalize), unless it is a child forked after MPI_Init: a
  // fork copies the engine, and the copy must neither finalize nor touch
  // the job's connections (state.cc).
  ~State();
  std::unique_ptr<engine::Engine> engine;
  pid_t init_pid = 0;  // the process that called MPI_Init
  bool initialized = false;
  bool finalized = false;
  int thread_level = MPI_THREAD_FUNNELED;
  std::thread::id main_thread;  // the thread that called MPI_Init (MPI_Is_thread_main)
  CommEntry world, self;
  HandleTable<CommEntry> comms{3};  // user communicators from 3 up
  // (Requests have no table here: their handles are the engine's, see
  // Engine::hand_out.)
  HandleTable<std::shared_ptr<engine::Message>> messages{1};  // 0 is MPI_MESSAGE_NULL
  HandleTable<std::vector<int>> groups{2};  // world ranks; 0 null, 1 MPI_GROUP_EMPTY
  HandleTable<Keyval> keyvals{kFirstUserKeyval};
  HandleTable<InfoEntries> infos{2};  // 0 MPI_INFO_NULL, 1 MPI_INFO_ENV (empty, read-only)
  // Derived datatypes (shared: a pending operation keeps a freed type alive).
  HandleTable<std::shared_ptr<TypeLayout>> types{kFirstDerivedType};
  // Names given by MPI_Type_set_name (predefined types have theirs
  // without it), dropped when the type is freed.
  std::map<MPI_Datatype, std::string> type_names;
  // Datatype attributes (predefined types may carry them too), by type and
  // keyval; deleted when the type is freed (type_attributes.cc).
  HandleTable<TypeKeyval> type_keyvals{kFirstUserKeyval};
  std::map<MPI_Datatype, std::map<int, void*>> type_attributes;
  // Operations on non-contiguous datatypes: their pack buffers, by request.
  std::unordered_map<MPI_Request, Staging> staging;
  std::vector<Staging> orphaned_staging;  // freed while in flight
  std::mutex staging_mutex;               // both of the above, under MPI_THREAD_MULTIPLE
  // How many entries `staging` holds, readable without the mutex: when it
  // is 0 (every contiguous datatype) completion skips the map and the lock.
  std::atomic<std::size_t> staged{0};
  // Windows (entries stay put: attribute pointers into them are handed out).
  HandleTable<std::unique_ptr<WinEntry>> windows{1};  // 0 is MPI_WIN_NULL
  HandleTable<WinKeyval> win_keyvals{kFirstUserKeyval};
  // The counters as MPI_Finalize left them: MPI_T reads these once the
  // engine is gone (tool_interface.cc).
  engine::EngineCounters final_counters;
  transport::TransportCounters final_transport_counters;
  std::optional<engine::Config> final_config;
};

// One per process, built when the library loads (state.cc). A function's
// guarded static was the obvious shape, but every MPI call asks for the
// state, some several times, and each ask tested the guard: about 20
// instructions per 8-byte message at the receiver.
extern State g_state;
extern engine::Engine* g_engine_left_in_child;  // state.cc, State::~State
[[gnu::always_inline]] inline State& state() {
  return g_state;
}

// "[tagwire R]" for the lines the MPI layer prints itself, or "[tagwire]"
// where there is no rank (before MPI_Init, after MPI_Finalize): never
// "[tagwire -1]".
std::string line_prefix();

// The engine, once MPI_Init made it: what every call works with, hence
// the short name, and inlined like state().
[[gnu::always_inline]] inline engine::Engine& E() {
  return *state().engine;
}

// Predefined datatypes are handles 1 .. MPI_LONG_DOUBLE_INT, of
// kPredefinedTypeSizes[handle] bytes. Those below MPI_FLOAT_INT are each one
// contiguous run from offset 0: the point-to-point calls size them without
// a lookup. The pairs (MPI_FLOAT_INT .. MPI_LONG_DOUBLE_INT) have C's
// padding in their extent (MPI_DOUBLE_INT: size 12, extent 16).
extern const std::size_t* const kPredefinedTypeSizes;

// No buffer is larger than user address space (2^47 bytes on x86-64 and
// AArch64 with 4-level page tables): a count past it is a bad count, and
// refusing it also rules out overflow in count x size.
inline constexpr std::size_t kMaxMessageBytes = std::size_t{1} << 47;

// The MPI error class for a Status (MPI_SUCCESS for ok).
int error_class(const Status& s);

// Reports an error through `comm`'s error handler: aborts the job under
// MPI_ERRORS_ARE_FATAL, returns the class under MPI_ERRORS_RETURN.
int report(MPI_Comm comm, const char* function, const Status& s);

// The same through a given handler (a window's); a user handler is called
// with `comm` or `win` (error_handlers.h).
int report_through(MPI_Errhandler handler, const char* function, const Status& s,
                   MPI_Comm comm = MPI_COMM_WORLD, MPI_Win win = MPI_WIN_NULL);

// Runs `handler` for `code`: MPI_ERRORS_ARE_FATAL prints `message` and ends
// the job; a user handler is called with the object. Returns `code`.
int invoke_errhandler(MPI_Errhandler handler, const char* function, int code,
                      const std::string& message, MPI_Comm comm, MPI_Win win);

// Fails with MPI_ERR_OTHER unless MPI_Init has run and MPI_Finalize has not.
Status check_initialized();

CommEntry* find_comm(MPI_Comm comm);
// The entries of a live info object (MPI_INFO_ENV included), or the error
// naming the handle; MPI_INFO_NULL gives none (info.cc).
Result<const InfoEntries*> info_entries(MPI_Info info);
// MPI_Type_dup's and MPI_Type_free's part in datatype attributes: the copy
// callbacks run for `to`, the delete callbacks for `type`
// (type_attributes.cc).
Status copy_type_attributes(MPI_Datatype from, MPI_Datatype to);
Status delete_type_attributes(MPI_Datatype type);
// A new communicator's entry: the parent's error handler, no name, and no
// attributes until copy_attributes decides (communicators.cc).
MPI_Comm add_comm(engine::Communicator* comm, MPI_Comm parent);
Result<engine::Communicator*> comm_of(MPI_Comm comm);
// MPI_COMM_WORLD's engine communicator in a few inline compares (nearly
// every message names it); null for anything else, which comm_of resolves.
inline engine::Communicator* world_comm_of(MPI_Comm comm) {
  const State& st = state();
  return comm == MPI_COMM_WORLD && st.initialized && !st.finalized ? st.world.comm : nullptr;
}

namespace detail {
// Sizes of the predefined datatypes, indexed by handle.
inline constexpr std::size_t kTypeSizes[] = {
    0,                           // MPI_DATATYPE_NULL
    sizeof(char),                // MPI_CHAR
    sizeof(signed char),         // MPI_SIGNED_CHAR
    sizeof(unsigned char),       // MPI_UNSIGNED_CHAR
    1,                           // MPI_BYTE
    sizeof(short),               // MPI_SHORT
    sizeof(unsigned short),      // MPI_UNSIGNED_SHORT
    sizeof(int),                 // MPI_INT
    sizeof(unsigned),            // MPI_UNSIGNED
    sizeof(long),                // MPI_LONG
    sizeof(unsigned long),       // MPI_UNSIGNED_LONG
    sizeof(long long),           // MPI_LONG_LONG
    sizeof(unsigned long long),  // MPI_UNSIGNED_LONG_LONG
    sizeof(float),               // MPI_FLOAT
    sizeof(double),              // MPI_DOUBLE
    sizeof(long double),         // MPI_LONG_DOUBLE
    sizeof(wchar_t),             // MPI_WCHAR
    sizeof(bool),                // MPI_C_BOOL
    1, 2, 4,
    8,  // MPI_INT8_T .. MPI_INT64_T
    1, 2, 4,
    8,                  // MPI_UINT8_T .. MPI_UINT64_T
    1,                  // MPI_PACKED
    sizeof(MPI_Aint),   // MPI_AINT
    sizeof(MPI_Count),  // MPI_COUNT
    // Complex: two of the real type (C's float _Complex, C++'s
    // std::complex<float>, ...).
    2 * sizeof(float),        // MPI_C_FLOAT_COMPLEX
    2 * sizeof(double),       // MPI_C_DOUBLE_COMPLEX
    2 * sizeof(long double),  // MPI_C_LONG_DOUBLE_COMPLEX
    sizeof(bool),             // MPI_CXX_BOOL
    2 * sizeof(float),        // MPI_CXX_FLOAT_COMPLEX
    2 * sizeof(double),       // MPI_CXX_DOUBLE_COMPLEX
    2 * sizeof(long double),  // MPI_CXX_LONG_DOUBLE_COMPLEX
    sizeof(MPI_Offset),       // MPI_OFFSET
    // MINLOC / MAXLOC pairs: the standard's type map {(value, 0), (int,
    // offset)} holds a value and an int; the C struct's padding is in the
    // extent (pair_layout), not the size: MPI_Type_size(MPI_DOUBLE_INT) is
    // 12, as MPICH and Open MPI say.
    sizeof(float) + sizeof(int),        // MPI_FLOAT_INT
    sizeof(double) + sizeof(int),       // MPI_DOUBLE_INT
    sizeof(long) + sizeof(int),         // MPI_LONG_INT
    sizeof(int) + sizeof(int),          // MPI_2INT
    sizeof(short) + sizeof(int),        // MPI_SHORT_INT
    sizeof(long double) + sizeof(int),  // MPI_LONG_DOUBLE_INT
    // Fortran's named types (mpi.h): the sizes of their C equivalents.
    1, 4, 4, 4, 8, 8, 16,  // MPI_CHARACTER .. MPI_DOUBLE_COMPLEX
    1, 2, 4, 8,            // MPI_INTEGER1 .. MPI_INTEGER8
    4, 8, 8, 16,           // MPI_REAL4, MPI_REAL8, MPI_COMPLEX8, MPI_COMPLEX16
};
// Written out above for the table's sake, and held to their C types'.
constexpr bool fortran_sizes_are_c_sizes() {
  for (int t = MPI_CHARACTER; t <= MPI_COMPLEX16; ++t) {
    if (kTypeSizes[t] != kTypeSizes[c_equivalent(t)]) return false;
  }
  return true;
}
static_assert(fortran_sizes_are_c_sizes(), "a Fortran type's size is its C equivalent's");

}  // namespace detail

// The size of a predefined datatype that is one C value (MPI_CHAR ..
// MPI_OFFSET: all but the MINLOC / MAXLOC pairs), whose packed bytes are
// its buffer's; 0 for any other handle. Inline for the one-sided calls'
// plain case, where layout_of, bytes_of and contiguous() took 370 of an
// 8-byte MPI_Put + flush's 1,070 instructions (windows.cc).
[[gnu::always_inline]] inline std::size_t value_type_size(MPI_Datatype datatype) {
  return datatype > MPI_DATATYPE_NULL && datatype < MPI_FLOAT_INT
             ? detail::kTypeSizes[static_cast<std::size_t>(datatype)]
             : 0;
}
// The packed bytes of `count` elements of a predefined value type (the
// buffer's own, value_type_size apart); nullopt for a negative count or
// any other type. No bound to check: an int count of values of at most
// 32 bytes stays under 2^36, far inside kMaxMessageBytes.
[[gnu::always_inline]] inline std::optional<std::size_t> value_bytes(int count,
                                                                     MPI_Datatype datatype) {
  const std::size_t size = value_type_size(datatype);
  if (size == 0 || count < 0) return std::nullopt;
  return static_cast<std::size_t>(count) * size;
}

// True for a type MPI_Type_create_f90_* made: predefined, never freed
// (f90_types.cc).
bool is_f90_type(const TypeLayout& layout);

// The layout behind a datatype handle (predefined or derived); with
// need_commit, a derived type must have been committed.
Result<const TypeLayout*> layout_of(MPI_Datatype datatype, bool need_commit = true);
// Packed bytes of `count` elements (the committed type's size times count).
Result<std::size_t> bytes_of(int count, MPI_Datatype datatype);
Result<std::size_t> type_size(MPI_Datatype datatype);
// MPI_Pack / MPI_Unpack and their external32 forms (`call`): whether
// `bytes` fit at `position` of a `size`-byte buffer (kTruncate if not).
Status check_pack_room(const char* call, bool packing, std::size_t bytes, std::int64_t position,
                       std::int64_t size);

// Inline: every completed request with a status passes here. MPI_ERROR
// is set for a failed operation only: on success it keeps what the
// program put there (MPI-3.1 §3.2.5 leaves it to the calls that complete
// several requests, which set it themselves; MPICH's tests check that
// MPI_Recv and MPI_Mrecv leave it alone).
inline void to_mpi_status(const engine::MessageStatus& in, MPI_Status* out) {
  if (out == MPI_STATUS_IGNORE) return;
  out->MPI_SOURCE = in.source;
  out->MPI_TAG = in.tag;
  if (!in.error.is_ok()) [[unlikely]] {
    out->MPI_ERROR = error_class(in.error);
  } else if (in.source == MPI_ANY_SOURCE && in.tag == MPI_ANY_TAG) [[unlikely]] {
    out->MPI_ERROR = MPI_SUCCESS;  // the empty status (a null or inactive request) is all set
  }
  out->tagwire_cancelled = in.cancelled ? 1 : 0;
  out->tagwire_count = in.count;
}

// Copies `text` into a C string of `capacity` bytes (cut to fit, always
// terminated) and sets *length; returns MPI_SUCCESS.
int copy_string(const std::string& text, char* out, int capacity, int* length);

// An object's name as MPI_*_set_name keeps it: cut to MPI_MAX_OBJECT_NAME
// - 1 characters (the caller checked it is not null).
std::string object_name(const char* name);

// MPI_IDENT (same members, same order), MPI_SIMILAR (same members) or
// MPI_UNEQUAL, for groups and communicators alike (groups.cc).
int compare_members(const std::vector<int>& a, const std::vector<int>& b);

// A group's members as world ranks (groups.cc).
Result<std::vector<int>> group_members(MPI_Group group);

// Attributes on a communicator being duplicated or freed (attributes.cc):
// the copy callbacks decide what the new one gets; the delete callbacks
// run before a communicator goes.
Status copy_attributes(MPI_Comm from, CommEntry& to);
Status delete_attributes(MPI_Comm comm);

}  // namespace tagwire::mpi

// Every MPI_* function body: convert, call, report. `comm` picks the
// error handler.
#define TW_MPI_TRY(comm, status_expr)                                           \
  do {                                                                          \
    ::tagwire::Status tw_s_ = (status_expr);                                    \
    if (!tw_s_.is_ok()) return ::tagwire::mpi::report((comm), __func__, tw_s_); \
  } while (0)
