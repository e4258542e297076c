// Request-based one-sided calls: MPI_Rput, MPI_Rget, MPI_Raccumulate and
// MPI_Rget_accumulate. Each does its operation and waits for its local
// completion (the accumulates complete at the target anyway) before it
// returns, and hands out a request that is already complete: MPI lets an
// operation complete early, and the engine's puts and gets have no
// per-operation completion to hang a request on (a window counts them).
#include <memory>

#include "engine/schedule.h"
#include "mpi_api/state.h"
#include "mpi_api/windows.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

// A request the next test or wait finds complete: a schedule with one
// step that does nothing.
int complete_request(MPI_Win win, WinEntry& entry, MPI_Request* request) {
  auto schedule = std::make_unique<engine::Schedule>(entry.window->comm);
  schedule->local([] { return Status::ok(); });
  schedule->close();
  auto r = E().start_schedule(std::move(schedule));
  TW_WIN_TRY(win, r.status());
  *request = E().hand_out(*r);
  return MPI_SUCCESS;
}

// The request pointer first: a call that fails must not have moved data.
Result<WinEntry*> request_window(MPI_Win win, MPI_Request* request) {
  auto entry = window_of(win);
  if (!entry) return entry.status();
  if (request == nullptr) return Status(ErrorCode::kInvalidArgument, "request is NULL");
  return entry;
}

}  // namespace

extern "C" {

int MPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win, MPI_Request* request) {
  auto entry = request_window(win, request);
  TW_WIN_TRY(win, entry.status());
  const int rc = PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                          target_count, target_datatype, win);
  if (rc != MPI_SUCCESS) return rc;
  TW_WIN_TRY(win, E().win_flush_local((*entry)->window));
  return complete_request(win, **entry, request);
}

int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request* request) {
  auto entry = request_window(win, request);
  TW_WIN_TRY(win, entry.status());
  const int rc = PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                          target_count, target_datatype, win);
  if (rc != MPI_SUCCESS) return rc;
  TW_WIN_TRY(win, E().win_flush_local((*entry)->window));
  return complete_request(win, **entry, request);
}

int MPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  auto entry = request_window(win, request);
  TW_WIN_TRY(win, entry.status());
  const int rc = PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank,
                                 target_disp, target_count, target_datatype, op, win);
  if (rc != MPI_SUCCESS) return rc;
  return complete_request(win, **entry, request);
}

int MPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void* result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request* request) {
  auto entry = request_window(win, request);
  TW_WIN_TRY(win, entry.status());
  const int rc = PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                     result_count, result_datatype, target_rank, target_disp,
                                     target_count, target_datatype, op, win);
  if (rc != MPI_SUCCESS) return rc;
  return complete_request(win, **entry, request);
}

}  // extern "C"
