/* The MPI surface test harnesses lean on (issue 11): groups and their set
 * operations, communicators made from groups, names, attribute caching
 * with copy and delete callbacks, info objects, and handle conversion.
 * Runs on any number of ranks >= 2. */
#include <stdint.h>
#include <string.h>

#include "check.h"

/* ------------------------------------------------------------ groups */

static void groups(void) {
  MPI_Group world, evens, odds, first_two, u, i, d, g;
  int n, r, cmp;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_size(world, &n);
  CHECK(n == size);
  MPI_Group_rank(world, &r);
  CHECK(r == rank);

  int range[1][3] = {{0, size - 1, 2}};
  CHECK(MPI_Group_range_incl(world, 1, range, &evens) == MPI_SUCCESS);
  CHECK(MPI_Group_range_excl(world, 1, range, &odds) == MPI_SUCCESS);
  MPI_Group_size(evens, &n);
  CHECK(n == (size + 1) / 2);
  MPI_Group_size(odds, &n);
  CHECK(n == size / 2);
  MPI_Group_rank(evens, &r);
  CHECK(r == (rank % 2 == 0 ? rank / 2 : MPI_UNDEFINED));

  int two[2] = {1, 0}; /* order matters: rank 1 first */
  CHECK(MPI_Group_incl(world, 2, two, &first_two) == MPI_SUCCESS);
  int in[2] = {0, 1}, out[2];
  MPI_Group_translate_ranks(first_two, 2, in, world, out);
  CHECK(out[0] == 1 && out[1] == 0);

  /* Set operations keep the first group's order. */
  CHECK(MPI_Group_union(evens, odds, &u) == MPI_SUCCESS);
  MPI_Group_compare(u, world, &cmp);
  CHECK(size <= 2 ? cmp == MPI_IDENT : cmp == MPI_SIMILAR);
  CHECK(MPI_Group_intersection(evens, odds, &i) == MPI_SUCCESS);
  CHECK(i == MPI_GROUP_EMPTY);
  CHECK(MPI_Group_difference(world, odds, &d) == MPI_SUCCESS);
  MPI_Group_compare(d, evens, &cmp);
  CHECK(cmp == MPI_IDENT);
  int excl[1] = {0};
  CHECK(MPI_Group_excl(world, 1, excl, &g) == MPI_SUCCESS);
  MPI_Group_size(g, &n);
  CHECK(n == size - 1);
  MPI_Group_rank(g, &r);
  CHECK(r == (rank == 0 ? MPI_UNDEFINED : rank - 1));
  MPI_Group_compare(first_two, world, &cmp);
  CHECK(cmp == (size == 2 ? MPI_SIMILAR : MPI_UNEQUAL));
  MPI_Group_size(MPI_GROUP_EMPTY, &n);
  CHECK(n == 0);

  /* Bad arguments: repeated rank, empty range, invalid handle. */
  MPI_Group bad;
  int twice[2] = {0, 0};
  CHECK(tw_class(MPI_Group_incl(world, 2, twice, &bad)) == MPI_ERR_RANK);
  int empty_range[1][3] = {{1, 0, 1}};
  CHECK(tw_class(MPI_Group_range_incl(world, 1, empty_range, &bad)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Group_size(4242, &n)) == MPI_ERR_GROUP);

  /* A communicator from a group: the evens, ordered as the group. */
  MPI_Comm even_comm;
  CHECK(MPI_Comm_create(MPI_COMM_WORLD, evens, &even_comm) == MPI_SUCCESS);
  if (rank % 2 == 0) {
    CHECK(even_comm != MPI_COMM_NULL);
    MPI_Comm_rank(even_comm, &r);
    CHECK(r == rank / 2);
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, even_comm);
    CHECK(sum == (size + 1) / 2);
    MPI_Comm_free(&even_comm);
  } else {
    CHECK(even_comm == MPI_COMM_NULL);
  }
  /* Reversed order: Comm_create follows the group's order. */
  MPI_Group reversed;
  int all[64];
  for (int k = 0; k < size && k < 64; ++k) all[k] = size - 1 - k;
  MPI_Group_incl(world, size, all, &reversed);
  MPI_Comm rev;
  CHECK(MPI_Comm_create(MPI_COMM_WORLD, reversed, &rev) == MPI_SUCCESS);
  MPI_Comm_rank(rev, &r);
  CHECK(r == size - 1 - rank);
  MPI_Comm_compare(rev, MPI_COMM_WORLD, &cmp);
  CHECK(cmp == MPI_SIMILAR);
  MPI_Comm_free(&rev);

  MPI_Group* all_groups[] = {&world, &evens, &odds, &first_two, &u, &i, &d, &g, &reversed};
  for (unsigned k = 0; k < sizeof(all_groups) / sizeof(all_groups[0]); ++k) {
    CHECK(MPI_Group_free(all_groups[k]) == MPI_SUCCESS && *all_groups[k] == MPI_GROUP_NULL);
  }
}

/* -------------------------------------------------- names and inter */

static void names(void) {
  char name[MPI_MAX_OBJECT_NAME];
  int len, flag, n;
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_get_name(dup, name, &len);
  CHECK(len == 0); /* names are not copied by dup */
  CHECK(MPI_Comm_set_name(dup, "solver") == MPI_SUCCESS);
  MPI_Comm_get_name(dup, name, &len);
  CHECK(strcmp(name, "solver") == 0 && len == 6);
  CHECK(MPI_Comm_test_inter(dup, &flag) == MPI_SUCCESS && flag == 0);
  CHECK(tw_class(MPI_Comm_remote_size(dup, &n)) == MPI_ERR_COMM);
  MPI_Comm_free(&dup);
}

/* -------------------------------------------------------- attributes */

static int copies, deletes;
static int extra_marker;

static int copy_fn(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)oldcomm;
  (void)keyval;
  CHECK(extra == &extra_marker);
  ++copies;
  *(void**)out = (void*)((intptr_t)in + 1); /* the copy is one more */
  *flag = 1;
  return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm;
  (void)keyval;
  (void)value;
  CHECK(extra == &extra_marker);
  ++deletes;
  return MPI_SUCCESS;
}

/* MPI_COMM_SELF's attributes at MPI_Finalize: the values, in the order
 * their delete callbacks ran. */
static int self_deleted[4], self_deletes;
static int self_delete_fn(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)keyval;
  (void)extra;
  if (comm == MPI_COMM_SELF && self_deletes < 4) self_deleted[self_deletes] = (int)(intptr_t)value;
  ++self_deletes;
  return MPI_SUCCESS;
}

static void attributes(void) {
  int flag;
  int* ub = NULL;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  CHECK(flag && *ub >= 32767);
  int* wtg = NULL;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wtg, &flag);
  CHECK(flag && (*wtg == 0 || *wtg == 1));
  int* appnum = NULL;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
  CHECK(!flag || *appnum == 0);

  int key, plain;
  CHECK(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &extra_marker) == MPI_SUCCESS);
  CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &plain, NULL) ==
        MPI_SUCCESS);
  MPI_Comm a;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  CHECK(MPI_Comm_set_attr(a, key, (void*)(intptr_t)41) == MPI_SUCCESS);
  CHECK(MPI_Comm_set_attr(a, plain, (void*)(intptr_t)7) == MPI_SUCCESS);
  void* value = NULL;
  MPI_Comm_get_attr(a, key, &value, &flag);
  CHECK(flag && (intptr_t)value == 41);

  /* Dup: our copy callback runs (value + 1); NULL_COPY_FN copies nothing. */
  MPI_Comm b;
  MPI_Comm_dup(a, &b);
  CHECK(copies == 1);
  MPI_Comm_get_attr(b, key, &value, &flag);
  CHECK(flag && (intptr_t)value == 42);
  MPI_Comm_get_attr(b, plain, &value, &flag);
  CHECK(!flag);

  /* Replacing a value deletes the old one; delete_attr deletes; free
   * deletes what is left. */
  MPI_Comm_set_attr(a, key, (void*)(intptr_t)43);
  CHECK(deletes == 1);
  CHECK(MPI_Comm_delete_attr(a, key) == MPI_SUCCESS);
  CHECK(deletes == 2);
  MPI_Comm_get_attr(a, key, &value, &flag);
  CHECK(!flag);
  CHECK(tw_class(MPI_Comm_delete_attr(a, key)) == MPI_ERR_KEYVAL);
  MPI_Comm_free(&b);
  CHECK(deletes == 3);
  /* A freed keyval: no new use, but what was set keeps its callbacks. */
  MPI_Comm_set_attr(a, key, (void*)(intptr_t)1);
  int freed = key;
  CHECK(MPI_Comm_free_keyval(&key) == MPI_SUCCESS && key == MPI_KEYVAL_INVALID);
  CHECK(tw_class(MPI_Comm_set_attr(a, freed, NULL)) == MPI_ERR_KEYVAL);
  MPI_Comm_free(&a);
  CHECK(deletes == 4);
  MPI_Comm_free_keyval(&plain);
  CHECK(tw_class(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL)) == MPI_ERR_KEYVAL);

  /* MPI_COMM_SELF's attributes are deleted at MPI_Finalize, the last set
   * first (MPI-3.1 §8.7.1; checked in main, after it): keys made in the
   * order self_key, later, latest, values set 1, then 3 on latest, then 2
   * on later, so the deletes must see 2, 3, 1 (not the keys' order). */
  int self_key, later, latest;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &self_key, NULL);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &later, NULL);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &latest, NULL);
  MPI_Comm_set_attr(MPI_COMM_SELF, self_key, (void*)(intptr_t)1);
  MPI_Comm_set_attr(MPI_COMM_SELF, latest, (void*)(intptr_t)3);
  MPI_Comm_set_attr(MPI_COMM_SELF, later, (void*)(intptr_t)2);
}

/* -------------------------------------------------------------- info */

static void info(void) {
  MPI_Info info, copy;
  char value[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
  int flag, n, len;
  CHECK(MPI_Info_create(&info) == MPI_SUCCESS);
  CHECK(MPI_Info_set(info, "wdir", "/tmp") == MPI_SUCCESS);
  CHECK(MPI_Info_set(info, "host", "node1") == MPI_SUCCESS);
  CHECK(MPI_Info_set(info, "wdir", "/scratch") == MPI_SUCCESS); /* replaces, keeps its place */
  MPI_Info_get_nkeys(info, &n);
  CHECK(n == 2);
  MPI_Info_get_nthkey(info, 0, key);
  CHECK(strcmp(key, "wdir") == 0);
  MPI_Info_get_nthkey(info, 1, key);
  CHECK(strcmp(key, "host") == 0);
  CHECK(MPI_Info_get(info, "wdir", MPI_MAX_INFO_VAL, value, &flag) == MPI_SUCCESS);
  CHECK(flag && strcmp(value, "/scratch") == 0);
  MPI_Info_get(info, "wdir", 3, value, &flag); /* valuelen 3: cut to "/sc" */
  CHECK(flag && strcmp(value, "/sc") == 0);
  MPI_Info_get_valuelen(info, "host", &len, &flag);
  CHECK(flag && len == 5);
  int buflen = 0;
  MPI_Info_get_string(info, "host", &buflen, NULL, &flag); /* ask the size */
  CHECK(flag && buflen == 6);
  buflen = (int)sizeof(value);
  MPI_Info_get_string(info, "host", &buflen, value, &flag);
  CHECK(flag && strcmp(value, "node1") == 0);
  MPI_Info_get(info, "absent", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(!flag);

  CHECK(MPI_Info_dup(info, &copy) == MPI_SUCCESS);
  CHECK(MPI_Info_delete(info, "host") == MPI_SUCCESS);
  MPI_Info_get_nkeys(info, &n);
  CHECK(n == 1);
  MPI_Info_get_nkeys(copy, &n);
  CHECK(n == 2); /* the copy is its own */
  CHECK(tw_class(MPI_Info_delete(info, "host")) == MPI_ERR_INFO_NOKEY);
  CHECK(tw_class(MPI_Info_set(info, "", "x")) == MPI_ERR_INFO_KEY);
  char long_key[MPI_MAX_INFO_KEY + 2];
  memset(long_key, 'k', sizeof(long_key) - 1);
  long_key[sizeof(long_key) - 1] = '\0';
  CHECK(tw_class(MPI_Info_set(info, long_key, "x")) == MPI_ERR_INFO_KEY);
  CHECK(tw_class(MPI_Info_set(MPI_INFO_ENV, "a", "b")) == MPI_ERR_INFO);
  MPI_Info_get_nkeys(MPI_INFO_ENV, &n);
  CHECK(n == 4); /* command, argv, wdir, host */
  CHECK(MPI_Info_free(&info) == MPI_SUCCESS && info == MPI_INFO_NULL);
  CHECK(MPI_Info_free(&copy) == MPI_SUCCESS);
  CHECK(tw_class(MPI_Info_get_nkeys(copy, &n)) == MPI_ERR_INFO);
}

/* ------------------------------------------------------- Alloc_mem */

static void alloc_mem(void) {
  MPI_Info hints;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "alloc_shared_noncontig", "true"); /* accepted, not needed */
  const int n = 1 << 18;                                 /* 1 MiB of ints: rendezvous */
  int* out = NULL;
  int* in = NULL;
  CHECK(MPI_Alloc_mem((MPI_Aint)n * (MPI_Aint)sizeof(int), hints, &out) == MPI_SUCCESS);
  CHECK(MPI_Alloc_mem((MPI_Aint)n * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &in) == MPI_SUCCESS);
  CHECK(out != NULL && in != NULL && ((uintptr_t)out % 4096) == 0);
  for (int k = 0; k < n; ++k) out[k] = k ^ rank;
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  /* Twice from the same memory, and from a slice inside it. */
  for (int round = 0; round < 2; ++round) {
    MPI_Sendrecv(out, n, MPI_INT, right, 11, in, n, MPI_INT, left, 11, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int bad = 0;
    for (int k = 0; k < n; ++k) bad += in[k] != (k ^ left);
    CHECK(bad == 0);
  }
  MPI_Sendrecv(out + 1000, n / 2, MPI_INT, right, 12, in, n / 2, MPI_INT, left, 12, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  CHECK(in[0] == (1000 ^ left) && in[n / 2 - 1] == ((1000 + n / 2 - 1) ^ left));
  CHECK(MPI_Free_mem(out) == MPI_SUCCESS);
  CHECK(MPI_Free_mem(in) == MPI_SUCCESS);
  CHECK(tw_class(MPI_Free_mem(in)) == MPI_ERR_ARG); /* freed already */
  void* never = NULL;
  CHECK(tw_class(MPI_Alloc_mem(-1, MPI_INFO_NULL, &never)) == MPI_ERR_ARG);
  MPI_Info_free(&hints);
}

/* ------------------------------------------------- handle conversion */

static void conversion(void) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(dup)) == dup);
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD);
  CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE);
  MPI_Request req;
  int x = 5, y = 0;
  MPI_Irecv(&y, 1, MPI_INT, rank, 3, dup, &req);
  MPI_Request back = MPI_Request_f2c(MPI_Request_c2f(req));
  MPI_Send(&x, 1, MPI_INT, rank, 3, dup);
  CHECK(MPI_Wait(&back, MPI_STATUS_IGNORE) == MPI_SUCCESS && y == 5);
  MPI_Message msg;
  MPI_Status st;
  MPI_Send(&x, 1, MPI_INT, rank, 4, dup);
  MPI_Mprobe(rank, 4, dup, &msg, &st);
  MPI_Message msg_back = MPI_Message_f2c(MPI_Message_c2f(msg));
  CHECK(MPI_Mrecv(&y, 1, MPI_INT, &msg_back, &st) == MPI_SUCCESS && y == 5);
  MPI_Group g;
  MPI_Comm_group(dup, &g);
  int n = 0;
  CHECK(MPI_Group_size(MPI_Group_f2c(MPI_Group_c2f(g)), &n) == MPI_SUCCESS && n == size);
  MPI_Group_free(&g);
  CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM);
  MPI_Comm_free(&dup);
}

/* MPI_Comm_create_group: collective over the group's members only. Evens
 * and odds build their communicators at the same time with one tag (the
 * groups are disjoint), in reverse rank order, while nobody else takes
 * part; a group of one is local; outsiders get MPI_COMM_NULL. */
static void create_group(void) {
  MPI_Group world, mine, solo;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  /* My parity's ranks, highest first. */
  int members[64], n = 0;
  for (int r = size - 1; r >= 0; --r)
    if (r % 2 == rank % 2) members[n++] = r;
  MPI_Group_incl(world, n, members, &mine);
  MPI_Comm comm = MPI_COMM_NULL;
  CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, mine, 7, &comm) == MPI_SUCCESS);
  CHECK(comm != MPI_COMM_NULL);
  int r = -1, s = -1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &s);
  CHECK(s == n);
  CHECK(r >= 0 && r < n && members[r] == rank); /* ranked in the group's order */
  int sum = 0, expected = 0;
  for (int i = 0; i < n; ++i) expected += members[i];
  CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS);
  CHECK(sum == expected); /* the traffic stayed among the members */
  MPI_Comm_free(&comm);

  int zero = 0;
  MPI_Group_incl(world, 1, &zero, &solo);
  CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, solo, 8, &comm) == MPI_SUCCESS);
  if (rank == 0) {
    CHECK(comm != MPI_COMM_NULL);
    MPI_Comm_size(comm, &s);
    CHECK(s == 1);
    MPI_Comm_free(&comm);
  } else {
    CHECK(comm == MPI_COMM_NULL);
  }
  CHECK(tw_class(MPI_Comm_create_group(MPI_COMM_WORLD, solo, -1, &comm)) == MPI_ERR_TAG ||
        rank != 0);
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS); /* the parent still works */
  MPI_Group_free(&solo);
  MPI_Group_free(&mine);
  MPI_Group_free(&world);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  groups();
  names();
  attributes();
  info();
  conversion();
  alloc_mem();
  create_group();
  int failures = tw_finish("mpi surface");
  if (self_deletes != 3 || self_deleted[0] != 2 || self_deleted[1] != 3 || self_deleted[2] != 1) {
    fprintf(stderr,
            "[rank %d] MPI_COMM_SELF's attributes at MPI_Finalize: %d deletes, values %d %d %d "
            "(want 3: 2 3 1, the last set first)\n",
            rank, self_deletes, self_deleted[0], self_deleted[1], self_deleted[2]);
    failures = 1;
  }
  return failures != 0;
}
