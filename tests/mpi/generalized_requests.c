/* Generalized requests (MPI_Grequest_start): the status a wait returns is
 * query_fn's, free_fn runs once and after it, cancel_fn is told whether
 * the request is complete; MPI_Request_free before and after
 * MPI_Grequest_complete; MPI_Request_get_status; a request completed by
 * another thread while MPI_Wait waits; generalized requests mixed with
 * point-to-point ones in Waitall, Waitany and Testsome; a query_fn error;
 * completing one twice. Every rank on its own. */
#include <mpi.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

typedef struct {
  int id;
  int queries;
  int frees;
  int cancels;
  int cancel_saw_complete;
  int query_after_free; /* a query_fn call after free_fn: must stay 0 */
  int cancelled;
  int query_rc; /* what query_fn returns */
  MPI_Request self;
} Op;

static int query_fn(void* extra, MPI_Status* status) {
  Op* op = (Op*)extra;
  ++op->queries;
  if (op->frees > 0) op->query_after_free = 1;
  status->MPI_SOURCE = 100 + op->id;
  status->MPI_TAG = 200 + op->id;
  MPI_Status_set_elements(status, MPI_INT, op->id + 1);
  MPI_Status_set_cancelled(status, op->cancelled);
  return op->query_rc;
}

static int free_fn(void* extra) {
  ++((Op*)extra)->frees;
  return MPI_SUCCESS;
}

static int cancel_fn(void* extra, int complete) {
  Op* op = (Op*)extra;
  ++op->cancels;
  op->cancel_saw_complete = complete;
  if (!complete) {
    /* The operation stops here: completed as cancelled. */
    op->cancelled = 1;
    MPI_Grequest_complete(op->self);
  }
  return MPI_SUCCESS;
}

static void start(Op* op, int id) {
  memset(op, 0, sizeof(*op));
  op->id = id;
  MPI_Grequest_start(query_fn, free_fn, cancel_fn, op, &op->self);
}

static void* complete_later(void* arg) {
  usleep(20000);
  MPI_Grequest_complete(((Op*)arg)->self);
  return NULL;
}

static void wait_and_test(void) {
  Op op;
  start(&op, 4);
  MPI_Request r = op.self;
  int flag = 1;
  MPI_Status st;
  MPI_Test(&r, &flag, &st);
  CHECK(flag == 0 && op.queries == 0 && op.frees == 0);
  MPI_Request_get_status(r, &flag, &st);
  CHECK(flag == 0);
  MPI_Grequest_complete(r);
  MPI_Request_get_status(r, &flag, &st); /* query_fn, not free_fn */
  CHECK(flag == 1 && st.MPI_SOURCE == 104 && st.MPI_TAG == 204 && op.queries == 1 && op.frees == 0);
  MPI_Wait(&r, &st);
  int count = -1, cancelled = 1;
  MPI_Get_count(&st, MPI_INT, &count);
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(r == MPI_REQUEST_NULL && st.MPI_SOURCE == 104 && st.MPI_TAG == 204 && count == 5 &&
        cancelled == 0);
  CHECK(op.queries == 2 && op.frees == 1 && op.query_after_free == 0);
}

static void completed_by_another_thread(void) {
  Op op;
  start(&op, 1);
  pthread_t t;
  pthread_create(&t, NULL, complete_later, &op);
  MPI_Status st;
  MPI_Wait(&op.self, &st);
  pthread_join(t, NULL);
  CHECK(op.self == MPI_REQUEST_NULL && st.MPI_TAG == 201 && op.frees == 1);
}

static void mixed_lists(void) {
  Op a, b;
  start(&a, 2);
  start(&b, 3);
  int out = rank, in = -1;
  MPI_Request rs[4];
  rs[0] = a.self;
  MPI_Irecv(&in, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, &rs[1]);
  rs[2] = b.self;
  MPI_Isend(&out, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, &rs[3]);
  MPI_Grequest_complete(a.self);
  pthread_t t;
  pthread_create(&t, NULL, complete_later, &b);
  MPI_Status sts[4];
  MPI_Waitall(4, rs, sts);
  pthread_join(t, NULL);
  CHECK(in == rank && sts[1].MPI_SOURCE == rank && sts[1].MPI_TAG == 7);
  CHECK(sts[0].MPI_TAG == 202 && sts[2].MPI_TAG == 203 && a.frees == 1 && b.frees == 1);
  CHECK(rs[0] == MPI_REQUEST_NULL && rs[2] == MPI_REQUEST_NULL);

  /* Waitany, then Testsome, over one of each. */
  start(&a, 5);
  MPI_Irecv(&in, 1, MPI_INT, rank, 8, MPI_COMM_WORLD, &rs[1]);
  rs[0] = a.self;
  MPI_Grequest_complete(a.self);
  int index = -1;
  MPI_Status st;
  MPI_Waitany(2, rs, &index, &st);
  CHECK(index == 0 && st.MPI_TAG == 205 && a.frees == 1 && rs[0] == MPI_REQUEST_NULL);
  start(&b, 6);
  rs[0] = b.self;
  MPI_Send(&out, 1, MPI_INT, rank, 8, MPI_COMM_WORLD);
  MPI_Grequest_complete(b.self);
  int outcount = 0, indices[2] = {-1, -1}, done = 0;
  while (done < 2) {
    MPI_Testsome(2, rs, &outcount, indices, sts);
    for (int i = 0; i < outcount; ++i) {
      if (indices[i] == 0) CHECK(sts[i].MPI_TAG == 206 && b.frees == 1);
      if (indices[i] == 1) CHECK(sts[i].MPI_TAG == 8 && in == rank);
    }
    done += outcount > 0 ? outcount : 0;
  }
}

static void cancel_and_free(void) {
  /* Cancel before completion: cancel_fn completes it as cancelled. */
  Op op;
  start(&op, 7);
  MPI_Cancel(&op.self);
  MPI_Status st;
  MPI_Wait(&op.self, &st);
  int cancelled = 0;
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(op.cancels == 1 && op.cancel_saw_complete == 0 && cancelled == 1 && op.frees == 1);
  /* Cancel after completion: told so, nothing cancelled. */
  start(&op, 8);
  MPI_Grequest_complete(op.self);
  MPI_Cancel(&op.self);
  MPI_Wait(&op.self, &st);
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(op.cancels == 1 && op.cancel_saw_complete == 1 && cancelled == 0);
  /* Freed before completion: free_fn at MPI_Grequest_complete, no query. */
  start(&op, 9);
  MPI_Request keep = op.self;
  MPI_Request_free(&op.self);
  CHECK(op.self == MPI_REQUEST_NULL && op.frees == 0);
  MPI_Grequest_complete(keep);
  CHECK(op.frees == 1 && op.queries == 0);
  /* Freed after completion: free_fn at MPI_Request_free. */
  start(&op, 10);
  MPI_Grequest_complete(op.self);
  CHECK(op.frees == 0);
  MPI_Request_free(&op.self);
  CHECK(op.frees == 1 && op.queries == 0);
}

static void errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* query_fn's error is the wait's, and in Waitall the request's status. */
  Op op;
  start(&op, 11);
  op.query_rc = MPI_ERR_OTHER;
  MPI_Grequest_complete(op.self);
  MPI_Request twice = op.self;
  MPI_Status st;
  int rc = MPI_Wait(&op.self, &st);
  CHECK(tw_class(rc) == MPI_ERR_OTHER && op.frees == 1);
  start(&op, 12);
  op.query_rc = MPI_ERR_ARG;
  MPI_Grequest_complete(op.self);
  MPI_Request rs[1] = {op.self};
  MPI_Status sts[1];
  rc = MPI_Waitall(1, rs, sts);
  CHECK(rc == MPI_ERR_IN_STATUS && sts[0].MPI_ERROR == MPI_ERR_ARG);
  /* Completing twice, or a request that is not generalized. */
  start(&op, 13);
  MPI_Request r = op.self;
  MPI_Grequest_complete(r);
  rc = MPI_Grequest_complete(r);
  CHECK(tw_class(rc) == MPI_ERR_REQUEST);
  MPI_Wait(&r, &st);
  rc = MPI_Grequest_complete(twice);
  CHECK(tw_class(rc) == MPI_ERR_REQUEST);
  rc = MPI_Grequest_start(NULL, free_fn, cancel_fn, &op, &r);
  CHECK(tw_class(rc) == MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(provided == MPI_THREAD_MULTIPLE);
  wait_and_test();
  completed_by_another_thread();
  mixed_lists();
  cancel_and_free();
  errors();
  return tw_finish("generalized_requests") == 0 ? 0 : 1;
}
