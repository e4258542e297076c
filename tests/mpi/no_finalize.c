/* A rank that leaves after MPI_Init without MPI_Finalize (issue 31): rank
 * 1 returns from main (no argument), calls exit(N) (argument N) or _exit(0)
 * (argument "_exit", past every exit handler) while
 * the others enter MPI_Barrier. The barrier must never complete (rank 1
 * never entered it), and the job must end at once with rank 1's status
 * (1 for a status of 0), not hang. tests/launcher_test.sh runs it and
 * fails on the line below. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int rank = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    if (argc > 1 && strcmp(argv[1], "_exit") == 0) _exit(0);
    if (argc > 1) exit(atoi(argv[1]));
    return 0;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d: passed a barrier that rank 1 never entered\n", rank);
  MPI_Finalize();
  return 0;
}
