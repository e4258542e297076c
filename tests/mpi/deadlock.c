/* A deadlock, as users write them: rank 0 waits for a message rank 1 never
 * sends and for its synchronous send to be matched, rank 1 waits in a
 * blocking receive for a tag rank 0 never uses. tagwire-run --timeout (or
 * kill -USR1) must make each rank say what it waits for. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, x = 0, y[4] = {0};
  MPI_Request req[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Irecv(y, 4, MPI_INT, 1, 42, MPI_COMM_WORLD, &req[0]);
    MPI_Issend(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(&x, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
