/* Dynamic windows (issue 28): MPI_Win_create_dynamic, MPI_Win_attach,
 * MPI_Win_detach. Ranks attach memory after creation and tell the others
 * its address (MPI_Get_address); puts, gets and fetch-and-op reach it by
 * that address; memory attached in the middle of an epoch is found; memory
 * detached and replaced (malloc may hand out the same address) is reached
 * through its new registration once the program has synchronised; many
 * regions at once; an access spanning two regions attached back to back
 * (put, get, accumulate, get-accumulate);
 * and the wrong calls fail with their class. Runs on any
 * number of ranks >= 2, over every transport. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define INTS 64

/* Every rank's address of the region it attached, gathered. */
static MPI_Aint* addresses_of(void* region) {
  MPI_Aint mine;
  MPI_Get_address(region, &mine);
  MPI_Aint* all = malloc((size_t)size * sizeof(MPI_Aint));
  MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
  return all;
}

static void attributes(MPI_Win win) {
  int* flavor = NULL;
  void* base = &flavor;
  MPI_Aint* bytes = NULL;
  int flag = 0;
  CHECK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag) == MPI_SUCCESS);
  CHECK(flag == 1 && *flavor == MPI_WIN_FLAVOR_DYNAMIC);
  CHECK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag) == MPI_SUCCESS);
  CHECK(flag == 1 && base == MPI_BOTTOM);
  CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &bytes, &flag) == MPI_SUCCESS);
  CHECK(flag == 1 && *bytes == 0);
}

/* Puts and gets by address, under lock_all and under fence. */
static void put_and_get(MPI_Win win) {
  int* region = calloc(INTS, sizeof(int));
  CHECK(MPI_Win_attach(win, region, INTS * sizeof(int)) == MPI_SUCCESS);
  MPI_Aint* at = addresses_of(region);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  const int value = 100 + rank;
  /* Into the next rank's int number `rank % INTS`. */
  CHECK(MPI_Put(&value, 1, MPI_INT, next, at[next] + (MPI_Aint)sizeof(int) * (rank % INTS), 1,
                MPI_INT, win) == MPI_SUCCESS);
  CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(region[prev % INTS] == 100 + prev);
  /* Fence epochs: read back what we put. */
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  int got = -1;
  CHECK(MPI_Get(&got, 1, MPI_INT, next, at[next] + (MPI_Aint)sizeof(int) * (rank % INTS), 1,
                MPI_INT, win) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  CHECK(got == value);
  CHECK(MPI_Win_detach(win, region) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  free(at);
  free(region);
}

/* Every rank adds one to a counter attached at rank 0, 100 times. */
static void counter(MPI_Win win) {
  long* word = calloc(1, sizeof(long));
  if (rank == 0) CHECK(MPI_Win_attach(win, word, sizeof(long)) == MPI_SUCCESS);
  MPI_Aint* at = addresses_of(word);
  const long one = 1;
  long old = 0;
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  for (int i = 0; i < 100; ++i) {
    CHECK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, at[0], MPI_SUM, win) == MPI_SUCCESS);
  }
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    CHECK(*word == 100L * size);
    CHECK(MPI_Win_detach(win, word) == MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(at);
  free(word);
}

/* Attached while the origins' lock_all epoch is open (the common pattern
 * of dynamic data structures): an address the origin's copy of the
 * directory does not have yet is looked up again. Then detached, freed,
 * and replaced by new memory (often at the same address): after the
 * program's synchronisation the new memory is what a put reaches. */
static void attach_during_epoch(MPI_Win win) {
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int round = 0; round < 3; ++round) {
    int* region = calloc(INTS, sizeof(int));
    CHECK(MPI_Win_attach(win, region, INTS * sizeof(int)) == MPI_SUCCESS);
    MPI_Aint* at = addresses_of(region); /* after the attach: a message says where */
    const int value = 1000 * round + rank;
    CHECK(MPI_Put(&value, 1, MPI_INT, next, at[next] + (MPI_Aint)sizeof(int) * 3, 1, MPI_INT,
                  win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(region[3] == 1000 * round + prev);
    CHECK(MPI_Win_detach(win, region) == MPI_SUCCESS);
    free(region);
    free(at);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
}

/* 40 regions at every rank; every rank writes into each of the next
 * rank's. */
static void many_regions(MPI_Win win) {
  enum { N = 40 };
  int* regions[N];
  MPI_Aint* at[N];
  for (int i = 0; i < N; ++i) {
    regions[i] = calloc(4, sizeof(int));
    CHECK(MPI_Win_attach(win, regions[i], 4 * sizeof(int)) == MPI_SUCCESS);
  }
  for (int i = 0; i < N; ++i) at[i] = addresses_of(regions[i]);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  for (int i = 0; i < N; ++i) {
    const int value = 10 * i + rank;
    CHECK(MPI_Put(&value, 1, MPI_INT, next, at[i][next] + (MPI_Aint)sizeof(int), 1, MPI_INT, win) ==
          MPI_SUCCESS);
  }
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  int wrong = 0;
  for (int i = 0; i < N; ++i) wrong += regions[i][1] != 10 * i + prev;
  CHECK(wrong == 0);
  for (int i = 0; i < N; ++i) {
    CHECK(MPI_Win_detach(win, regions[i]) == MPI_SUCCESS);
    free(regions[i]);
    free(at[i]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* One array attached as two regions back to back: a put and a get that
 * span both (MPI lets them), and one that runs on past the second into
 * memory never attached, refused whole with nothing written. */
static void spanning_regions(MPI_Win win) {
  int* array = malloc(sizeof(int) * 2 * INTS);
  for (int i = 0; i < 2 * INTS; ++i) array[i] = -1;
  CHECK(MPI_Win_attach(win, array, sizeof(int) * INTS) == MPI_SUCCESS);
  CHECK(MPI_Win_attach(win, array + INTS, sizeof(int) * (INTS - 4)) == MPI_SUCCESS);
  MPI_Aint* at = addresses_of(array);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int out[INTS], back[INTS], other[2 * INTS];
  for (int i = 0; i < INTS; ++i) out[i] = 1000 * rank + i, back[i] = -2;
  for (int i = 0; i < 2 * INTS; ++i) other[i] = 555;
  const MPI_Aint middle = at[next] + (MPI_Aint)sizeof(int) * (INTS / 2);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  CHECK(MPI_Put(out, INTS, MPI_INT, next, middle, INTS, MPI_INT, win) == MPI_SUCCESS);
  CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
  CHECK(MPI_Get(back, INTS, MPI_INT, next, middle, INTS, MPI_INT, win) == MPI_SUCCESS);
  CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
  /* Accumulates over the same span (read, combine and write back, a piece
   * per region): each int gains 1 twice, and the second returns what the
   * first left. */
  int ones[INTS], before[INTS];
  for (int i = 0; i < INTS; ++i) ones[i] = 1, before[i] = -3;
  CHECK(MPI_Accumulate(ones, INTS, MPI_INT, next, middle, INTS, MPI_INT, MPI_SUM, win) ==
        MPI_SUCCESS);
  CHECK(MPI_Get_accumulate(ones, INTS, MPI_INT, before, INTS, MPI_INT, next, middle, INTS, MPI_INT,
                           MPI_SUM, win) == MPI_SUCCESS);
  CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
  /* Ints INTS/2 to 2*INTS - 2: the last two were never attached. */
  const int too_far = INTS + INTS / 2 - 2;
  CHECK(tw_class(MPI_Put(other, too_far, MPI_INT, next, middle, too_far, MPI_INT, win)) ==
        MPI_ERR_RMA_RANGE);
  CHECK(tw_class(MPI_Accumulate(other, too_far, MPI_INT, next, middle, too_far, MPI_INT, MPI_SUM,
                                win)) == MPI_ERR_RMA_RANGE);
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
  int ok = 1;
  for (int i = 0; i < INTS; ++i) ok &= back[i] == 1000 * rank + i && before[i] == back[i] + 1;
  CHECK(ok);
  MPI_Barrier(MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < 2 * INTS; ++i) {
    const int want = i >= INTS / 2 && i < INTS / 2 + INTS ? 1000 * prev + i - INTS / 2 + 2 : -1;
    ok &= array[i] == want;
  }
  CHECK(ok);
  CHECK(MPI_Win_detach(win, array) == MPI_SUCCESS);
  CHECK(MPI_Win_detach(win, array + INTS) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  free(at);
  free(array);
}

static void errors(MPI_Win win) {
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  int region[8];
  CHECK(MPI_Win_attach(win, region, sizeof(region)) == MPI_SUCCESS);
  /* Overlapping memory, an address never attached, a negative size. */
  CHECK(tw_class(MPI_Win_attach(win, region + 4, sizeof(int) * 8)) == MPI_ERR_RMA_ATTACH);
  CHECK(tw_class(MPI_Win_attach(win, region, sizeof(int))) == MPI_ERR_RMA_ATTACH);
  CHECK(tw_class(MPI_Win_detach(win, region + 1)) == MPI_ERR_RMA_ATTACH);
  CHECK(tw_class(MPI_Win_attach(win, region, -8)) == MPI_ERR_ARG);
  MPI_Aint* at = addresses_of(region);
  const int next = (rank + 1) % size;
  int value = 1;
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  /* One int past the region, and the region's last int (which is fine). */
  CHECK(tw_class(MPI_Put(&value, 1, MPI_INT, next, at[next] + (MPI_Aint)sizeof(region), 1, MPI_INT,
                         win)) == MPI_ERR_RMA_RANGE);
  CHECK(tw_class(MPI_Put(&value, 2, MPI_INT, next, at[next] + (MPI_Aint)sizeof(int) * 7, 2, MPI_INT,
                         win)) == MPI_ERR_RMA_RANGE);
  CHECK(MPI_Put(&value, 1, MPI_INT, next, at[next] + (MPI_Aint)sizeof(int) * 7, 1, MPI_INT, win) ==
        MPI_SUCCESS);
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(MPI_Win_detach(win, region) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  /* Detached everywhere, and the program synchronised: out of reach. */
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  CHECK(tw_class(MPI_Get(&value, 1, MPI_INT, next, at[next], 1, MPI_INT, win)) ==
        MPI_ERR_RMA_RANGE);
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  free(at);
  /* Attach on a window of another flavor. */
  MPI_Win other;
  int* memory = NULL;
  CHECK(MPI_Win_allocate(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &memory, &other) == MPI_SUCCESS);
  MPI_Win_set_errhandler(other, MPI_ERRORS_RETURN);
  CHECK(tw_class(MPI_Win_attach(other, region, sizeof(region))) == MPI_ERR_RMA_FLAVOR);
  CHECK(tw_class(MPI_Win_detach(other, region)) == MPI_ERR_RMA_FLAVOR);
  CHECK(MPI_Win_free(&other) == MPI_SUCCESS);
  MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Win win;
  CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS);
  attributes(win);
  put_and_get(win);
  counter(win);
  attach_during_epoch(win);
  many_regions(win);
  spanning_regions(win);
  errors(win);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  return tw_finish("dynamic_window") != 0;
}
