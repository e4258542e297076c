/* Shared-memory windows (issue 28): MPI_Win_allocate_shared and
 * MPI_Win_shared_query. Every rank stores into its own part and loads
 * every other rank's part through the query's pointer; the parts are
 * contiguous by default and page-aligned with alloc_shared_noncontig; puts,
 * gets and fetch-and-op on the same window see the same memory as loads
 * and stores; the window attributes say which kind of window it is; and
 * the wrong calls fail with their class. Runs on any number of ranks >= 2,
 * over every transport (the memory is shared whatever carries messages).
 * With "other-host R" (shared_window_test.sh runs rank R in a PID
 * namespace of its own, which is another host as far as sharing memory
 * goes): MPI_Win_allocate_shared over MPI_COMM_WORLD fails on every rank
 * with MPI_ERR_RMA_SHARED, and MPI_COMM_TYPE_SHARED leaves R alone. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* Rank r's part holds r + 1 longs. */
static MPI_Aint part_bytes(int r) {
  return (MPI_Aint)(r + 1) * (MPI_Aint)sizeof(long);
}

static void query_all(MPI_Win win, long** parts) {
  for (int r = 0; r < size; ++r) {
    MPI_Aint bytes = -1;
    int unit = -1;
    CHECK(MPI_Win_shared_query(win, r, &bytes, &unit, &parts[r]) == MPI_SUCCESS);
    CHECK(bytes == part_bytes(r));
    CHECK(unit == (int)sizeof(long));
  }
}

/* Loads and stores: each rank writes its part, then reads all others. */
static void loads_and_stores(int noncontig) {
  MPI_Info info = MPI_INFO_NULL;
  if (noncontig) {
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
  }
  long* mine = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate_shared(part_bytes(rank), sizeof(long), info, MPI_COMM_WORLD, &mine,
                                &win) == MPI_SUCCESS);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  long** parts = malloc((size_t)size * sizeof(long*));
  query_all(win, parts);
  CHECK(parts[rank] == mine);
  const long page = sysconf(_SC_PAGESIZE);
  for (int r = 0; r + 1 < size; ++r) {
    if (noncontig) {
      CHECK((uintptr_t)parts[r + 1] % (uintptr_t)page == 0);
      CHECK((char*)parts[r + 1] >= (char*)parts[r] + part_bytes(r));
    } else {
      CHECK((char*)parts[r + 1] == (char*)parts[r] + part_bytes(r)); /* no gap */
    }
  }
  for (int i = 0; i <= rank; ++i) mine[i] = 1000L * rank + i;
  CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win) == MPI_SUCCESS);
  CHECK(MPI_Win_sync(win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(MPI_Win_sync(win) == MPI_SUCCESS);
  int wrong = 0;
  for (int r = 0; r < size; ++r) {
    for (int i = 0; i <= r; ++i) wrong += parts[r][i] != 1000L * r + i;
  }
  CHECK(wrong == 0);
  /* The memory is one: a store into the next rank's part is what it loads. */
  const int next = (rank + 1) % size;
  MPI_Barrier(MPI_COMM_WORLD);
  parts[next][0] = -1 - rank;
  CHECK(MPI_Win_sync(win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(MPI_Win_sync(win) == MPI_SUCCESS);
  CHECK(mine[0] == -1 - (rank + size - 1) % size);
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  free(parts);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

/* Puts, gets and fetch-and-op on a shared window act on the memory the
 * loads see. */
static void rma_on_shared_memory(void) {
  long* mine = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate_shared(part_bytes(rank), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &mine, &win) == MPI_SUCCESS);
  long** parts = malloc((size_t)size * sizeof(long*));
  query_all(win, parts);
  memset(mine, 0, (size_t)part_bytes(rank));
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  const long value = 7000 + rank;
  CHECK(MPI_Put(&value, 1, MPI_LONG, next, 0, 1, MPI_LONG, win) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  CHECK(mine[0] == 7000 + prev);
  long got = -1;
  CHECK(MPI_Get(&got, 1, MPI_LONG, next, 0, 1, MPI_LONG, win) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  CHECK(got == 7000 + rank);
  /* Every rank adds 1 to rank 0's word 200 times: the count is exact. */
  const long one = 1;
  long old = 0;
  CHECK(MPI_Win_lock_all(0, win) == MPI_SUCCESS);
  for (int i = 0; i < 200; ++i) {
    CHECK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win) == MPI_SUCCESS);
  }
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win) == MPI_SUCCESS);
  CHECK(MPI_Win_sync(win) == MPI_SUCCESS);
  CHECK(parts[0][0] == 7000 + size - 1 + 200L * size);
  CHECK(MPI_Win_unlock_all(win) == MPI_SUCCESS);
  free(parts);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

/* The common pattern: rank 0 allocates all, the others nothing, and they
 * find it through MPI_PROC_NULL or rank 0. */
static void one_rank_allocates(void) {
  const MPI_Aint whole = 64 * sizeof(double);
  double* mine = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate_shared(rank == 0 ? whole : 0, sizeof(double), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &mine, &win) == MPI_SUCCESS);
  double* first = NULL;
  MPI_Aint bytes = 0;
  int unit = 0;
  CHECK(MPI_Win_shared_query(win, MPI_PROC_NULL, &bytes, &unit, &first) == MPI_SUCCESS);
  CHECK(bytes == whole);
  CHECK(unit == (int)sizeof(double));
  double* zero = NULL;
  CHECK(MPI_Win_shared_query(win, 0, &bytes, &unit, &zero) == MPI_SUCCESS);
  CHECK(zero == first);
  if (rank == 0) CHECK(mine == first);
  if (size > 1) {
    CHECK(MPI_Win_shared_query(win, 1, &bytes, &unit, &zero) == MPI_SUCCESS);
    CHECK(bytes == 0);
    CHECK(zero == NULL); /* an empty part, as MPICH and Open MPI give it */
  }
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  first[rank] = rank + 0.5;
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  int wrong = 0;
  for (int r = 0; r < size; ++r) wrong += first[r] != r + 0.5;
  CHECK(wrong == 0);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);

  /* The lowest rank with memory, when rank 0 has none. */
  CHECK(MPI_Win_allocate_shared(rank == 1 ? 16 : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine,
                                &win) == MPI_SUCCESS);
  CHECK(MPI_Win_shared_query(win, MPI_PROC_NULL, &bytes, &unit, &first) == MPI_SUCCESS);
  CHECK(bytes == 16);
  CHECK(MPI_Win_shared_query(win, 1, &bytes, &unit, &zero) == MPI_SUCCESS);
  CHECK(zero == first);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);

  /* Nothing at all. */
  CHECK(MPI_Win_allocate_shared(0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win) == MPI_SUCCESS);
  CHECK(MPI_Win_shared_query(win, MPI_PROC_NULL, &bytes, &unit, &first) == MPI_SUCCESS);
  CHECK(bytes == 0);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

/* Over the communicator MPI_Comm_split_type gives, the way programs
 * usually ask for one. */
static void over_split_type(void) {
  MPI_Comm node;
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS);
  int node_rank = -1;
  MPI_Comm_rank(node, &node_rank);
  int* mine = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win) ==
        MPI_SUCCESS);
  *mine = 42 + node_rank;
  MPI_Win_fence(0, win);
  int* first = NULL;
  MPI_Aint bytes = 0;
  int unit = 0;
  CHECK(MPI_Win_shared_query(win, 0, &bytes, &unit, &first) == MPI_SUCCESS);
  int sum = 0, node_size = 0;
  MPI_Comm_size(node, &node_size);
  for (int r = 0; r < node_size; ++r) sum += first[r];
  CHECK(sum == 42 * node_size + node_size * (node_size - 1) / 2);
  MPI_Win_fence(0, win);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  MPI_Comm_free(&node);
}

static int attribute(MPI_Win win, int keyval) {
  int* value = NULL;
  int flag = 0;
  CHECK(MPI_Win_get_attr(win, keyval, &value, &flag) == MPI_SUCCESS);
  CHECK(flag == 1);
  return flag != 0 && value != NULL ? *value : -1;
}

/* MPI_WIN_CREATE_FLAVOR and MPI_WIN_MODEL of each kind of window, and the
 * calls that must fail. */
static void flavors_and_errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  long buffer[4];
  long* mine = NULL;
  MPI_Win created, allocated, shared;
  CHECK(MPI_Win_create(buffer, sizeof(buffer), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &created) ==
        MPI_SUCCESS);
  CHECK(MPI_Win_allocate(32, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &allocated) == MPI_SUCCESS);
  long* allocated_base = mine;
  CHECK(MPI_Win_allocate_shared(32, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &shared) ==
        MPI_SUCCESS);
  CHECK(attribute(created, MPI_WIN_CREATE_FLAVOR) == MPI_WIN_FLAVOR_CREATE);
  CHECK(attribute(allocated, MPI_WIN_CREATE_FLAVOR) == MPI_WIN_FLAVOR_ALLOCATE);
  CHECK(attribute(shared, MPI_WIN_CREATE_FLAVOR) == MPI_WIN_FLAVOR_SHARED);
  CHECK(attribute(shared, MPI_WIN_MODEL) == MPI_WIN_UNIFIED);
  MPI_Aint bytes = 0;
  int unit = 0;
  void* p = NULL;
  /* MPI-4: other flavors answer too, with this rank's own memory, and
   * for a peer either memory this process maps or size 0 and NULL. */
  CHECK(MPI_Win_shared_query(created, rank, &bytes, &unit, &p) == MPI_SUCCESS);
  CHECK(p == buffer && bytes == (MPI_Aint)sizeof(buffer) && unit == 1);
  CHECK(MPI_Win_shared_query(allocated, rank, &bytes, &unit, &p) == MPI_SUCCESS);
  CHECK(p == allocated_base && bytes == 32);
  const int peer = (rank + 1) % size;
  CHECK(MPI_Win_shared_query(created, peer, &bytes, &unit, &p) == MPI_SUCCESS);
  CHECK((p == NULL) == (bytes == 0));
  CHECK(MPI_Win_shared_query(allocated, peer, &bytes, &unit, &p) == MPI_SUCCESS);
  CHECK((p == NULL) == (bytes == 0));
  CHECK(tw_class(MPI_Win_shared_query(shared, size, &bytes, &unit, &p)) == MPI_ERR_RANK);
  CHECK(tw_class(MPI_Win_shared_query(shared, -5, &bytes, &unit, &p)) == MPI_ERR_RANK);
  CHECK(tw_class(MPI_Win_shared_query(shared, 0, NULL, &unit, &p)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Win_allocate_shared(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &created)) ==
        MPI_ERR_ARG);
  CHECK(tw_class(MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, MPI_COMM_NULL, &mine, &created)) ==
        MPI_ERR_COMM);
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  CHECK(MPI_Error_string(MPI_ERR_RMA_SHARED, text, &length) == MPI_SUCCESS);
  CHECK(length > 0);
  MPI_Win_free(&shared);
  MPI_Win_free(&allocated);
  MPI_Win_free(&created);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void other_host(int isolated) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  void* mine = NULL;
  MPI_Win win = MPI_WIN_NULL;
  CHECK(tw_class(MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win)) ==
        MPI_ERR_RMA_SHARED);
  CHECK(win == MPI_WIN_NULL);
  MPI_Comm node;
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  CHECK(node_size == (rank == isolated ? 1 : size - 1));
  /* The node's communicator is what works. */
  CHECK(MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, node, &mine, &win) == MPI_SUCCESS);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  MPI_Comm_free(&node);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc == 3 && strcmp(argv[1], "other-host") == 0) {
    other_host(atoi(argv[2]));
    return tw_finish("shared_window other-host") != 0;
  }
  loads_and_stores(0);
  loads_and_stores(1);
  rma_on_shared_memory();
  one_rank_allocates();
  over_split_type();
  flavors_and_errors();
  return tw_finish("shared_window") != 0;
}
