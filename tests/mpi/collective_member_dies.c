/* A collective that a live member never joins after another died (issue
 * 31): 4 ranks and a window; rank 2 SIGKILLs itself at once. Rank 0
 * learns of the death (its receive from rank 2 fails) and, as a program
 * that gave up would, calls no collective: it waits for ranks 1 and 3 to
 * say they are done. Ranks 1 and 3 call MPI_Barrier on MPI_COMM_WORLD and
 * then MPI_Win_fence; each must end with MPI_ERR_PROC_FAILED within 20 s.
 * (Both ran every round of their dissemination barrier, failing only a
 * round whose partner died, so each waited for ever for rank 0's signal:
 * the same wait hung survivors in MPI_Win_free after an MPI_Win_create
 * that failed at some ranks only.) Each survivor prints
 * "collective-member-dies: rank R ok"; tests/survivors_test.sh checks
 * that, and the job's status (137). Usage: mpi_collective_member_dies */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>

#include "survivor.h"

static int rank;

static int expect_failure(const char* what, int rc, double seconds) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (cls == MPI_ERR_PROC_FAILED && seconds < 20.0) return 1;
  printf("collective-member-dies: rank %d: %s ended with %d after %.1f s\n", rank, what, cls,
         seconds);
  return 0;
}

int main(int argc, char** argv) {
  static long memory[8];
  MPI_Win win;
  rank = survivor_start(&argc, &argv, "collective-member-dies", 4, memory, sizeof memory, &win);
  int ok = 1, word = 0;
  if (rank == 2) raise(SIGKILL);
  if (rank == 0) {
    int rc = MPI_Recv(&word, 1, MPI_INT, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ok = expect_failure("a receive from the dead rank", rc, 0);
    for (int from = 1; from <= 3; from += 2) {
      int theirs = 0;
      if (MPI_Recv(&theirs, 1, MPI_INT, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
          MPI_SUCCESS) {
        printf("collective-member-dies: rank 0: rank %d never said it was done\n", from);
        ok = 0;
      }
    }
  } else {
    double t0 = MPI_Wtime();
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    ok &= expect_failure("MPI_Barrier", rc, MPI_Wtime() - t0);
    t0 = MPI_Wtime();
    rc = MPI_Win_fence(0, win);
    ok &= expect_failure("MPI_Win_fence", rc, MPI_Wtime() - t0);
    MPI_Send(&ok, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  }
  return survivor_finish("collective-member-dies", rank, ok);
}
