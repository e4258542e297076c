/* Reductions and accumulates on derived datatypes (issue 28): a predefined
 * operation on a strided vector of one predefined type combines element by
 * element and leaves every gap alone, in every reduction (blocking and
 * nonblocking, in place, scan, exscan, reduce_scatter, reduce_local); a
 * user operation gets the elements laid out as the type says (it walks
 * them by the extent, as MPICH's nonblocking2 does) and in rank order when
 * it does not commute; MINLOC on a derived type of MPI_DOUBLE_INT pairs; a
 * type that mixes predefined types is MPI_ERR_TYPE on every rank; and
 * MPI_Accumulate / MPI_Get_accumulate through strided origin and target
 * types write the target's elements only, while another rank puts into
 * the gaps between them; a target type may reach before its displacement.
 * Last line from rank 0: "reductions typed: N checks passed on rank 0, N failed in all". */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { kCount = 5, kGap = -7 };

/* Every other int: element k at ints 2k. */
static MPI_Datatype every_other(void) {
  MPI_Datatype vec, t;
  MPI_Type_vector(1, 1, 2, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, 2 * (MPI_Aint)sizeof(int), &t);
  MPI_Type_commit(&t);
  MPI_Type_free(&vec);
  return t;
}

static void fill(int* buf, int base) {
  for (int k = 0; k < kCount; ++k) buf[2 * k] = base + k, buf[2 * k + 1] = kGap;
}

/* Elements as the sums of rank*100 + k over `ranks` ranks from 0, and the
 * gaps untouched. */
static int sums_ok(const int* buf, int ranks) {
  int ok = 1;
  for (int k = 0; k < kCount; ++k) {
    ok &= buf[2 * k] == 100 * ranks * (ranks - 1) / 2 + ranks * k;
    ok &= buf[2 * k + 1] == kGap;
  }
  return ok;
}

/* A non-commutative user operation on strided ints: inout = in's digits
 * followed by inout's (decimal concatenation shows the order), walking by
 * the extent. It is associative, as MPI-3.1 5.9.5 requires of every
 * operation (the reductions combine along a tree); "in * 10 + inout",
 * which is not, only worked while they combined one rank after another. */
static int concat(int a, int b) {
  int shift = 10;
  while (shift <= b) shift *= 10;
  return a * shift + b;
}

static void concat_fn(void* in, void* inout, int* len, MPI_Datatype* type) {
  MPI_Aint lb, extent;
  MPI_Type_get_extent(*type, &lb, &extent);
  const int stride = (int)(extent / (MPI_Aint)sizeof(int));
  for (int i = 0; i < *len; ++i) {
    ((int*)inout)[i * stride] = concat(((int*)in)[i * stride], ((int*)inout)[i * stride]);
  }
}

static void collectives(MPI_Datatype strided) {
  int send[2 * kCount], recv[2 * kCount];
  MPI_Request req;

  fill(send, 100 * rank);
  fill(recv, -1);
  for (int k = 0; k < kCount; ++k) recv[2 * k] = -1;
  CHECK(MPI_Allreduce(send, recv, kCount, strided, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(sums_ok(recv, size));

  fill(recv, 100 * rank); /* in place */
  CHECK(MPI_Allreduce(MPI_IN_PLACE, recv, kCount, strided, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(sums_ok(recv, size));

  const int root = size - 1;
  fill(recv, -1);
  CHECK(MPI_Reduce(send, recv, kCount, strided, MPI_SUM, root, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (rank == root) CHECK(sums_ok(recv, size));

  fill(recv, -1);
  CHECK(MPI_Iallreduce(send, recv, kCount, strided, MPI_SUM, MPI_COMM_WORLD, &req) == MPI_SUCCESS);
  CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(sums_ok(recv, size));

  fill(recv, -1);
  CHECK(MPI_Scan(send, recv, kCount, strided, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(sums_ok(recv, rank + 1));
  fill(recv, -1);
  CHECK(MPI_Exscan(send, recv, kCount, strided, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (rank > 0) CHECK(sums_ok(recv, rank));

  /* Reduce_scatter_block: one element each, out of a vector of size. */
  int* whole = malloc(sizeof(int) * 2 * (size_t)size);
  for (int k = 0; k < size; ++k) whole[2 * k] = 100 * rank + k, whole[2 * k + 1] = kGap;
  int mine[2] = {-1, kGap};
  CHECK(MPI_Reduce_scatter_block(whole, mine, 1, strided, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(mine[0] == 100 * size * (size - 1) / 2 + size * rank && mine[1] == kGap);
  free(whole);

  /* A user operation that does not commute: rank order, digit by digit. */
  MPI_Op concat_op;
  MPI_Op_create(concat_fn, 0, &concat_op);
  int digits[2 * kCount];
  for (int k = 0; k < kCount; ++k) digits[2 * k] = rank + 1, digits[2 * k + 1] = kGap;
  /* Rank order whatever the root: 0, and the last rank (which the
   * reduction reaches through rank 0). */
  for (int at = 0; at < 2; ++at) {
    const int to = at == 0 ? 0 : size - 1;
    fill(recv, -1);
    CHECK(MPI_Reduce(digits, recv, kCount, strided, concat_op, to, MPI_COMM_WORLD) == MPI_SUCCESS);
    if (rank == to) {
      int expect = 0;
      for (int r = 0; r < size; ++r) expect = expect * 10 + r + 1;
      int ok = 1;
      for (int k = 0; k < kCount; ++k) ok &= recv[2 * k] == expect && recv[2 * k + 1] == kGap;
      CHECK(ok);
    }
  }
  MPI_Op_free(&concat_op);

  /* MINLOC over a derived type of pairs: two MPI_DOUBLE_INT per element. */
  struct {
    double value;
    int index;
  } in[2], out[2];
  MPI_Datatype two_pairs;
  MPI_Type_contiguous(2, MPI_DOUBLE_INT, &two_pairs);
  MPI_Type_commit(&two_pairs);
  in[0].value = 10.0 - rank, in[0].index = rank; /* least at the last rank */
  in[1].value = 3.0, in[1].index = rank;         /* a tie: the least index */
  CHECK(MPI_Allreduce(in, out, 1, two_pairs, MPI_MINLOC, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(out[0].value == 10.0 - (size - 1) && out[0].index == size - 1);
  CHECK(out[1].value == 3.0 && out[1].index == 0);
  MPI_Type_free(&two_pairs);

  /* An empty type (contiguous of none) has nothing to combine. */
  MPI_Datatype none;
  MPI_Type_contiguous(0, MPI_INT, &none);
  MPI_Type_commit(&none);
  CHECK(MPI_Allreduce(send, recv, 1, none, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  MPI_Type_free(&none);

  /* Reduce_local on strided buffers. */
  int a[2 * kCount], b[2 * kCount];
  fill(a, 1), fill(b, 100);
  CHECK(MPI_Reduce_local(a, b, kCount, strided, MPI_SUM) == MPI_SUCCESS);
  int ok = 1;
  for (int k = 0; k < kCount; ++k) ok &= b[2 * k] == 101 + 2 * k && b[2 * k + 1] == kGap;
  CHECK(ok);
  /* And on a contiguous derived type (combined in place, as its ints). */
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  int c[4] = {1, 2, 3, 4}, d[4] = {10, 20, 30, 40};
  CHECK(MPI_Reduce_local(c, d, 2, pair, MPI_SUM) == MPI_SUCCESS);
  CHECK(d[0] == 11 && d[1] == 22 && d[2] == 33 && d[3] == 44);
  MPI_Type_free(&pair);

  /* Refused alike on every rank: a struct of an int and a double (no
   * single element type), and a bitwise operation on doubles. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype mixed, doubles;
  const int blocks[2] = {1, 1};
  const MPI_Aint displs[2] = {0, 8};
  const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, blocks, displs, types, &mixed);
  MPI_Type_commit(&mixed);
  char raw[64];
  memset(raw, 0, sizeof raw);
  CHECK(tw_class(MPI_Allreduce(MPI_IN_PLACE, raw, 1, mixed, MPI_SUM, MPI_COMM_WORLD)) ==
        MPI_ERR_TYPE);
  MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &doubles);
  MPI_Type_commit(&doubles);
  CHECK(tw_class(MPI_Allreduce(MPI_IN_PLACE, raw, 1, doubles, MPI_BXOR, MPI_COMM_WORLD)) ==
        MPI_ERR_OP);
  /* The standard's categories (MPI-3.1 5.9.2): bytes take the bitwise
   * operations only, booleans the logical ones only; the allowed ones
   * still combine. */
  CHECK(tw_class(MPI_Allreduce(MPI_IN_PLACE, raw, 4, MPI_BYTE, MPI_SUM, MPI_COMM_WORLD)) ==
        MPI_ERR_OP);
  CHECK(tw_class(MPI_Reduce_local(raw, raw + 8, 4, MPI_BYTE, MPI_MAX)) == MPI_ERR_OP);
  CHECK(tw_class(MPI_Allreduce(MPI_IN_PLACE, raw, 4, MPI_C_BOOL, MPI_SUM, MPI_COMM_WORLD)) ==
        MPI_ERR_OP);
  CHECK(tw_class(MPI_Allreduce(MPI_IN_PLACE, raw, 4, MPI_C_BOOL, MPI_BOR, MPI_COMM_WORLD)) ==
        MPI_ERR_OP);
  unsigned char bits = (unsigned char)(1u << (rank % 8)), any = 0;
  CHECK(MPI_Allreduce(&bits, &any, 1, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(any == (unsigned char)((1u << (size < 8 ? size : 8)) - 1));
  _Bool first = rank == 0, some = 0;
  CHECK(MPI_Allreduce(&first, &some, 1, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(some);
  MPI_Type_free(&mixed);
  MPI_Type_free(&doubles);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* Still in step after the refusals. */
  int one = 1, all = 0;
  CHECK(MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(all == size);
}

/* Rank 0's window: 2 * kCount ints per round. Every other rank
 * accumulates its rank into the even ints through a strided target type
 * from a contiguous origin; rank 1 also puts into the odd ones at the same
 * time. Nothing it put may be lost to an accumulate's write-back. */
static void accumulates(MPI_Datatype strided) {
  enum { kRounds = 500 };
  int* base = NULL;
  MPI_Win win;
  const MPI_Aint bytes = rank == 0 ? (MPI_Aint)sizeof(int) * 2 * kCount * kRounds : 0;
  MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  if (rank == 0) memset(base, 0, (size_t)bytes);
  MPI_Barrier(MPI_COMM_WORLD);
  int origin[kCount];
  for (int k = 0; k < kCount; ++k) origin[k] = rank;
  MPI_Win_lock_all(0, win);
  for (int round = 0; round < kRounds && rank > 0; ++round) {
    const MPI_Aint at = (MPI_Aint)round * 2 * kCount;
    CHECK(MPI_Accumulate(origin, kCount, MPI_INT, 0, at, kCount, strided, MPI_SUM, win) ==
          MPI_SUCCESS);
    if (rank == 1) {
      int odd = 1000 + round;
      for (int k = 0; k < kCount; ++k) {
        CHECK(MPI_Put(&odd, 1, MPI_INT, 0, at + 2 * k + 1, 1, MPI_INT, win) == MPI_SUCCESS);
      }
      MPI_Win_flush(0, win);
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int ok = 1;
    for (int round = 0; round < kRounds; ++round) {
      const int* r = base + round * 2 * kCount;
      for (int k = 0; k < kCount; ++k) {
        ok &= r[2 * k] == size * (size - 1) / 2;
        ok &= r[2 * k + 1] == (size > 1 ? 1000 + round : 0);
      }
    }
    CHECK(ok);
  }
  /* Get_accumulate: the old strided elements come back into a strided
   * result buffer, gaps untouched; then the target holds the new ones. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == size - 1) {
    int result[2 * kCount];
    fill(result, -1);
    for (int k = 0; k < kCount; ++k) result[2 * k] = -1;
    int nine[kCount];
    for (int k = 0; k < kCount; ++k) nine[k] = 9;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    CHECK(MPI_Get_accumulate(nine, kCount, MPI_INT, result, kCount, strided, 0, 0, kCount, strided,
                             MPI_REPLACE, win) == MPI_SUCCESS);
    MPI_Win_unlock(0, win);
    int ok = 1;
    for (int k = 0; k < kCount; ++k) {
      ok &= result[2 * k] == size * (size - 1) / 2 && result[2 * k + 1] == kGap;
    }
    CHECK(ok);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int ok = 1;
    for (int k = 0; k < kCount; ++k) {
      ok &= base[2 * k] == 9 && base[2 * k + 1] == (size > 1 ? 1000 : 0);
    }
    CHECK(ok);
  }
  /* A target type that reaches before its displacement: the int 4 bytes
   * back. At displacement 1 that is int 0; at 0, outside the window. */
  MPI_Datatype before;
  const int len[1] = {1};
  const MPI_Aint back[1] = {-(MPI_Aint)sizeof(int)};
  MPI_Type_create_hindexed(1, len, back, MPI_INT, &before);
  MPI_Type_commit(&before);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == size - 1) {
    const int five = 5;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK(MPI_Accumulate(&five, 1, MPI_INT, 0, 1, 1, before, MPI_SUM, win) == MPI_SUCCESS);
    CHECK(tw_class(MPI_Accumulate(&five, 1, MPI_INT, 0, 0, 1, before, MPI_SUM, win)) ==
          MPI_ERR_RMA_RANGE);
    MPI_Win_unlock(0, win);
  }
  /* Empty operands (a type of no elements, or a count of 0 against it)
   * have nothing to combine: no error, as MPICH's badrma asks. */
  if (rank == size - 1) {
    MPI_Datatype none;
    MPI_Type_contiguous(0, MPI_INT, &none);
    MPI_Type_commit(&none);
    int unused = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK(MPI_Accumulate(NULL, 1, none, 0, 0, 0, MPI_INT, MPI_SUM, win) == MPI_SUCCESS);
    CHECK(MPI_Get_accumulate(NULL, 0, MPI_INT, &unused, 1, none, 0, 0, 1, none, MPI_SUM, win) ==
          MPI_SUCCESS);
    MPI_Win_unlock(0, win);
    MPI_Type_free(&none);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(base[0] == 14 && base[1] == (size > 1 ? 1000 : 0));
  MPI_Type_free(&before);
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Datatype strided = every_other();
  collectives(strided);
  accumulates(strided);
  MPI_Type_free(&strided);
  return tw_finish("reductions typed") != 0;
}
