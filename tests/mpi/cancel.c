/* MPI_Cancel and MPI_Test_cancelled as MPI test suites use them (the shape
 * of MPICH's scancel / rcancel tests): every send mode and size cancelled
 * while the receiver has not posted, the next message with the same
 * envelope received instead, persistent requests restarted after a cancel,
 * buffered space given back, and Test_cancelled read through Wait, Waitany,
 * Waitsome, Testall and Request_get_status. Ranks pair up (0,1), (2,3). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int partner, sender, receiver;

static void fill(char* p, int n, int seed) {
  for (int i = 0; i < n; ++i) p[i] = (char)(seed * 31 + i);
}
static int same(const char* p, int n, int seed) {
  for (int i = 0; i < n; ++i)
    if (p[i] != (char)(seed * 31 + i)) return 0;
  return 1;
}

/* The receiver takes exactly one message with `tag` and checks it carries
 * `seed`: a cancelled message must never show up. */
static void receive_exactly_one(int n, int tag, int seed) {
  char* in = malloc((size_t)n + 1);
  MPI_Status st;
  int flag = 1;
  MPI_Recv(in, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &st);
  int count = -1;
  MPI_Get_count(&st, MPI_CHAR, &count);
  CHECK(count == n);
  CHECK(same(in, n, seed));
  MPI_Iprobe(partner, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  CHECK(flag == 0);
  free(in);
}

enum { kIsend, kIssend, kIbsend, kSendInit, kSsendInit, kBsendInit, kModes };

static void cancel_each_mode(int n) {
  for (int mode = 0; mode < kModes; ++mode) {
    int tag = 100 + mode;
    char* doomed = malloc((size_t)n + 1);
    char* kept = malloc((size_t)n + 1);
    fill(doomed, n, 7);
    fill(kept, n, 8);
    int bsize = n + MPI_BSEND_OVERHEAD;
    char* attached = malloc((size_t)bsize);
    if (sender) {
      MPI_Request req;
      MPI_Status st;
      int cancelled = 0;
      if (mode == kIbsend || mode == kBsendInit) MPI_Buffer_attach(attached, bsize);
      switch (mode) {
        case kIsend:
          MPI_Isend(doomed, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &req);
          break;
        case kIssend:
          MPI_Issend(doomed, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &req);
          break;
        case kIbsend:
          MPI_Ibsend(doomed, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &req);
          break;
        case kSendInit:
          MPI_Send_init(doomed, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &req);
          break;
        case kSsendInit:
          MPI_Ssend_init(doomed, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &req);
          break;
        default:
          MPI_Bsend_init(doomed, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &req);
          break;
      }
      if (mode >= kSendInit) MPI_Start(&req);
      MPI_Cancel(&req);
      MPI_Wait(&req, &st);
      MPI_Test_cancelled(&st, &cancelled);
      CHECK(cancelled);
      if (mode >= kSendInit) {
        /* Inactive again: start it for real with the kept data. */
        CHECK(req != MPI_REQUEST_NULL);
        memcpy(doomed, kept, (size_t)n);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Start(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(!cancelled);
        MPI_Request_free(&req);
      } else {
        CHECK(req == MPI_REQUEST_NULL);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(kept, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD);
      }
      if (mode == kIbsend || mode == kBsendInit) {
        void* back;
        int back_size;
        MPI_Buffer_detach(&back, &back_size);
        CHECK(back == attached && back_size == bsize);
      }
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
      if (receiver) receive_exactly_one(n, tag, 8);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(doomed);
    free(kept);
    free(attached);
  }
}

/* Test_cancelled through the multiple-completion calls. */
static void cancelled_through_every_completion_call(void) {
  char a[16] = {0}, b[16] = {0}, c[16] = {0};
  MPI_Request reqs[3];
  MPI_Status sts[3];
  int flag = 0;
  if (sender) {
    MPI_Isend(a, 16, MPI_CHAR, partner, 200, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(b, 16, MPI_CHAR, partner, 200, MPI_COMM_WORLD, &reqs[1]);
    MPI_Issend(c, 16, MPI_CHAR, partner, 200, MPI_COMM_WORLD, &reqs[2]);
    for (int i = 0; i < 3; ++i) MPI_Cancel(&reqs[i]);
    int index = -1;
    MPI_Waitany(3, reqs, &index, &sts[0]);
    MPI_Test_cancelled(&sts[0], &flag);
    CHECK(index >= 0 && flag);
    int outcount = 0, indices[3];
    MPI_Waitsome(3, reqs, &outcount, indices, sts);
    CHECK(outcount >= 1);
    for (int i = 0; i < outcount; ++i) {
      MPI_Test_cancelled(&sts[i], &flag);
      CHECK(flag);
    }
    int all = 0;
    while (!all) MPI_Testall(3, reqs, &all, sts);
    for (int i = 0; i < 3; ++i) CHECK(reqs[i] == MPI_REQUEST_NULL);
  }
  /* The sends are all decided before anyone posts a wildcard receive (one
   * posted earlier could legitimately take a message, failing its cancel). */
  MPI_Barrier(MPI_COMM_WORLD);
  /* ANY_SOURCE / ANY_TAG receive: cancelled, seen through Request_get_status. */
  MPI_Request r;
  MPI_Irecv(a, 16, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
  MPI_Cancel(&r);
  MPI_Status st;
  int done = 0;
  while (!done) MPI_Request_get_status(r, &done, &st);
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag);
  MPI_Wait(&r, &st);
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag);
  CHECK(r == MPI_REQUEST_NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  /* Nothing of tag 200 arrived. */
  MPI_Iprobe(MPI_ANY_SOURCE, 200, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  CHECK(flag == 0);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A completed (received) send: Cancel is allowed and changes nothing. */
static void cancel_after_receipt(void) {
  char v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, in[8] = {0};
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Status st;
  int flag = 1;
  if (receiver) MPI_Irecv(in, 8, MPI_CHAR, partner, 300, MPI_COMM_WORLD, &req);
  MPI_Barrier(MPI_COMM_WORLD);
  if (sender) MPI_Issend(v, 8, MPI_CHAR, partner, 300, MPI_COMM_WORLD, &req);
  if (receiver) {
    MPI_Wait(&req, &st);
    CHECK(in[7] == 8);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (sender) {
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void bad_cancel_is_an_error(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Request null = MPI_REQUEST_NULL;
  CHECK(tw_class(MPI_Cancel(&null)) == MPI_ERR_REQUEST);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  partner = rank ^ 1;
  sender = partner < size && rank % 2 == 0;
  receiver = partner < size && rank % 2 == 1;
  /* Each side of the eager threshold over shm (8 KiB), verbs (16 KiB) and
   * UCX (32 KiB). */
  int sizes[] = {0, 8, 8192, 8193, 16384, 16385, 32768, 32769, 4 << 20};
  for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) cancel_each_mode(sizes[i]);
  cancelled_through_every_completion_call();
  cancel_after_receipt();
  bad_cancel_is_an_error();
  int total_failed = 0;
  MPI_Allreduce(&failed, &total_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("cancel: %d checks passed on rank 0, %d failed in all\n", passed, total_failed);
  MPI_Finalize();
  return total_failed == 0 ? 0 : 1;
}
