/* Latency of the rooted collectives and allreduce, in the shape of the OSU
 * micro-benchmarks' osu_bcast / osu_reduce / osu_allreduce, written from
 * their published behaviour against mpi.h only, so that the same source
 * builds with tagwire-cc, Open MPI's mpicc and MPICH's mpicc
 * (bench/compare --collectives N).
 *
 *   coll_latency [ITERS]
 *
 * For each operation and size (8 B and 64 KiB of MPI_CHAR / MPI_INT sums,
 * root 0): a warm-up, a barrier, then ITERS calls back to back, timed on
 * every rank. Prints "op bytes us": the mean over ranks of each rank's
 * time per call, as OSU reports it. Checks the result of the last call of
 * each point and exits 1 on a wrong one, so that a fast wrong answer never
 * reaches a table.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kWarmup = 100 };

static int rank, size;

static int fail(const char* op, int bytes) {
  fprintf(stderr, "coll_latency: rank %d: wrong %s result at %d B\n", rank, op, bytes);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

/* One call of `op` on `count` ints (bcast: chars). */
static void call(const char* op, int* in, int* out, int count, int bytes) {
  if (strcmp(op, "bcast") == 0) {
    MPI_Bcast(out, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
  } else if (strcmp(op, "reduce") == 0) {
    MPI_Reduce(in, out, count, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  } else {
    MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
}

static int check(const char* op, const int* out, int count, int bytes) {
  const unsigned char* c = (const unsigned char*)out;
  if (strcmp(op, "bcast") == 0) {
    for (int i = 0; i < bytes; ++i)
      if (c[i] != (unsigned char)(i * 7 + 1)) return 0;
    return 1;
  }
  if (strcmp(op, "reduce") == 0 && rank != 0) return 1;
  for (int i = 0; i < count; ++i)
    if (out[i] != size * (size - 1) / 2 + size * i) return 0;
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = argc > 1 ? atoi(argv[1]) : 1000;
  const char* ops[] = {"bcast", "reduce", "allreduce"};
  const int sizes[] = {8, 65536};
  int* in = malloc(65536);
  int* out = malloc(65536);
  for (int o = 0; o < 3; ++o) {
    for (int s = 0; s < 2; ++s) {
      const int bytes = sizes[s];
      const int count = bytes / (int)sizeof(int);
      for (int i = 0; i < count; ++i) in[i] = rank + i;
      const int n = bytes > 8192 ? iters / 10 + 1 : iters;
      for (int k = 0; k < kWarmup; ++k) call(ops[o], in, out, count, bytes);
      if (strcmp(ops[o], "bcast") == 0 && rank == 0) {
        for (int i = 0; i < bytes; ++i) ((unsigned char*)out)[i] = (unsigned char)(i * 7 + 1);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int k = 0; k < n; ++k) call(ops[o], in, out, count, bytes);
      double us = (MPI_Wtime() - t0) * 1e6 / n;
      if (!check(ops[o], out, count, bytes)) return fail(ops[o], bytes);
      double sum = 0;
      MPI_Reduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      if (rank == 0) printf("%s %d %.2f\n", ops[o], bytes, sum / size);
    }
  }
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
