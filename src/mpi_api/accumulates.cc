// Accumulates: MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op and
// MPI_Compare_and_swap, each one read-modify-write of the target's bytes
// under the target's accumulate lock (Engine::accumulate), combined here
// with the reduction operations of the collectives (reduce_ops.h). So any
// predefined operation on any predefined datatype is atomic with respect
// to every other accumulate, on every transport. Each call is complete, at
// the target too, when it returns (MPI allows completing early).
#include <cstring>
#include <span>
#include <string>

#include "mpi_api/reduce_ops.h"
#include "mpi_api/state.h"
#include "mpi_api/windows.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

// Accumulates combine elements of one predefined datatype, the same on
// both sides, with a predefined operation, MPI_REPLACE or MPI_NO_OP (MPI
// allows no user operation here).
Result<std::size_t> accumulate_bytes(int origin_count, MPI_Datatype origin_type, int target_count,
                                     MPI_Datatype target_type, MPI_Op op) {
  if (op == MPI_OP_NULL || op >= kFirstUserOp ||
      (op > MPI_MINLOC && op != MPI_REPLACE && op != MPI_NO_OP)) {
    return Status(ErrorCode::kInvalidOp,
                  "operation " + std::to_string(op) +
                      " cannot accumulate (predefined operations, MPI_REPLACE or MPI_NO_OP)");
  }
  if (target_type >= kFirstDerivedType || origin_type != target_type) {
    return Status(ErrorCode::kInvalidType,
                  "accumulates take one predefined datatype on both sides for now (origin " +
                      std::to_string(origin_type) + ", target " + std::to_string(target_type) +
                      ")");
  }
  if (origin_count != target_count) {
    return Status(ErrorCode::kInvalidCount, "origin count " + std::to_string(origin_count) +
                                                " and target count " +
                                                std::to_string(target_count) + " differ");
  }
  if (op != MPI_REPLACE && op != MPI_NO_OP) TAGWIRE_RETURN_IF_ERROR(check_op(op, target_type));
  return contiguous_bytes_of(target_count, target_type);
}

// target = origin OP target (or origin itself for MPI_REPLACE); whether
// the target changed.
Result<bool> combine_into(MPI_Op op, MPI_Datatype type, const void* origin, int count,
                          std::span<std::uint8_t> target) {
  if (op == MPI_NO_OP) return false;
  if (op == MPI_REPLACE) {
    std::memcpy(target.data(), origin, target.size());
    return true;
  }
  TAGWIRE_RETURN_IF_ERROR(
      apply_op(op, type, origin, target.data(), static_cast<std::size_t>(count)));
  return true;
}

// Get_accumulate's core, shared by Fetch_and_op: the target's old bytes
// into `result`, then the combination.
Status get_accumulate(const void* origin, int count, MPI_Datatype type, void* result, int target,
                      MPI_Aint disp, MPI_Op op, MPI_Win win, const char* what) {
  auto entry = window_of(win);
  if (!entry) return entry.status();
  auto bytes = accumulate_bytes(count, type, count, type, op);
  if (!bytes) return bytes.status();
  TAGWIRE_RETURN_IF_ERROR(check_displacement(disp));
  return E().accumulate((*entry)->window, target, static_cast<std::uint64_t>(disp), *bytes,
                        [&](std::span<std::uint8_t> there) -> Result<bool> {
                          std::memcpy(result, there.data(), there.size());
                          return combine_into(op, type, origin, count, there);
                        },
                        what);
}

}  // namespace

extern "C" {

int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  auto bytes = accumulate_bytes(origin_count, origin_datatype, target_count, target_datatype, op);
  TW_WIN_TRY(win, bytes.status());
  TW_WIN_TRY(win, check_displacement(target_disp));
  TW_WIN_TRY(
      win,
      E().accumulate((*entry)->window, target_rank, static_cast<std::uint64_t>(target_disp), *bytes,
                     [&](std::span<std::uint8_t> there) {
                       return combine_into(op, target_datatype, origin_addr, target_count, there);
                     },
                     "MPI_Accumulate"));
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
  if (result_datatype != target_datatype || result_count != target_count) {
    TW_WIN_TRY(win, Status(ErrorCode::kInvalidType,
                           "MPI_Get_accumulate: the result buffer's count and datatype must be "
                           "the target's"));
  }
  if (origin_count != target_count || origin_datatype != target_datatype) {
    TW_WIN_TRY(win,
               accumulate_bytes(origin_count, origin_datatype, target_count, target_datatype, op)
                   .status());
  }
  TW_WIN_TRY(win, get_accumulate(origin_addr, target_count, target_datatype, result_addr,
                                 target_rank, target_disp, op, win, "MPI_Get_accumulate"));
  return MPI_SUCCESS;
}

int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  TW_WIN_TRY(win, get_accumulate(origin_addr, 1, datatype, result_addr, target_rank, target_disp,
                                 op, win, "MPI_Fetch_and_op"));
  return MPI_SUCCESS;
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  auto bytes = accumulate_bytes(1, datatype, 1, datatype, MPI_REPLACE);
  TW_WIN_TRY(win, bytes.status());
  TW_WIN_TRY(win, check_displacement(target_disp));
  TW_WIN_TRY(win, E().accumulate((*entry)->window, target_rank,
                                 static_cast<std::uint64_t>(target_disp), *bytes,
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
