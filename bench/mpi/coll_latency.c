/* Latency of the rooted collectives, allreduce and alltoall, in the shape
 * of the OSU micro-benchmarks' osu_bcast / osu_reduce / osu_allreduce /
 * osu_alltoall, written from
 * their published behaviour against mpi.h only, so that the same source
 * builds with tagwire-cc, Open MPI's mpicc and MPICH's mpicc
 * (bench/compare --collectives N).
 *
 *   coll_latency [ITERS [OPS [SIZES]]]
 *
 * OPS: a comma-separated list of bcast, reduce, allreduce, alltoall
 * (default bcast,reduce,allreduce); SIZES: bytes, comma-separated (default
 * 8,65536), per call for bcast, reduce and allreduce (MPI_CHAR / MPI_INT
 * sums, root 0) and per pair of ranks for alltoall (OSU's convention). For
 * each operation and size: a warm-up, a barrier, then ITERS calls back to
 * back (fewer above 8 KiB, the same bytes moved), timed on every rank in
 * 20 chunks. Prints "op bytes us": the mean over ranks of each rank's
 * median chunk's time per call. (A median, not OSU's mean of the whole
 * run: where the host takes the CPUs away for milliseconds at a time, as
 * the 2-core VM this was written on does every ~8 ms once both cores are
 * busy, a run of a millisecond either misses such a gap or is mostly gap,
 * and the mean says which, not what a call costs.) Checks the result of
 * the last call of
 * each point and exits 1 on a wrong one, so that a fast wrong answer never
 * reaches a table.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chunked_median.h"

enum { kWarmup = 100 };

static int rank, size;

static int fail(const char* op, int bytes) {
  fprintf(stderr, "coll_latency: rank %d: wrong %s result at %d B\n", rank, op, bytes);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

/* One call of `op` on `count` ints (bcast: chars; alltoall: `count` to
 * each rank). */
static void call(const char* op, int* in, int* out, int count, int bytes) {
  if (strcmp(op, "bcast") == 0) {
    MPI_Bcast(out, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
  } else if (strcmp(op, "reduce") == 0) {
    MPI_Reduce(in, out, count, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  } else if (strcmp(op, "alltoall") == 0) {
    MPI_Alltoall(in, count, MPI_INT, out, count, MPI_INT, MPI_COMM_WORLD);
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
  if (strcmp(op, "alltoall") == 0) { /* block j came from rank j: its in[rank * count + i] */
    for (int j = 0; j < size; ++j)
      for (int i = 0; i < count; ++i)
        if (out[j * count + i] != j + rank * count + i) return 0;
    return 1;
  }
  for (int i = 0; i < count; ++i)
    if (out[i] != size * (size - 1) / 2 + size * i) return 0;
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = argc > 1 ? atoi(argv[1]) : 1000;
  char ops_text[256], sizes_text[256];
  snprintf(ops_text, sizeof ops_text, "%s", argc > 2 ? argv[2] : "bcast,reduce,allreduce");
  snprintf(sizes_text, sizeof sizes_text, "%s", argc > 3 ? argv[3] : "8,65536");
  const char* ops[8];
  int sizes[16], nops = 0, nsizes = 0, largest = 0;
  for (char* t = strtok(ops_text, ","); t != NULL && nops < 8; t = strtok(NULL, ",")) {
    if (strcmp(t, "bcast") && strcmp(t, "reduce") && strcmp(t, "allreduce") &&
        strcmp(t, "alltoall")) {
      if (rank == 0) fprintf(stderr, "coll_latency: unknown operation %s\n", t);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ops[nops++] = t;
  }
  for (char* t = strtok(sizes_text, ","); t != NULL && nsizes < 16; t = strtok(NULL, ",")) {
    sizes[nsizes] = atoi(t);
    if (sizes[nsizes] < 4 || sizes[nsizes] % 4 != 0) {
      if (rank == 0) fprintf(stderr, "coll_latency: size %s is no multiple of 4 bytes\n", t);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (sizes[nsizes] > largest) largest = sizes[nsizes];
    ++nsizes;
  }
  /* alltoall sends `bytes` to every rank */
  int* in = malloc((size_t)largest * (size_t)size);
  int* out = malloc((size_t)largest * (size_t)size);
  if (in == NULL || out == NULL) {
    fprintf(stderr, "coll_latency: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int o = 0; o < nops; ++o) {
    for (int s = 0; s < nsizes; ++s) {
      const int bytes = sizes[s];
      const int count = bytes / (int)sizeof(int);
      const int all = strcmp(ops[o], "alltoall") == 0 ? count * size : count;
      for (int i = 0; i < all; ++i) in[i] = rank + i;
      /* above 8 KiB the same bytes per point as at 8 KiB, at least 20 calls */
      const long scaled = bytes > 8192 ? (long)iters * 8192 / bytes : iters;
      const int n = scaled > 20 ? (int)scaled : 20;
      const int warmup = n < kWarmup ? n : kWarmup;
      for (int k = 0; k < warmup; ++k) call(ops[o], in, out, count, bytes);
      if (strcmp(ops[o], "bcast") == 0 && rank == 0) {
        for (int i = 0; i < bytes; ++i) ((unsigned char*)out)[i] = (unsigned char)(i * 7 + 1);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      int per, chunks;
      chunk_split(n, &per, &chunks);
      double chunk_us[kChunks];
      for (int c = 0; c < chunks; ++c) {
        const double t0 = MPI_Wtime();
        for (int k = 0; k < per; ++k) call(ops[o], in, out, count, bytes);
        chunk_us[c] = (MPI_Wtime() - t0) * 1e6 / per;
      }
      double us = median_of(chunk_us, chunks);
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
