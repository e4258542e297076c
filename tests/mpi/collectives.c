/* Collectives, groups and attributes through mpi.h, as a user calls them.
 * Last line from rank 0: "mpi collectives: N passed, N failed". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = size;

  /* Bcast from every root, a small and a rendezvous-sized buffer. */
  for (int root = 0; root < n; ++root) {
    int small[3] = {-1, -1, -1};
    if (rank == root) small[0] = small[1] = small[2] = 100 + root;
    CHECK(MPI_Bcast(small, 3, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(small[0] == 100 + root && small[2] == 100 + root);
  }
  double* big = malloc(sizeof(double) * 50000);
  for (int i = 0; i < 50000; ++i) big[i] = rank == 1 ? i * 0.5 : -1;
  MPI_Bcast(big, 50000, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  CHECK(big[0] == 0 && big[49999] == 49999 * 0.5);
  free(big);

  /* Reduce and Allreduce: sums, extremes, logical and bitwise ops. */
  long mine = rank + 1, total = 0;
  CHECK(MPI_Reduce(&mine, &total, 1, MPI_LONG, MPI_SUM, n - 1, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (rank == n - 1) CHECK(total == (long)n * (n + 1) / 2);
  double d = rank * 1.5, dmax = 0, dmin = 0;
  MPI_Allreduce(&d, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&d, &dmin, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  CHECK(dmax == (n - 1) * 1.5 && dmin == 0);
  unsigned bits = 1u << rank, all_bits = 0;
  MPI_Allreduce(&bits, &all_bits, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD);
  CHECK(all_bits == (1u << n) - 1);
  int truth = rank != 0, any = 0, every = 1;
  MPI_Allreduce(&truth, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  MPI_Allreduce(&truth, &every, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  CHECK(any == 1 && every == 0);
  int vec[4] = {rank, rank, rank, rank};
  CHECK(MPI_Allreduce(MPI_IN_PLACE, vec, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(vec[0] == n * (n - 1) / 2 && vec[3] == n * (n - 1) / 2);
  float prod = 2.0f, prod_all = 0;
  MPI_Allreduce(&prod, &prod_all, 1, MPI_FLOAT, MPI_PROD, MPI_COMM_WORLD);
  CHECK(prod_all == (float)(1 << n));

  /* Large allreduces (2.4 MB of doubles: rendezvous-sized exchanges),
   * from a send buffer and in place, twice each (the second call reuses
   * the first's scratch), and a minimum. */
  {
    const int big_n = 300000;
    double* in = malloc(sizeof(double) * big_n);
    double* out = malloc(sizeof(double) * big_n);
    int big_ok = 1;
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < big_n; ++i) in[i] = rank + i * 0.25 + round;
      memset(out, 0, sizeof(double) * big_n);
      big_ok &= MPI_Allreduce(in, out, big_n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS;
      big_ok &= MPI_Allreduce(MPI_IN_PLACE, in, big_n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) ==
                MPI_SUCCESS;
      for (int i = 0; i < big_n; ++i) {
        big_ok &= out[i] == (double)n * (n - 1) / 2 + n * (i * 0.25 + round);
        big_ok &= in[i] == (n - 1) + i * 0.25 + round;
      }
    }
    for (int i = 0; i < big_n; ++i) in[i] = rank * 3 + i % 7;
    big_ok &= MPI_Allreduce(in, out, big_n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS;
    for (int i = 0; i < big_n; ++i) big_ok &= out[i] == i % 7;
    CHECK(big_ok);
    free(in);
    free(out);
  }

  /* Large allreduces a group of 4 or more splits into blocks (halving,
   * then doubling back): an element count no rank count divides, ints
   * and a vector type of doubles (not the buffer's own bytes), and a sum
   * of doubles whose rounding depends on the order, which every rank must
   * get bit for bit alike. */
  {
    const int odd_n = 100003;
    int* iv = malloc(sizeof(int) * odd_n);
    int* isum = malloc(sizeof(int) * odd_n);
    for (int i = 0; i < odd_n; ++i) iv[i] = (rank + 1) * (i % 1000) - rank;
    CHECK(MPI_Allreduce(iv, isum, odd_n, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
    int split_ok = 1;
    for (int i = 0; i < odd_n; ++i) {
      split_ok &= isum[i] == n * (n + 1) / 2 * (i % 1000) - n * (n - 1) / 2;
    }
    CHECK(split_ok);
    for (int i = 0; i < odd_n; ++i) iv[i] = (i * 7 + rank * 13) % 1001;
    CHECK(MPI_Allreduce(MPI_IN_PLACE, iv, odd_n, MPI_INT, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS);
    for (int i = 0; i < odd_n; ++i) {
      int want = 0;
      for (int r = 0; r < n; ++r)
        want = (i * 7 + r * 13) % 1001 > want ? (i * 7 + r * 13) % 1001 : want;
      split_ok &= iv[i] == want;
    }
    CHECK(split_ok);
    free(iv);
    free(isum);

    /* Every other double of 2 * 40001: the operand is packed. */
    MPI_Datatype every_other;
    MPI_Type_vector(40001, 1, 2, MPI_DOUBLE, &every_other);
    MPI_Type_commit(&every_other);
    double* dv = malloc(sizeof(double) * 80002);
    double* dsum = malloc(sizeof(double) * 80002);
    for (int i = 0; i < 80002; ++i) {
      dv[i] = i % 2 == 0 ? 1.0 / (rank + 3) + i * 1e-7 : -1.0;
      dsum[i] = -2.0;
    }
    CHECK(MPI_Allreduce(dv, dsum, 1, every_other, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
    double sum_all = 0;
    for (int i = 0; i < 80002; ++i) {
      if (i % 2 == 1) {
        split_ok &= dsum[i] == -2.0; /* the gaps are left alone */
        continue;
      }
      double want = 0;
      for (int r = 0; r < n; ++r) want += 1.0 / (r + 3) + i * 1e-7;
      split_ok &= dsum[i] - want < 1e-9 && want - dsum[i] < 1e-9;
      sum_all += dsum[i] * (i + 1);
    }
    CHECK(split_ok);
    /* The same bits everywhere: the smallest and largest checksum agree. */
    double lowest = 0, highest = 0;
    MPI_Allreduce(&sum_all, &lowest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&sum_all, &highest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lowest == highest);
    MPI_Type_free(&every_other);
    free(dv);
    free(dsum);
  }

  /* Gather, Allgather (also in place), Alltoall (also in place). */
  int* all = malloc(sizeof(int) * 2 * (size_t)n);
  int pair[2] = {rank, rank * rank};
  memset(all, 0xff, sizeof(int) * 2 * (size_t)n);
  CHECK(MPI_Gather(pair, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (rank == 0) {
    int ok = 1;
    for (int r = 0; r < n; ++r) ok &= all[2 * r] == r && all[2 * r + 1] == r * r;
    CHECK(ok);
  }
  memset(all, 0, sizeof(int) * 2 * (size_t)n);
  MPI_Allgather(pair, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
  int ok = 1;
  for (int r = 0; r < n; ++r) ok &= all[2 * r] == r && all[2 * r + 1] == r * r;
  CHECK(ok);
  for (int r = 0; r < 2 * n; ++r) all[r] = r / 2 == rank ? pair[r % 2] : -7;
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 2, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int r = 0; r < n; ++r) ok &= all[2 * r] == r && all[2 * r + 1] == r * r;
  CHECK(ok);
  int* send = malloc(sizeof(int) * (size_t)n);
  int* recv = malloc(sizeof(int) * (size_t)n);
  for (int r = 0; r < n; ++r) send[r] = rank * 100 + r;
  MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int r = 0; r < n; ++r) ok &= recv[r] == r * 100 + rank;
  CHECK(ok);
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, send, 1, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int r = 0; r < n; ++r) ok &= send[r] == r * 100 + rank;
  CHECK(ok);
  free(send);
  free(recv);
  free(all);

  /* Alltoall of blocks from 0 to past 8 KiB (small contiguous ones go
   * without a schedule, the rest through one), 200 rounds so that
   * successive calls' messages queue up behind each other; rank 0 sends
   * through a strided datatype every third round (its schedule's messages
   * meet the direct path's at the other ranks). */
  int* a2a_out = malloc(sizeof(int) * 8192 * (size_t)n);
  int* a2a_in = malloc(sizeof(int) * 4096 * (size_t)n);
  int a2a_ok = 1;
  for (int round = 0; round < 200; ++round) {
    const int count = round % 5 == 4 ? 4096 : round % 7; /* 16 KiB: past the direct path */
    const int strided = rank == 0 && round % 3 == 0 && count > 0;
    for (int p = 0; p < n; ++p) {
      for (int i = 0; i < count; ++i) {
        const int v = round * 1000000 + rank * 10000 + p * 100 + i % 100;
        if (strided) {
          a2a_out[p * 8192 + 2 * i] = v;
          a2a_out[p * 8192 + 2 * i + 1] = -1;
        } else {
          a2a_out[p * count + i] = v;
        }
      }
    }
    memset(a2a_in, 0xff, sizeof(int) * 4096 * (size_t)n);
    int rc;
    if (strided) {
      /* One block: count ints, every other one, blocks 8192 ints apart. */
      MPI_Datatype column, block;
      MPI_Type_vector(count, 1, 2, MPI_INT, &column);
      MPI_Type_create_resized(column, 0, (MPI_Aint)sizeof(int) * 8192, &block);
      MPI_Type_commit(&block);
      rc = MPI_Alltoall(a2a_out, 1, block, a2a_in, count, MPI_INT, MPI_COMM_WORLD);
      MPI_Type_free(&block);
      MPI_Type_free(&column);
    } else {
      rc = MPI_Alltoall(a2a_out, count, MPI_INT, a2a_in, count, MPI_INT, MPI_COMM_WORLD);
    }
    a2a_ok &= rc == MPI_SUCCESS;
    for (int p = 0; p < n; ++p) {
      for (int i = 0; i < count; ++i) {
        a2a_ok &= a2a_in[p * count + i] == round * 1000000 + p * 10000 + rank * 100 + i % 100;
      }
    }
    a2a_ok &= count == 4096 || a2a_in[n * count] == -1; /* nothing past the blocks */
  }
  CHECK(a2a_ok);
  free(a2a_out);
  free(a2a_in);

  /* Collectives never match user point-to-point on the same communicator. */
  int user = 555, bc = rank == 0 ? 777 : 0;
  MPI_Request r;
  MPI_Irecv(&user, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
  MPI_Bcast(&bc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(bc == 777 && user == 555);
  MPI_Cancel(&r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  /* Small allreduces on communicators of two (a split of the world into
   * pairs; an odd rank out alone): the exchange without requests at one
   * rank while its partner, with a user receive posted, takes the
   * request path; in place and not, a receive's worth of doubles. */
  MPI_Comm pair_comm;
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair_comm) == MPI_SUCCESS);
  int prank = -1, psize = 0;
  MPI_Comm_rank(pair_comm, &prank);
  MPI_Comm_size(pair_comm, &psize);
  int held = -1;
  MPI_Request posted = MPI_REQUEST_NULL;
  if (prank == 1) MPI_Irecv(&held, 1, MPI_INT, MPI_ANY_SOURCE, 99, pair_comm, &posted);
  int pair_ok = 1;
  for (int round = 0; round < 200; ++round) {
    double v[16], w[16];
    for (int i = 0; i < 16; ++i) v[i] = rank * 1000 + round + i;
    if (MPI_Allreduce(v, w, round % 16 + 1, MPI_DOUBLE, MPI_SUM, pair_comm) != MPI_SUCCESS)
      pair_ok = 0;
    long lane = round;
    if (MPI_Allreduce(MPI_IN_PLACE, &lane, 1, MPI_LONG, MPI_MAX, pair_comm) != MPI_SUCCESS)
      pair_ok = 0;
    for (int i = 0; i <= round % 16; ++i) {
      double want = 0;
      for (int p = 0; p < psize; ++p) want += ((rank / 2) * 2 + p) * 1000 + round + i;
      pair_ok &= w[i] == want;
    }
    pair_ok &= lane == round;
  }
  CHECK(pair_ok);
  if (prank == 1) {
    CHECK(held == -1); /* no collective message ever matched it */
    MPI_Cancel(&posted);
    MPI_Wait(&posted, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&pair_comm);

  /* Groups and attributes. */
  MPI_Group world, firsts;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int gsize = 0, grank = -1;
  MPI_Group_size(world, &gsize);
  MPI_Group_rank(world, &grank);
  CHECK(gsize == n && grank == rank);
  int pick[2] = {n - 1, 0}, back[2] = {-5, -5}, idx[2] = {0, 1};
  MPI_Group_incl(world, 2, pick, &firsts);
  MPI_Group_translate_ranks(firsts, 2, idx, world, back);
  CHECK(back[0] == n - 1 && back[1] == 0);
  MPI_Group_rank(firsts, &grank);
  CHECK(grank == (rank == n - 1 ? 0 : rank == 0 ? 1 : MPI_UNDEFINED));
  MPI_Group_free(&firsts);
  MPI_Group_free(&world);
  CHECK(world == MPI_GROUP_NULL);
  int* tag_ub = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  CHECK(flag == 1 && tag_ub != NULL && *tag_ub >= 32767);

  /* Errors under MPI_ERRORS_RETURN. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  double x = 1, y = 0;
  CHECK(MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD) == MPI_ERR_OP);
  CHECK(tw_class(MPI_Allreduce(&x, NULL, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)) ==
        MPI_ERR_BUFFER);
  CHECK(MPI_Bcast(&x, 1, MPI_DOUBLE, n, MPI_COMM_WORLD) == MPI_ERR_RANK);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

  int counts[2] = {passed, failed}, sums[2] = {0, 0};
  MPI_Reduce(counts, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi collectives: %d passed, %d failed\n", sums[0], sums[1]);
  MPI_Finalize();
  return failed == 0 ? 0 : 1;
}
