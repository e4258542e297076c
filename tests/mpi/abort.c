/* MPI_Abort(MPI_COMM_WORLD, 7) on rank 1 while every other rank waits on
 * it: the launcher must end the job with status 7, and soon (the others
 * are in MPI_Recv from the aborting rank, forever otherwise). The code
 * comes from argv[1] when given; with "sleep" as argv[2] the others sleep
 * 60 s outside MPI instead (a rank that cannot answer the abort unless its
 * cancel agent does; without one, only the launcher ends it). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int code = argc > 1 ? atoi(argv[1]) : 7;
  if (rank == 1 % size) {
    printf("rank %d: aborting with %d\n", rank, code);
    MPI_Abort(MPI_COMM_WORLD, code);
  }
  if (argc > 2 && strcmp(argv[2], "sleep") == 0) {
    sleep(60);
    printf("rank %d: slept through the abort\n", rank);
    return 1;
  }
  int never = 0;
  MPI_Recv(&never, 1, MPI_INT, 1 % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
