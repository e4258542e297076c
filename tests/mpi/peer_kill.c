/* A rank killed mid-transfer (issue 31): 4 ranks, rank 2 dies by SIGKILL
 * while rank 0 receives 64 MiB from it (a rendezvous read in flight),
 * rank 1 has 20,000 eager sends queued towards it and rank 3 sends it
 * 64 MiB (a rendezvous send whose FIN never comes). Argument 0: rank 2
 * dies 2 ms after posting its send; 1: 100 ms after start, before anyone
 * reached it; 2: 300 ms after start, while the others wait for it in
 * MPI_Finalize (an exchange the launcher holds: the launcher must report
 * the death, not a rank that left it). Every survivor's operation must return, with
 * MPI_ERR_PROC_FAILED (rank 1's eager sends may also have completed
 * locally before the death: MPI_SUCCESS, or MPI_ERR_IN_STATUS with each
 * failed one's status saying PROC_FAILED; rank 0's receive at moment 0 may
 * succeed when its read of rank 2's buffer was already under way: the
 * kernel keeps a process's memory until a cross-memory read of it ends, so
 * the message arrives whole, and then every one of its bytes must be rank
 * 2's - a CI run on 2026-12-02 saw it once), within 5 s; each survivor then
 * prints "peer-kill: rank R ok" and finalizes. Rank 2 prints the host
 * clock's time of its death and each survivor the time its operation
 * returned, for the time from a death to its error. tests/launcher_test.sh
 * runs it. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kSends = 20000 };

/* The host's clock, the same in every rank: how long after the death
 * each survivor's operation returned (bench figures; the 5 s bound below
 * is the test). */
static double wall_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static MPI_Request g_requests[kSends];
static MPI_Status g_statuses[kSends];

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int when = argc > 1 ? atoi(argv[1]) : 1;
  const int early = when == 0;
  const size_t big = (size_t)64 << 20;
  char* buf = malloc(big);
  memset(buf, rank, big);
  double t0 = MPI_Wtime();
  int ok = 1;
  if (rank == 2) {
    MPI_Request r;
    if (early) MPI_Isend(buf, (int)big, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &r);
    usleep(early ? 2000 : when == 1 ? 100000 : 300000);
    printf("peer-kill: rank 2 dies at %.6f\n", wall_clock());
    fflush(stdout);
    raise(SIGKILL);
  } else if (when == 2) {
    /* straight to MPI_Finalize */
  } else if (rank == 0) {
    MPI_Status status;
    int rc = MPI_Recv(buf, (int)big, MPI_CHAR, 2, 1, MPI_COMM_WORLD, &status);
    ok = rc == MPI_ERR_PROC_FAILED;
    if (rc == MPI_SUCCESS && early) {
      /* The read finished although its owner died meanwhile: the message
       * is the sender's, whole, or this is a failure. */
      int count = -1;
      MPI_Get_count(&status, MPI_CHAR, &count);
      size_t wrong = 0;
      for (size_t i = 0; i < big; ++i) wrong += buf[i] != 2;
      ok = count == (int)big && wrong == 0;
      printf("peer-kill: rank 0: the read in flight finished whole (%d bytes, %zu not rank 2's)\n",
             count, wrong);
    }
    if (!ok) printf("peer-kill: rank 0: receive from the dead rank returned %d\n", rc);
  } else if (rank == 1) {
    for (int i = 0; i < kSends; ++i) {
      MPI_Isend(buf + i * 8, 8, MPI_CHAR, 2, 2, MPI_COMM_WORLD, &g_requests[i]);
    }
    int rc = MPI_Waitall(kSends, g_requests, g_statuses);
    if (rc == MPI_ERR_IN_STATUS) {
      for (int i = 0; i < kSends; ++i) {
        int e = g_statuses[i].MPI_ERROR;
        if (e != MPI_SUCCESS && e != MPI_ERR_PROC_FAILED && e != MPI_ERR_PENDING && ok) {
          printf("peer-kill: rank 1: send %d of %d ended with %d\n", i, kSends, e);
          ok = 0;
        }
      }
    } else {
      ok = rc == MPI_SUCCESS || rc == MPI_ERR_PROC_FAILED;
    }
    if (!ok) printf("peer-kill: rank 1: eager sends to the dead rank returned %d\n", rc);
  } else {
    int rc = MPI_Send(buf, (int)big, MPI_CHAR, 2, 3, MPI_COMM_WORLD);
    ok = rc == MPI_ERR_PROC_FAILED;
    if (!ok) printf("peer-kill: rank 3: send to the dead rank returned %d\n", rc);
  }
  const double waited = MPI_Wtime() - t0;
  if (when != 2) printf("peer-kill: rank %d returned at %.6f\n", rank, wall_clock());
  if (waited > 5.0) {
    printf("peer-kill: rank %d: the operation took %.3f s\n", rank, waited);
    ok = 0;
  }
  if (ok) printf("peer-kill: rank %d ok\n", rank);
  fflush(stdout);
  MPI_Finalize();
  free(buf);
  return 0;
}
