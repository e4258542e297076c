/* MPI_Comm_idup: a duplicate that needs nothing from the other members to
 * exist, so that a program may idup, then talk, then wait -- in orders that
 * would deadlock a blocking dup. Also: isolation from the parent, many
 * idups of one communicator (past its reserved block), idup of an idup (two
 * of them, in opposite orders on odd and even ranks), of a dup, of an
 * intercommunicator, and attributes copied. */
#include <stdlib.h>

#include "check.h"

static int copies;
static int count_copy(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)oldcomm;
  (void)keyval;
  (void)extra;
  ++copies;
  *(void**)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}

/* Sum of world ranks over `comm`, which must hold every rank. */
static void check_whole(MPI_Comm comm) {
  int sum = -1, n = 0;
  CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS);
  CHECK(sum == size * (size - 1) / 2);
  MPI_Comm_size(comm, &n);
  CHECK(n == size);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int key = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(count_copy, MPI_COMM_NULL_DELETE_FN, &key, NULL);
  static int value = 42;
  MPI_Comm_set_attr(MPI_COMM_WORLD, key, &value);

  /* Rank 0 idups, then sends; rank 1 receives, then idups. A dup that
   * waited for the others inside the call would hang here. */
  MPI_Comm d1 = MPI_COMM_NULL;
  MPI_Request req = MPI_REQUEST_NULL;
  int token = 0;
  if (rank == 0) {
    CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d1, &req) == MPI_SUCCESS);
    token = 7;
    if (size > 1) CHECK(MPI_Send(&token, 1, MPI_INT, 1, 3, MPI_COMM_WORLD) == MPI_SUCCESS);
  } else if (rank == 1) {
    CHECK(MPI_Recv(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(token == 7);
    CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d1, &req) == MPI_SUCCESS);
  } else {
    CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d1, &req) == MPI_SUCCESS);
  }
  int flag = 0;
  CHECK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(flag == 1);
  CHECK(req == MPI_REQUEST_NULL);
  int result = -1;
  MPI_Comm_compare(MPI_COMM_WORLD, d1, &result);
  CHECK(result == MPI_CONGRUENT);
  check_whole(d1);
  int* got = NULL;
  CHECK(MPI_Comm_get_attr(d1, key, &got, &flag) == MPI_SUCCESS && flag == 1 && got == &value);
  CHECK(copies == 1);

  /* The same tag on the parent and the duplicate: each receive gets its own. */
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int a = 100 + rank, b = 200 + rank, ra = -1, rb = -1;
  MPI_Request rs[4];
  MPI_Irecv(&rb, 1, MPI_INT, prev, 9, d1, &rs[0]);
  MPI_Irecv(&ra, 1, MPI_INT, prev, 9, MPI_COMM_WORLD, &rs[1]);
  MPI_Isend(&a, 1, MPI_INT, next, 9, MPI_COMM_WORLD, &rs[2]);
  MPI_Isend(&b, 1, MPI_INT, next, 9, d1, &rs[3]);
  CHECK(MPI_Waitall(4, rs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(ra == 100 + prev && rb == 200 + prev);

  /* Twelve idups of one communicator, started before any is waited for:
   * past the reserved block they agree as dup does. Each is its own. */
  enum { N = 12 };
  MPI_Comm many[N];
  MPI_Request reqs[N];
  for (int i = 0; i < N; ++i) CHECK(MPI_Comm_idup(d1, &many[i], &reqs[i]) == MPI_SUCCESS);
  CHECK(MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  int sent[N], received[N];
  MPI_Request traffic[2 * N];
  for (int i = 0; i < N; ++i) {
    sent[i] = 1000 * i + rank;
    received[i] = -1;
    MPI_Irecv(&received[i], 1, MPI_INT, prev, 4, many[i], &traffic[i]);
  }
  for (int i = N - 1; i >= 0; --i)
    MPI_Isend(&sent[i], 1, MPI_INT, next, 4, many[i], &traffic[N + i]);
  CHECK(MPI_Waitall(2 * N, traffic, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  for (int i = 0; i < N; ++i) CHECK(received[i] == 1000 * i + prev);

  /* An idup of an idup, and of a dup. */
  MPI_Comm nested, dup, dup_child;
  CHECK(MPI_Comm_idup(many[0], &nested, &req) == MPI_SUCCESS);
  CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  check_whole(nested);
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS);
  CHECK(MPI_Comm_idup(dup, &dup_child, &req) == MPI_SUCCESS);
  CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  check_whole(dup_child);

  /* Idups of two idup'd communicators, in opposite orders on odd and even
   * ranks (MPICH's idup_with_info): neither may wait for the others. */
  MPI_Comm e1, e2, f1, f2;
  MPI_Request pair[2];
  MPI_Comm_idup(MPI_COMM_WORLD, &e1, &pair[0]);
  MPI_Comm_idup(MPI_COMM_WORLD, &e2, &pair[1]);
  CHECK(MPI_Waitall(2, pair, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  if (rank % 2 == 0) {
    CHECK(MPI_Comm_idup(e1, &f1, &pair[0]) == MPI_SUCCESS);
    CHECK(MPI_Comm_idup(e2, &f2, &pair[1]) == MPI_SUCCESS);
  } else {
    CHECK(MPI_Comm_idup(e2, &f2, &pair[0]) == MPI_SUCCESS);
    CHECK(MPI_Comm_idup(e1, &f1, &pair[1]) == MPI_SUCCESS);
  }
  CHECK(MPI_Waitall(2, pair, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  check_whole(f1);
  check_whole(f2);
  /* Each its own: the same tag on both, received in the other order. */
  int x = 10 + rank, y = 20 + rank, rx = -1, ry = -1;
  MPI_Request four[4];
  MPI_Irecv(&ry, 1, MPI_INT, prev, 5, f2, &four[0]);
  MPI_Irecv(&rx, 1, MPI_INT, prev, 5, f1, &four[1]);
  MPI_Isend(&x, 1, MPI_INT, next, 5, f1, &four[2]);
  MPI_Isend(&y, 1, MPI_INT, next, 5, f2, &four[3]);
  CHECK(MPI_Waitall(4, four, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(rx == 10 + prev && ry == 20 + prev);
  MPI_Comm_free(&f1);
  MPI_Comm_free(&f2);
  MPI_Comm_free(&e1);
  MPI_Comm_free(&e2);

  /* An intercommunicator's idup is an intercommunicator. */
  if (size >= 2) {
    MPI_Comm local, inter, inter_dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
    CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 8, &inter) ==
          MPI_SUCCESS);
    CHECK(MPI_Comm_idup(inter, &inter_dup, &req) == MPI_SUCCESS);
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Comm_test_inter(inter_dup, &flag) == MPI_SUCCESS && flag == 1);
    int lrank = -1, out = 0, in = -1;
    MPI_Comm_rank(inter_dup, &lrank);
    /* Remote rank 0 of each group trades with local rank 0 of the other. */
    if (lrank == 0) {
      out = 50 + rank;
      CHECK(MPI_Sendrecv(&out, 1, MPI_INT, 0, 1, &in, 1, MPI_INT, 0, 1, inter_dup,
                         MPI_STATUS_IGNORE) == MPI_SUCCESS);
      CHECK(in == 50 + (rank == 0 ? 1 : 0));
    }
    MPI_Comm_free(&inter_dup);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
  }

  for (int i = 0; i < N; ++i) MPI_Comm_free(&many[i]);
  MPI_Comm_free(&nested);
  MPI_Comm_free(&dup_child);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&d1);
  MPI_Comm_free_keyval(&key);
  return tw_finish("idup") == 0 ? 0 : 1;
}
