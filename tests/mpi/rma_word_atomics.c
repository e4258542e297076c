/* Accumulates of 8-byte integers where a window takes word atomics (issue
 * 28; src/engine/window_atomics.cc: the NIC's atomics on verbs, the CPU's
 * on the mappings over Tagwire's shm): every rank hammers the same words
 * at once with every kind of update that goes word by word
 * (MPI_Fetch_and_op with MPI_SUM, MPI_NO_OP, MPI_REPLACE, MPI_MAX,
 * MPI_MIN, MPI_PROD, MPI_BXOR, MPI_Compare_and_swap, MPI_Accumulate and
 * MPI_Get_accumulate on contiguous and strided types), on a word of
 * another rank and on its own window's, aligned and not; a lost or doubled
 * update shows in the final values. The same program runs everywhere:
 * over UCX the accumulate lock does the work, and MPI_T's
 * `tagwire_word_atomics` says which path ran. It must be non-zero over
 * TAGWIRE_TRANSPORT=shm or verbs (a device with atomics, as rxe0) and 0
 * over ucx or with TAGWIRE_RMA_ATOMICS=0; with the transport unnamed the
 * path is not checked, and the program says so. Then a window's info key
 * "tagwire_rma_atomics" overrides the setting, both ways. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define ROUNDS 60
#define WORDS 8 /* int64 counters in each rank's window, after a misaligned one */

/* The window: WORDS aligned int64s, then 12 bytes holding an int64 at
 * byte 4 of them (misaligned whenever the base is 8-aligned). */
#define WINDOW_BYTES (WORDS * 8 + 12)
#define MISALIGNED_DISP (WORDS * 8 + 4)

static unsigned long long word_atomics_done(void) {
  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  int index = -1, count = 0;
  unsigned long long value = 0;
  MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
  CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_get_index("tagwire_word_atomics", MPI_T_PVAR_CLASS_COUNTER, &index) ==
        MPI_SUCCESS);
  CHECK(MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_read(session, handle, &value) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_handle_free(session, &handle) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_session_free(&session) == MPI_SUCCESS);
  return value;
}

static int64_t get_word(const unsigned char* base, int disp) {
  int64_t v;
  memcpy(&v, base + disp, 8);
  return v;
}

/* The window's own choice through its info: "tagwire_rma_atomics" false
 * keeps its words under the lock whatever TAGWIRE_RMA_ATOMICS says, true
 * takes atomics where the transport can (`capable`: 1 yes, 0 no, -1 not
 * known). Either way the count is exact. */
static void chosen_by_info(int capable) {
  const char* values[2] = {"false", "true"};
  for (int v = 0; v < 2; ++v) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tagwire_rma_atomics", values[v]);
    int64_t* word = NULL;
    MPI_Win win;
    CHECK(MPI_Win_allocate(8, 8, info, MPI_COMM_WORLD, &word, &win) == MPI_SUCCESS);
    MPI_Info_free(&info);
    *word = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const unsigned long long before = word_atomics_done();
    const int64_t one = 1;
    int64_t old = 0;
    CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
    for (int i = 0; i < 20; ++i) {
      CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, win) == MPI_SUCCESS);
    }
    CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
    const unsigned long long done = word_atomics_done() - before;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK(*word == 20 * (int64_t)size);
    if (v == 0) {
      CHECK(done == 0);
    } else if (capable == 1) {
      CHECK(done == 20);
    } else if (capable == 0) {
      CHECK(done == 0);
    }
    CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  }
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* transport = getenv("TAGWIRE_TRANSPORT");
  const char* atomics = getenv("TAGWIRE_RMA_ATOMICS");
  const int off = atomics != NULL && strcmp(atomics, "0") == 0;
  /* 1: words by atomics, 0: none, -1: not known */
  int expect_words = -1;
  if (transport != NULL && (!strcmp(transport, "shm") || !strcmp(transport, "verbs"))) {
    expect_words = !off;
  } else if (transport != NULL && !strcmp(transport, "ucx")) {
    expect_words = 0;
  }
  const unsigned long long before = word_atomics_done();

  unsigned char* base = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(WINDOW_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win) ==
        MPI_SUCCESS);
  memset(base, 0, WINDOW_BYTES);
  /* word 3 starts at 1 for MPI_PROD, word 5 at INT64_MAX for MPI_MIN */
  const int64_t one = 1, big = INT64_MAX;
  memcpy(base + 3 * 8, &one, 8);
  memcpy(base + 5 * 8, &big, 8);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Every rank's targets: rank 0, and its own window (through its own
   * NIC where the device's atomics are not the CPU's). */
  const int targets[2] = {0, rank};
  int64_t sum_fetched_total = 0;
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  for (int i = 0; i < ROUNDS; ++i) {
    for (int t = 0; t < 2; ++t) {
      if (t == 1 && rank == 0) continue; /* rank 0's own is target 0 already */
      const int target = targets[t];
      int64_t fetched = 0;
      /* word 0: MPI_SUM by Fetch_and_op */
      CHECK(MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, target, 0, MPI_SUM, win) == MPI_SUCCESS);
      if (target == 0) sum_fetched_total += fetched;
      /* words 1 and 2: MPI_Accumulate of two, then a Get_accumulate of one each
       * through a strided type (words 1 and 2 by a vector of stride 1... and
       * word 4 below by stride 3) */
      const int64_t pair[2] = {1, 2};
      CHECK(MPI_Accumulate(pair, 2, MPI_INT64_T, target, 8, 2, MPI_INT64_T, MPI_SUM, win) ==
            MPI_SUCCESS);
      /* word 3: MPI_PROD by 2, only in the first 10 rounds (2^(10 ranks) fits) */
      if (i < 10) {
        const int64_t two = 2;
        CHECK(MPI_Accumulate(&two, 1, MPI_INT64_T, target, 24, 1, MPI_INT64_T, MPI_PROD, win) ==
              MPI_SUCCESS);
      }
      /* words 4 and 7 (a vector of 2 blocks, stride 3): Get_accumulate SUM */
      MPI_Datatype strided;
      MPI_Type_vector(2, 1, 3, MPI_INT64_T, &strided);
      MPI_Type_commit(&strided);
      const int64_t add2[2] = {10, 100};
      int64_t got2[2] = {-1, -1};
      CHECK(MPI_Get_accumulate(add2, 2, MPI_INT64_T, got2, 2, MPI_INT64_T, target, 32, 1, strided,
                               MPI_SUM, win) == MPI_SUCCESS);
      CHECK(got2[0] >= 0 && got2[0] % 10 == 0 && got2[1] >= 0 && got2[1] % 100 == 0);
      MPI_Type_free(&strided);
      /* word 5: MPI_MIN with values that go down; word 6: MPI_BXOR of this
       * rank's bit, an even number of times in all (so 0 at the end) */
      const int64_t low = -(int64_t)(rank * ROUNDS + i);
      CHECK(MPI_Accumulate(&low, 1, MPI_INT64_T, target, 40, 1, MPI_INT64_T, MPI_MIN, win) ==
            MPI_SUCCESS);
      const uint64_t bit = (uint64_t)1 << (rank % 64);
      CHECK(MPI_Accumulate(&bit, 1, MPI_UINT64_T, target, 48, 1, MPI_UINT64_T, MPI_BXOR, win) ==
            MPI_SUCCESS);
      CHECK(MPI_Accumulate(&bit, 1, MPI_UINT64_T, target, 48, 1, MPI_UINT64_T, MPI_BXOR, win) ==
            MPI_SUCCESS);
      /* the misaligned word: MPI_SUM by 1, under the accumulate lock */
      CHECK(MPI_Fetch_and_op(&one, &fetched, MPI_LONG, target, MISALIGNED_DISP, MPI_SUM, win) ==
            MPI_SUCCESS);
      /* word 0 read by MPI_NO_OP: never more than all updates in all */
      int64_t seen = -1;
      CHECK(MPI_Fetch_and_op(NULL, &seen, MPI_INT64_T, target, 0, MPI_NO_OP, win) == MPI_SUCCESS);
      CHECK(seen >= 1 && seen <= (int64_t)size * ROUNDS * 2);
    }
    /* word 7 of rank 0 also counts compare-and-swap increments: guess,
     * swap, retry with what was found */
    int64_t guess = 0, found = 0;
    for (;;) {
      const int64_t next = guess + 1000;
      CHECK(MPI_Compare_and_swap(&next, &guess, &found, MPI_INT64_T, 0, 56, win) == MPI_SUCCESS);
      if (found == guess) break;
      guess = found;
    }
  }
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD); /* every MPI_SUM into word 2 is in */
  /* MPI_MAX on an unsigned word, with values above 2^63 (negative if
   * compared as signed): the largest wins */
  const uint64_t huge = UINT64_MAX - (uint64_t)rank;
  uint64_t old = 0;
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  CHECK(MPI_Fetch_and_op(&huge, &old, MPI_UINT64_T, 0, 16, MPI_MAX, win) == MPI_SUCCESS);
  CHECK(old == (uint64_t)(2 * size * ROUNDS) || old >= UINT64_MAX - (uint64_t)size);
  /* MPI_REPLACE of rank + 1 into rank 0's word 6 (0 by now): the values
   * replaced, with the one left, are 0 .. size, each once */
  const int64_t mine = rank + 1;
  int64_t replaced = -1;
  CHECK(MPI_Fetch_and_op(&mine, &replaced, MPI_INT64_T, 0, 48, MPI_REPLACE, win) == MPI_SUCCESS);
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  int64_t* chain = rank == 0 ? malloc((size_t)size * 8) : NULL;
  MPI_Gather(&replaced, 1, MPI_INT64_T, chain, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    char* seen = calloc((size_t)size + 1, 1);
    int bad = 0;
    const int64_t left = get_word(base, 48);
    for (int r = 0; r <= size; ++r) {
      const int64_t v = r < size ? chain[r] : left;
      if (v < 0 || v > size || seen[v]++) ++bad;
    }
    CHECK(bad == 0);
    CHECK(left >= 1);
    free(seen);
    free(chain);
  }

  /* What each window holds: rank 0's took every rank's updates, every
   * other rank's its own only. */
  const int64_t n = rank == 0 ? size : 1;
  const int64_t lowest = rank == 0 ? -(int64_t)((size - 1) * ROUNDS + ROUNDS - 1)
                                   : -(int64_t)(rank * ROUNDS + ROUNDS - 1);
  CHECK(get_word(base, 0) == n * ROUNDS);
  CHECK(get_word(base, 8) == n * ROUNDS);
  if (rank == 0) {
    uint64_t w2;
    memcpy(&w2, base + 16, 8);
    CHECK(w2 == UINT64_MAX); /* rank 0's MPI_MAX of UINT64_MAX won */
  } else {
    CHECK(get_word(base, 16) == 2 * ROUNDS);
  }
  CHECK(get_word(base, 24) == ((int64_t)1 << (10 * n)));
  CHECK(get_word(base, 32) == 10 * n * ROUNDS);
  CHECK(get_word(base, 40) == lowest);
  if (rank != 0) CHECK(get_word(base, 48) == 0); /* rank 0's: the MPI_REPLACE chain above */
  CHECK(get_word(base, 56) == 100 * n * ROUNDS + (rank == 0 ? 1000 * (int64_t)size * ROUNDS : 0));
  CHECK(get_word(base, MISALIGNED_DISP) == n * ROUNDS);
  if (rank == 0) {
    /* the fetched values of word 0 at rank 0, over all ranks: 0 .. N-1 each once */
    int64_t total = 0;
    MPI_Reduce(&sum_fetched_total, &total, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    const int64_t all = (int64_t)size * ROUNDS;
    CHECK(total == all * (all - 1) / 2);
  } else {
    MPI_Reduce(&sum_fetched_total, NULL, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  }
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);

  const unsigned long long done = word_atomics_done() - before;
  if (expect_words == 1) {
    CHECK(done > 0);
  } else if (expect_words == 0) {
    CHECK(done == 0);
  } else if (rank == 0) {
    printf("rma_word_atomics: which path ran is not checked: TAGWIRE_TRANSPORT is %s\n",
           transport != NULL ? transport : "unset");
  }
  if (rank == 0) printf("rma_word_atomics: %llu words by word atomics at rank 0\n", done);
  chosen_by_info(transport == NULL                                          ? -1
                 : !strcmp(transport, "shm") || !strcmp(transport, "verbs") ? 1
                 : !strcmp(transport, "ucx")                                ? 0
                                                                            : -1);
  CHECK(MPI_T_finalize() == MPI_SUCCESS);
  return tw_finish("rma_word_atomics") != 0;
}
