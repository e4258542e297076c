// MPI windows: creation in the four flavors (create, allocate, shared,
// dynamic), one-sided communication with fence synchronisation over the
// engine's windows (engine/window.h: Put = RDMA WRITE / ucp_put, Get =
// RDMA READ / ucp_get), the predefined window attributes and user
// attributes, window groups and error handlers. Put and Get take
// contiguous datatypes (one run from offset 0); others are refused with
// MPI_ERR_TYPE.
#include <string>
#include <string_view>
#include <vector>

#include "mpi_api/error_handlers.h"
#include "mpi_api/state.h"
#include "mpi_api/windows.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace tagwire::mpi {

Status no_window(MPI_Win win) {
  TAGWIRE_RETURN_IF_ERROR(check_initialized());
  return Status(ErrorCode::kInvalidWindow,
                "window handle " + std::to_string(win) + " is not valid (freed?)");
}

int report_win(MPI_Win win, const char* function, const Status& s) {
  std::unique_ptr<WinEntry>* entry = state().windows.find(win);
  return report_through(entry != nullptr ? (*entry)->errhandler : state().world.errhandler,
                        function, s, MPI_COMM_WORLD, entry != nullptr ? win : MPI_WIN_NULL);
}

Status negative_displacement(MPI_Aint disp) {
  return {ErrorCode::kRmaRange, "negative target displacement " + std::to_string(disp)};
}

}  // namespace tagwire::mpi

namespace {

Result<WinKeyval*> win_keyval_of(int keyval) {
  WinKeyval* k = state().win_keyvals.find(keyval);
  if (k == nullptr || k->freed) {
    return Status(ErrorCode::kInvalidKeyval,
                  "window attribute key " + std::to_string(keyval) +
                      (keyval < kFirstUserKeyval ? " is predefined (read-only) or invalid"
                                                 : " is not a live keyval"));
  }
  return k;
}

// Runs the delete callback of the attribute under `keyval` (if any).
Status delete_attribute(MPI_Win win, int keyval, void* value) {
  WinKeyval* k = state().win_keyvals.find(keyval);  // a freed keyval keeps its callback
  if (k == nullptr || k->erase == nullptr) return Status::ok();
  const int rc = k->erase(win, keyval, value, k->extra_state);
  if (rc != MPI_SUCCESS) {
    return {ErrorCode::kApplication, "delete callback of window attribute " +
                                         std::to_string(keyval) + " returned " +
                                         std::to_string(rc)};
  }
  return Status::ok();
}

// The bytes of a put or get of the same count of one predefined value
// type at both ends (nearly every one): contiguous, no plan to make, no
// layout to look up. 0 for any other (and for none), which RmaPlan takes.
[[gnu::always_inline]] inline std::size_t plain_bytes(int origin_count, MPI_Datatype origin_type,
                                                      int target_count, MPI_Datatype target_type) {
  if (origin_type != target_type || origin_count != target_count) return 0;
  return value_bytes(origin_count, origin_type).value_or(0);
}

// MPI_Put's and MPI_Get's commonest case in one step: a plain run of
// bytes to or from a window the target maps here, copied under the
// engine's lock (Engine::mapped_copy) before any Result or Status is built.
// False to take the general path, which says what is wrong if anything is.
[[gnu::always_inline]] inline bool mapped_copy(MPI_Win win, std::size_t bytes, int target,
                                               MPI_Aint disp, void* origin, bool put) {
  if (bytes == 0 || disp < 0) return false;
  WinEntry* entry = live_window(win);
  return entry != nullptr && E().mapped_copy(entry->window, origin, bytes, target,
                                             static_cast<std::uint64_t>(disp), 0, put);
}

// A put or get of any datatypes: the origin's packed bytes, moved piece
// by piece where the target datatype's elements lie (one transfer per
// piece; one in all when the target is contiguous). A contiguous origin is
// used in place; another is packed into (put) or unpacked from (get)
// staging, and the call completes locally before it returns (MPI allows
// completing early), so the staging never outlives it.
class RmaPlan {
 public:
  static Result<RmaPlan> of(int origin_count, MPI_Datatype origin_type, int target_count,
                            MPI_Datatype target_type) {
    auto origin_bytes = bytes_of(origin_count, origin_type);
    if (!origin_bytes) return origin_bytes.status();
    auto target_bytes = bytes_of(target_count, target_type);
    if (!target_bytes) return target_bytes.status();
    if (*origin_bytes != *target_bytes) {
      return Status(ErrorCode::kInvalidType,
                    "origin (" + std::to_string(*origin_bytes) + " bytes) and target (" +
                        std::to_string(*target_bytes) + " bytes) do not match");
    }
    RmaPlan plan;
    plan.bytes_ = *origin_bytes;
    plan.count_ = static_cast<std::size_t>(origin_count);
    const TypeLayout* origin = *layout_of(origin_type);
    if (!origin->in_place()) plan.origin_ = origin;
    const TypeLayout* target = *layout_of(target_type);
    if (!target->in_place()) {
      plan.pieces_ = target->pieces(static_cast<std::size_t>(target_count));
    }
    return plan;
  }

  Status put(engine::Window* w, const void* origin, int target, std::uint64_t disp) {
    const auto* packed = static_cast<const std::uint8_t*>(origin);
    if (origin_ != nullptr) {
      staging_.resize(bytes_);
      origin_->pack(origin, count_, staging_.data());
      packed = staging_.data();
    }
    TAGWIRE_RETURN_IF_ERROR(
        each_piece(w, target, disp, "MPI_Put", [&](const TypeLayout::Piece& p, std::size_t at) {
          return E().put(w, packed + at, p.length, target, disp, p.offset);
        }));
    return origin_ != nullptr ? E().win_flush_local(w) : Status::ok();
  }

  Status get(engine::Window* w, void* origin, int target, std::uint64_t disp) {
    auto* packed = static_cast<std::uint8_t*>(origin);
    if (origin_ != nullptr) {
      staging_.resize(bytes_);
      packed = staging_.data();
    }
    TAGWIRE_RETURN_IF_ERROR(
        each_piece(w, target, disp, "MPI_Get", [&](const TypeLayout::Piece& p, std::size_t at) {
          return E().get(w, packed + at, p.length, target, disp, p.offset);
        }));
    if (origin_ == nullptr) return Status::ok();
    TAGWIRE_RETURN_IF_ERROR(E().win_flush_local(w));
    origin_->unpack(staging_.data(), bytes_, count_, origin);
    return Status::ok();
  }

 private:
  // Every piece is checked before the first moves, so that a bad one
  // (outside the window) leaves the target as it was.
  template <typename Move>
  Status each_piece(engine::Window* w, int target, std::uint64_t disp, const char* what,
                    Move&& move) {
    if (pieces_.empty()) return move(TypeLayout::Piece{0, bytes_}, 0);  // contiguous
    if (pieces_.size() > 1) {
      for (const TypeLayout::Piece& p : pieces_) {
        TAGWIRE_RETURN_IF_ERROR(E().rma_check(w, p.length, target, disp, p.offset, what));
      }
    }
    std::size_t at = 0;  // in the packed bytes
    for (const TypeLayout::Piece& p : pieces_) {
      Status s = move(p, at);
      // Pieces already issued complete at the next synchronisation as
      // usual; the staging must not go before them.
      if (!s.is_ok()) {
        if (at > 0 && origin_ != nullptr) (void)E().win_flush_local(w);
        return s;
      }
      at += p.length;
    }
    return Status::ok();
  }

  std::size_t bytes_ = 0;
  std::size_t count_ = 0;
  const TypeLayout* origin_ = nullptr;  // null: the origin is its packed bytes
  // Empty: a contiguous target, one piece of all the bytes (no allocation
  // on the path of every contiguous put and get).
  std::vector<TypeLayout::Piece> pieces_;
  std::vector<std::uint8_t> staging_;
};

}  // namespace

extern "C" {

// Checks what MPI_Win_create and MPI_Win_allocate share.
// A window creation's common arguments. With `fail_together` (the
// creations whose first exchange is Engine::win_open's), a bad one fails
// the call on every rank of the communicator, not here alone: the others
// would wait in the exchange for this rank (Engine::win_fail).
// `fail`: how this rank takes its part in the creation's first exchange
// when its own arguments are wrong, so that no other rank waits for it.
using FailTogether = Status (engine::Engine::*)(engine::Communicator*, Status);
static Result<engine::Communicator*> window_arguments(
    MPI_Aint size, MPI_Info info, MPI_Comm comm, FailTogether fail = &engine::Engine::win_fail) {
  auto c = comm_of(comm);
  if (!c) return c;
  Status bad;
  if (size < 0) {
    bad =
        Status(ErrorCode::kInvalidArgument, "window size " + std::to_string(size) + " is negative");
  } else if (info != MPI_INFO_NULL && state().infos.find(info) == nullptr && info != MPI_INFO_ENV) {
    bad = Status(ErrorCode::kInvalidInfo, "info handle is not valid");
  }
  if (bad.is_ok()) return c;
  return (E().*fail)(*c, std::move(bad));
}

// The value `info` gives `key` (keys are unique: MPI_Info_set replaces);
// null when it gives none or is MPI_INFO_NULL.
static const std::string* info_value(MPI_Info info, std::string_view key) {
  const InfoEntries* entries = info != MPI_INFO_NULL ? state().infos.find(info) : nullptr;
  if (entries == nullptr) return nullptr;
  for (const auto& [k, value] : *entries) {
    if (k == key) return &value;
  }
  return nullptr;
}

// What the window's info asks of the engine: "tagwire_rma_atomics" true
// or false (engine/window.h, WindowHints; other values are ignored, as
// MPI lets an implementation ignore any hint).
static engine::WindowHints window_hints(MPI_Info info) {
  engine::WindowHints hints;
  const std::string* atomics = info_value(info, "tagwire_rma_atomics");
  if (atomics != nullptr && (*atomics == "true" || *atomics == "false")) {
    hints.rma_atomics = *atomics == "true";
  }
  return hints;
}

// The handle of a window the engine made.
static MPI_Win add_window(engine::Window* window, engine::Communicator* c, MPI_Comm comm,
                          MPI_Aint size, int disp_unit, int flavor, MPI_Info info) {
  auto entry = std::make_unique<WinEntry>();
  if (auto hints = info_entries(info); hints.is_ok()) entry->hints = **hints;
  entry->flavor_attribute = flavor;
  entry->window = window;
  entry->members = c->world_ranks();
  entry->size_attribute = size;
  entry->disp_unit_attribute = disp_unit;
  entry->errhandler = find_comm(comm)->errhandler;  // MPI: inherited from the communicator
  return state().windows.add(std::move(entry));
}

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win* win) {
  auto c = window_arguments(size, info, comm);
  TW_MPI_TRY(comm, c.status());
  auto w = E().win_create(base, static_cast<std::size_t>(size), disp_unit, *c, window_hints(info));
  TW_MPI_TRY(comm, w.status());
  *win = add_window(*w, *c, comm, size, disp_unit, MPI_WIN_FLAVOR_CREATE, info);
  return MPI_SUCCESS;
}

// MPI_Win_create over memory the transport allocates (engine/window.h:
// on shm in a segment the peers map), freed with the window.
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                     MPI_Win* win) {
  auto c = window_arguments(size, info, comm);
  TW_MPI_TRY(comm, c.status());
  if (baseptr == nullptr) {
    TW_MPI_TRY(comm, E().win_fail(*c, Status(ErrorCode::kInvalidArgument, "baseptr is NULL")));
  }
  auto w = E().win_allocate(static_cast<std::size_t>(size), disp_unit, *c, window_hints(info));
  TW_MPI_TRY(comm, w.status());
  *win = add_window(*w, *c, comm, size, disp_unit, MPI_WIN_FLAVOR_ALLOCATE, info);
  *static_cast<void**>(baseptr) = (*w)->base;
  return MPI_SUCCESS;
}

// One segment that every rank maps (engine/window.h), its parts in rank
// order without a gap unless the info key alloc_shared_noncontig is
// "true", which puts each part on its own pages.
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void* baseptr, MPI_Win* win) {
  // (its first exchange is its own: win_shared_fail)
  auto c = window_arguments(size, info, comm, &engine::Engine::win_shared_fail);
  TW_MPI_TRY(comm, c.status());
  if (baseptr == nullptr) {
    TW_MPI_TRY(comm,
               E().win_shared_fail(*c, Status(ErrorCode::kInvalidArgument, "baseptr is NULL")));
  }
  const std::string* noncontig = info_value(info, "alloc_shared_noncontig");
  const bool contiguous = noncontig == nullptr || *noncontig != "true";
  auto w = E().win_allocate_shared(static_cast<std::size_t>(size), disp_unit, *c, contiguous,
                                   window_hints(info));
  TW_MPI_TRY(comm, w.status());
  *win = add_window(*w, *c, comm, size, disp_unit, MPI_WIN_FLAVOR_SHARED, info);
  *static_cast<void**>(baseptr) = (*w)->base;
  return MPI_SUCCESS;
}

// Where `rank`'s part of a shared window is in this process, its size and
// displacement unit; MPI_PROC_NULL: the lowest rank whose part is not
// empty (all empty: size 0).
int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  const engine::Window& w = *(*entry)->window;
  const bool shared = (*entry)->flavor_attribute == MPI_WIN_FLAVOR_SHARED;
  if ((*entry)->flavor_attribute == MPI_WIN_FLAVOR_DYNAMIC) {
    TW_WIN_TRY(win, Status(ErrorCode::kRmaFlavor, "MPI_Win_shared_query on a dynamic window"));
  }
  const int n = static_cast<int>(w.ranks.size());
  if (rank == MPI_PROC_NULL) {
    rank = 0;
    while (rank < n - 1 && w.ranks[static_cast<std::size_t>(rank)].size == 0) ++rank;
  } else if (rank < 0 || rank >= n) {
    TW_WIN_TRY(win, Status(ErrorCode::kInvalidRank, "rank " + std::to_string(rank) +
                                                        " is not in the window's group of " +
                                                        std::to_string(n)));
  }
  if (size == nullptr || disp_unit == nullptr || baseptr == nullptr) {
    TW_WIN_TRY(win, Status(ErrorCode::kInvalidArgument, "size, disp_unit or baseptr is NULL"));
  }
  const auto r = static_cast<std::size_t>(rank);
  // MPI-4: a window of another flavor answers for the parts this process
  // reaches by load and store (its own; a peer's that the transport maps,
  // as shm does for MPI_Win_allocate), size 0 and NULL for the others.
  void* here = w.ranks[r].view;  // this process's mapping of that part
  if (!shared && rank == w.comm->rank()) here = w.base;
  const bool reachable = shared || here != nullptr;
  *size = reachable ? static_cast<MPI_Aint>(w.ranks[r].size) : 0;
  *disp_unit = w.ranks[r].disp_unit;
  *static_cast<void**>(baseptr) = reachable ? here : nullptr;
  return MPI_SUCCESS;
}

// A window without memory (engine/window.h): each rank attaches regions,
// and origins give the target's absolute address (MPI_Get_address) as the
// displacement. MPI_WIN_BASE is MPI_BOTTOM and MPI_WIN_SIZE 0.
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  auto c = window_arguments(0, info, comm);
  TW_MPI_TRY(comm, c.status());
  if (win == nullptr) {
    TW_MPI_TRY(comm, E().win_fail(*c, Status(ErrorCode::kInvalidArgument, "win is NULL")));
  }
  auto w = E().win_create_dynamic(*c, window_hints(info));
  TW_MPI_TRY(comm, w.status());
  *win = add_window(*w, *c, comm, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, info);
  return MPI_SUCCESS;
}

int MPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  if (size < 0) {
    TW_WIN_TRY(win, Status(ErrorCode::kInvalidArgument,
                           "MPI_Win_attach of a negative size " + std::to_string(size)));
  }
  TW_WIN_TRY(win, E().win_attach((*entry)->window, base, static_cast<std::size_t>(size)));
  return MPI_SUCCESS;
}

int MPI_Win_detach(MPI_Win win, const void* base) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, E().win_detach((*entry)->window, base));
  return MPI_SUCCESS;
}

int MPI_Win_free(MPI_Win* win) {
  if (win == nullptr) return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidWindow, "null"});
  auto entry = window_of(*win);
  TW_WIN_TRY(*win, entry.status());
  // Attributes go first, while the window still exists (their callbacks
  // may look at it).
  auto attributes = (*entry)->attributes;
  for (const auto& [keyval, value] : attributes) {
    TW_WIN_TRY(*win, delete_attribute(*win, keyval, value));
    (*entry)->attributes.erase(keyval);
  }
  const MPI_Errhandler handler = (*entry)->errhandler;
  const MPI_Win freed = *win;  // what a user handler is told
  Status s = E().win_free((*entry)->window);
  state().windows.remove(*win);
  *win = MPI_WIN_NULL;
  return s.is_ok() ? MPI_SUCCESS : report_through(handler, __func__, s, MPI_COMM_WORLD, freed);
}

int MPI_Win_fence(int assert, MPI_Win win) {
  (void)assert;  // MPI_MODE_* hints: every fence does the full work
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, E().win_fence((*entry)->window));
  return MPI_SUCCESS;
}

int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
            MPI_Win win) {
  const std::size_t bytes =
      plain_bytes(origin_count, origin_datatype, target_count, target_datatype);
  if (mapped_copy(win, bytes, target_rank, target_disp, const_cast<void*>(origin_addr), true)) {
    return MPI_SUCCESS;
  }
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, check_displacement(target_disp));
  // (Without the plan: 100 of an 8-byte MPI_Put + flush's 620 instructions.)
  if (bytes != 0) {
    TW_WIN_TRY(win, E().put((*entry)->window, origin_addr, bytes, target_rank,
                            static_cast<std::uint64_t>(target_disp)));
    return MPI_SUCCESS;
  }
  auto plan = RmaPlan::of(origin_count, origin_datatype, target_count, target_datatype);
  TW_WIN_TRY(win, plan.status());
  TW_WIN_TRY(win, plan->put((*entry)->window, origin_addr, target_rank,
                            static_cast<std::uint64_t>(target_disp)));
  return MPI_SUCCESS;
}

int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  const std::size_t bytes =
      plain_bytes(origin_count, origin_datatype, target_count, target_datatype);
  if (mapped_copy(win, bytes, target_rank, target_disp, origin_addr, false)) return MPI_SUCCESS;
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, check_displacement(target_disp));
  if (bytes != 0) {
    TW_WIN_TRY(win, E().get((*entry)->window, origin_addr, bytes, target_rank,
                            static_cast<std::uint64_t>(target_disp)));
    return MPI_SUCCESS;
  }
  auto plan = RmaPlan::of(origin_count, origin_datatype, target_count, target_datatype);
  TW_WIN_TRY(win, plan.status());
  TW_WIN_TRY(win, plan->get((*entry)->window, origin_addr, target_rank,
                            static_cast<std::uint64_t>(target_disp)));
  return MPI_SUCCESS;
}

int MPI_Win_set_name(MPI_Win win, const char* win_name) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  if (win_name == nullptr) TW_WIN_TRY(win, Status(ErrorCode::kInvalidArgument, "a null name"));
  (*entry)->name = object_name(win_name);
  return MPI_SUCCESS;
}

int MPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  if (win_name == nullptr || resultlen == nullptr) {
    TW_WIN_TRY(win, Status(ErrorCode::kInvalidArgument, "win_name or resultlen is NULL"));
  }
  return copy_string((*entry)->name, win_name, MPI_MAX_OBJECT_NAME, resultlen);
}

int MPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  const auto& members = (*entry)->members;
  *group = members.empty() ? MPI_GROUP_EMPTY : state().groups.add(members);
  return MPI_SUCCESS;
}

int MPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                          MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval,
                          void* extra_state) {
  (void)win_copy_attr_fn;  // windows are never duplicated
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  *win_keyval = state().win_keyvals.add(WinKeyval{win_delete_attr_fn, extra_state, false});
  return MPI_SUCCESS;
}

// Windows are never duplicated: MPI-3.1 defines it, nothing calls it.
int MPI_WIN_DUP_FN(MPI_Win, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}

int MPI_Win_free_keyval(int* win_keyval) {
  TW_MPI_TRY(MPI_COMM_WORLD, free_keyval(state().win_keyvals, win_keyval, "window"));
  return MPI_SUCCESS;
}

int MPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, win_keyval_of(win_keyval).status());
  auto& attributes = (*entry)->attributes;
  if (auto it = attributes.find(win_keyval); it != attributes.end()) {
    TW_WIN_TRY(win, delete_attribute(win, win_keyval, it->second));  // replaced
  }
  attributes[win_keyval] = attribute_val;
  return MPI_SUCCESS;
}

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  WinEntry& e = **entry;
  auto* out = static_cast<void**>(attribute_val);
  *flag = 1;
  switch (win_keyval) {
    case MPI_WIN_BASE:  // the base address itself (MPI_BOTTOM for a dynamic window)
      *out = e.flavor_attribute == MPI_WIN_FLAVOR_DYNAMIC ? nullptr : e.window->base;
      return MPI_SUCCESS;
    case MPI_WIN_SIZE:  // a pointer to the size, as for every other attribute
      *out = &e.size_attribute;
      return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT:
      *out = &e.disp_unit_attribute;
      return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR:
      *out = &e.flavor_attribute;
      return MPI_SUCCESS;
    case MPI_WIN_MODEL:
      *out = &e.model_attribute;
      return MPI_SUCCESS;
    default:
      break;
  }
  if (state().win_keyvals.find(win_keyval) == nullptr) {
    *flag = 0;
    TW_WIN_TRY(win, win_keyval_of(win_keyval).status());
  }
  auto it = e.attributes.find(win_keyval);
  *flag = it != e.attributes.end() ? 1 : 0;
  if (*flag != 0) *out = it->second;
  return MPI_SUCCESS;
}

int MPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  auto& attributes = (*entry)->attributes;
  auto it = attributes.find(win_keyval);
  if (it == attributes.end()) {
    TW_WIN_TRY(win, Status(ErrorCode::kInvalidKeyval,
                           "window attribute " + std::to_string(win_keyval) + " is not set"));
  }
  TW_WIN_TRY(win, delete_attribute(win, win_keyval, it->second));
  attributes.erase(it);
  return MPI_SUCCESS;
}

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, check_errhandler(errhandler, /*for_window=*/true));
  (*entry)->errhandler = errhandler;
  return MPI_SUCCESS;
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  *errhandler = hand_out_errhandler((*entry)->errhandler);
  return MPI_SUCCESS;
}

}  // extern "C"
