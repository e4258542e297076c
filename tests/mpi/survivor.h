/* What the programs tests/survivors_test.sh runs share: the start (MPI
 * with errors returned, the rank count they need, a window whose errors
 * are returned too) and the end (the "PREFIX: rank R ok" line the script
 * counts, then MPI_Finalize). The window is never freed: a collective the
 * dead rank cannot join. Header-only, as the programs are built one file
 * each by tagwire-cc. */
#ifndef TAGWIRE_TESTS_MPI_SURVIVOR_H
#define TAGWIRE_TESTS_MPI_SURVIVOR_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Returns this rank; exits 2 when the job has not `ranks` ranks, 1 when
 * the window could not be made (each after saying so). */
static int survivor_start(int* argc, char*** argv, const char* prefix, int ranks, void* memory,
                          MPI_Aint bytes, MPI_Win* win) {
  MPI_Init(argc, argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (size != ranks) {
    printf("%s: needs %d ranks\n", prefix, ranks);
    exit(2);
  }
  if (MPI_Win_create(memory, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win) != MPI_SUCCESS) {
    printf("%s: rank %d: no window\n", prefix, rank);
    exit(1);
  }
  MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
  return rank;
}

/* Says "ok" when `ok`, finalizes; main's exit status. */
static int survivor_finish(const char* prefix, int rank, int ok) {
  if (ok) printf("%s: rank %d ok\n", prefix, rank);
  fflush(stdout);
  MPI_Finalize();
  return ok ? 0 : 1;
}

#endif
