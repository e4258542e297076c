/* Windows with fence synchronisation (issue 11): MPI_Put and MPI_Get over
 * RDMA (UCX put/get, verbs RDMA WRITE/READ), checked for content at small
 * and large sizes, to self and to others, with displacement units; the
 * predefined window attributes, user attributes with delete callbacks,
 * the window's group, and the errors (outside the window, before the first
 * fence, mismatched or non-contiguous types, a freed window) under
 * MPI_ERRORS_RETURN. Runs on any number of ranks >= 2. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define SLOTS 64
#define BIG (1 << 20) /* above any eager threshold: the size rendezvous would use */

static int deletes;
static int count_delete(MPI_Win win, int keyval, void* value, void* extra) {
  (void)win;
  (void)keyval;
  (void)extra;
  CHECK(*(int*)value == 42);
  ++deletes;
  return MPI_SUCCESS;
}

/* Everyone puts its rank into slot [rank] of every window, and reads slot
 * [target] of every other window back after the fence. */
static void all_to_all_put_get(void) {
  int* mem = malloc(SLOTS * sizeof(int));
  for (int i = 0; i < SLOTS; ++i) mem[i] = -1;
  MPI_Win win;
  CHECK(MPI_Win_create(mem, SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                       &win) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  int value = 1000 + rank;
  for (int t = 0; t < size; ++t) {
    CHECK(MPI_Put(&value, 1, MPI_INT, t, rank, 1, MPI_INT, win) == MPI_SUCCESS);
  }
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  for (int r = 0; r < size; ++r) CHECK(mem[r] == 1000 + r);
  for (int r = size; r < SLOTS; ++r) CHECK(mem[r] == -1); /* nothing past what was put */
  int got[SLOTS];
  for (int t = 0; t < size; ++t) {
    got[t] = -7;
    CHECK(MPI_Get(&got[t], 1, MPI_INT, t, (rank + 1) % size, 1, MPI_INT, win) == MPI_SUCCESS);
  }
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  for (int t = 0; t < size; ++t) CHECK(got[t] == 1000 + (rank + 1) % size);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  CHECK(win == MPI_WIN_NULL);
  free(mem);
}

/* A megabyte to the right neighbour and back from the left, in bytes with
 * a displacement unit of 1, at an offset. */
static void large_put_get(void) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  unsigned char* mem = calloc(BIG + 64, 1);
  unsigned char* out = malloc(BIG);
  unsigned char* in = malloc(BIG);
  for (int i = 0; i < BIG; ++i) out[i] = (unsigned char)(i * 7 + rank);
  MPI_Win win;
  CHECK(MPI_Win_create(mem, BIG + 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win) == MPI_SUCCESS);
  CHECK(MPI_Put(out, BIG, MPI_BYTE, right, 32, BIG, MPI_BYTE, win) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  int bad = 0;
  for (int i = 0; i < BIG; ++i) bad += mem[32 + i] != (unsigned char)(i * 7 + left);
  CHECK(bad == 0);
  for (int i = 0; i < 32; ++i) CHECK(mem[i] == 0 && mem[32 + BIG + i] == 0);
  /* Read back what the left neighbour's window holds: ours, from before. */
  CHECK(MPI_Get(in, BIG, MPI_BYTE, right, 32, BIG, MPI_BYTE, win) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win) == MPI_SUCCESS);
  CHECK(memcmp(in, out, BIG) == 0);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  free(mem);
  free(out);
  free(in);
}

static void attributes_and_group(void) {
  double mem[8];
  MPI_Win win;
  CHECK(MPI_Win_create(mem, sizeof(mem), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win) ==
        MPI_SUCCESS);
  void* base = NULL;
  MPI_Aint* wsize = NULL;
  int* unit = NULL;
  int flag = 0;
  CHECK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag) == MPI_SUCCESS && flag);
  CHECK(base == mem);
  CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag) == MPI_SUCCESS && flag);
  CHECK(*wsize == (MPI_Aint)sizeof(mem));
  CHECK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag) == MPI_SUCCESS && flag);
  CHECK(*unit == (int)sizeof(double));

  int keyval, value = 42;
  CHECK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &keyval, NULL) == MPI_SUCCESS);
  void* seen = NULL;
  CHECK(MPI_Win_get_attr(win, keyval, &seen, &flag) == MPI_SUCCESS && !flag);
  CHECK(MPI_Win_set_attr(win, keyval, &value) == MPI_SUCCESS);
  CHECK(MPI_Win_get_attr(win, keyval, &seen, &flag) == MPI_SUCCESS && flag && seen == &value);
  CHECK(MPI_Win_delete_attr(win, keyval) == MPI_SUCCESS);
  CHECK(deletes == 1);
  CHECK(MPI_Win_set_attr(win, keyval, &value) == MPI_SUCCESS);
  CHECK(MPI_Win_free_keyval(&keyval) == MPI_SUCCESS); /* the attribute keeps its callback */
  CHECK(keyval == MPI_KEYVAL_INVALID);

  MPI_Group group, world;
  int cmp;
  CHECK(MPI_Win_get_group(win, &group) == MPI_SUCCESS);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_compare(group, world, &cmp);
  CHECK(cmp == MPI_IDENT);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  CHECK(MPI_Win_c2f(win) == (MPI_Fint)win && MPI_Win_f2c(MPI_Win_c2f(win)) == win);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  CHECK(deletes == 2); /* Win_free ran the delete callback */
}

static void errors(void) {
  int mem[4] = {0, 0, 0, 0}, v = 5;
  double d = 1.0;
  MPI_Win win;
  CHECK(MPI_Win_create(mem, sizeof(mem), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win) ==
        MPI_SUCCESS);
  MPI_Errhandler eh;
  CHECK(MPI_Win_get_errhandler(win, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_ARE_FATAL);
  CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN) == MPI_SUCCESS);
  const int peer = (rank + 1) % size;
  /* Before the first fence there is no epoch. */
  CHECK(tw_class(MPI_Put(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, win)) == MPI_ERR_RMA_SYNC);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  /* Outside the target's window: past its end, straddling it, negative. */
  CHECK(tw_class(MPI_Put(&v, 1, MPI_INT, peer, 4, 1, MPI_INT, win)) == MPI_ERR_RMA_RANGE);
  int two[2] = {1, 2};
  CHECK(tw_class(MPI_Put(two, 2, MPI_INT, peer, 3, 2, MPI_INT, win)) == MPI_ERR_RMA_RANGE);
  CHECK(tw_class(MPI_Get(&v, 1, MPI_INT, peer, -1, 1, MPI_INT, win)) == MPI_ERR_RMA_RANGE);
  CHECK(tw_class(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win)) == MPI_ERR_RANK);
  /* A displacement whose bytes (times the unit, 4) pass 2^64 wraps round
   * to 0 unless the multiplication is checked. */
  CHECK(tw_class(MPI_Put(&v, 1, MPI_INT, peer, (MPI_Aint)1 << 62, 1, MPI_INT, win)) ==
        MPI_ERR_RMA_RANGE);
  CHECK(tw_class(MPI_Win_flush(size, win)) == MPI_ERR_RANK);
  CHECK(tw_class(MPI_Win_flush(-5, win)) == MPI_ERR_RANK);
  /* Origin and target disagree. */
  CHECK(tw_class(MPI_Put(&d, 1, MPI_DOUBLE, peer, 0, 1, MPI_INT, win)) == MPI_ERR_TYPE);
  /* A strided type whose second piece is past the end: refused before
   * the first piece (int 2, checked below) is written. */
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  CHECK(tw_class(MPI_Put(two, 2, MPI_INT, peer, 2, 1, strided, win)) == MPI_ERR_RMA_RANGE);
  MPI_Type_free(&strided);
  /* Names: none at first, then what was set (cut to MPI_MAX_OBJECT_NAME). */
  char name[MPI_MAX_OBJECT_NAME];
  int name_length = -1;
  CHECK(MPI_Win_get_name(win, name, &name_length) == MPI_SUCCESS);
  CHECK(name_length == 0 && name[0] == '\0');
  CHECK(MPI_Win_set_name(win, "halo window") == MPI_SUCCESS);
  CHECK(MPI_Win_get_name(win, name, &name_length) == MPI_SUCCESS);
  CHECK(name_length == 11 && strcmp(name, "halo window") == 0);
  CHECK(tw_class(MPI_Win_set_name(win, NULL)) == MPI_ERR_ARG);
  /* PROC_NULL is a no-op; a good put still works after all that. */
  CHECK(MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 99, 1, MPI_INT, win) == MPI_SUCCESS);
  CHECK(MPI_Put(&v, 1, MPI_INT, peer, 3, 1, MPI_INT, win) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  CHECK(mem[3] == 5 && mem[0] == 0 && mem[1] == 0 && mem[2] == 0);
  MPI_Win freed = win;
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(tw_class(MPI_Win_fence(0, freed)) == MPI_ERR_WIN);
  CHECK(tw_class(MPI_Win_create(mem, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win)) == MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A window of size zero at some ranks (allowed), and gets from ranks that
 * have memory. */
static void empty_windows(void) {
  int mem = 77 + rank;
  MPI_Win win;
  const int has = rank % 2 == 0;
  CHECK(MPI_Win_create(has ? &mem : NULL, has ? sizeof(int) : 0, sizeof(int), MPI_INFO_NULL,
                       MPI_COMM_WORLD, &win) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  int got = -1;
  CHECK(MPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, win) == MPI_SUCCESS);
  CHECK(MPI_Win_fence(0, win) == MPI_SUCCESS);
  CHECK(got == 77);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
}

/* MPI_Win_allocate: the library's memory, usable at once (each rank puts
 * its rank into the next rank's window, read back after the fence), its
 * base attribute is the pointer handed out; a negative size is
 * MPI_ERR_ARG. (Dynamic windows: dynamic_window.c.) */
static void allocated(void) {
  int* base = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                         &win) == MPI_SUCCESS);
  CHECK(base != NULL);
  if (base == NULL) return;
  for (int i = 0; i < 4; ++i) base[i] = -1;
  void* attr = NULL;
  int flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &attr, &flag);
  CHECK(flag && attr == base);
  MPI_Win_fence(0, win);
  CHECK(MPI_Put(&rank, 1, MPI_INT, (rank + 1) % size, 2, 1, MPI_INT, win) == MPI_SUCCESS);
  MPI_Win_fence(0, win);
  CHECK(base[2] == (rank + size - 1) % size && base[0] == -1);
  CHECK(MPI_Win_free(&win) == MPI_SUCCESS && win == MPI_WIN_NULL);

  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Win refused = MPI_WIN_NULL;
  int* negative = NULL;
  CHECK(tw_class(MPI_Win_allocate(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &negative, &refused)) ==
        MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  all_to_all_put_get();
  large_put_get();
  attributes_and_group();
  errors();
  empty_windows();
  allocated();
  return tw_finish("windows") == 0 ? 0 : 1;
}
