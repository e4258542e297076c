// Accumulates: MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op and
// MPI_Compare_and_swap, each one read-modify-write of the target's bytes
// under the target's accumulate lock (Engine::accumulate), combined here
// with the reduction operations of the collectives (reduction.h). So any
// predefined operation on any datatype of one predefined type is atomic
// with respect to every other accumulate, on every transport. A derived
// target type is read as the bytes from the displacement to its last
// element's end, and only its elements are written back. Each call is
// complete, at the target too, when it returns (MPI allows completing
// early).
// Except: 8-byte integers on a window with word atomics (the NIC's, on
// verbs) update each element with one remote atomic (Engine::update_words),
// never under the lock.
#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "mpi_api/reduce_ops.h"
#include "mpi_api/reduction.h"
#include "mpi_api/state.h"
#include "mpi_api/windows.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

// One accumulate's operands: origin and target of one predefined element
// type and as many elements (MPI-3.1 §11.3.4), the target's bytes and the
// pieces of them its datatype covers.
struct AccumulatePlan {
  Reduction origin;
  Reduction target;          // with the operation
  std::ptrdiff_t first = 0;  // where the span starts from the displacement
  std::size_t span = 0;
  std::vector<engine::Engine::ByteRange> written;  // empty: all of span
};

Status check_accumulate_op(MPI_Op op) {
  if (op == MPI_OP_NULL || op >= kFirstUserOp ||
      (op > MPI_MINLOC && op != MPI_REPLACE && op != MPI_NO_OP)) {
    return {ErrorCode::kInvalidOp,
            "operation " + std::to_string(op) +
                " cannot accumulate (predefined operations, MPI_REPLACE or MPI_NO_OP)"};
  }
  return Status::ok();
}

// Where a target datatype's elements lie from the displacement: the
// bytes to read, from the lowest piece to the end of the highest, and the
// pieces to write back within them.
void place_target(AccumulatePlan& plan) {
  const Reduction& t = plan.target;
  if (t.layout == nullptr) {
    plan.span = t.bytes;
    return;
  }
  const std::vector<TypeLayout::Piece> pieces = t.layout->pieces(t.count);
  if (pieces.empty()) return;
  std::ptrdiff_t lo = pieces[0].offset;
  std::ptrdiff_t hi = lo;
  for (const TypeLayout::Piece& p : pieces) {
    lo = std::min(lo, p.offset);
    hi = std::max(hi, p.offset + static_cast<std::ptrdiff_t>(p.length));
  }
  plan.first = lo;
  plan.span = static_cast<std::size_t>(hi - lo);
  for (const TypeLayout::Piece& p : pieces) {
    plan.written.push_back({static_cast<std::size_t>(p.offset - lo), p.length});
  }
}

Result<AccumulatePlan> plan_accumulate(int origin_count, MPI_Datatype origin_type, int target_count,
                                       MPI_Datatype target_type, MPI_Op op) {
  TAGWIRE_RETURN_IF_ERROR(check_accumulate_op(op));
  auto origin = operands_of(origin_count, origin_type);
  if (!origin) return origin.status();
  auto target = operands_of(target_count, target_type);
  if (!target) return target.status();
  const bool empty = origin->bytes == 0 && target->bytes == 0;  // nothing to combine
  if (!empty && (target->element == MPI_DATATYPE_NULL || origin->element != target->element)) {
    return Status(ErrorCode::kInvalidType,
                  "an accumulate's origin (datatype " + std::to_string(origin_type) +
                      ") and target (datatype " + std::to_string(target_type) +
                      ") must be made of one predefined type, the same on both sides");
  }
  if (origin->elements != target->elements) {
    return Status(ErrorCode::kInvalidCount,
                  "origin (" + std::to_string(origin->elements) + " elements) and target (" +
                      std::to_string(target->elements) + " elements) differ");
  }
  if (!empty && op != MPI_REPLACE && op != MPI_NO_OP) {
    TAGWIRE_RETURN_IF_ERROR(check_op(op, target->element));
  }
  AccumulatePlan plan{std::move(origin).value(), std::move(target).value(), 0, 0, {}};
  plan.target.op = op;
  place_target(plan);
  return plan;
}

// The 8-byte integer types, whose elements Engine::update_words takes.
bool is_word_integer(MPI_Datatype type) {
  static_assert(sizeof(long long) == 8 && sizeof(MPI_Aint) == 8 && sizeof(MPI_Count) == 8);
  switch (type) {
    case MPI_LONG:
    case MPI_UNSIGNED_LONG:
      return sizeof(long) == 8;
    case MPI_LONG_LONG:
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_INT64_T:
    case MPI_UINT64_T:
    case MPI_AINT:
    case MPI_COUNT:
    case MPI_OFFSET:
      return true;
    default:
      return false;
  }
}

// How an accumulate of `op` (checked against `element`: check_op) on
// 8-byte integer words updates each of them with its operand.
engine::Engine::WordUpdate word_update(MPI_Op op, MPI_Datatype element,
                                       std::span<const std::uint64_t> operands) {
  engine::Engine::WordUpdate how;
  how.operands = operands;
  if (op == MPI_SUM || op == MPI_NO_OP) {
    how.kind = engine::Engine::WordUpdate::kAdd;  // modulo 2^64: signed or not
    return how;
  }
  how.kind = engine::Engine::WordUpdate::kCombine;
  how.combine = [op, element](std::uint64_t word, std::uint64_t operand) {
    if (op == MPI_REPLACE) return operand;
    (void)apply_op(op, element, &operand, &word, 1);  // checked: it cannot fail here
    return word;
  };
  return how;
}

// Where each of the target's elements lies from the displacement, in
// their packed order (the order of place_target's pieces).
std::vector<std::ptrdiff_t> word_offsets(const AccumulatePlan& plan) {
  std::vector<std::ptrdiff_t> offsets;
  offsets.reserve(plan.target.elements);
  auto add_run = [&](std::ptrdiff_t from, std::size_t length) {
    for (std::size_t b = 0; b + 8 <= length; b += 8) {
      offsets.push_back(from + static_cast<std::ptrdiff_t>(b));
    }
  };
  if (plan.written.empty()) {
    add_run(plan.first, plan.span);
  } else {
    for (const engine::Engine::ByteRange& r : plan.written) {
      add_run(plan.first + static_cast<std::ptrdiff_t>(r.offset), r.length);
    }
  }
  return offsets;
}

// An accumulate of 8-byte integers by word atomics, when the window takes
// them: true when done (the old elements into `result`, laid out as
// `result_type` says), false to go under the accumulate lock instead.
Result<bool> accumulate_words(const void* incoming, const AccumulatePlan& plan, void* result,
                              const Reduction* result_type, int target, MPI_Aint disp,
                              engine::Window* window, const char* what) {
  if (!engine::Engine::takes_word_atomics(window) || !is_word_integer(plan.target.element)) {
    return false;
  }
  const std::vector<std::ptrdiff_t> offsets = word_offsets(plan);
  if (offsets.size() != plan.target.elements) return false;  // not whole words: the lock's
  std::vector<std::uint64_t> operands(offsets.size(), 0);
  const MPI_Op op = plan.target.op;
  if (op != MPI_NO_OP && !operands.empty()) {
    std::memcpy(operands.data(), incoming, operands.size() * 8);
  }
  const engine::Engine::WordUpdate how = word_update(op, plan.target.element, operands);
  std::vector<std::uint64_t> old(offsets.size(), 0);
  auto done =
      E().update_words(window, target, static_cast<std::uint64_t>(disp), offsets, how, old, what);
  if (!done || !*done) return done;
  if (result_type != nullptr) unpack_operand(*result_type, old.data(), result);
  return true;
}

// MPI_Fetch_and_op's, MPI_Compare_and_swap's and a one-word
// MPI_Accumulate's commonest case in one step: an 8-byte integer of a
// window every rank maps, by the CPU's atomic (Engine::mapped_word),
// before any plan, Status or error path is built (they were half of an
// 8-byte fetch-and-op + flush: 530 instructions against Open MPI's 300,
// 2026-12-02). The old value into `result` unless null; false to take the
// general path, which says what is wrong if anything is. `operand` and
// `compare` are read only once the type is known to be a word.
[[gnu::always_inline]] inline bool mapped_word(MPI_Win win, MPI_Datatype type, int target,
                                               MPI_Aint disp, MPI_Op op, const void* operand,
                                               const void* compare, void* result) {
  using WordOp = engine::Engine::WordOp;
  WordOp how;
  if (compare != nullptr) {
    how = WordOp::kCompareAndSwap;
  } else if (op == MPI_SUM) {
    how = WordOp::kFetchAdd;
  } else if (op == MPI_NO_OP) {
    how = WordOp::kRead;
  } else if (op == MPI_REPLACE) {
    how = WordOp::kSwap;
  } else {
    return false;
  }
  if (disp < 0 || !is_word_integer(type) || (operand == nullptr && how != WordOp::kRead)) {
    return false;
  }
  WinEntry* entry = live_window(win);
  if (entry == nullptr) return false;
  std::uint64_t value = 0;
  std::uint64_t expected = 0;
  if (how != WordOp::kRead) std::memcpy(&value, operand, 8);
  if (compare != nullptr) std::memcpy(&expected, compare, 8);
  const std::optional<std::uint64_t> old = E().mapped_word(
      entry->window, target, static_cast<std::uint64_t>(disp), how, value, expected);
  if (!old) return false;
  if (result != nullptr) std::memcpy(result, &*old, 8);
  return true;
}

// One 8-byte integer element by word atomics, planned by nothing more
// than the checks (MPI_Fetch_and_op's and MPI_Compare_and_swap's path on
// such a window: the general plan's datatype lookups and vectors were most
// of a fetch-and-op over shared memory). True when done, the old value in
// `result`; false to take the general path.
Result<bool> one_word(engine::Window* window, int target, MPI_Aint disp,
                      const engine::Engine::WordUpdate& how, void* result, const char* what) {
  TAGWIRE_RETURN_IF_ERROR(check_displacement(disp));
  const std::ptrdiff_t at_displacement = 0;
  std::uint64_t old = 0;
  auto done = E().update_words(window, target, static_cast<std::uint64_t>(disp),
                               {&at_displacement, 1}, how, {&old, 1}, what);
  if (done && *done && result != nullptr) std::memcpy(result, &old, 8);
  return done;
}

// One integer word accumulated (and fetched into `result` unless null) by
// the window's word atomics, as every access to a word of such a window
// goes: an MPI code, or nothing where the general path must do it (another
// type, a window without word atomics, an access the atomics decline).
// The plan and its operands were most of an 8-byte MPI_Accumulate + flush
// (1,940 instructions against MPI_Fetch_and_op's 490, 2026-12-02).
std::optional<int> word_accumulate(const void* origin_addr, void* result_addr,
                                   MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                                   MPI_Op op, MPI_Win win, const char* what) {
  if (!is_word_integer(datatype) || (origin_addr == nullptr && op != MPI_NO_OP)) {
    return std::nullopt;  // (the general path says what is wrong)
  }
  auto entry = window_of(win);
  if (!entry) return report_win(win, what, entry.status());
  if (!engine::Engine::takes_word_atomics((*entry)->window)) return std::nullopt;
  Status checked = check_accumulate_op(op);
  // (MPI_SUM of an integer word needs no trial reduction: check_op's was
  // 70 of an 8-byte fetch-and-op + flush's 1,200 instructions.)
  if (checked.is_ok() && op != MPI_REPLACE && op != MPI_NO_OP && op != MPI_SUM) {
    checked = check_op(op, datatype);
  }
  if (!checked.is_ok()) return report_win(win, what, checked);
  std::uint64_t operand = 0;
  if (op != MPI_NO_OP) std::memcpy(&operand, origin_addr, 8);
  auto done = one_word((*entry)->window, target_rank, target_disp,
                       word_update(op, datatype, {&operand, 1}), result_addr, what);
  if (!done) return report_win(win, what, done.status());
  if (*done) return MPI_SUCCESS;
  return std::nullopt;
}

// Get_accumulate's core, shared by Accumulate and Fetch_and_op: the
// target's old elements into `result` (laid out as `result_type` says;
// null: not wanted), then target = origin OP target.
Status run_accumulate(const void* origin, const AccumulatePlan& plan, void* result,
                      const Reduction* result_type, int target, MPI_Aint disp, MPI_Win win,
                      const char* what) {
  auto entry = window_of(win);
  if (!entry) return entry.status();
  TAGWIRE_RETURN_IF_ERROR(check_displacement(disp));
  // Contiguous operands are used where they are: an accumulate of
  // megabytes must not copy them twice more (MPICH's large_acc_flush_local
  // took three times as long when it did).
  std::vector<std::uint8_t> packed_origin;
  const void* incoming = origin;
  if (plan.origin.layout != nullptr && plan.target.op != MPI_NO_OP) {
    packed_origin.resize(plan.origin.bytes);
    pack_operand(plan.origin, origin, packed_origin.data());
    incoming = packed_origin.data();
  }
  auto by_words =
      accumulate_words(incoming, plan, result, result_type, target, disp, (*entry)->window, what);
  if (!by_words) return by_words.status();
  if (*by_words) return Status::ok();
  std::vector<std::uint8_t> packed_target;
  if (plan.target.layout != nullptr) packed_target.resize(plan.target.bytes);
  return E().accumulate(
      (*entry)->window, target, static_cast<std::uint64_t>(disp), plan.span,
      [&](std::span<std::uint8_t> bytes) -> Result<bool> {
        // Element 0's start: before the bytes when the type reaches back.
        auto* there =
            reinterpret_cast<std::uint8_t*>(reinterpret_cast<std::uintptr_t>(bytes.data()) -
                                            static_cast<std::uintptr_t>(plan.first));
        std::uint8_t* elements = plan.target.layout == nullptr ? there : packed_target.data();
        if (elements != there) pack_operand(plan.target, there, elements);
        if (result_type != nullptr) unpack_operand(*result_type, elements, result);
        if (plan.target.op == MPI_NO_OP) return false;
        if (plan.target.op == MPI_REPLACE) {
          unpack_operand(plan.target, incoming, there);
          return true;
        }
        TAGWIRE_RETURN_IF_ERROR(reduce_packed(plan.target, incoming, elements));
        if (elements != there) unpack_operand(plan.target, elements, there);
        return true;
      },
      what, plan.written, plan.first);
}

}  // namespace

extern "C" {

int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  if (origin_count == 1 && target_count == 1 && origin_datatype == target_datatype &&
      op != MPI_NO_OP) {
    if (mapped_word(win, origin_datatype, target_rank, target_disp, op, origin_addr, nullptr,
                    nullptr)) {
      return MPI_SUCCESS;
    }
    if (auto rc = word_accumulate(origin_addr, nullptr, origin_datatype, target_rank, target_disp,
                                  op, win, "MPI_Accumulate")) {
      return *rc;
    }
  }
  auto plan = plan_accumulate(origin_count, origin_datatype, target_count, target_datatype, op);
  TW_WIN_TRY(win, plan.status());
  TW_WIN_TRY(win, run_accumulate(origin_addr, *plan, nullptr, nullptr, target_rank, target_disp,
                                 win, "MPI_Accumulate"));
  return MPI_SUCCESS;
}

int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void* result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  // MPI_NO_OP ignores the origin: its count and type need not match.
  if (op == MPI_NO_OP) {
    origin_count = target_count;
    origin_datatype = target_datatype;
  }
  auto plan = plan_accumulate(origin_count, origin_datatype, target_count, target_datatype, op);
  TW_WIN_TRY(win, plan.status());
  auto result = operands_of(result_count, result_datatype);
  TW_WIN_TRY(win, result.status());
  const bool empty = result->bytes == 0 && plan->target.bytes == 0;
  if (!empty &&
      (result->element != plan->target.element || result->elements != plan->target.elements)) {
    TW_WIN_TRY(win, Status(ErrorCode::kInvalidType,
                           "MPI_Get_accumulate: the result buffer must hold as many elements of "
                           "the target's predefined type as the target"));
  }
  TW_WIN_TRY(win, run_accumulate(origin_addr, *plan, result_addr, &*result, target_rank,
                                 target_disp, win, "MPI_Get_accumulate"));
  return MPI_SUCCESS;
}

int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  if (result_addr != nullptr &&
      mapped_word(win, datatype, target_rank, target_disp, op, origin_addr, nullptr, result_addr)) {
    return MPI_SUCCESS;
  }
  if (auto rc = word_accumulate(origin_addr, result_addr, datatype, target_rank, target_disp, op,
                                win, "MPI_Fetch_and_op")) {
    return *rc;
  }
  auto plan = plan_accumulate(1, datatype, 1, datatype, op);
  TW_WIN_TRY(win, plan.status());
  TW_WIN_TRY(win, run_accumulate(origin_addr, *plan, result_addr, &plan->target, target_rank,
                                 target_disp, win, "MPI_Fetch_and_op"));
  return MPI_SUCCESS;
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win) {
  if (compare_addr != nullptr && result_addr != nullptr &&
      mapped_word(win, datatype, target_rank, target_disp, MPI_REPLACE, origin_addr, compare_addr,
                  result_addr)) {
    return MPI_SUCCESS;
  }
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  if (engine::Engine::takes_word_atomics((*entry)->window) && is_word_integer(datatype)) {
    std::uint64_t desired = 0;
    std::memcpy(&desired, origin_addr, 8);
    engine::Engine::WordUpdate how;
    how.kind = engine::Engine::WordUpdate::kCompareAndSwap;
    how.operands = {&desired, 1};
    std::memcpy(&how.compare, compare_addr, 8);
    auto done = one_word((*entry)->window, target_rank, target_disp, how, result_addr,
                         "MPI_Compare_and_swap");
    TW_WIN_TRY(win, done.status());
    if (*done) return MPI_SUCCESS;
  }
  auto plan = plan_accumulate(1, datatype, 1, datatype, MPI_REPLACE);
  TW_WIN_TRY(win, plan.status());
  if (datatype >= kFirstDerivedType || plan->target.layout != nullptr) {
    TW_WIN_TRY(win, Status(ErrorCode::kInvalidType,
                           "MPI_Compare_and_swap takes a predefined datatype of one value"));
  }
  const std::size_t bytes = plan->target.bytes;
  TW_WIN_TRY(win, check_displacement(target_disp));
  TW_WIN_TRY(win, E().accumulate((*entry)->window, target_rank,
                                 static_cast<std::uint64_t>(target_disp), bytes,
                                 [&](std::span<std::uint8_t> there) -> Result<bool> {
                                   std::memcpy(result_addr, there.data(), there.size());
                                   if (std::memcmp(there.data(), compare_addr, there.size()) != 0) {
                                     return false;
                                   }
                                   std::memcpy(there.data(), origin_addr, there.size());
                                   return true;
                                 },
                                 "MPI_Compare_and_swap"));
  return MPI_SUCCESS;
}

}  // extern "C"
