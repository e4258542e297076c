/* Bad input, table-driven: every checked argument of the API, one row per
 * (call, bad argument), under MPI_ERRORS_RETURN, each asserting the exact
 * error class, and afterwards that nothing was lost: a message sent before
 * the bad calls still arrives whole, and every rank still talks to every
 * other. (Under the default handler, tests/launcher_test.sh checks the
 * message and the job's end.) */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int x[4];
static int in[4];
static MPI_Comm freed_comm;
static MPI_Datatype uncommitted, freed_type, big_type;
static MPI_Request freed_request, active_persistent, finished_request;
static int tag_ub;

typedef int (*call_fn)(void);
struct row {
  const char* what;
  int expected; /* error class */
  call_fn call;
};

#define ROW(name, ...)    \
  static int name(void) { \
    __VA_ARGS__           \
  }

static MPI_Request req;
static MPI_Status st;
static MPI_Message msg;
static int flag;

/* Sends: dest, tag, count, datatype, buffer, communicator. */
ROW(send_rank_high, return MPI_Send(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);)
ROW(send_rank_negative, return MPI_Send(x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD);)
ROW(send_any_source, return MPI_Send(x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD);)
ROW(send_tag_negative, return MPI_Send(x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD);)
ROW(send_any_tag, return MPI_Send(x, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD);)
ROW(send_tag_above_ub, return tag_ub == INT_MAX
                                  ? MPI_ERR_TAG
                                  : MPI_Send(x, 1, MPI_INT, 0, tag_ub + 1, MPI_COMM_WORLD);)
ROW(send_count_negative, return MPI_Send(x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);)
ROW(send_count_huge, return MPI_Send(x, INT_MAX, big_type, 0, 0, MPI_COMM_WORLD);)
ROW(send_type_unknown, return MPI_Send(x, 1, 999, 0, 0, MPI_COMM_WORLD);)
ROW(send_type_null, return MPI_Send(x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);)
ROW(send_type_uncommitted, return MPI_Send(x, 1, uncommitted, 0, 0, MPI_COMM_WORLD);)
ROW(send_type_freed, return MPI_Send(x, 1, freed_type, 0, 0, MPI_COMM_WORLD);)
ROW(send_buffer_null, return MPI_Send(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD);)
ROW(send_comm_unknown, return MPI_Send(x, 1, MPI_INT, 0, 0, 12345);)
ROW(send_comm_null, return MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL);)
ROW(send_comm_freed, return MPI_Send(x, 1, MPI_INT, 0, 0, freed_comm);)
ROW(ssend_rank, return MPI_Ssend(x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD);)
ROW(rsend_tag, return MPI_Rsend(x, 1, MPI_INT, 0, -3, MPI_COMM_WORLD);)
ROW(bsend_no_buffer, return MPI_Bsend(x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);)
ROW(isend_count, return MPI_Isend(x, -2, MPI_INT, 0, 0, MPI_COMM_WORLD, &req);)
ROW(issend_type, return MPI_Issend(x, 1, uncommitted, 0, 0, MPI_COMM_WORLD, &req);)
ROW(irsend_comm, return MPI_Irsend(x, 1, MPI_INT, 0, 0, freed_comm, &req);)
ROW(ibsend_buffer, return MPI_Ibsend(NULL, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, &req);)
ROW(send_init_rank, return MPI_Send_init(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &req);)
ROW(ssend_init_tag, return MPI_Ssend_init(x, 1, MPI_INT, 0, -9, MPI_COMM_WORLD, &req);)
ROW(bsend_init_count, return MPI_Bsend_init(x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req);)
ROW(rsend_init_type, return MPI_Rsend_init(x, 1, 4242, 0, 0, MPI_COMM_WORLD, &req);)
ROW(sendrecv_dest,
    return MPI_Sendrecv(x, 1, MPI_INT, size, 0, in, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);)

/* Receives: source, tag, count, datatype, buffer, communicator. */
ROW(recv_rank_high, return MPI_Recv(in, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &st);)
ROW(recv_tag_negative, return MPI_Recv(in, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &st);)
ROW(recv_count_negative, return MPI_Recv(in, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);)
ROW(recv_type_uncommitted, return MPI_Recv(in, 1, uncommitted, 0, 0, MPI_COMM_WORLD, &st);)
ROW(recv_buffer_null, return MPI_Recv(NULL, 3, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);)
ROW(recv_comm_freed, return MPI_Recv(in, 1, MPI_INT, 0, 0, freed_comm, &st);)
ROW(irecv_rank, return MPI_Irecv(in, 1, MPI_INT, -4, 0, MPI_COMM_WORLD, &req);)
ROW(irecv_comm, return MPI_Irecv(in, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &req);)
ROW(recv_init_type, return MPI_Recv_init(in, 1, freed_type, 0, 0, MPI_COMM_WORLD, &req);)

/* Probes. */
ROW(probe_rank, return MPI_Probe(size, 0, MPI_COMM_WORLD, &st);)
ROW(iprobe_tag, return MPI_Iprobe(0, -2, MPI_COMM_WORLD, &flag, &st);)
ROW(iprobe_comm, return MPI_Iprobe(0, 0, 777, &flag, &st);)
ROW(mprobe_rank, return MPI_Mprobe(-9, 0, MPI_COMM_WORLD, &msg, &st);)
ROW(improbe_comm, return MPI_Improbe(0, 0, freed_comm, &flag, &msg, &st);)

/* Requests. */
ROW(wait_foreign, {
  MPI_Request r = (MPI_Request)987654;
  return MPI_Wait(&r, &st);
})
ROW(test_foreign, {
  MPI_Request r = (MPI_Request)123456;
  return MPI_Test(&r, &flag, &st);
})
ROW(wait_freed, {
  MPI_Request r = freed_request;
  return MPI_Wait(&r, &st);
})
ROW(free_twice, {
  MPI_Request r = freed_request;
  return MPI_Request_free(&r);
})
ROW(free_null, {
  MPI_Request r = MPI_REQUEST_NULL;
  return MPI_Request_free(&r);
})
ROW(start_active, return MPI_Start(&active_persistent);)
ROW(start_foreign, {
  MPI_Request r = (MPI_Request)55555;
  return MPI_Start(&r);
})
ROW(cancel_null, {
  MPI_Request r = MPI_REQUEST_NULL;
  return MPI_Cancel(&r);
})
ROW(cancel_foreign, {
  MPI_Request r = (MPI_Request)424242;
  return MPI_Cancel(&r);
})
ROW(waitall_one_foreign, {
  MPI_Request rs[2] = {MPI_REQUEST_NULL, (MPI_Request)99999};
  MPI_Status sts[2];
  return MPI_Waitall(2, rs, sts);
})
ROW(mrecv_null_message, {
  MPI_Message m = MPI_MESSAGE_NULL;
  return MPI_Mrecv(in, 1, MPI_INT, &m, &st);
})

/* Buffers. */
ROW(attach_null, return MPI_Buffer_attach(NULL, 100);)
ROW(attach_negative, {
  static char b[64];
  return MPI_Buffer_attach(b, -1);
})

/* Communicators, groups, datatypes. */
ROW(comm_free_world, {
  MPI_Comm c = MPI_COMM_WORLD;
  return MPI_Comm_free(&c);
})
ROW(comm_rank_freed, {
  int r;
  return MPI_Comm_rank(freed_comm, &r);
})
ROW(comm_dup_unknown, {
  MPI_Comm c;
  return MPI_Comm_dup(31337, &c);
})
ROW(comm_split_color, {
  MPI_Comm c;
  return MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c);
})
ROW(type_contiguous_count, {
  MPI_Datatype t;
  return MPI_Type_contiguous(-1, MPI_INT, &t);
})
ROW(type_commit_unknown, {
  MPI_Datatype t = 5150;
  return MPI_Type_commit(&t);
})
ROW(type_free_predefined, {
  MPI_Datatype t = MPI_INT;
  return MPI_Type_free(&t);
})
ROW(type_size_freed, {
  int s;
  return MPI_Type_size(freed_type, &s);
})
ROW(get_count_type, {
  int c;
  MPI_Status s;
  memset(&s, 0, sizeof(s));
  return MPI_Get_count(&s, 777, &c);
})

static const struct row rows[] = {
    {"MPI_Send to rank == size", MPI_ERR_RANK, send_rank_high},
    {"MPI_Send to rank -7", MPI_ERR_RANK, send_rank_negative},
    {"MPI_Send to MPI_ANY_SOURCE", MPI_ERR_RANK, send_any_source},
    {"MPI_Send with tag -1", MPI_ERR_TAG, send_tag_negative},
    {"MPI_Send with MPI_ANY_TAG", MPI_ERR_TAG, send_any_tag},
    {"MPI_Send with tag MPI_TAG_UB + 1", MPI_ERR_TAG, send_tag_above_ub},
    {"MPI_Send with count -1", MPI_ERR_COUNT, send_count_negative},
    {"MPI_Send of INT_MAX x 8 MiB", MPI_ERR_COUNT, send_count_huge},
    {"MPI_Send with an unknown datatype", MPI_ERR_TYPE, send_type_unknown},
    {"MPI_Send with MPI_DATATYPE_NULL", MPI_ERR_TYPE, send_type_null},
    {"MPI_Send with an uncommitted datatype", MPI_ERR_TYPE, send_type_uncommitted},
    {"MPI_Send with a freed datatype", MPI_ERR_TYPE, send_type_freed},
    {"MPI_Send from NULL with count 4", MPI_ERR_BUFFER, send_buffer_null},
    {"MPI_Send on an unknown communicator", MPI_ERR_COMM, send_comm_unknown},
    {"MPI_Send on MPI_COMM_NULL", MPI_ERR_COMM, send_comm_null},
    {"MPI_Send on a freed communicator", MPI_ERR_COMM, send_comm_freed},
    {"MPI_Ssend to rank size+3", MPI_ERR_RANK, ssend_rank},
    {"MPI_Rsend with tag -3", MPI_ERR_TAG, rsend_tag},
    {"MPI_Bsend with no buffer attached", MPI_ERR_BUFFER, bsend_no_buffer},
    {"MPI_Isend with count -2", MPI_ERR_COUNT, isend_count},
    {"MPI_Issend with an uncommitted datatype", MPI_ERR_TYPE, issend_type},
    {"MPI_Irsend on a freed communicator", MPI_ERR_COMM, irsend_comm},
    {"MPI_Ibsend from NULL", MPI_ERR_BUFFER, ibsend_buffer},
    {"MPI_Send_init to rank == size", MPI_ERR_RANK, send_init_rank},
    {"MPI_Ssend_init with tag -9", MPI_ERR_TAG, ssend_init_tag},
    {"MPI_Bsend_init with count -1", MPI_ERR_COUNT, bsend_init_count},
    {"MPI_Rsend_init with an unknown datatype", MPI_ERR_TYPE, rsend_init_type},
    {"MPI_Sendrecv to rank == size", MPI_ERR_RANK, sendrecv_dest},
    {"MPI_Recv from rank == size", MPI_ERR_RANK, recv_rank_high},
    {"MPI_Recv with tag -5", MPI_ERR_TAG, recv_tag_negative},
    {"MPI_Recv with count -1", MPI_ERR_COUNT, recv_count_negative},
    {"MPI_Recv with an uncommitted datatype", MPI_ERR_TYPE, recv_type_uncommitted},
    {"MPI_Recv into NULL with count 3", MPI_ERR_BUFFER, recv_buffer_null},
    {"MPI_Recv on a freed communicator", MPI_ERR_COMM, recv_comm_freed},
    {"MPI_Irecv from rank -4", MPI_ERR_RANK, irecv_rank},
    {"MPI_Irecv on MPI_COMM_NULL", MPI_ERR_COMM, irecv_comm},
    {"MPI_Recv_init with a freed datatype", MPI_ERR_TYPE, recv_init_type},
    {"MPI_Probe from rank == size", MPI_ERR_RANK, probe_rank},
    {"MPI_Iprobe with tag -2", MPI_ERR_TAG, iprobe_tag},
    {"MPI_Iprobe on an unknown communicator", MPI_ERR_COMM, iprobe_comm},
    {"MPI_Mprobe from rank -9", MPI_ERR_RANK, mprobe_rank},
    {"MPI_Improbe on a freed communicator", MPI_ERR_COMM, improbe_comm},
    {"MPI_Wait on a foreign request", MPI_ERR_REQUEST, wait_foreign},
    {"MPI_Test on a foreign request", MPI_ERR_REQUEST, test_foreign},
    {"MPI_Wait on a freed request", MPI_ERR_REQUEST, wait_freed},
    {"MPI_Request_free twice", MPI_ERR_REQUEST, free_twice},
    {"MPI_Request_free of MPI_REQUEST_NULL", MPI_ERR_REQUEST, free_null},
    {"MPI_Start on an active persistent request", MPI_ERR_REQUEST, start_active},
    {"MPI_Start on a foreign request", MPI_ERR_REQUEST, start_foreign},
    {"MPI_Cancel of MPI_REQUEST_NULL", MPI_ERR_REQUEST, cancel_null},
    {"MPI_Cancel of a foreign request", MPI_ERR_REQUEST, cancel_foreign},
    {"MPI_Waitall with one foreign request", MPI_ERR_REQUEST, waitall_one_foreign},
    {"MPI_Mrecv of MPI_MESSAGE_NULL", MPI_ERR_REQUEST, mrecv_null_message},
    {"MPI_Buffer_attach of NULL", MPI_ERR_BUFFER, attach_null},
    {"MPI_Buffer_attach of size -1", MPI_ERR_ARG, attach_negative},
    {"MPI_Comm_free of MPI_COMM_WORLD", MPI_ERR_COMM, comm_free_world},
    {"MPI_Comm_rank of a freed communicator", MPI_ERR_COMM, comm_rank_freed},
    {"MPI_Comm_dup of an unknown communicator", MPI_ERR_COMM, comm_dup_unknown},
    {"MPI_Comm_split with color -5", MPI_ERR_ARG, comm_split_color},
    {"MPI_Type_contiguous with count -1", MPI_ERR_COUNT, type_contiguous_count},
    {"MPI_Type_commit of an unknown datatype", MPI_ERR_TYPE, type_commit_unknown},
    {"MPI_Type_free of MPI_INT", MPI_ERR_TYPE, type_free_predefined},
    {"MPI_Type_size of a freed datatype", MPI_ERR_TYPE, type_size_freed},
    {"MPI_Get_count with an unknown datatype", MPI_ERR_TYPE, get_count_type},
};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int* ub = NULL;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  tag_ub = flag ? *ub : INT_MAX;

  /* The fixtures the rows use. Handles are reused once freed (as in
   * MPICH), so each "freed" one is made last of its kind, and no row
   * creates any. */
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);
  MPI_Type_contiguous(1 << 20, MPI_DOUBLE, &big_type);
  MPI_Type_commit(&big_type);
  MPI_Type_contiguous(3, MPI_INT, &freed_type);
  MPI_Type_commit(&freed_type);
  MPI_Datatype gone = freed_type;
  MPI_Type_free(&gone);
  MPI_Comm_dup(MPI_COMM_WORLD, &freed_comm);
  MPI_Comm dead = freed_comm;
  MPI_Comm_free(&dead);
  MPI_Recv_init(in, 1, MPI_INT, MPI_ANY_SOURCE, 98, MPI_COMM_WORLD, &active_persistent);
  MPI_Start(&active_persistent);

  /* A message in flight across the bad calls: it must arrive whole. */
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out[4] = {rank, rank + 10, rank + 20, rank + 30};
  MPI_Request pending[2];
  MPI_Irecv(in, 4, MPI_INT, left, 7, MPI_COMM_WORLD, &pending[0]);
  MPI_Isend(out, 4, MPI_INT, right, 7, MPI_COMM_WORLD, &pending[1]);

  MPI_Recv_init(in, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, &freed_request);
  MPI_Request r = freed_request;
  MPI_Request_free(&r);

  const int n = (int)(sizeof(rows) / sizeof(rows[0]));
  for (int i = 0; i < n; ++i) {
    req = MPI_REQUEST_NULL;
    /* TAGWIRE_TEST_TRACE=1 names each row before it runs (to find a hang). */
    if (getenv("TAGWIRE_TEST_TRACE")) fprintf(stderr, "[rank %d] %s\n", rank, rows[i].what);
    int rc = rows[i].call();
    int cls = tw_class(rc);
    if (cls != rows[i].expected) {
      char want[MPI_MAX_ERROR_STRING], got[MPI_MAX_ERROR_STRING];
      int len;
      MPI_Error_string(rows[i].expected, want, &len);
      MPI_Error_string(cls, got, &len);
      fprintf(stderr, "[rank %d] %s: expected %s, got %s (rc %d)\n", rank, rows[i].what, want, got,
              rc);
    }
    CHECK(cls == rows[i].expected);
    CHECK(rc != MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL); /* a refused call hands out no request */
  }

  /* Nothing was lost: the message arrives whole, in order. */
  MPI_Status sts[2];
  CHECK(MPI_Waitall(2, pending, sts) == MPI_SUCCESS);
  CHECK(in[0] == left && in[1] == left + 10 && in[2] == left + 20 && in[3] == left + 30);
  /* Cancel of a completed (inactive) persistent request: a no-op that
   * reports not cancelled. */
  MPI_Recv_init(in, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &finished_request);
  MPI_Start(&finished_request);
  int token = rank;
  MPI_Send(&token, 1, MPI_INT, left, 8, MPI_COMM_WORLD);
  MPI_Wait(&finished_request, &st);
  CHECK(MPI_Cancel(&finished_request) == MPI_SUCCESS);
  int cancelled = 1;
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(!cancelled && in[0] == right);
  MPI_Request_free(&finished_request);
  /* The active persistent receive is cancelled cleanly. */
  CHECK(MPI_Cancel(&active_persistent) == MPI_SUCCESS);
  CHECK(MPI_Wait(&active_persistent, &st) == MPI_SUCCESS);
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(cancelled);
  MPI_Request_free(&active_persistent);
  /* Buffer_detach waits for pending buffered sends, then hands the
   * buffer back, the message delivered. */
  static char bsend_space[1024];
  CHECK(MPI_Buffer_attach(bsend_space, sizeof(bsend_space)) == MPI_SUCCESS);
  CHECK(MPI_Buffer_attach(bsend_space, sizeof(bsend_space)) == MPI_ERR_BUFFER);
  CHECK(MPI_Bsend(&token, 1, MPI_INT, right, 9, MPI_COMM_WORLD) == MPI_SUCCESS);
  void* back = NULL;
  int back_size = 0;
  CHECK(MPI_Buffer_detach(&back, &back_size) == MPI_SUCCESS);
  CHECK(back == bsend_space && back_size == (int)sizeof(bsend_space));
  int got = -1;
  CHECK(MPI_Recv(&got, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &st) == MPI_SUCCESS && got == left);
  /* One handle given twice to MPI_Waitall: its first entry completes it,
   * the second is refused (the first retired the handle), nothing hangs. */
  MPI_Request twice[2];
  CHECK(MPI_Irecv(&got, 1, MPI_INT, left, 10, MPI_COMM_WORLD, &twice[0]) == MPI_SUCCESS);
  twice[1] = twice[0];
  CHECK(MPI_Send(&token, 1, MPI_INT, right, 10, MPI_COMM_WORLD) == MPI_SUCCESS);
  MPI_Status twice_st[2];
  CHECK(MPI_Waitall(2, twice, twice_st) == MPI_ERR_IN_STATUS);
  CHECK(twice_st[0].MPI_ERROR == MPI_SUCCESS && got == left);
  CHECK(twice_st[1].MPI_ERROR == MPI_ERR_REQUEST);
  CHECK(twice[0] == MPI_REQUEST_NULL);
  /* A truncated receive in MPI_Waitsome / MPI_Testsome: the call that
   * completes it returns MPI_ERR_IN_STATUS once, every completed request is
   * counted and indexed, and each status holds its own class (the whole
   * receive: MPI_SUCCESS; the truncated one: MPI_ERR_TRUNCATE). */
  for (int use_test = 0; use_test < 2; ++use_test) {
    const int whole_tag = 11 + 2 * use_test, cut_tag = whole_tag + 1;
    int whole[2] = {-1, -1}, cut = -1;
    MPI_Request some[2];
    CHECK(MPI_Irecv(whole, 2, MPI_INT, left, whole_tag, MPI_COMM_WORLD, &some[0]) == MPI_SUCCESS);
    CHECK(MPI_Irecv(&cut, 1, MPI_INT, left, cut_tag, MPI_COMM_WORLD, &some[1]) == MPI_SUCCESS);
    const int pair[2] = {token, token};
    CHECK(MPI_Send(pair, 2, MPI_INT, right, whole_tag, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(MPI_Send(pair, 2, MPI_INT, right, cut_tag, MPI_COMM_WORLD) == MPI_SUCCESS);
    int class_of[2] = {-1, -1}, in_status = 0, completed = 0, bad_outcount = 0;
    while (completed < 2) {
      int outcount = -7, indices[2] = {-1, -1};
      MPI_Status some_st[2];
      int rc = use_test ? MPI_Testsome(2, some, &outcount, indices, some_st)
                        : MPI_Waitsome(2, some, &outcount, indices, some_st);
      if (outcount < 0 || outcount > 2 || (!use_test && outcount == 0)) {
        ++bad_outcount;
        break;
      }
      if (rc == MPI_ERR_IN_STATUS) ++in_status;
      for (int k = 0; k < outcount; ++k) {
        if (indices[k] == 0 || indices[k] == 1) class_of[indices[k]] = some_st[k].MPI_ERROR;
      }
      completed += outcount;
    }
    CHECK(bad_outcount == 0 && completed == 2);
    CHECK(in_status == 1);
    CHECK(class_of[0] == MPI_SUCCESS && whole[0] == left && whole[1] == left);
    CHECK(class_of[1] == MPI_ERR_TRUNCATE);
    CHECK(some[0] == MPI_REQUEST_NULL && some[1] == MPI_REQUEST_NULL);
  }
  MPI_Type_free(&uncommitted);
  MPI_Type_free(&big_type);
  if (rank == 0) printf("bad input: %d rows tried\n", n);
  return tw_finish("mpi bad_input") != 0;
}
