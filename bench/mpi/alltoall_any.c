/* A crowded node: every rank sends to every other, receiving with
 * MPI_ANY_SOURCE, round after round; run with more ranks than cores to see
 * how a library waits when its peers need the core it spins on.
 *
 *   alltoall_any [ROUNDS]   (default 10000; 8 ranks: 560,000 messages)
 * Rank 0 prints "alltoall_any <ranks> ranks <messages> messages <seconds> s".
 * Every message carries its sender and round; a wrong one exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? atoi(argv[1]) : 10000;
  const int peers = size - 1;
  int* in = malloc(sizeof(int) * 2 * (size_t)(peers > 0 ? peers : 1));
  int out[2];
  MPI_Request* req = malloc(sizeof(MPI_Request) * (size_t)(2 * (peers > 0 ? peers : 1)));
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < peers; ++i) {
      MPI_Irecv(&in[2 * i], 2, MPI_INT, MPI_ANY_SOURCE, r & 0x7fff, MPI_COMM_WORLD, &req[i]);
    }
    out[0] = rank;
    out[1] = r;
    for (int i = 0, n = 0; i < size; ++i) {
      if (i == rank) continue;
      MPI_Isend(out, 2, MPI_INT, i, r & 0x7fff, MPI_COMM_WORLD, &req[peers + n++]);
    }
    MPI_Waitall(2 * peers, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < peers; ++i) {
      if (in[2 * i + 1] != r || in[2 * i] == rank || in[2 * i] < 0 || in[2 * i] >= size) {
        fprintf(stderr, "alltoall_any: rank %d round %d got (%d, %d)\n", rank, r, in[2 * i],
                in[2 * i + 1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double seconds = MPI_Wtime() - start;
  if (rank == 0) {
    printf("alltoall_any %d ranks %ld messages %.3f s\n", size, (long)rounds * size * peers,
           seconds);
  }
  free(in);
  free(req);
  MPI_Finalize();
  return 0;
}
