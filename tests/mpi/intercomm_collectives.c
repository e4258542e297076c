/* Collectives on an intercommunicator (MPI-3.1 §5.2.2): even and odd world
 * ranks as two groups. Every result is what the other group contributed;
 * rooted operations are run with the root in each group in turn. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int color, local_rank, local_size, remote_size;

/* World rank of remote rank j (evens: 2j, odds: 2j + 1). */
static int remote_world(int j) {
  return 2 * j + (1 - color);
}

/* The root argument of a rooted operation whose root is rank `root` of the
 * group `root_color`. */
static int root_arg(int root_color, int root) {
  if (color != root_color) return root;
  return local_rank == root ? MPI_ROOT : MPI_PROC_NULL;
}

static void barrier_waits(MPI_Comm inter) {
  /* The odds come late: no even may leave before they entered. */
  if (color == 1) usleep(100 * 1000);
  const double start = MPI_Wtime();
  CHECK(MPI_Barrier(inter) == MPI_SUCCESS);
  if (color == 0) CHECK(MPI_Wtime() - start > 0.05);
  MPI_Request req;
  CHECK(MPI_Ibarrier(inter, &req) == MPI_SUCCESS);
  CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
}

static void bcast(MPI_Comm inter) {
  for (int root_color = 0; root_color < 2; ++root_color) {
    const int root = (root_color == 0 ? (size + 1) / 2 : size / 2) - 1; /* the group's last */
    const int arg = root_arg(root_color, root);
    int data[6] = {0};
    if (arg == MPI_ROOT)
      for (int i = 0; i < 6; ++i) data[i] = 10 * rank + i;
    CHECK(MPI_Bcast(data, 6, MPI_INT, arg, inter) == MPI_SUCCESS);
    if (color != root_color) {
      const int from = 2 * root + root_color;
      for (int i = 0; i < 6; ++i) CHECK(data[i] == 10 * from + i);
    }
    /* Nonblocking, and a strided receive (every other int of 12). */
    MPI_Datatype every_other;
    MPI_Type_vector(6, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int strided[12];
    for (int i = 0; i < 12; ++i) strided[i] = -1;
    MPI_Request req;
    if (arg == MPI_ROOT) {
      CHECK(MPI_Ibcast(data, 6, MPI_INT, arg, inter, &req) == MPI_SUCCESS);
    } else {
      CHECK(MPI_Ibcast(strided, 1, every_other, arg, inter, &req) == MPI_SUCCESS);
    }
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (color != root_color) {
      const int from = 2 * root + root_color;
      for (int i = 0; i < 6; ++i) {
        CHECK(strided[2 * i] == 10 * from + i);
        CHECK(strided[2 * i + 1] == -1);
      }
    }
    MPI_Type_free(&every_other);
  }
}

/* The sum over the other group of (world rank + i), for element i. */
static int remote_sum(int i) {
  int sum = 0;
  for (int j = 0; j < remote_size; ++j) sum += remote_world(j) + i;
  return sum;
}

static void reductions(MPI_Comm inter) {
  int mine[4], out[4];
  for (int i = 0; i < 4; ++i) mine[i] = rank + i;
  for (int root_color = 0; root_color < 2; ++root_color) {
    const int arg = root_arg(root_color, 0);
    for (int i = 0; i < 4; ++i) out[i] = -1;
    CHECK(MPI_Reduce(mine, out, 4, MPI_INT, MPI_SUM, arg, inter) == MPI_SUCCESS);
    for (int i = 0; i < 4; ++i) CHECK(out[i] == (arg == MPI_ROOT ? remote_sum(i) : -1));
  }
  for (int i = 0; i < 4; ++i) out[i] = -1;
  CHECK(MPI_Allreduce(mine, out, 4, MPI_INT, MPI_SUM, inter) == MPI_SUCCESS);
  for (int i = 0; i < 4; ++i) CHECK(out[i] == remote_sum(i));
  MPI_Request req;
  int max = -1;
  CHECK(MPI_Iallreduce(&rank, &max, 1, MPI_INT, MPI_MAX, inter, &req) == MPI_SUCCESS);
  CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(max == remote_world(remote_size - 1));

  /* Reduce_scatter: both groups reduce vectors of local_size x remote_size
   * elements; each rank gets its block of the other group's reduction. */
  const int total = local_size * remote_size;
  int* in = malloc(sizeof(int) * (size_t)total);
  int* block = malloc(sizeof(int) * (size_t)remote_size);
  int* counts = malloc(sizeof(int) * (size_t)local_size);
  for (int i = 0; i < total; ++i) in[i] = rank + i;
  for (int k = 0; k < local_size; ++k) counts[k] = remote_size;
  for (int pass = 0; pass < 3; ++pass) {
    for (int i = 0; i < remote_size; ++i) block[i] = -1;
    if (pass == 0) {
      CHECK(MPI_Reduce_scatter_block(in, block, remote_size, MPI_INT, MPI_SUM, inter) ==
            MPI_SUCCESS);
    } else if (pass == 1) {
      CHECK(MPI_Reduce_scatter(in, block, counts, MPI_INT, MPI_SUM, inter) == MPI_SUCCESS);
    } else {
      CHECK(MPI_Ireduce_scatter_block(in, block, remote_size, MPI_INT, MPI_SUM, inter, &req) ==
            MPI_SUCCESS);
      CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    for (int i = 0; i < remote_size; ++i)
      CHECK(block[i] == remote_sum(local_rank * remote_size + i));
  }
  free(counts);
  free(block);
  free(in);
}

static void gathers(MPI_Comm inter) {
  int* all = malloc(sizeof(int) * 2 * (size_t)remote_size);
  int* counts = malloc(sizeof(int) * (size_t)remote_size);
  int* displs = malloc(sizeof(int) * (size_t)remote_size);
  const int pair[2] = {rank, 7};
  for (int root_color = 0; root_color < 2; ++root_color) {
    const int arg = root_arg(root_color, 0);
    for (int i = 0; i < 2 * remote_size; ++i) all[i] = -1;
    CHECK(MPI_Gather(pair, 2, MPI_INT, all, 2, MPI_INT, arg, inter) == MPI_SUCCESS);
    if (arg == MPI_ROOT) {
      for (int j = 0; j < remote_size; ++j) {
        CHECK(all[2 * j] == remote_world(j));
        CHECK(all[2 * j + 1] == 7);
      }
    }
    /* Gatherv: remote rank j's one int lands at remote_size - 1 - j. */
    for (int j = 0; j < remote_size; ++j) {
      counts[j] = 1;
      displs[j] = remote_size - 1 - j;
      all[j] = -1;
    }
    CHECK(MPI_Gatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, arg, inter) == MPI_SUCCESS);
    if (arg == MPI_ROOT)
      for (int j = 0; j < remote_size; ++j) CHECK(all[remote_size - 1 - j] == remote_world(j));

    /* Scatter: block j (100 j, 100 j + 1) to remote rank j. */
    int got[2] = {-1, -1};
    if (arg == MPI_ROOT)
      for (int j = 0; j < remote_size; ++j) {
        all[2 * j] = 100 * j;
        all[2 * j + 1] = 100 * j + 1;
      }
    CHECK(MPI_Scatter(all, 2, MPI_INT, got, 2, MPI_INT, arg, inter) == MPI_SUCCESS);
    if (color != root_color) CHECK(got[0] == 100 * local_rank && got[1] == 100 * local_rank + 1);
    MPI_Request req;
    got[0] = -1;
    CHECK(MPI_Iscatterv(all, counts, displs, MPI_INT, got, 1, MPI_INT, arg, inter, &req) ==
          MPI_SUCCESS);
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (color != root_color) {
      /* The root's displacement for this rank, into its pairs above. */
      const int d = local_size - 1 - local_rank;
      CHECK(got[0] == 100 * (d / 2) + d % 2);
    }
  }
  /* Allgather: every remote rank's world rank, in remote rank order. */
  for (int j = 0; j < remote_size; ++j) all[j] = -1;
  CHECK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, inter) == MPI_SUCCESS);
  for (int j = 0; j < remote_size; ++j) CHECK(all[j] == remote_world(j));
  for (int j = 0; j < remote_size; ++j) all[j] = -1;
  CHECK(MPI_Allgatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, inter) == MPI_SUCCESS);
  for (int j = 0; j < remote_size; ++j) CHECK(all[remote_size - 1 - j] == remote_world(j));
  free(displs);
  free(counts);
  free(all);
}

static void alltoalls(MPI_Comm inter) {
  int* out = malloc(sizeof(int) * (size_t)remote_size);
  int* in = malloc(sizeof(int) * (size_t)remote_size);
  for (int j = 0; j < remote_size; ++j) {
    out[j] = 1000 * rank + j;
    in[j] = -1;
  }
  CHECK(MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, inter) == MPI_SUCCESS);
  for (int j = 0; j < remote_size; ++j) CHECK(in[j] == 1000 * remote_world(j) + local_rank);
  MPI_Request req;
  for (int j = 0; j < remote_size; ++j) in[j] = -1;
  CHECK(MPI_Ialltoall(out, 1, MPI_INT, in, 1, MPI_INT, inter, &req) == MPI_SUCCESS);
  CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (int j = 0; j < remote_size; ++j) CHECK(in[j] == 1000 * remote_world(j) + local_rank);
  free(in);
  free(out);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0) printf("intercomm_collectives: needs 2 ranks or more\n");
    MPI_Finalize();
    return 1;
  }
  color = rank % 2;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
  CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 78, &inter) ==
        MPI_SUCCESS);
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  MPI_Comm_rank(inter, &local_rank);
  MPI_Comm_size(inter, &local_size);
  MPI_Comm_remote_size(inter, &remote_size);

  barrier_waits(inter);
  bcast(inter);
  reductions(inter);
  gathers(inter);
  alltoalls(inter);

  /* Comm_split of the intercommunicator: local ranks by parity, in reverse
   * order; a parity the other group lacks gets MPI_COMM_NULL. */
  MPI_Comm halves;
  const int parity = local_rank % 2;
  CHECK(MPI_Comm_split(inter, parity, -local_rank, &halves) == MPI_SUCCESS);
  const int mates = (local_size + 1 - parity) / 2, remote_mates = (remote_size + 1 - parity) / 2;
  if (remote_mates == 0) {
    CHECK(halves == MPI_COMM_NULL);
  } else if (halves != MPI_COMM_NULL) {
    int flag = 0, n = 0, r = -1;
    CHECK(MPI_Comm_test_inter(halves, &flag) == MPI_SUCCESS && flag == 1);
    MPI_Comm_size(halves, &n);
    CHECK(n == mates);
    MPI_Comm_remote_size(halves, &n);
    CHECK(n == remote_mates);
    MPI_Comm_rank(halves, &r);
    CHECK(r == mates - 1 - local_rank / 2);
    /* The sum of the other side's world ranks: remote ranks of my parity. */
    int sum = -1, expect = 0;
    for (int j = parity; j < remote_size; j += 2) expect += remote_world(j);
    MPI_Comm_set_errhandler(halves, MPI_ERRORS_RETURN);
    CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, halves) == MPI_SUCCESS);
    CHECK(sum == expect);
    MPI_Comm_free(&halves);
  } else {
    CHECK(halves != MPI_COMM_NULL);
  }
  /* Comm_create: each side names its local rank 0 alone. */
  MPI_Group mine_group, first;
  MPI_Comm_group(inter, &mine_group);
  const int zero = 0;
  MPI_Group_incl(mine_group, 1, &zero, &first);
  MPI_Comm pair;
  CHECK(MPI_Comm_create(inter, first, &pair) == MPI_SUCCESS);
  if (local_rank == 0) {
    int n = 0;
    CHECK(pair != MPI_COMM_NULL);
    if (pair != MPI_COMM_NULL) {
      MPI_Comm_remote_size(pair, &n);
      CHECK(n == 1);
      int other = -1;
      CHECK(MPI_Allreduce(&rank, &other, 1, MPI_INT, MPI_MAX, pair) == MPI_SUCCESS);
      CHECK(other == 1 - color);
      MPI_Comm_free(&pair);
    }
  } else {
    CHECK(pair == MPI_COMM_NULL);
  }
  MPI_Group_free(&first);
  MPI_Group_free(&mine_group);

  /* What is refused, at every rank alike (nothing moves). */
  int x = rank, y = 0;
  CHECK(tw_class(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, inter)) == MPI_ERR_COMM);
  CHECK(tw_class(MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, inter)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, &y, 1, MPI_INT, inter)) == MPI_ERR_ARG);
  int* ys = calloc((size_t)remote_size, sizeof(int));
  CHECK(tw_class(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, ys, 1, MPI_INT, inter)) == MPI_ERR_ARG);
  free(ys);
  CHECK(tw_class(MPI_Bcast(&x, 1, MPI_INT, -7, inter)) == MPI_ERR_RANK);
  CHECK(tw_class(MPI_Bcast(&x, 1, MPI_INT, remote_size, inter)) == MPI_ERR_RANK);

  /* Point-to-point traffic on the same intercommunicator is untouched. */
  if (local_rank == 0) {
    int back = -1;
    CHECK(MPI_Sendrecv(&x, 1, MPI_INT, 0, 3, &back, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE) ==
          MPI_SUCCESS);
    CHECK(back == 1 - color);
  }
  CHECK(MPI_Barrier(inter) == MPI_SUCCESS);

  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  return tw_finish("intercomm_collectives") == 0 ? 0 : 1;
}
