/* The nonblocking collectives (MPI_Ibarrier, Ibcast, Ireduce, Iallreduce,
 * Iscan, Iexscan, Ireduce_scatter(_block), Igather(v), Iscatter(v),
 * Iallgather(v), Ialltoall(v,w), Ineighbor_*): results checked against what
 * each rank can compute alone, many outstanding at once and completed out
 * of order, progressed by MPI_Test alone, beside blocking collectives and
 * wildcard user receives that must never take their traffic, with a
 * non-commutative user operation, and their errors (issue 28); a persistent
 * collective beside the 16,384th nonblocking one after its init.
 * Last line from rank 0: "nonblocking collectives: N checks passed on rank 0, N failed in all". */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "matrices.h"

/* Completes `request` by MPI_Test alone; the number of tests it took. */
static int test_until_done(MPI_Request* request) {
  int done = 0, tests = 0;
  while (!done) {
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    ++tests;
  }
  return tests;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int n = size;
  int ok;

  /* A wildcard user receive posted first must get the user's message,
   * never the collectives' traffic that flows while it waits. */
  int user_msg = -1;
  MPI_Request user_recv;
  MPI_Irecv(&user_msg, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &user_recv);

  /* Five different collectives outstanding at once, completed in reverse. */
  int bval = rank == 0 ? 4242 : -1;
  long sum_in = rank + 1, sum_out = 0;
  int* a2a_out = malloc(sizeof(int) * (size_t)n);
  int* a2a_in = malloc(sizeof(int) * (size_t)n);
  int* gathered = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) a2a_out[i] = 100 * rank + i, a2a_in[i] = -1, gathered[i] = -1;
  MPI_Request r[5];
  CHECK(MPI_Ibcast(&bval, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[0]) == MPI_SUCCESS);
  CHECK(MPI_Iallreduce(&sum_in, &sum_out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r[1]) ==
        MPI_SUCCESS);
  CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &r[2]) == MPI_SUCCESS);
  CHECK(MPI_Ialltoall(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, MPI_COMM_WORLD, &r[3]) ==
        MPI_SUCCESS);
  CHECK(MPI_Iallgather(&rank, 1, MPI_INT, gathered, 1, MPI_INT, MPI_COMM_WORLD, &r[4]) ==
        MPI_SUCCESS);
  for (int i = 4; i >= 0; --i) CHECK(MPI_Wait(&r[i], MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(r[0] == MPI_REQUEST_NULL && r[4] == MPI_REQUEST_NULL);
  CHECK(bval == 4242);
  CHECK(sum_out == (long)n * (n + 1) / 2);
  ok = 1;
  for (int i = 0; i < n; ++i) ok &= a2a_in[i] == 100 * i + rank && gathered[i] == i;
  CHECK(ok);

  /* The user's message, sent after all that, is the one the wildcard
   * receive took. */
  if (rank == 0) {
    for (int peer = 1; peer < n; ++peer) {
      int v = 7000 + peer;
      MPI_Send(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD);
    }
    int v = 7000;
    MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
  }
  MPI_Status st;
  CHECK(MPI_Wait(&user_recv, &st) == MPI_SUCCESS);
  CHECK(user_msg == 7000 + rank && st.MPI_SOURCE == 0 && st.MPI_TAG == 5);

  /* Many of one kind at once: each its own tags, none takes another's. */
  enum { kMany = 40 };
  int many_in[kMany], many_out[kMany];
  MPI_Request many[kMany];
  for (int k = 0; k < kMany; ++k) {
    many_in[k] = k * (rank + 1);
    MPI_Iallreduce(&many_in[k], &many_out[k], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &many[k]);
  }
  CHECK(MPI_Waitall(kMany, many, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  ok = 1;
  for (int k = 0; k < kMany; ++k) ok &= many_out[k] == k * n;
  CHECK(ok);

  /* Progressed by MPI_Test alone; then beside a blocking collective. */
  int big = 1 << 16;
  int* vec_in = malloc(sizeof(int) * (size_t)big);
  int* vec_out = malloc(sizeof(int) * (size_t)big);
  for (int i = 0; i < big; ++i) vec_in[i] = i + rank;
  MPI_Request red;
  MPI_Iallreduce(vec_in, vec_out, big, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &red);
  CHECK(test_until_done(&red) >= 1);
  ok = 1;
  for (int i = 0; i < big; ++i) ok &= vec_out[i] == n * i + n * (n - 1) / 2;
  CHECK(ok);
  int blocking_val = rank == n - 1 ? 99 : 0, nb_val = rank == 0 ? 11 : 0;
  MPI_Request nb;
  MPI_Ibcast(&nb_val, 1, MPI_INT, 0, MPI_COMM_WORLD, &nb);
  MPI_Bcast(&blocking_val, 1, MPI_INT, n - 1, MPI_COMM_WORLD);
  MPI_Wait(&nb, MPI_STATUS_IGNORE);
  CHECK(blocking_val == 99 && nb_val == 11);

  /* Rooted ones from every root. */
  for (int root = 0; root < n; ++root) {
    int mine = 10 * rank + root, red_out = -1;
    int* all = malloc(sizeof(int) * (size_t)n);
    int* scat = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; ++i) all[i] = -1, scat[i] = 1000 * root + i;
    int got = -1;
    MPI_Request q[3];
    MPI_Ireduce(&mine, &red_out, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &q[0]);
    MPI_Igather(&mine, 1, MPI_INT, all, 1, MPI_INT, root, MPI_COMM_WORLD, &q[1]);
    MPI_Iscatter(scat, 1, MPI_INT, &got, 1, MPI_INT, root, MPI_COMM_WORLD, &q[2]);
    CHECK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(got == 1000 * root + rank);
    if (rank == root) {
      CHECK(red_out == 10 * n * (n - 1) / 2 + n * root);
      ok = 1;
      for (int i = 0; i < n; ++i) ok &= all[i] == 10 * i + root;
      CHECK(ok);
    }
    free(all);
    free(scat);
  }

  /* The v-forms: rank i's block is i + 1 ints. */
  {
    int* counts = malloc(sizeof(int) * (size_t)n);
    int* displs = malloc(sizeof(int) * (size_t)n);
    int total = 0;
    for (int i = 0; i < n; ++i) counts[i] = i + 1, displs[i] = total, total += i + 1;
    int* mine = malloc(sizeof(int) * (size_t)(rank + 1));
    for (int j = 0; j <= rank; ++j) mine[j] = 100 * rank + j;
    int* all = malloc(sizeof(int) * (size_t)total);
    int* gathered_v = malloc(sizeof(int) * (size_t)total);
    int* back = malloc(sizeof(int) * (size_t)(rank + 1));
    for (int i = 0; i < total; ++i) all[i] = -1, gathered_v[i] = -1;
    MPI_Request q[3];
    MPI_Iallgatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &q[0]);
    MPI_Igatherv(mine, rank + 1, MPI_INT, gathered_v, counts, displs, MPI_INT, n - 1,
                 MPI_COMM_WORLD, &q[1]);
    CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    /* Scatter back what rank n-1 gathered. */
    MPI_Iscatterv(gathered_v, counts, displs, MPI_INT, back, rank + 1, MPI_INT, n - 1,
                  MPI_COMM_WORLD, &q[2]);
    CHECK(MPI_Wait(&q[2], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    ok = 1;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) ok &= all[displs[i] + j] == 100 * i + j;
    CHECK(ok);
    ok = 1;
    for (int j = 0; j <= rank; ++j) ok &= back[j] == 100 * rank + j;
    CHECK(ok);

    /* Alltoallv: rank r sends r + 1 copies of 1000r + d to each d. */
    int* sc = malloc(sizeof(int) * (size_t)n);
    int* sd = malloc(sizeof(int) * (size_t)n);
    int* rc = malloc(sizeof(int) * (size_t)n);
    int* rd = malloc(sizeof(int) * (size_t)n);
    int* sbuf = malloc(sizeof(int) * (size_t)(n * (rank + 1)));
    int* rbuf = malloc(sizeof(int) * (size_t)total);
    for (int d = 0; d < n; ++d) {
      sc[d] = rank + 1, sd[d] = d * (rank + 1), rc[d] = d + 1, rd[d] = displs[d];
      for (int j = 0; j <= rank; ++j) sbuf[d * (rank + 1) + j] = 1000 * rank + d;
    }
    MPI_Request q2;
    MPI_Ialltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD, &q2);
    CHECK(MPI_Wait(&q2, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    ok = 1;
    for (int s = 0; s < n; ++s)
      for (int j = 0; j <= s; ++j) ok &= rbuf[displs[s] + j] == 1000 * s + rank;
    CHECK(ok);

    /* Alltoallw with byte displacements: one int to and from each rank. */
    int* wtypes_counts = malloc(sizeof(int) * (size_t)n);
    int* wdispl = malloc(sizeof(int) * (size_t)n);
    MPI_Datatype* types = malloc(sizeof(MPI_Datatype) * (size_t)n);
    for (int d = 0; d < n; ++d) {
      wtypes_counts[d] = 1, wdispl[d] = d * (int)sizeof(int), types[d] = MPI_INT;
      a2a_out[d] = 50 * rank + d, a2a_in[d] = -1;
    }
    MPI_Ialltoallw(a2a_out, wtypes_counts, wdispl, types, a2a_in, wtypes_counts, wdispl, types,
                   MPI_COMM_WORLD, &q2);
    CHECK(MPI_Wait(&q2, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    ok = 1;
    for (int s = 0; s < n; ++s) ok &= a2a_in[s] == 50 * s + rank;
    CHECK(ok);

    /* Reduce_scatter: each rank's counts[i] ints, all ones summed. */
    int* ones = malloc(sizeof(int) * (size_t)total);
    int* part = malloc(sizeof(int) * (size_t)(rank + 1));
    for (int i = 0; i < total; ++i) ones[i] = i;
    MPI_Ireduce_scatter(ones, part, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q2);
    CHECK(MPI_Wait(&q2, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    ok = 1;
    for (int j = 0; j <= rank; ++j) ok &= part[j] == n * (displs[rank] + j);
    CHECK(ok);
    int block_in[2 * 64], block_out[2] = {-1, -1};
    for (int i = 0; i < 2 * n; ++i) block_in[i] = i + rank;
    MPI_Ireduce_scatter_block(block_in, block_out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q2);
    CHECK(MPI_Wait(&q2, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(block_out[0] == n * 2 * rank + n * (n - 1) / 2 &&
          block_out[1] == n * (2 * rank + 1) + n * (n - 1) / 2);
    free(counts), free(displs), free(mine), free(all), free(gathered_v), free(back);
    free(sc), free(sd), free(rc), free(rd), free(sbuf), free(rbuf);
    free(wtypes_counts), free(wdispl), free(types), free(ones), free(part);
  }

  /* Prefix reductions with a non-commutative user operation, and an
   * Iallreduce with it: the rank order must hold. */
  {
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    int m[4], incl[4] = {0}, excl[4] = {-7, -7, -7, -7}, all[4] = {0}, want[4];
    rank_matrix(rank, m);
    MPI_Request q[3];
    MPI_Iscan(m, incl, 4, MPI_INT, op, MPI_COMM_WORLD, &q[0]);
    MPI_Iexscan(m, excl, 4, MPI_INT, op, MPI_COMM_WORLD, &q[1]);
    MPI_Iallreduce(m, all, 4, MPI_INT, op, MPI_COMM_WORLD, &q[2]);
    CHECK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    product(0, rank, want);
    CHECK(memcmp(incl, want, sizeof want) == 0);
    if (rank > 0) {
      product(0, rank - 1, want);
      CHECK(memcmp(excl, want, sizeof want) == 0);
    }
    product(0, n - 1, want);
    CHECK(memcmp(all, want, sizeof want) == 0);
    /* In place. */
    int inplace[4];
    rank_matrix(rank, inplace);
    MPI_Iallreduce(MPI_IN_PLACE, inplace, 4, MPI_INT, op, MPI_COMM_WORLD, &q[0]);
    CHECK(MPI_Wait(&q[0], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(memcmp(inplace, want, sizeof want) == 0);
    /* The operation freed while a reduction with it is under way: that
     * one still uses it (MPI-3.1 §5.9.5), a new call is refused. */
    rank_matrix(rank, m);
    MPI_Iallreduce(m, all, 4, MPI_INT, op, MPI_COMM_WORLD, &q[0]);
    MPI_Op freed = op;
    CHECK(MPI_Op_free(&op) == MPI_SUCCESS && op == MPI_OP_NULL);
    CHECK(MPI_Wait(&q[0], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(memcmp(all, want, sizeof want) == 0);
    CHECK(tw_class(MPI_Iallreduce(m, all, 4, MPI_INT, freed, MPI_COMM_WORLD, &q[0])) == MPI_ERR_OP);
    CHECK(tw_class(MPI_Op_free(&freed)) == MPI_ERR_OP);
  }

  /* A neighbourhood exchange on a periodic ring. */
  {
    MPI_Comm ring;
    int dims[1] = {n}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int out[2] = {10 * rank, 10 * rank + 1}, in[2] = {-1, -1};
    MPI_Request q;
    CHECK(MPI_Ineighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring, &q) == MPI_SUCCESS);
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    const int below = (rank + n - 1) % n, above = (rank + 1) % n;
    /* Block 0 comes from below (its upward block), block 1 from above. */
    CHECK(in[0] == 10 * below + 1 && in[1] == 10 * above);
    int ga[2] = {-1, -1};
    CHECK(MPI_Ineighbor_allgather(&rank, 1, MPI_INT, ga, 1, MPI_INT, ring, &q) == MPI_SUCCESS);
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(ga[0] == below && ga[1] == above);
    /* Persistent (MPI-4), restarted with new values. */
    int pv = -1;
    CHECK(MPI_Neighbor_allgather_init(&pv, 1, MPI_INT, ga, 1, MPI_INT, ring, MPI_INFO_NULL, &q) ==
          MPI_SUCCESS);
    for (int round = 0; round < 3; ++round) {
      pv = 100 * round + rank;
      CHECK(MPI_Start(&q) == MPI_SUCCESS);
      CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      CHECK(ga[0] == 100 * round + below && ga[1] == 100 * round + above);
    }
    CHECK(MPI_Request_free(&q) == MPI_SUCCESS);
    MPI_Comm_free(&ring);
  }

  /* On a duplicate, the same collectives do not meet the world's. */
  {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int a = rank, b = rank, sa = -1, sb = -1;
    MPI_Request q[2];
    MPI_Iallreduce(&a, &sa, 1, MPI_INT, MPI_SUM, dup, &q[0]);
    MPI_Iallreduce(&b, &sb, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &q[1]);
    CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(sa == n * (n - 1) / 2 && sb == n - 1);
    /* Freed while a collective on it is under way: it completes normally
     * (MPI-3.1 §6.4.3). */
    sa = -1;
    MPI_Iallreduce(&a, &sa, 1, MPI_INT, MPI_SUM, dup, &q[0]);
    CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS && dup == MPI_COMM_NULL);
    CHECK(MPI_Wait(&q[0], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(sa == n * (n - 1) / 2);
  }

  /* Errors: a null request pointer, a bad root, a cancel (erroneous for a
   * collective: refused, and the operation still completes). */
  {
    int v = 0;
    CHECK(tw_class(MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, NULL)) == MPI_ERR_ARG);
    MPI_Request q = MPI_REQUEST_NULL;
    CHECK(tw_class(MPI_Ibcast(&v, 1, MPI_INT, n, MPI_COMM_WORLD, &q)) == MPI_ERR_RANK);
    CHECK(q == MPI_REQUEST_NULL);
    CHECK(tw_class(MPI_Ibarrier(MPI_COMM_NULL, &q)) == MPI_ERR_COMM);
    MPI_Ibarrier(MPI_COMM_WORLD, &q);
    CHECK(tw_class(MPI_Cancel(&q)) == MPI_ERR_REQUEST);
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  }

  /* Persistent collectives (MPI-4): inactive until started, restarted
   * with new inputs, started together, and kept until freed. */
  {
    int in = 0, out = -1, root_val = -1;
    MPI_Request p[3];
    CHECK(MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &p[0]) == MPI_SUCCESS);
    CHECK(MPI_Bcast_init(&root_val, 1, MPI_INT, n - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &p[1]) ==
          MPI_SUCCESS);
    CHECK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &p[2]) == MPI_SUCCESS);
    /* Not started yet: a test finds it done, with an empty status. */
    int flag = 0;
    MPI_Status st;
    CHECK(MPI_Test(&p[0], &flag, &st) == MPI_SUCCESS && flag == 1 && p[0] != MPI_REQUEST_NULL);
    CHECK(out == -1);
    for (int round = 0; round < 5; ++round) {
      in = rank * (round + 1);
      if (rank == n - 1) root_val = 300 + round;
      CHECK(MPI_Startall(3, p) == MPI_SUCCESS);
      /* An active one cannot be started again. */
      if (round == 0) CHECK(tw_class(MPI_Start(&p[0])) == MPI_ERR_REQUEST);
      CHECK(MPI_Waitall(3, p, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      CHECK(p[0] != MPI_REQUEST_NULL && p[1] != MPI_REQUEST_NULL && p[2] != MPI_REQUEST_NULL);
      CHECK(out == (round + 1) * n * (n - 1) / 2);
      CHECK(root_val == 300 + round);
    }
    /* The rooted and vector forms, once each round from a moving root. */
    int* all = malloc(sizeof(int) * (size_t)n);
    int* counts = malloc(sizeof(int) * (size_t)n);
    int* displs = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; ++i) counts[i] = 1, displs[i] = n - 1 - i;
    MPI_Request g[2];
    int mine = -1;
    CHECK(MPI_Gatherv_init(&mine, 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &g[0]) == MPI_SUCCESS);
    CHECK(MPI_Alltoall_init(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &g[1]) == MPI_SUCCESS);
    for (int round = 0; round < 3; ++round) {
      mine = 10 * rank + round;
      for (int d = 0; d < n; ++d) a2a_out[d] = 1000 * round + 10 * rank + d, a2a_in[d] = -1;
      CHECK(MPI_Startall(2, g) == MPI_SUCCESS);
      CHECK(MPI_Waitall(2, g, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      ok = 1;
      for (int s = 0; s < n; ++s) ok &= a2a_in[s] == 1000 * round + 10 * s + rank;
      if (rank == 0)
        for (int i = 0; i < n; ++i) ok &= all[n - 1 - i] == 10 * i + round;
      CHECK(ok);
    }
    for (int i = 0; i < 3; ++i) CHECK(MPI_Request_free(&p[i]) == MPI_SUCCESS);
    for (int i = 0; i < 2; ++i) CHECK(MPI_Request_free(&g[i]) == MPI_SUCCESS);
    CHECK(p[0] == MPI_REQUEST_NULL && g[1] == MPI_REQUEST_NULL);
    /* A bad argument is the init call's error, as the blocking call's. */
    MPI_Request bad = MPI_REQUEST_NULL;
    CHECK(tw_class(MPI_Bcast_init(&in, 1, MPI_INT, n, MPI_COMM_WORLD, MPI_INFO_NULL, &bad)) ==
          MPI_ERR_RANK);
    CHECK(bad == MPI_REQUEST_NULL);
    free(all), free(counts), free(displs);
  }

  {
    /* A persistent collective lives across any number of nonblocking ones
     * on its communicator: its messages must never meet theirs. They once
     * shared one count of tag blocks, so the 16,384th nonblocking call
     * after MPI_Bcast_init took the bcast's block; with the binomial tree
     * (TAGWIRE_COLLECTIVES=tree) a relaying rank's Ibarrier signal then
     * reached its child before the bcast it had yet to pass on, the child's
     * bcast took it, and both hung. The root starts late so that the relay
     * waits. Completion is polled against a deadline: a hang fails here. */
    MPI_Comm dup;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS);
    int data[4] = {-1, -1, -1, -1};
    MPI_Request q[2];
    CHECK(MPI_Bcast_init(data, 4, MPI_INT, 0, dup, MPI_INFO_NULL, &q[0]) == MPI_SUCCESS);
    int fillers_ok = 1;
    for (int i = 0; i < (1 << 14) - 1; ++i) {
      fillers_ok &= MPI_Ibarrier(dup, &q[1]) == MPI_SUCCESS;
      fillers_ok &= MPI_Wait(&q[1], MPI_STATUS_IGNORE) == MPI_SUCCESS;
    }
    CHECK(fillers_ok);
    if (rank == 0) {
      usleep(50 * 1000);
      for (int i = 0; i < 4; ++i) data[i] = 500 + i;
    }
    CHECK(MPI_Start(&q[0]) == MPI_SUCCESS);
    CHECK(MPI_Ibarrier(dup, &q[1]) == MPI_SUCCESS);
    int done = 0;
    const double deadline = MPI_Wtime() + 20.0;
    while (!done && MPI_Wtime() < deadline) MPI_Testall(2, q, &done, MPI_STATUSES_IGNORE);
    CHECK(done);
    if (!done) {
      fprintf(stderr, "[rank %d] the persistent bcast and the Ibarrier beside it hung\n", rank);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ok = 1;
    for (int i = 0; i < 4; ++i) ok &= data[i] == 500 + i;
    CHECK(ok);
    CHECK(MPI_Request_free(&q[0]) == MPI_SUCCESS);
    CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS);
  }

  free(a2a_out);
  free(a2a_in);
  free(gathered);
  free(vec_in);
  free(vec_out);
  return tw_finish("nonblocking collectives") != 0;
}
