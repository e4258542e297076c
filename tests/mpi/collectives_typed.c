/* Collectives on derived datatypes (issue 28): a transpose through a
 * resized column type, a struct with padding gathered to everyone, strided
 * sends into contiguous receives, scatterv of columns, in place, the
 * nonblocking forms with the type freed before the wait, and a
 * neighbourhood exchange of strided blocks. Every gap a type leaves must
 * stay as it was.
 * Last line from rank 0: "collectives typed: N checks passed on rank 0, N failed in all". */
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

struct Pair {
  int i;
  double d;
};

/* One column of an n x n int matrix, resized so that the next element
 * starts one int later: element k is column k. */
static MPI_Datatype column_type(int n) {
  MPI_Datatype vec, column;
  MPI_Type_vector(n, 1, n, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, (MPI_Aint)sizeof(int), &column);
  MPI_Type_commit(&column);
  MPI_Type_free(&vec);
  return column;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = size;
  int ok;

  /* Transpose at the root: rank r's row (n ints) lands as column r. */
  MPI_Datatype column = column_type(n);
  int* row = malloc(sizeof(int) * (size_t)n);
  int* matrix = malloc(sizeof(int) * (size_t)(n * n));
  for (int j = 0; j < n; ++j) row[j] = 100 * rank + j;
  for (int root = 0; root < n; ++root) {
    for (int k = 0; k < n * n; ++k) matrix[k] = -1;
    CHECK(MPI_Gather(row, n, MPI_INT, matrix, 1, column, root, MPI_COMM_WORLD) == MPI_SUCCESS);
    if (rank == root) {
      ok = 1;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) ok &= matrix[i * n + j] == 100 * j + i;
      CHECK(ok);
    }
  }

  /* And back: the root scatters its columns, each rank gets a row. */
  for (int k = 0; k < n * n; ++k) matrix[k] = k;
  int* got = malloc(sizeof(int) * (size_t)n);
  for (int j = 0; j < n; ++j) got[j] = -1;
  CHECK(MPI_Scatter(matrix, 1, column, got, n, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  ok = 1;
  for (int j = 0; j < n; ++j) ok &= got[j] == j * n + rank;
  CHECK(ok);

  /* A struct with padding (4 bytes after the int), gathered to everyone:
   * the padding is never written. */
  MPI_Datatype pair;
  int blocklens[2] = {1, 1};
  MPI_Aint displs[2] = {offsetof(struct Pair, i), offsetof(struct Pair, d)};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, blocklens, displs, types, &pair);
  MPI_Type_commit(&pair);
  struct Pair mine = {rank, rank + 0.5};
  struct Pair* all = malloc(sizeof(struct Pair) * (size_t)n);
  memset(all, 0x5a, sizeof(struct Pair) * (size_t)n);
  CHECK(MPI_Allgather(&mine, 1, pair, all, 1, pair, MPI_COMM_WORLD) == MPI_SUCCESS);
  ok = 1;
  for (int r = 0; r < n; ++r) {
    ok &= all[r].i == r && all[r].d == r + 0.5;
    unsigned char pad[sizeof(struct Pair)];
    memcpy(pad, &all[r], sizeof pad);
    for (size_t b = sizeof(int); b < offsetof(struct Pair, d); ++b) ok &= pad[b] == 0x5a;
  }
  CHECK(ok);
  /* In place: each rank's own element is already there. */
  for (int r = 0; r < n; ++r) all[r] = (struct Pair){r == rank ? r : -1, r == rank ? r * 2.0 : -1};
  CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, pair, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  ok = 1;
  for (int r = 0; r < n; ++r) ok &= all[r].i == r && all[r].d == r * 2.0;
  CHECK(ok);

  /* Alltoall: strided sends (every other int) into contiguous receives. */
  MPI_Datatype every_other;
  MPI_Type_vector(1, 1, 2, MPI_INT, &every_other);
  MPI_Datatype every_other_resized;
  MPI_Type_create_resized(every_other, 0, 2 * (MPI_Aint)sizeof(int), &every_other_resized);
  MPI_Type_commit(&every_other_resized);
  int* spaced = malloc(sizeof(int) * (size_t)(2 * n));
  int* packed = malloc(sizeof(int) * (size_t)n);
  for (int d = 0; d < n; ++d) spaced[2 * d] = 1000 * rank + d, spaced[2 * d + 1] = -7;
  CHECK(MPI_Alltoall(spaced, 1, every_other_resized, packed, 1, MPI_INT, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  ok = 1;
  for (int s = 0; s < n; ++s) ok &= packed[s] == 1000 * s + rank;
  CHECK(ok);
  /* ... and back, received into the gaps' neighbours only. */
  for (int d = 0; d < n; ++d) spaced[2 * d] = -1, spaced[2 * d + 1] = -7;
  CHECK(MPI_Alltoall(packed, 1, MPI_INT, spaced, 1, every_other_resized, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  ok = 1;
  for (int d = 0; d < n; ++d) ok &= spaced[2 * d] == 1000 * rank + d && spaced[2 * d + 1] == -7;
  CHECK(ok);

  /* Nonblocking, the types freed before the wait (MPI lets them go only
   * once the operation is done with them). */
  {
    MPI_Datatype col = column_type(n), pair_copy;
    MPI_Type_dup(pair, &pair_copy);
    for (int k = 0; k < n * n; ++k) matrix[k] = -1;
    struct Pair* all2 = malloc(sizeof(struct Pair) * (size_t)n);
    MPI_Request q[2];
    MPI_Igather(row, n, MPI_INT, matrix, 1, col, n - 1, MPI_COMM_WORLD, &q[0]);
    MPI_Iallgather(&mine, 1, pair_copy, all2, 1, pair_copy, MPI_COMM_WORLD, &q[1]);
    MPI_Type_free(&col);
    MPI_Type_free(&pair_copy);
    CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    if (rank == n - 1) {
      ok = 1;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) ok &= matrix[i * n + j] == 100 * j + i;
      CHECK(ok);
    }
    ok = 1;
    for (int r = 0; r < n; ++r) ok &= all2[r].i == r && all2[r].d == r + 0.5;
    CHECK(ok);
    free(all2);
  }

  /* A neighbourhood exchange of strided blocks on a periodic ring. */
  {
    MPI_Comm ring;
    int dims[1] = {n}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int out[4] = {10 * rank, -7, 10 * rank + 1, -7}, in[4] = {-1, -9, -1, -9};
    CHECK(MPI_Neighbor_alltoall(out, 1, every_other_resized, in, 1, every_other_resized, ring) ==
          MPI_SUCCESS);
    const int below = (rank + n - 1) % n, above = (rank + 1) % n;
    CHECK(in[0] == 10 * below + 1 && in[2] == 10 * above && in[1] == -9 && in[3] == -9);
    MPI_Comm_free(&ring);
  }

  /* Reductions on derived types: reductions_typed.c. */

  MPI_Type_free(&every_other);
  MPI_Type_free(&every_other_resized);
  MPI_Type_free(&pair);
  MPI_Type_free(&column);
  free(row), free(matrix), free(got), free(all), free(spaced), free(packed);
  return tw_finish("collectives typed") != 0;
}
