// Info hints on communicators and windows (MPI-3.1 §6.4.4, §11.2.7):
// MPI_Comm_set_info / get_info / dup_with_info (and MPI-4's
// idup_with_info), MPI_Win_set_info /
// get_info. Tagwire acts on no communicator hint and reads a window's
// (`tagwire_rma_atomics`) at creation only; the calls keep the hints and
// give them back, as a program that sets and reads them expects.
#include "mpi_api/state.h"
#include "mpi_api/windows.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

// A new info object holding `hints` (the caller frees it: MPI's rule).
Status hand_out(const InfoEntries& hints, MPI_Info* info) {
  if (info == nullptr) return {ErrorCode::kInvalidArgument, "a null info output argument"};
  *info = state().infos.add(InfoEntries(hints));
  return Status::ok();
}

// `dup` (MPI_Comm_dup or MPI_Comm_idup into *newcomm), then `info`'s
// hints on the duplicate in place of the parent's. The hints are taken
// first: an attribute copy callback may free the info.
template <typename Dup>
int dup_with_hints(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, Dup dup) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  auto hints = info_entries(info);
  TW_MPI_TRY(comm, hints.status());
  InfoEntries kept = **hints;
  const int rc = dup();
  if (rc != MPI_SUCCESS) return rc;
  find_comm(*newcomm)->hints = std::move(kept);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  auto hints = info_entries(info);
  TW_MPI_TRY(comm, hints.status());
  find_comm(comm)->hints = **hints;
  return MPI_SUCCESS;
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  TW_MPI_TRY(comm, hand_out(find_comm(comm)->hints, info_used));
  return MPI_SUCCESS;
}

// MPI_Comm_dup, with `info`'s hints in place of the parent's (attributes
// and topology are copied as by MPI_Comm_dup).
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return dup_with_hints(comm, info, newcomm, [&] { return PMPI_Comm_dup(comm, newcomm); });
}

// MPI-4's nonblocking form (MPICH's suite calls it): MPI_Comm_idup is
// complete when it returns (communicators.cc), so the hints go on at once.
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request) {
  return dup_with_hints(comm, info, newcomm,
                        [&] { return PMPI_Comm_idup(comm, newcomm, request); });
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  auto hints = info_entries(info);
  TW_WIN_TRY(win, hints.status());
  (*entry)->hints = **hints;
  return MPI_SUCCESS;
}

int MPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  auto entry = window_of(win);
  TW_WIN_TRY(win, entry.status());
  TW_WIN_TRY(win, hand_out((*entry)->hints, info_used));
  return MPI_SUCCESS;
}

}  // extern "C"
