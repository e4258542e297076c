/* Intercommunicators: even and odd world ranks as two groups joined by
 * MPI_Intercomm_create; the queries, point-to-point across (ANY_SOURCE over
 * the remote group, probe, cancel, bad ranks), dup, and both merges. */
#include <stdlib.h>

#include "check.h"

/* World rank of each member of `group`, through MPI_Group_translate_ranks. */
static void world_ranks_of(MPI_Group group, int n, int* out) {
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int* in = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) in[i] = i;
  MPI_Group_translate_ranks(group, n, in, world, out);
  MPI_Group_free(&world);
  free(in);
}

/* Every local rank sends to every remote rank; every rank receives from
 * ANY_SOURCE over the remote group and checks who sent what. */
static void exchange(MPI_Comm inter, int remote_size, const int* remote_world, int tag) {
  MPI_Request* sends = malloc(sizeof(MPI_Request) * (size_t)remote_size);
  int* out = malloc(sizeof(int) * (size_t)remote_size * 2);
  for (int j = 0; j < remote_size; ++j) {
    out[2 * j] = rank;
    out[2 * j + 1] = j;
    CHECK(MPI_Isend(&out[2 * j], 2, MPI_INT, j, tag, inter, &sends[j]) == MPI_SUCCESS);
  }
  int local_rank = -1, local_size = 0;
  MPI_Comm_rank(inter, &local_rank);
  MPI_Comm_size(inter, &local_size);
  /* Each remote rank sends me one message. */
  int* seen = calloc((size_t)remote_size, sizeof(int));
  for (int k = 0; k < remote_size; ++k) {
    int flag = 0;
    MPI_Status probed, st;
    while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, tag, inter, &flag, &probed);
    CHECK(probed.MPI_SOURCE >= 0 && probed.MPI_SOURCE < remote_size);
    int in[2] = {-1, -1};
    CHECK(MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, tag, inter, &st) == MPI_SUCCESS);
    CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < remote_size);
    if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= remote_size) continue;
    CHECK(in[0] == remote_world[st.MPI_SOURCE]); /* the source names the sender */
    CHECK(in[1] == local_rank);
    seen[st.MPI_SOURCE]++;
  }
  for (int j = 0; j < remote_size; ++j) CHECK(seen[j] == 1);
  CHECK(MPI_Waitall(remote_size, sends, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  free(seen);
  free(out);
  free(sends);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0) printf("intercomm: needs 2 ranks or more\n");
    MPI_Finalize();
    return 1;
  }
  const int color = rank % 2;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
  /* Leaders: world 0 for the evens, world 1 for the odds. */
  CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 77, &inter) ==
        MPI_SUCCESS);
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);

  const int evens = (size + 1) / 2, odds = size / 2;
  int flag = 0, n = 0, local_size = 0, local_rank = -1;
  CHECK(MPI_Comm_test_inter(inter, &flag) == MPI_SUCCESS && flag == 1);
  CHECK(MPI_Comm_test_inter(local, &flag) == MPI_SUCCESS && flag == 0);
  CHECK(MPI_Comm_remote_size(inter, &n) == MPI_SUCCESS);
  CHECK(n == (color == 0 ? odds : evens));
  MPI_Comm_size(inter, &local_size);
  MPI_Comm_rank(inter, &local_rank);
  CHECK(local_size == (color == 0 ? evens : odds));
  CHECK(local_rank == rank / 2);
  const int remote_size = n;
  MPI_Group remote_group;
  CHECK(MPI_Comm_remote_group(inter, &remote_group) == MPI_SUCCESS);
  int* remote_world = malloc(sizeof(int) * (size_t)remote_size);
  world_ranks_of(remote_group, remote_size, remote_world);
  for (int j = 0; j < remote_size; ++j) CHECK(remote_world[j] == 2 * j + (1 - color));
  MPI_Group_free(&remote_group);

  exchange(inter, remote_size, remote_world, 5);

  /* A rank past the remote group is refused (collectives on an
   * intercommunicator: intercomm_collectives.c). */
  int x = 0;
  CHECK(tw_class(MPI_Send(&x, 1, MPI_INT, remote_size, 0, inter)) == MPI_ERR_RANK);

  /* A receive nobody answers, cancelled. */
  MPI_Request req;
  MPI_Status st;
  CHECK(MPI_Irecv(&x, 1, MPI_INT, 0, 999, inter, &req) == MPI_SUCCESS);
  CHECK(MPI_Cancel(&req) == MPI_SUCCESS);
  CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag == 1);

  /* A duplicate is an intercommunicator of its own context. */
  MPI_Comm dup;
  CHECK(MPI_Comm_dup(inter, &dup) == MPI_SUCCESS);
  CHECK(MPI_Comm_test_inter(dup, &flag) == MPI_SUCCESS && flag == 1);
  exchange(dup, remote_size, remote_world, 5);

  /* Merge: evens pass high = 0 and come first; then both pass the same
   * value and the group holding world rank 0 comes first: the same order. */
  for (int same = 0; same < 2; ++same) {
    MPI_Comm merged;
    CHECK(MPI_Intercomm_merge(inter, same ? 1 : color, &merged) == MPI_SUCCESS);
    int mrank = -1, msize = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == size);
    CHECK(mrank == (color == 0 ? rank / 2 : evens + rank / 2));
    CHECK(MPI_Comm_test_inter(merged, &flag) == MPI_SUCCESS && flag == 0);
    int sum = 0;
    CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged) == MPI_SUCCESS);
    CHECK(sum == size * (size - 1) / 2);
    CHECK(MPI_Barrier(merged) == MPI_SUCCESS);
    MPI_Comm_free(&merged);
  }
  /* The odds first when they ask for low and the evens for high. */
  MPI_Comm flipped;
  CHECK(MPI_Intercomm_merge(inter, 1 - color, &flipped) == MPI_SUCCESS);
  int frank = -1;
  MPI_Comm_rank(flipped, &frank);
  CHECK(frank == (color == 1 ? rank / 2 : odds + rank / 2));
  MPI_Comm_free(&flipped);

  MPI_Comm_free(&dup);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  free(remote_world);
  return tw_finish("intercomm") == 0 ? 0 : 1;
}
