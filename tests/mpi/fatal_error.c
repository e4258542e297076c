/* Under the default error handler (MPI_ERRORS_ARE_FATAL) an invalid call
 * prints a readable message and ends the whole job with the error class as
 * exit status, and output the program printed before is not lost.
 * tests/launcher_test.sh checks all three. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("before the error on rank %d\n", rank); /* buffered: stdout is a pipe */
  int x = 0;
  /* The others flush before rank 0 errs: a loaded machine once let the
   * launcher stop rank 1 before it had even reached its printf. */
  if (rank != 0) fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Send(&x, 1, MPI_INT, 99, 0, MPI_COMM_WORLD); /* invalid rank: fatal */
  } else {
    /* The others wait to be stopped by the launcher. Their output was
     * flushed by hand above: a rank stopped by a signal loses what stdio
     * holds. */
    MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
