/* A passive-target lock holder that dies (issue 31): 3 ranks and a
 * window; rank 2 takes rank 0's lock (argument "shared" or "exclusive"),
 * says so to rank 1 with a synchronous send and SIGKILLs itself holding
 * it. Rank 1 then:
 *  - with "shared", takes and releases a shared lock itself, which must
 *    succeed (a dead shared holder does not exclude another shared one);
 *  - asks for the lock exclusively, which must end with
 *    MPI_ERR_PROC_FAILED within 20 s, not wait for ever (a dead shared
 *    holder was a count nobody could name, and the waiter waited; the
 *    dead exclusive holder is named in the word);
 *  - with "exclusive", asks for a shared lock too: MPI_ERR_PROC_FAILED.
 * Rank 0 waits for rank 1's word that it is done. Each survivor prints
 * "lock-holder-dies: rank R ok" and finalizes (the window is not freed:
 * a collective the dead rank cannot join); tests/survivors_test.sh
 * checks both said so and that the job's status is the victim's (137).
 * Usage: mpi_lock_holder_dies shared|exclusive */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "survivor.h"

static int rank;

/* Takes (and, if it succeeded, releases) rank 0's lock; returns the error
 * class of the MPI_Win_lock and the seconds it took. */
static int lock_once(int type, MPI_Win win, double* seconds) {
  const double t0 = MPI_Wtime();
  int rc = MPI_Win_lock(type, 0, 0, win);
  *seconds = MPI_Wtime() - t0;
  if (rc == MPI_SUCCESS) rc = MPI_Win_unlock(0, win) == MPI_SUCCESS ? MPI_SUCCESS : -1;
  int cls = rc;
  if (rc > 0) MPI_Error_class(rc, &cls);
  return cls;
}

static int expect(const char* what, int got, int want, double seconds) {
  if (got == want && seconds < 20.0) return 1;
  printf("lock-holder-dies: rank %d: %s ended with %d after %.1f s (expected %d within 20 s)\n",
         rank, what, got, seconds, want);
  return 0;
}

int main(int argc, char** argv) {
  static long memory[64];
  MPI_Win win;
  rank = survivor_start(&argc, &argv, "lock-holder-dies", 3, memory, sizeof memory, &win);
  const int shared = argc > 1 && strcmp(argv[1], "shared") == 0;
  int ok = 1, word = 1;
  if (rank == 2) {
    if (MPI_Win_lock(shared ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, win) != MPI_SUCCESS) {
      printf("lock-holder-dies: rank 2: could not take the lock\n");
      return 1;
    }
    MPI_Ssend(&word, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    raise(SIGKILL);
  } else if (rank == 1) {
    MPI_Recv(&word, 1, MPI_INT, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double seconds = 0;
    if (shared) {
      ok &= expect("a shared lock beside the dead shared holder",
                   lock_once(MPI_LOCK_SHARED, win, &seconds), MPI_SUCCESS, seconds);
    }
    ok &= expect("an exclusive lock held by the dead rank",
                 lock_once(MPI_LOCK_EXCLUSIVE, win, &seconds), MPI_ERR_PROC_FAILED, seconds);
    if (!shared) {
      ok &= expect("a shared lock behind the dead exclusive holder",
                   lock_once(MPI_LOCK_SHARED, win, &seconds), MPI_ERR_PROC_FAILED, seconds);
    }
    MPI_Send(&ok, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  } else {
    int other = 0;
    if (MPI_Recv(&other, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      printf("lock-holder-dies: rank 0: rank 1 never said it was done\n");
      ok = 0;
    }
  }
  return survivor_finish("lock-holder-dies", rank, ok);
}
