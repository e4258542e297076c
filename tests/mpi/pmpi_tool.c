/* The MPI profiling interface as a tool uses it (mpiP, Score-P, TAU and
 * every tracing wrapper): the tool defines MPI_Send, MPI_Recv, MPI_Bcast
 * and MPI_Init itself, counts, and calls the library's PMPI_ names. The
 * program's calls must reach the tool; the library's calls between its
 * own functions (a broadcast made of sends) must not be counted again.
 * Built by tagwire-cc, run with tagwire-run -n N (N >= 2). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static int sends, recvs, bcasts, inits;

/* ---- the tool */
int MPI_Init(int* argc, char*** argv) {
  ++inits;
  return PMPI_Init(argc, argv);
}
int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  ++sends;
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}
int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  ++recvs;
  return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}
int MPI_Bcast(void* buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  ++bcasts;
  return PMPI_Bcast(buf, count, datatype, root, comm);
}

/* ---- the program */
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CHECK(inits == 1);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank); /* the PMPI_ name answers as MPI_ does */
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = 10;
  for (int i = 0; i < rounds; ++i) {
    int value = rank == 0 ? 100 + i : -1;
    if (rank == 0) {
      for (int peer = 1; peer < size; ++peer) MPI_Send(&value, 1, MPI_INT, peer, i, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&value, 1, MPI_INT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(value == 100 + i);
    }
  }
  char word[16] = "";
  if (rank == 0) strcpy(word, "profiled");
  MPI_Bcast(word, sizeof word, MPI_CHAR, 0, MPI_COMM_WORLD);
  CHECK(strcmp(word, "profiled") == 0);
  /* Only the program's own calls were counted: the broadcast's sends and
   * receives inside the library were not. */
  CHECK(sends == (rank == 0 ? rounds * (size - 1) : 0));
  CHECK(recvs == (rank == 0 ? 0 : rounds));
  CHECK(bcasts == 1);
  int version = 0, subversion = 0;
  CHECK(PMPI_Get_version(&version, &subversion) == MPI_SUCCESS && version == MPI_VERSION);
  int total_failed = 0;
  PMPI_Allreduce(&failed, &total_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi pmpi: %d passed, %d failed\n", passed, total_failed);
  PMPI_Finalize();
  return total_failed != 0;
}
