/* Put and get with derived datatypes (issue 28): a transpose by puts of
 * rows into columns of the next rank's window, gets into a strided origin,
 * strided on both sides, a target type that reaches before the
 * displacement, the same through Rput / Rget and into a dynamic window;
 * every gap stays as it was, and a piece outside the window is
 * MPI_ERR_RMA_RANGE with nothing written.
 * Last line from rank 0: "rma typed: N checks passed on rank 0, N failed in all". */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { kN = 6, kGap = -7 };

/* Column of a kN x kN int matrix. */
static MPI_Datatype column_type(void) {
  MPI_Datatype t;
  MPI_Type_vector(kN, 1, kN, MPI_INT, &t);
  MPI_Type_commit(&t);
  return t;
}

static void transpose_and_gets(void) {
  MPI_Datatype column = column_type();
  int* matrix = NULL;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int) * kN * kN, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &matrix,
                   &win);
  for (int i = 0; i < kN * kN; ++i) matrix[i] = kGap;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;

  /* Row c of rank r becomes column c of rank r+1: kN puts, each a
   * contiguous origin into a strided target (each row its own buffer: an
   * origin is not the program's again before the fence). */
  int rows[kN][kN];
  MPI_Win_fence(0, win);
  for (int c = 0; c < kN; ++c) {
    for (int k = 0; k < kN; ++k) rows[c][k] = 1000 * rank + 10 * c + k;
    CHECK(MPI_Put(rows[c], kN, MPI_INT, next, c, 1, column, win) == MPI_SUCCESS);
  }
  MPI_Win_fence(0, win);
  int ok = 1;
  for (int i = 0; i < kN; ++i) {
    for (int c = 0; c < kN; ++c) ok &= matrix[i * kN + c] == 1000 * prev + 10 * c + i;
  }
  CHECK(ok);

  /* Get a column back into every other int of a strided origin. */
  MPI_Datatype every_other;
  MPI_Type_vector(kN, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int spread[2 * kN];
  for (int i = 0; i < 2 * kN; ++i) spread[i] = kGap;
  CHECK(MPI_Get(spread, 1, every_other, next, 2, 1, column, win) == MPI_SUCCESS);
  MPI_Win_fence(0, win);
  ok = 1;
  for (int i = 0; i < kN; ++i)
    ok &= spread[2 * i] == 1000 * rank + 20 + i && spread[2 * i + 1] == kGap;
  CHECK(ok);

  /* Strided on both sides, passive target: every other int of the
   * origin into column 4 of the next rank, through Rput, then read back
   * with Rget into a column of a local matrix. */
  for (int i = 0; i < kN; ++i) spread[2 * i] = -100 * rank - i;
  MPI_Request req;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win);
  CHECK(MPI_Rput(spread, 1, every_other, next, 4, 1, column, win, &req) == MPI_SUCCESS);
  CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  MPI_Win_flush(next, win);
  /* Ints 4..9 of the next rank's matrix (row 0 columns 4 and 5, row 1
   * columns 0..3) into column 1 of a local matrix. */
  int local[kN * kN];
  for (int i = 0; i < kN * kN; ++i) local[i] = kGap;
  CHECK(MPI_Rget(local + 1, 1, column, next, 4, kN, MPI_INT, win, &req) == MPI_SUCCESS);
  CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  MPI_Win_unlock(next, win);
  const int want[kN] = {-100 * rank,      1000 * rank + 50, 1000 * rank + 1,
                        1000 * rank + 11, 1000 * rank + 21, 1000 * rank + 31};
  ok = 1;
  for (int i = 0; i < kN * kN; ++i) ok &= local[i] == (i % kN == 1 ? want[i / kN] : kGap);
  CHECK(ok);
  MPI_Barrier(MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < kN; ++i) ok &= matrix[i * kN + 4] == -100 * prev - i;
  CHECK(ok);

  /* A target type whose piece lies before the displacement: an int at -4
   * bytes. At displacement 1 it is int 0; at 0 it is outside the window:
   * MPI_ERR_RMA_RANGE, and nothing written. */
  MPI_Datatype before;
  const int len[1] = {1};
  const MPI_Aint at[1] = {-(MPI_Aint)sizeof(int)};
  MPI_Type_create_hindexed(1, len, at, MPI_INT, &before);
  MPI_Type_commit(&before);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Barrier(MPI_COMM_WORLD);
  const int mark = 4242 + rank;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win);
  CHECK(MPI_Put(&mark, 1, MPI_INT, next, 1, 1, before, win) == MPI_SUCCESS);
  CHECK(tw_class(MPI_Put(&mark, 1, MPI_INT, next, 0, 1, before, win)) == MPI_ERR_RMA_RANGE);
  /* A column starting at the last int reaches past the end. */
  CHECK(tw_class(MPI_Put(rows[0], kN, MPI_INT, next, kN * kN - 1, 1, column, win)) ==
        MPI_ERR_RMA_RANGE);
  /* Sizes that differ. */
  CHECK(tw_class(MPI_Put(rows[0], kN - 1, MPI_INT, next, 0, 1, column, win)) == MPI_ERR_TYPE);
  MPI_Win_unlock(next, win);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(matrix[0] == 4242 + prev);

  MPI_Type_free(&before);
  MPI_Type_free(&every_other);
  MPI_Type_free(&column);
  MPI_Win_free(&win);
}

/* A dynamic window: a strided put into an attached region. */
static void dynamic(void) {
  MPI_Win win;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int region[2 * kN];
  for (int i = 0; i < 2 * kN; ++i) region[i] = kGap;
  MPI_Win_attach(win, region, sizeof region);
  MPI_Aint mine, theirs;
  MPI_Get_address(region, &mine);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Sendrecv(&mine, 1, MPI_AINT, prev, 0, &theirs, 1, MPI_AINT, next, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Datatype every_other;
  MPI_Type_vector(kN, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int values[kN];
  for (int i = 0; i < kN; ++i) values[i] = 10 * rank + i;
  MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
  CHECK(MPI_Put(values, kN, MPI_INT, next, theirs, 1, every_other, win) == MPI_SUCCESS);
  MPI_Win_unlock(next, win);
  MPI_Barrier(MPI_COMM_WORLD);
  int ok = 1;
  for (int i = 0; i < kN; ++i) ok &= region[2 * i] == 10 * prev + i && region[2 * i + 1] == kGap;
  CHECK(ok);
  MPI_Win_detach(win, region);
  MPI_Type_free(&every_other);
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  transpose_and_gets();
  dynamic();
  return tw_finish("rma typed") != 0;
}
