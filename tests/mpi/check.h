/* What the C MPI tests share: CHECK counts passes and failures and prints
 * each failure with the rank and line. */
#ifndef TAGWIRE_TESTS_MPI_CHECK_H
#define TAGWIRE_TESTS_MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>

static int passed, failed, rank, size;

#define CHECK(cond)                                                                              \
  do {                                                                                           \
    if (cond) {                                                                                  \
      ++passed;                                                                                  \
    } else {                                                                                     \
      ++failed;                                                                                  \
      fprintf(stderr, "[rank %d] check failed at %s:%d: %s\n", rank, __FILE__, __LINE__, #cond); \
    }                                                                                            \
  } while (0)

/* The error class of an MPI return code. */
static inline int tw_class(int rc) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  return cls;
}

/* Sums the failed checks over the job, prints one line from rank 0, and
 * finalizes. Returns the job's failure count. */
static inline int tw_finish(const char* name) {
  int total_failed = 0;
  MPI_Allreduce(&failed, &total_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s: %d checks passed on rank 0, %d failed in all\n", name, passed, total_failed);
  MPI_Finalize();
  return total_failed;
}

#endif
