/* MPI point-to-point as a user writes it: mpi.h only, built with
 * tagwire-cc, run with tagwire-run -n N (N >= 2). Every check that fails
 * prints where and makes the rank exit non-zero; the last line is
 * "mpi p2p: N passed, N failed" from rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int right(void) {
  return (rank + 1) % size;
}
static int left(void) {
  return (rank + size - 1) % size;
}

static void test_environment(void) {
  int flag = 0, version = 0, sub = 0, len = 0, provided = -1;
  char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
  MPI_Initialized(&flag);
  CHECK(flag == 1);
  MPI_Get_version(&version, &sub);
  CHECK(version == MPI_VERSION && sub == MPI_SUBVERSION);
  CHECK(MPI_Get_processor_name(name, &len) == MPI_SUCCESS && len > 0 && (int)strlen(name) == len);
  CHECK(MPI_Get_library_version(lib, &len) == MPI_SUCCESS && strstr(lib, "Tagwire") != NULL);
  MPI_Query_thread(&provided);
  CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_FUNNELED);
  double t0 = MPI_Wtime();
  CHECK(MPI_Wtime() >= t0 && MPI_Wtick() > 0);
}

static void test_ring(int count) {
  int* out = malloc(sizeof(int) * (size_t)count);
  int* in = malloc(sizeof(int) * (size_t)count);
  for (int i = 0; i < count; ++i) out[i] = rank * 1000003 + i;
  MPI_Request r;
  MPI_Status st;
  CHECK(MPI_Irecv(in, count, MPI_INT, left(), 7, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  CHECK(MPI_Send(out, count, MPI_INT, right(), 7, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS);
  CHECK(r == MPI_REQUEST_NULL);
  int got = -1;
  MPI_Get_count(&st, MPI_INT, &got);
  CHECK(got == count && st.MPI_SOURCE == left() && st.MPI_TAG == 7);
  int ok = 1;
  for (int i = 0; i < count; ++i) ok &= in[i] == left() * 1000003 + i;
  CHECK(ok);
  free(out);
  free(in);
}

/* MPI_Sendrecv's two paths (an eager send without requests, else two
 * requests) must not differ in what the call returns, receives or sends. */
static void test_sendrecv_paths(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int counts[] = {0, 1, 2, 1024, 20000}; /* 80 KB: past every eager threshold */
  int* out = malloc(sizeof(int) * 20000);
  int* in = malloc(sizeof(int) * 20000);
  MPI_Status st;
  for (int round = 0; round < 40; ++round) {
    const int count = counts[round % 5];
    for (int i = 0; i < count; ++i) out[i] = rank * 7919 + round + i;
    /* Different tags both ways; every other round from MPI_ANY_SOURCE. */
    const int source = round % 2 ? MPI_ANY_SOURCE : left();
    int rc = MPI_Sendrecv(out, count, MPI_INT, right(), 100 + round, in, 20000, MPI_INT, source,
                          100 + round, MPI_COMM_WORLD, &st);
    int got = -1, ok = 1;
    MPI_Get_count(&st, MPI_INT, &got);
    for (int i = 0; i < count; ++i) ok &= in[i] == left() * 7919 + round + i;
    CHECK(rc == MPI_SUCCESS && got == count && st.MPI_SOURCE == left() &&
          st.MPI_TAG == 100 + round && ok);
  }
  /* A message already waiting when the call starts (the unexpected queue). */
  MPI_Send(out, 3, MPI_INT, right(), 150, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  int two[2] = {rank, -rank}, back[2] = {0, 0};
  CHECK(MPI_Sendrecv(two, 0, MPI_INT, right(), 151, in, 3, MPI_INT, left(), 150, MPI_COMM_WORLD,
                     &st) == MPI_SUCCESS &&
        st.MPI_TAG == 150);
  CHECK(MPI_Recv(back, 2, MPI_INT, left(), 151, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
  /* To and from itself. */
  CHECK(MPI_Sendrecv(two, 2, MPI_INT, rank, 152, back, 2, MPI_INT, rank, 152, MPI_COMM_WORLD,
                     &st) == MPI_SUCCESS &&
        back[0] == rank && back[1] == -rank && st.MPI_SOURCE == rank);
  /* MPI_PROC_NULL either way. */
  back[0] = 77;
  CHECK(MPI_Sendrecv(two, 2, MPI_INT, MPI_PROC_NULL, 153, back, 2, MPI_INT, MPI_PROC_NULL, 153,
                     MPI_COMM_WORLD, &st) == MPI_SUCCESS &&
        st.MPI_SOURCE == MPI_PROC_NULL && back[0] == 77);
  /* Truncation: the error, and the rest of the traffic unharmed. */
  int rc =
      MPI_Sendrecv(out, 8, MPI_INT, right(), 154, in, 4, MPI_INT, left(), 154, MPI_COMM_WORLD, &st);
  CHECK(tw_class(rc) == MPI_ERR_TRUNCATE);
  /* A refused receive argument sends nothing: the right neighbour finds no
   * message with the send's tag after a barrier. */
  rc = MPI_Sendrecv(two, 2, MPI_INT, right(), 155, back, 2, MPI_INT, left(), -5, MPI_COMM_WORLD,
                    &st);
  CHECK(tw_class(rc) == MPI_ERR_TAG);
  rc = MPI_Sendrecv(two, 2, MPI_INT, right(), 155, back, -2, MPI_INT, left(), 155, MPI_COMM_WORLD,
                    &st);
  CHECK(tw_class(rc) == MPI_ERR_COUNT);
  MPI_Barrier(MPI_COMM_WORLD);
  int flag = 1;
  MPI_Iprobe(left(), 155, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  CHECK(flag == 0);
  /* ... and a refused send argument receives nothing. */
  MPI_Send(two, 2, MPI_INT, right(), 156, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  rc = MPI_Sendrecv(two, 2, MPI_INT, right(), -1, back, 2, MPI_INT, left(), 156, MPI_COMM_WORLD,
                    &st);
  CHECK(tw_class(rc) == MPI_ERR_TAG);
  flag = 0;
  MPI_Iprobe(left(), 156, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  CHECK(flag == 1);
  CHECK(MPI_Recv(back, 2, MPI_INT, left(), 156, MPI_COMM_WORLD, &st) == MPI_SUCCESS &&
        back[0] == left());
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  free(out);
  free(in);
}

static void test_sendrecv_and_modes(void) {
  double out = rank + 0.5, in = -1;
  MPI_Status st;
  CHECK(MPI_Sendrecv(&out, 1, MPI_DOUBLE, right(), 1, &in, 1, MPI_DOUBLE, left(), 1, MPI_COMM_WORLD,
                     &st) == MPI_SUCCESS);
  CHECK(in == left() + 0.5);
  int value = rank;
  CHECK(MPI_Sendrecv_replace(&value, 1, MPI_INT, right(), 2, left(), 2, MPI_COMM_WORLD, &st) ==
        MPI_SUCCESS);
  CHECK(value == left());
  /* Synchronous and buffered sends. */
  int buffer_size = 1 << 20;
  void* attached = malloc((size_t)buffer_size);
  CHECK(MPI_Buffer_attach(attached, buffer_size) == MPI_SUCCESS);
  long longs[64], got[64];
  for (int i = 0; i < 64; ++i) longs[i] = rank * 64L + i;
  MPI_Request r;
  MPI_Irecv(got, 64, MPI_LONG, left(), 3, MPI_COMM_WORLD, &r);
  CHECK(MPI_Bsend(longs, 64, MPI_LONG, right(), 3, MPI_COMM_WORLD) == MPI_SUCCESS);
  memset(longs, 0, sizeof(longs)); /* the buffered copy must be what travels */
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK(got[0] == left() * 64L && got[63] == left() * 64L + 63);
  MPI_Irecv(got, 64, MPI_LONG, left(), 4, MPI_COMM_WORLD, &r);
  CHECK(MPI_Ssend(got, 0, MPI_LONG, right(), 4, MPI_COMM_WORLD) == MPI_SUCCESS);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  void* detached = NULL;
  int detached_size = 0;
  CHECK(MPI_Buffer_detach(&detached, &detached_size) == MPI_SUCCESS);
  CHECK(detached == attached && detached_size == buffer_size);
  free(attached);
}

/* MPI-2.2 §3.8, first example: the last rank probes ANY_SOURCE, then
 * receives from the probed source with the right type. */
static void test_spec_probe_example(void) {
  int last = size - 1;
  if (rank == 0) {
    int i = 42;
    MPI_Send(&i, 1, MPI_INT, last, 0, MPI_COMM_WORLD);
  } else if (rank == 1 && last != 1) {
    float x = 2.5f;
    MPI_Send(&x, 1, MPI_FLOAT, last, 0, MPI_COMM_WORLD);
  } else if (rank == last) {
    int senders = last >= 2 ? 2 : 1;
    for (int k = 0; k < senders; ++k) {
      MPI_Status st;
      MPI_Probe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
      if (st.MPI_SOURCE == 0) {
        int i = 0;
        MPI_Recv(&i, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
        CHECK(i == 42);
      } else {
        float x = 0;
        MPI_Recv(&x, 1, MPI_FLOAT, 1, 0, MPI_COMM_WORLD, &st);
        CHECK(x == 2.5f);
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_probe_mprobe(void) {
  char text[100];
  snprintf(text, sizeof(text), "from %d", rank);
  MPI_Request s1, s2;
  MPI_Isend(text, (int)strlen(text) + 1, MPI_CHAR, right(), 9, MPI_COMM_WORLD, &s1);
  MPI_Isend(text, 3, MPI_CHAR, right(), 9, MPI_COMM_WORLD, &s2);
  MPI_Status st;
  MPI_Message m;
  CHECK(MPI_Mprobe(left(), 9, MPI_COMM_WORLD, &m, &st) == MPI_SUCCESS);
  int n = 0;
  MPI_Get_count(&st, MPI_CHAR, &n);
  char in[100] = {0};
  /* A plain receive now gets the second message (3 chars). */
  MPI_Recv(in, 100, MPI_CHAR, left(), 9, MPI_COMM_WORLD, &st);
  int n2 = 0;
  MPI_Get_count(&st, MPI_CHAR, &n2);
  CHECK(n2 == 3);
  CHECK(MPI_Mrecv(in, n, MPI_CHAR, &m, &st) == MPI_SUCCESS);
  CHECK(m == MPI_MESSAGE_NULL);
  char expected[100];
  snprintf(expected, sizeof(expected), "from %d", left());
  CHECK(strcmp(in, expected) == 0);
  MPI_Wait(&s1, MPI_STATUS_IGNORE);
  MPI_Wait(&s2, MPI_STATUS_IGNORE);
  int flag = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &flag, &st);
  CHECK(flag == 0);
}

static void test_persistent(void) {
  int out[16], in[16];
  MPI_Request reqs[2];
  MPI_Recv_init(in, 16, MPI_INT, left(), 11, MPI_COMM_WORLD, &reqs[0]);
  MPI_Send_init(out, 16, MPI_INT, right(), 11, MPI_COMM_WORLD, &reqs[1]);
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 16; ++i) out[i] = round * 100 + rank;
    CHECK(MPI_Startall(2, reqs) == MPI_SUCCESS);
    CHECK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(reqs[0] != MPI_REQUEST_NULL && in[15] == round * 100 + left());
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Request_free(&reqs[0]);
  MPI_Request_free(&reqs[1]);
  CHECK(reqs[0] == MPI_REQUEST_NULL);
}

static void test_completion_family(void) {
  int out[4], in[4];
  MPI_Request recvs[4], sends[4];
  for (int i = 0; i < 4; ++i) {
    out[i] = rank * 10 + i;
    MPI_Irecv(&in[i], 1, MPI_INT, left(), 20 + i, MPI_COMM_WORLD, &recvs[i]);
  }
  for (int i = 3; i >= 0; --i)
    MPI_Isend(&out[i], 1, MPI_INT, right(), 20 + i, MPI_COMM_WORLD, &sends[i]);
  int seen = 0;
  for (int k = 0; k < 4; ++k) {
    int index = -1;
    MPI_Status st;
    CHECK(MPI_Waitany(4, recvs, &index, &st) == MPI_SUCCESS);
    CHECK(index >= 0 && index < 4 && recvs[index] == MPI_REQUEST_NULL && st.MPI_TAG == 20 + index);
    seen |= 1 << index;
  }
  CHECK(seen == 15);
  int index = 0;
  MPI_Waitany(4, recvs, &index, MPI_STATUS_IGNORE);
  CHECK(index == MPI_UNDEFINED);
  int done = 0, outcount = 0, indices[4];
  while (done < 4) {
    MPI_Testsome(4, sends, &outcount, indices, MPI_STATUSES_IGNORE);
    if (outcount == MPI_UNDEFINED) break;
    done += outcount;
  }
  CHECK(done == 4);
  for (int i = 0; i < 4; ++i) CHECK(in[i] == left() * 10 + i);
}

static void test_errors_return(void) {
  int x = 0;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD) == MPI_ERR_RANK);
  CHECK(MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD) == MPI_ERR_TAG);
  CHECK(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_ERR_COUNT);
  CHECK(MPI_Send(&x, 1, 999, 0, 0, MPI_COMM_WORLD) == MPI_ERR_TYPE);
  CHECK(MPI_Send(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_ERR_BUFFER);
  CHECK(MPI_Send(&x, 1, MPI_INT, 0, 0, 12345) == MPI_ERR_COMM);
  MPI_Request bogus = 4242;
  CHECK(MPI_Wait(&bogus, MPI_STATUS_IGNORE) == MPI_ERR_REQUEST);
  /* Truncation: 8 ints into room for 2; nothing past the room is written. */
  int out[8] = {1, 2, 3, 4, 5, 6, 7, 8}, in[4] = {-1, -1, -1, -1};
  MPI_Request s;
  MPI_Isend(out, 8, MPI_INT, right(), 30, MPI_COMM_WORLD, &s);
  MPI_Status st;
  CHECK(MPI_Recv(in, 2, MPI_INT, left(), 30, MPI_COMM_WORLD, &st) == MPI_ERR_TRUNCATE);
  CHECK(st.MPI_ERROR == MPI_ERR_TRUNCATE && in[0] == 1 && in[1] == 2 && in[2] == -1);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(MPI_ERR_TRUNCATE, text, &len);
  CHECK(len > 0 && strstr(text, "truncated") != NULL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_cancel_and_proc_null(void) {
  int x = 77;
  MPI_Request r;
  MPI_Status st;
  MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r);
  CHECK(MPI_Cancel(&r) == MPI_SUCCESS);
  MPI_Wait(&r, &st);
  int cancelled = 0;
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(cancelled == 1 && x == 77);
  CHECK(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && count == 0);
}

/* Non-overtaking between MPI_Send and MPI_Isend to one peer that is not
 * receiving yet: enough messages to fill any eager ring, so that some wait
 * in the sender's backlog while later blocking sends could take a fresh
 * free cell (a blocking eager send carries no request and goes straight
 * into the ring only when nothing waits before it). The receiver then
 * takes them with one tag and checks the sequence. */
static void test_blocking_and_nonblocking_keep_order(void) {
  enum { kMessages = 6000, kBytes = 64 };
  static char out[kMessages][kBytes];
  static MPI_Request requests[kMessages];
  int nrequests = 0;
  if (rank == 0) {
    for (int i = 0; i < kMessages; ++i) {
      memset(out[i], 0, kBytes);
      memcpy(out[i], &i, sizeof i);
      if (i % 3 == 2) {
        CHECK(MPI_Send(out[i], kBytes, MPI_CHAR, 1, 41, MPI_COMM_WORLD) == MPI_SUCCESS);
      } else {
        CHECK(MPI_Isend(out[i], kBytes, MPI_CHAR, 1, 41, MPI_COMM_WORLD, &requests[nrequests++]) ==
              MPI_SUCCESS);
      }
    }
    CHECK(MPI_Waitall(nrequests, requests, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    if (rank == 1) {
      usleep(200000); /* not polling: the sender's ring fills */
      MPI_Barrier(MPI_COMM_WORLD);
      int in_order = 1;
      char in[kBytes];
      for (int i = 0; i < kMessages; ++i) {
        int seq = -1;
        MPI_Recv(in, kBytes, MPI_CHAR, 0, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        memcpy(&seq, in, sizeof seq);
        if (seq != i) in_order = 0;
      }
      CHECK(in_order);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
}

/* A blocking MPI_Recv that waits before its message comes, with nothing
 * else posted, waits without a request (src/engine/unnamed_receive.h) and
 * must hand whatever it cannot take itself to the request path: a
 * rendezvous, a message too long for the buffer (truncation, and nothing
 * lost after it), a synchronous send (whose sender waits for the match).
 * Rank 0 sleeps before each send, so that rank 1 is already waiting. */
static void test_blocking_receive_waiting_first(void) {
  enum { kBig = 1 << 20, kLong = 16 };
  char* big = malloc(kBig);
  int words[kLong], got[kLong];
  for (int i = 0; i < kLong; ++i) words[i] = 1000 + i;
  if (rank == 0) {
    for (int i = 0; i < kBig; ++i) big[i] = (char)(i * 13 + 1);
    usleep(30000);
    CHECK(MPI_Send(big, kBig, MPI_CHAR, 1, 50, MPI_COMM_WORLD) == MPI_SUCCESS);
    usleep(30000);
    CHECK(MPI_Send(words, kLong, MPI_INT, 1, 51, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(MPI_Send(words, 2, MPI_INT, 1, 52, MPI_COMM_WORLD) == MPI_SUCCESS);
    usleep(30000);
    CHECK(MPI_Ssend(words, 3, MPI_INT, 1, 53, MPI_COMM_WORLD) == MPI_SUCCESS);
  } else if (rank == 1) {
    memset(big, 0, kBig);
    MPI_Status st;
    CHECK(MPI_Recv(big, kBig, MPI_CHAR, 0, 50, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
    int intact = 1, count = -1;
    for (int i = 0; i < kBig; ++i) intact &= big[i] == (char)(i * 13 + 1);
    MPI_Get_count(&st, MPI_CHAR, &count);
    CHECK(intact && count == kBig && st.MPI_TAG == 50);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    memset(got, 0, sizeof got);
    int rc = MPI_Recv(got, 4, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    int error_class = -1;
    MPI_Error_class(rc, &error_class);
    CHECK(error_class == MPI_ERR_TRUNCATE && st.MPI_TAG == 51);
    CHECK(got[0] == 1000 && got[3] == 1003 && got[4] == 0); /* nothing past the buffer */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK(MPI_Recv(got, kLong, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(st.MPI_TAG == 52 && count == 2 && got[1] == 1001);
    CHECK(MPI_Recv(got, kLong, MPI_INT, 0, 53, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 3 && got[2] == 1002);
  }
  free(big);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_communicators(void) {
  MPI_Comm dup, half;
  int result = -1, r = -1, n = -1;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS);
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
  CHECK(result == MPI_CONGRUENT);
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half) == MPI_SUCCESS);
  MPI_Comm_rank(half, &r);
  MPI_Comm_size(half, &n);
  CHECK(r == rank / 2 && n == (size + 1 - rank % 2) / 2);
  int token = rank, got = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, (r + 1) % n, 0, &got, 1, MPI_INT, (r + n - 1) % n, 0, half,
               MPI_STATUS_IGNORE);
  CHECK(got == (((r + n - 1) % n) * 2 + rank % 2));
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  CHECK(half == MPI_COMM_NULL && dup == MPI_COMM_NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "needs at least 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  test_environment();
  test_ring(10);
  test_ring(100000); /* rendezvous */
  test_sendrecv_and_modes();
  test_sendrecv_paths();
  test_spec_probe_example();
  test_probe_mprobe();
  test_persistent();
  test_completion_family();
  test_errors_return();
  test_cancel_and_proc_null();
  test_blocking_and_nonblocking_keep_order();
  test_blocking_receive_waiting_first();
  test_communicators();
  int totals[2] = {passed, failed}, sums[2] = {0, 0};
  /* No reductions yet: gather the counts to rank 0 by hand. */
  if (rank == 0) {
    sums[0] = passed;
    sums[1] = failed;
    for (int r = 1; r < size; ++r) {
      MPI_Recv(totals, 2, MPI_INT, r, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sums[0] += totals[0];
      sums[1] += totals[1];
    }
    printf("mpi p2p: %d passed, %d failed\n", sums[0], sums[1]);
  } else {
    MPI_Send(totals, 2, MPI_INT, 0, 99, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return failed == 0 ? 0 : 1;
}
