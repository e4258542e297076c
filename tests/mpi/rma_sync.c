/* One-sided synchronisation beyond fence, and accumulates (issue 28):
 * MPI_Win_lock / unlock (exclusive and shared), lock_all / unlock_all, the
 * flush family, post / start / complete / wait / test, MPI_Accumulate, MPI_Get_accumulate,
 * MPI_Fetch_and_op and MPI_Compare_and_swap, on every transport, with every rank hammering one
 * target at once so that a lost update or a lock that lets two holders in
 * shows as a wrong count; and the errors under MPI_ERRORS_RETURN (a window
 * creation one rank gets wrong fails on all, MPI_Win_allocate_shared's
 * too). Runs on
 * any number of ranks >= 2. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define ROUNDS 200

/* Every rank adds one to a counter at rank 0 ROUNDS times with
 * MPI_Fetch_and_op under a shared lock_all: the final count is exact, and
 * the fetched values of all ranks together are 0 .. size*ROUNDS-1, each
 * once (two accumulates that overlapped would fetch the same value). */
static void fetch_and_op_counter(void) {
  long* counter = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &counter,
                         &win) == MPI_SUCCESS);
  *counter = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  long* fetched = malloc(ROUNDS * sizeof(long));
  const long one = 1;
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  for (int i = 0; i < ROUNDS; ++i) {
    CHECK(MPI_Fetch_and_op(&one, &fetched[i], MPI_LONG, 0, 0, MPI_SUM, win) == MPI_SUCCESS);
  }
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  for (int i = 1; i < ROUNDS; ++i) CHECK(fetched[i] > fetched[i - 1]); /* ours, in order */
  long* all = rank == 0 ? malloc((size_t)size * ROUNDS * sizeof(long)) : NULL;
  MPI_Gather(fetched, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    CHECK(*counter == (long)size * ROUNDS);
    char* seen = calloc((size_t)size * ROUNDS, 1);
    int duplicates = 0, outside = 0;
    for (int i = 0; i < size * ROUNDS; ++i) {
      if (all[i] < 0 || all[i] >= (long)size * ROUNDS) {
        ++outside;
      } else if (seen[all[i]]++) {
        ++duplicates;
      }
    }
    CHECK(duplicates == 0);
    CHECK(outside == 0);
    free(seen);
    free(all);
  }
  free(fetched);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

/* An exclusive lock is mutual exclusion for plain Get and Put: each rank
 * reads rank 0's counter, flushes, writes it back plus one, ROUNDS/4
 * times. Any two holders at once lose an increment. */
static void exclusive_lock_increments(void) {
  int* counter = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win) ==
        MPI_SUCCESS);
  *counter = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < ROUNDS / 4; ++i) {
    int v = -1;
    CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win) == MPI_SUCCESS);
    CHECK(MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(0, win) == MPI_SUCCESS);
    ++v;
    CHECK(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Win_unlock(0, win) == MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(*counter == size * (ROUNDS / 4));
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

/* MPI_Accumulate of arrays under a fence (SUM of doubles from every rank
 * into every rank) and under shared locks (MAX of ints), then MPI_REPLACE,
 * and MPI_Get_accumulate with MPI_NO_OP reading without changing. */
static void accumulate_arrays(void) {
  enum { N = 33 };
  double* sums = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &sums,
                         &win) == MPI_SUCCESS);
  for (int i = 0; i < N; ++i) sums[i] = 0.5;
  double mine[N];
  for (int i = 0; i < N; ++i) mine[i] = rank + i;
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  for (int t = 0; t < size; ++t) {
    CHECK(MPI_Accumulate(mine, N, MPI_DOUBLE, t, 0, N, MPI_DOUBLE, MPI_SUM, win) == MPI_SUCCESS);
  }
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  int right = 1;
  for (int i = 0; i < N; ++i) right &= sums[i] == 0.5 + (double)size * (size - 1) / 2 + size * i;
  CHECK(right);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);

  int* maxima = NULL;
  CHECK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &maxima,
                         &win) == MPI_SUCCESS);
  for (int i = 0; i < N; ++i) maxima[i] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  int values[N];
  for (int i = 0; i < N; ++i) values[i] = (rank * 7 + i) % size; /* each slot's max: size-1 */
  const int target = (rank + 1) % size;
  CHECK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win) == MPI_SUCCESS);
  CHECK(MPI_Accumulate(values, N, MPI_INT, target, 0, N, MPI_INT, MPI_MAX, win) == MPI_SUCCESS);
  CHECK(MPI_Win_unlock(target, win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  /* Exactly one rank accumulated into each window. */
  const int from = (rank + size - 1) % size;
  right = 1;
  for (int i = 0; i < N; ++i) right &= maxima[i] == (from * 7 + i) % size;
  CHECK(right);
  MPI_Barrier(MPI_COMM_WORLD);
  int replaced[N], before[N], after[N];
  for (int i = 0; i < N; ++i) replaced[i] = 1000 * rank + i;
  CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win) == MPI_SUCCESS);
  CHECK(MPI_Get_accumulate(replaced, N, MPI_INT, before, N, MPI_INT, target, 0, N, MPI_INT,
                           MPI_REPLACE, win) == MPI_SUCCESS);
  CHECK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, after, N, MPI_INT, target, 0, N, MPI_INT,
                           MPI_NO_OP, win) == MPI_SUCCESS);
  CHECK(MPI_Win_unlock(target, win) == MPI_SUCCESS);
  right = 1;
  for (int i = 0; i < N; ++i)
    right &= before[i] == (rank * 7 + i) % size && after[i] == replaced[i];
  CHECK(right);
  MPI_Barrier(MPI_COMM_WORLD);
  right = 1;
  for (int i = 0; i < N; ++i) right &= maxima[i] == 1000 * from + i;
  CHECK(right);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

/* Every rank tries to swap -1 for its rank in rank 0's word: exactly one
 * wins, the others see the winner; then a compare that fails leaves the
 * word as it is. */
static void compare_and_swap_election(void) {
  long long* word = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &word,
                         &win) == MPI_SUCCESS);
  *word = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  const long long mine = rank, free_value = -1;
  long long found = -2;
  CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win) == MPI_SUCCESS);
  CHECK(MPI_Compare_and_swap(&mine, &free_value, &found, MPI_LONG_LONG, 0, 0, win) == MPI_SUCCESS);
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  const int won = found == -1;
  int winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(winners == 1);
  long long winner = won ? rank : -1, agreed = -1;
  MPI_Allreduce(&winner, &agreed, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  CHECK(won || found == agreed);
  CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win) == MPI_SUCCESS);
  const long long wrong = -5, other = 99;
  CHECK(MPI_Compare_and_swap(&other, &wrong, &found, MPI_LONG_LONG, 0, 0, win) == MPI_SUCCESS);
  CHECK(found == agreed);
  CHECK(MPI_Win_unlock(0, win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(*word == agreed);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

/* Puts under lock_all to every rank, completed by flush_all, read back
 * under a shared lock after a barrier; flush_local leaves the origin
 * buffer reusable. */
static void lock_all_puts(void) {
  int* slots = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slots,
                         &win) == MPI_SUCCESS);
  for (int i = 0; i < size; ++i) slots[i] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  int value = 500 + rank;
  for (int t = 0; t < size; ++t) {
    CHECK(MPI_Put(&value, 1, MPI_INT, t, rank, 1, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush_local(t, win) == MPI_SUCCESS);
  }
  CHECK(MPI_Win_flush_all(win) == MPI_SUCCESS);
  CHECK(MPI_Win_flush_local_all(win) == MPI_SUCCESS);
  CHECK(MPI_Win_sync(win) == MPI_SUCCESS);
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  int right = 1;
  for (int r = 0; r < size; ++r) right &= slots[r] == 500 + r;
  CHECK(right);
  const int target = (rank + 1) % size;
  int got = -1;
  CHECK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win) == MPI_SUCCESS);
  CHECK(MPI_Get(&got, 1, MPI_INT, target, rank, 1, MPI_INT, win) == MPI_SUCCESS);
  CHECK(MPI_Win_unlock(target, win) == MPI_SUCCESS);
  CHECK(got == 500 + rank);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

/* PSCW on a ring, several epochs: each rank exposes its window to its
 * left neighbour and accesses its right one, which sees the epoch's value
 * after MPI_Win_wait; then every rank to every rank at once, with
 * MPI_Win_test polled until the exposure ends. */
static void post_start_complete_wait(void) {
  int* slots = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slots,
                         &win) == MPI_SUCCESS);
  for (int i = 0; i < size; ++i) slots[i] = -1;
  MPI_Group world_group, left_group, right_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Group_incl(world_group, 1, &left, &left_group);
  MPI_Group_incl(world_group, 1, &right, &right_group);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int epoch = 0; epoch < 20; ++epoch) {
    const int value = epoch * 100 + rank;
    CHECK(MPI_Win_post(left_group, 0, win) == MPI_SUCCESS);
    CHECK(MPI_Win_start(right_group, 0, win) == MPI_SUCCESS);
    CHECK(MPI_Put(&value, 1, MPI_INT, right, 0, 1, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Win_complete(win) == MPI_SUCCESS);
    CHECK(MPI_Win_wait(win) == MPI_SUCCESS);
    CHECK(slots[0] == epoch * 100 + left);
  }
  CHECK(MPI_Win_post(world_group, MPI_MODE_NOCHECK, win) == MPI_SUCCESS);
  CHECK(MPI_Win_start(world_group, 0, win) == MPI_SUCCESS);
  const int value = 7000 + rank;
  for (int t = 0; t < size; ++t) {
    CHECK(MPI_Put(&value, 1, MPI_INT, t, rank, 1, MPI_INT, win) == MPI_SUCCESS);
  }
  CHECK(MPI_Win_complete(win) == MPI_SUCCESS);
  int flag = 0, polls = 0, rc = MPI_SUCCESS;
  while (!flag && rc == MPI_SUCCESS && polls < 100000000) {
    rc = MPI_Win_test(win, &flag);
    ++polls;
  }
  CHECK(rc == MPI_SUCCESS);
  CHECK(flag == 1);
  int right_values = 1;
  for (int r = 0; r < size; ++r) right_values &= slots[r] == 7000 + r;
  CHECK(right_values);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  CHECK(tw_class(MPI_Win_complete(win)) == MPI_ERR_RMA_SYNC);
  CHECK(tw_class(MPI_Win_wait(win)) == MPI_ERR_RMA_SYNC);
  CHECK(tw_class(MPI_Win_test(win, &flag)) == MPI_ERR_RMA_SYNC);
  /* Outside the start group there is no access epoch. */
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(MPI_Win_post(left_group, 0, win) == MPI_SUCCESS);
  CHECK(MPI_Win_start(right_group, 0, win) == MPI_SUCCESS);
  if (size > 2) {
    CHECK(tw_class(MPI_Put(&value, 1, MPI_INT, left, 0, 1, MPI_INT, win)) == MPI_ERR_RMA_SYNC);
  }
  CHECK(tw_class(MPI_Win_start(right_group, 0, win)) == MPI_ERR_RMA_SYNC);
  CHECK(tw_class(MPI_Win_post(left_group, 0, win)) == MPI_ERR_RMA_SYNC);
  CHECK(MPI_Win_complete(win) == MPI_SUCCESS);
  CHECK(MPI_Win_wait(win) == MPI_SUCCESS);
  MPI_Group_free(&left_group);
  MPI_Group_free(&right_group);
  MPI_Group_free(&world_group);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

/* MPI_Rput / Rget / Raccumulate / Rget_accumulate under lock_all: the
 * requests complete through MPI_Wait / Waitall with the data moved; a NULL
 * request is refused before anything moves. */
static void request_based(void) {
  int* slots = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slots,
                         &win) == MPI_SUCCESS);
  slots[0] = slots[1] = slots[2] = slots[3] = 0;
  slots[3] = 40 + rank;
  MPI_Barrier(MPI_COMM_WORLD);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  int value = 300 + rank, got = -1, one = 1, before = -1;
  MPI_Request r[4];
  CHECK(MPI_Rput(&value, 1, MPI_INT, right, 0, 1, MPI_INT, win, &r[0]) == MPI_SUCCESS);
  CHECK(MPI_Rget(&got, 1, MPI_INT, left, 3, 1, MPI_INT, win, &r[1]) == MPI_SUCCESS);
  CHECK(MPI_Raccumulate(&one, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win, &r[2]) == MPI_SUCCESS);
  CHECK(MPI_Rget_accumulate(&one, 1, MPI_INT, &before, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_SUM, win,
                            &r[3]) == MPI_SUCCESS);
  MPI_Status st;
  CHECK(MPI_Wait(&r[0], &st) == MPI_SUCCESS && r[0] == MPI_REQUEST_NULL);
  CHECK(MPI_Waitall(3, &r[1], MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  CHECK(got == 40 + left);
  CHECK(before >= 0 && before < size);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  CHECK(tw_class(MPI_Rput(&value, 1, MPI_INT, right, 2, 1, MPI_INT, win, NULL)) == MPI_ERR_ARG);
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(slots[0] == 300 + left);
  if (rank == 0) CHECK(slots[1] == size && slots[2] == size);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

static void user_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

/* The refusals: no epoch, unlock without lock, a second lock, a bad lock
 * type or assertion, operations and datatypes accumulates do not take,
 * outside the window, a bad rank; nothing changes the window. */
static void errors(void) {
  int* mem = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win) ==
        MPI_SUCCESS);
  for (int i = 0; i < 4; ++i) mem[i] = 7;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  const int peer = (rank + 1) % size;
  int v = 1, r = 0;
  CHECK(tw_class(MPI_Put(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, win)) == MPI_ERR_RMA_SYNC);
  CHECK(tw_class(MPI_Accumulate(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, MPI_SUM, win)) ==
        MPI_ERR_RMA_SYNC);
  CHECK(tw_class(MPI_Win_unlock(peer, win)) == MPI_ERR_RMA_SYNC);
  CHECK(tw_class(MPI_Win_unlock_all(win)) == MPI_ERR_RMA_SYNC);
  CHECK(tw_class(MPI_Win_lock(12345, peer, 0, win)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Win_lock(MPI_LOCK_SHARED, peer, MPI_MODE_NOPUT, win)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win)) == MPI_ERR_RANK);
  CHECK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win) == MPI_SUCCESS);
  CHECK(tw_class(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win)) == MPI_ERR_RMA_SYNC);
  CHECK(tw_class(MPI_Win_lock_all(0, win)) == MPI_ERR_RMA_SYNC);
  MPI_Op op;
  MPI_Op_create(user_sum, 1, &op);
  CHECK(tw_class(MPI_Accumulate(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, op, win)) == MPI_ERR_OP);
  MPI_Op_free(&op);
  CHECK(tw_class(MPI_Accumulate(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, MPI_OP_NULL, win)) ==
        MPI_ERR_OP);
  CHECK(tw_class(MPI_Accumulate(&v, 1, MPI_FLOAT, peer, 0, 1, MPI_FLOAT, MPI_BAND, win)) ==
        MPI_ERR_OP);
  /* A datatype of two predefined types accumulates nothing (one of one
   * type does: reductions_typed.c). */
  MPI_Datatype mixed;
  const int blocks[2] = {1, 1};
  const MPI_Aint displs[2] = {0, 4};
  const MPI_Datatype types[2] = {MPI_INT, MPI_FLOAT};
  MPI_Type_create_struct(2, blocks, displs, types, &mixed);
  MPI_Type_commit(&mixed);
  CHECK(tw_class(MPI_Accumulate(&v, 1, mixed, peer, 0, 1, mixed, MPI_SUM, win)) == MPI_ERR_TYPE);
  MPI_Type_free(&mixed);
  CHECK(tw_class(MPI_Accumulate(&v, 1, MPI_INT, peer, 0, 1, MPI_LONG, MPI_SUM, win)) ==
        MPI_ERR_TYPE);
  CHECK(tw_class(MPI_Accumulate(&v, 1, MPI_INT, peer, 4, 1, MPI_INT, MPI_SUM, win)) ==
        MPI_ERR_RMA_RANGE);
  CHECK(tw_class(MPI_Fetch_and_op(&v, &r, MPI_INT, peer, -1, MPI_SUM, win)) == MPI_ERR_RMA_RANGE);
  CHECK(tw_class(MPI_Win_flush(size + 3, win)) == MPI_ERR_RANK);
  CHECK(MPI_Fetch_and_op(&v, &r, MPI_INT, MPI_PROC_NULL, 0, MPI_SUM, win) == MPI_SUCCESS);
  /* The same errors on the one-word path of 8-byte integers (word atomics
   * over verbs and Tagwire's shm) */
  long long lv = 1, lr = 0;
  CHECK(tw_class(MPI_Fetch_and_op(&lv, &lr, MPI_INT64_T, peer, 3, MPI_SUM, win)) ==
        MPI_ERR_RMA_RANGE);
  CHECK(tw_class(MPI_Fetch_and_op(&lv, &lr, MPI_INT64_T, peer, 0, MPI_OP_NULL, win)) == MPI_ERR_OP);
  CHECK(tw_class(MPI_Fetch_and_op(&lv, &lr, MPI_INT64_T, peer, 0, MPI_MAXLOC, win)) == MPI_ERR_OP);
  CHECK(tw_class(MPI_Compare_and_swap(&lv, &lv, &lr, MPI_INT64_T, peer, -1, win)) ==
        MPI_ERR_RMA_RANGE);
  CHECK(tw_class(MPI_Fetch_and_op(&lv, &lr, MPI_INT64_T, size + 2, 0, MPI_SUM, win)) ==
        MPI_ERR_RANK);
  CHECK(MPI_Fetch_and_op(&lv, &lr, MPI_INT64_T, MPI_PROC_NULL, 0, MPI_SUM, win) == MPI_SUCCESS);
  CHECK(MPI_Win_unlock(peer, win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(mem[0] == 7 && mem[1] == 7 && mem[2] == 7 && mem[3] == 7);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

/* A window creation that one rank gets wrong fails on every rank, with
 * that rank's error class, instead of leaving the others waiting for it;
 * then a good creation works. */
static void creation_fails_together(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int buf[4] = {0, 0, 0, 0};
  MPI_Win win = MPI_WIN_NULL;
  const int unit = rank == size - 1 ? 0 : (int)sizeof(int);
  CHECK(tw_class(MPI_Win_create(buf, sizeof(buf), unit, MPI_INFO_NULL, MPI_COMM_WORLD, &win)) ==
        MPI_ERR_ARG);
  CHECK(win == MPI_WIN_NULL);
  int* mem = NULL;
  CHECK(tw_class(MPI_Win_allocate(rank == 0 ? -1 : 16, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                  &mem, &win)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, rank == 1 ? NULL : &win)) ==
        MPI_ERR_ARG);
  CHECK(win == MPI_WIN_NULL);
  /* MPI_Win_allocate_shared, whose first exchange is its own. */
  CHECK(tw_class(MPI_Win_allocate_shared(16, unit, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win)) ==
        MPI_ERR_ARG);
  CHECK(tw_class(MPI_Win_allocate_shared(rank == 0 ? -1 : 16, sizeof(int), MPI_INFO_NULL,
                                         MPI_COMM_WORLD, &mem, &win)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Win_allocate_shared(16, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                         rank == 1 ? NULL : &mem, &win)) == MPI_ERR_ARG);
  CHECK(win == MPI_WIN_NULL);
  CHECK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                                &win) == MPI_SUCCESS);
  *mem = rank;
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  int* next = NULL;
  MPI_Aint next_size = 0;
  int next_unit = 0;
  CHECK(MPI_Win_shared_query(win, (rank + 1) % size, &next_size, &next_unit, &next) == MPI_SUCCESS);
  CHECK(next != NULL && *next == (rank + 1) % size);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  CHECK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win) ==
        MPI_SUCCESS);
  mem[0] = -1;
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  CHECK(MPI_Put(&rank, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  CHECK(mem[0] == (rank + size - 1) % size);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  fetch_and_op_counter();
  exclusive_lock_increments();
  accumulate_arrays();
  compare_and_swap_election();
  lock_all_puts();
  post_start_complete_wait();
  request_based();
  errors();
  creation_fails_together();
  return tw_finish("rma_sync") == 0 ? 0 : 1;
}
