/* The collectives with per-rank counts (Scatter(v), Gatherv, Allgatherv,
 * Alltoallv), the prefix reductions (Scan, Exscan), Reduce_scatter(_block),
 * Reduce_local and user-defined operations (Op_create / free / commutative),
 * in place too, through mpi.h as a user calls them (issue 28).
 * Last line from rank 0: "collectives-v: N checks passed on rank 0, N failed in all". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "matrices.h"

static void add_ints(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = size;
  int ok;

  /* Scatter from every root, and in place at the root. */
  int* table = malloc(sizeof(int) * 2 * (size_t)n);
  for (int root = 0; root < n; ++root) {
    for (int i = 0; i < 2 * n; ++i) table[i] = rank == root ? 1000 * root + i : -1;
    int got[2] = {-1, -1};
    CHECK(MPI_Scatter(table, 2, MPI_INT, got, 2, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(got[0] == 1000 * root + 2 * rank && got[1] == 1000 * root + 2 * rank + 1);
    if (rank == root) {
      CHECK(MPI_Scatter(table, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, root, MPI_COMM_WORLD) ==
            MPI_SUCCESS);
      CHECK(table[2 * root] == 1000 * root + 2 * root); /* untouched */
    } else {
      CHECK(MPI_Scatter(NULL, 0, MPI_INT, got, 2, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS);
    }
  }

  /* Scatterv / Gatherv with rank r owning r+1 elements, placed backwards
   * with a gap of one element between blocks. */
  int* counts = malloc(sizeof(int) * (size_t)n);
  int* displs = malloc(sizeof(int) * (size_t)n);
  int span = 0;
  for (int r = n - 1; r >= 0; --r) {
    counts[r] = r + 1;
    displs[r] = span;
    span += r + 2;
  }
  int* wide = malloc(sizeof(int) * (size_t)span);
  for (int i = 0; i < span; ++i) wide[i] = rank == 0 ? i : -1;
  int mine[64];
  memset(mine, 0xff, sizeof mine);
  CHECK(MPI_Scatterv(wide, counts, displs, MPI_INT, mine, rank + 1, MPI_INT, 0, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  ok = 1;
  for (int i = 0; i <= rank; ++i) ok &= mine[i] == displs[rank] + i;
  CHECK(ok && mine[rank + 1] == -1);
  for (int i = 0; i <= rank; ++i) mine[i] = 100 * rank + i;
  for (int i = 0; i < span; ++i) wide[i] = -9;
  CHECK(MPI_Gatherv(mine, rank + 1, MPI_INT, wide, counts, displs, MPI_INT, 0, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  if (rank == 0) {
    ok = 1;
    for (int r = 0; r < n; ++r) {
      for (int i = 0; i < counts[r]; ++i) ok &= wide[displs[r] + i] == 100 * r + i;
      ok &= wide[displs[r] + counts[r]] == -9; /* the gap is left alone */
    }
    CHECK(ok);
  }

  /* Allgatherv, also in place: the gaps stay as they were. */
  for (int i = 0; i < span; ++i) wide[i] = -9;
  CHECK(MPI_Allgatherv(mine, rank + 1, MPI_INT, wide, counts, displs, MPI_INT, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  ok = 1;
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < counts[r]; ++i) ok &= wide[displs[r] + i] == 100 * r + i;
    ok &= wide[displs[r] + counts[r]] == -9;
  }
  CHECK(ok);
  for (int i = 0; i < span; ++i) wide[i] = -9;
  for (int i = 0; i <= rank; ++i) wide[displs[rank] + i] = 100 * rank + i;
  CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, wide, counts, displs, MPI_INT,
                       MPI_COMM_WORLD) == MPI_SUCCESS);
  ok = 1;
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < counts[r]; ++i) ok &= wide[displs[r] + i] == 100 * r + i;
  }
  CHECK(ok);

  /* Alltoallv: rank r sends p+1 elements to rank p, each r*1000+p*10+i. */
  int* scounts = malloc(sizeof(int) * (size_t)n);
  int* sdispls = malloc(sizeof(int) * (size_t)n);
  int* rcounts = malloc(sizeof(int) * (size_t)n);
  int* rdispls = malloc(sizeof(int) * (size_t)n);
  int stotal = 0, rtotal = 0;
  for (int p = 0; p < n; ++p) {
    scounts[p] = p + 1, sdispls[p] = stotal, stotal += p + 1;
    rcounts[p] = rank + 1, rdispls[p] = rtotal, rtotal += rank + 1;
  }
  int* sbuf = malloc(sizeof(int) * (size_t)stotal);
  int* rbuf = malloc(sizeof(int) * (size_t)rtotal);
  for (int p = 0; p < n; ++p) {
    for (int i = 0; i <= p; ++i) sbuf[sdispls[p] + i] = rank * 1000 + p * 10 + i;
  }
  CHECK(MPI_Alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT,
                      MPI_COMM_WORLD) == MPI_SUCCESS);
  ok = 1;
  for (int p = 0; p < n; ++p) {
    for (int i = 0; i <= rank; ++i) ok &= rbuf[rdispls[p] + i] == p * 1000 + rank * 10 + i;
  }
  CHECK(ok);
  /* In place: the send layout is the receive layout (two each here). */
  int* eq = malloc(sizeof(int) * 2 * (size_t)n);
  int* eqc = malloc(sizeof(int) * (size_t)n);
  int* eqd = malloc(sizeof(int) * (size_t)n);
  for (int p = 0; p < n; ++p) {
    eqc[p] = 2, eqd[p] = 2 * p;
    eq[2 * p] = rank * 1000 + p, eq[2 * p + 1] = -rank;
  }
  CHECK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, eq, eqc, eqd, MPI_INT,
                      MPI_COMM_WORLD) == MPI_SUCCESS);
  ok = 1;
  for (int p = 0; p < n; ++p) ok &= eq[2 * p] == p * 1000 + rank && eq[2 * p + 1] == -p;
  CHECK(ok);

  /* Scan and Exscan with a sum, and in place. */
  long v = rank + 1, pre = -1;
  CHECK(MPI_Scan(&v, &pre, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(pre == (long)(rank + 1) * (rank + 2) / 2);
  pre = -1;
  CHECK(MPI_Exscan(&v, &pre, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (rank > 0) CHECK(pre == (long)rank * (rank + 1) / 2);
  if (rank == 0) CHECK(pre == -1); /* rank 0's is undefined: left alone */
  pre = rank + 1;
  CHECK(MPI_Scan(MPI_IN_PLACE, &pre, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(pre == (long)(rank + 1) * (rank + 2) / 2);

  /* Reduce_scatter_block and Reduce_scatter (rank r gets r+1 elements). */
  int* full = malloc(sizeof(int) * 2 * (size_t)n);
  for (int i = 0; i < 2 * n; ++i) full[i] = i + rank;
  int two[2] = {-1, -1};
  CHECK(MPI_Reduce_scatter_block(full, two, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(two[0] == n * (2 * rank) + n * (n - 1) / 2 &&
        two[1] == n * (2 * rank + 1) + n * (n - 1) / 2);
  int total = n * (n + 1) / 2, before = rank * (rank + 1) / 2;
  int* vec = malloc(sizeof(int) * (size_t)total);
  for (int i = 0; i < total; ++i) vec[i] = i * (rank + 1);
  int got[64];
  CHECK(MPI_Reduce_scatter(vec, got, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  ok = 1;
  for (int i = 0; i <= rank; ++i) ok &= got[i] == (before + i) * total;
  CHECK(ok);
  for (int i = 0; i < total; ++i) vec[i] = i * (rank + 1);
  CHECK(MPI_Reduce_scatter(MPI_IN_PLACE, vec, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  ok = 1;
  for (int i = 0; i <= rank; ++i) ok &= vec[i] == (before + i) * total;
  CHECK(ok);

  /* Reduce_local. */
  int in3[3] = {1, 2, 3}, io3[3] = {10, 20, 30};
  CHECK(MPI_Reduce_local(in3, io3, 3, MPI_INT, MPI_SUM) == MPI_SUCCESS);
  CHECK(io3[0] == 11 && io3[2] == 33);

  /* User operations: a commutative one, and a non-commutative one whose
   * result shows the order (rank 0 first). */
  MPI_Op add, mul;
  CHECK(MPI_Op_create(add_ints, 1, &add) == MPI_SUCCESS);
  CHECK(MPI_Op_create(matmul, 0, &mul) == MPI_SUCCESS);
  int commute = -1;
  CHECK(MPI_Op_commutative(add, &commute) == MPI_SUCCESS && commute == 1);
  CHECK(MPI_Op_commutative(mul, &commute) == MPI_SUCCESS && commute == 0);
  CHECK(MPI_Op_commutative(MPI_SUM, &commute) == MPI_SUCCESS && commute == 1);
  int one = rank + 1, sum = 0;
  CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, add, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(sum == n * (n + 1) / 2);
  int m[4], prod[4] = {0}, want[4];
  rank_matrix(rank, m);
  CHECK(MPI_Reduce(m, prod, 4, MPI_INT, mul, n - 1, MPI_COMM_WORLD) == MPI_SUCCESS);
  product(0, n - 1, want);
  if (rank == n - 1) CHECK(memcmp(prod, want, sizeof want) == 0);
  CHECK(MPI_Allreduce(m, prod, 4, MPI_INT, mul, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(memcmp(prod, want, sizeof want) == 0);
  CHECK(MPI_Scan(m, prod, 4, MPI_INT, mul, MPI_COMM_WORLD) == MPI_SUCCESS);
  product(0, rank, want);
  CHECK(memcmp(prod, want, sizeof want) == 0);
  /* The test itself: rank 0's matrix last instead of first gives another
   * product, so a reduction out of rank order would be caught. */
  int first[4], last[4], r0[4];
  product(0, n - 1, first);
  product(1, n - 1, last);
  rank_matrix(0, r0);
  int swapped[4] = {last[0] * r0[0] + last[1] * r0[2], last[0] * r0[1] + last[1] * r0[3],
                    last[2] * r0[0] + last[3] * r0[2], last[2] * r0[1] + last[3] * r0[3]};
  CHECK(memcmp(first, swapped, sizeof first) != 0);
  CHECK(MPI_Op_free(&add) == MPI_SUCCESS && add == MPI_OP_NULL);
  CHECK(MPI_Op_free(&mul) == MPI_SUCCESS);

  /* Errors under MPI_ERRORS_RETURN: a freed or predefined op, a NULL
   * counts array, a bad root. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Op freed = mul, predefined = MPI_SUM;
  CHECK(tw_class(MPI_Op_free(&predefined)) == MPI_ERR_OP);
  CHECK(tw_class(MPI_Op_commutative(freed, &commute)) == MPI_ERR_OP);
  CHECK(tw_class(MPI_Reduce_local(in3, io3, 3, MPI_INT, freed)) == MPI_ERR_OP);
  /* A predefined operation a type does not take, a null one, a negative
   * count: refused every time (whether an operation takes a type is
   * remembered after the first ask); one it takes, between them. */
  for (int twice = 0; twice < 2; ++twice) {
    double dd = 1.0, de = 2.0;
    CHECK(tw_class(MPI_Reduce_local(&dd, &de, 1, MPI_DOUBLE, MPI_BXOR)) == MPI_ERR_OP);
    CHECK(tw_class(MPI_Allreduce(&dd, &de, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD)) == MPI_ERR_OP);
    CHECK(tw_class(MPI_Allreduce(&dd, &de, 1, MPI_DOUBLE, MPI_OP_NULL, MPI_COMM_WORLD)) ==
          MPI_ERR_OP);
    CHECK(tw_class(MPI_Allreduce(&dd, &de, -1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)) ==
          MPI_ERR_COUNT);
    CHECK(MPI_Reduce_local(&dd, &de, 1, MPI_DOUBLE, MPI_SUM) == MPI_SUCCESS && de == 3.0);
    unsigned char bytes_in = 0x0f, bytes_io = 0xf0;
    CHECK(MPI_Reduce_local(&bytes_in, &bytes_io, 1, MPI_BYTE, MPI_BXOR) == MPI_SUCCESS &&
          bytes_io == 0xff);
    float f = 1.0f, g = 2.0f;
    CHECK(tw_class(MPI_Reduce_local(&f, &g, 1, MPI_FLOAT, MPI_BOR)) == MPI_ERR_OP && g == 2.0f);
  }
  CHECK(tw_class(MPI_Scatter(table, 1, MPI_INT, got, 1, MPI_INT, n, MPI_COMM_WORLD)) ==
        MPI_ERR_RANK);
  CHECK(tw_class(MPI_Reduce_scatter(vec, got, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) ==
        MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

  free(table), free(counts), free(displs), free(wide), free(scounts), free(sdispls);
  free(rcounts), free(rdispls), free(sbuf), free(rbuf), free(eq), free(eqc), free(eqd);
  free(full), free(vec);
  return tw_finish("collectives-v");
}
