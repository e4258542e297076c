/* The calls of the MPI subset that the other C tests do not reach: thread
 * levels, Finalized, errhandler get/free, ready sends in all three forms,
 * Improbe + Imrecv completed by Test, Testany over a mixed array,
 * Type_create_hvector, Wtime / Wtick. Ranks 0 and 1 exchange. */
#include <mpi.h>

#include "check.h"

static void ready_sends(void) {
  int in[3] = {0}, out[3] = {11, 22, 33};
  MPI_Request r[3];
  if (rank == 1)
    for (int k = 0; k < 3; ++k) MPI_Irecv(&in[k], 1, MPI_INT, 0, 40 + k, MPI_COMM_WORLD, &r[k]);
  MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted: ready mode is legal */
  if (rank == 0) {
    MPI_Request s[2], p;
    MPI_Rsend(&out[0], 1, MPI_INT, 1, 40, MPI_COMM_WORLD);
    MPI_Irsend(&out[1], 1, MPI_INT, 1, 41, MPI_COMM_WORLD, &s[0]);
    MPI_Rsend_init(&out[2], 1, MPI_INT, 1, 42, MPI_COMM_WORLD, &p);
    MPI_Start(&p);
    s[1] = p;
    MPI_Waitall(2, s, MPI_STATUSES_IGNORE);
    CHECK(s[0] == MPI_REQUEST_NULL && s[1] == p); /* persistent stays */
    MPI_Request_free(&p);
  } else if (rank == 1) {
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    CHECK(in[0] == 11 && in[1] == 22 && in[2] == 33);
  }
}

static void improbe_imrecv_test_testany(void) {
  if (rank == 0) {
    double v[2] = {1.5, -2.5};
    MPI_Send(v, 2, MPI_DOUBLE, 1, 50, MPI_COMM_WORLD);
  } else if (rank == 1) {
    int flag = 0;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    while (!flag) MPI_Improbe(0, 50, MPI_COMM_WORLD, &flag, &msg, &st);
    int count = 0;
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == 2 && msg != MPI_MESSAGE_NULL);
    double in[2] = {0, 0};
    MPI_Request req;
    MPI_Imrecv(in, 2, MPI_DOUBLE, &msg, &req);
    CHECK(msg == MPI_MESSAGE_NULL);
    int done = 0;
    while (!done) MPI_Test(&req, &done, &st);
    CHECK(in[0] == 1.5 && in[1] == -2.5 && req == MPI_REQUEST_NULL);
  }
  /* Testany: null entries are skipped; all null gives MPI_UNDEFINED. */
  MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int index = 0, flag = 0, x = 7, y = 0;
  MPI_Testany(3, reqs, &index, &flag, MPI_STATUS_IGNORE);
  CHECK(flag && index == MPI_UNDEFINED);
  MPI_Irecv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[1]);
  MPI_Isend(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[2]);
  int completed = 0;
  while (completed < 2) {
    MPI_Testany(3, reqs, &index, &flag, MPI_STATUS_IGNORE);
    if (flag && index != MPI_UNDEFINED) {
      CHECK(index == 1 || index == 2);
      ++completed;
    }
  }
}

static void hvector(void) {
  /* Two blocks of 3 shorts, 16 bytes apart. */
  short buf[16], got[6] = {0};
  for (int k = 0; k < 16; ++k) buf[k] = (short)(k * 3);
  MPI_Datatype t;
  MPI_Type_create_hvector(2, 3, 16, MPI_SHORT, &t);
  MPI_Type_commit(&t);
  if (rank == 0) MPI_Send(buf, 1, t, 1, 60, MPI_COMM_WORLD);
  if (rank == 1) {
    MPI_Recv(got, 6, MPI_SHORT, 0, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got[0] == 0 && got[2] == 6 && got[3] == 24 && got[5] == 30);
  }
  MPI_Type_free(&t);
}

static void errhandlers_and_time(void) {
  MPI_Errhandler h = MPI_ERRHANDLER_NULL;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &h);
  CHECK(h == MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&h);
  CHECK(h == MPI_ERRHANDLER_NULL);
  /* Freeing the handle does not change the communicator's handler. */
  CHECK(tw_class(MPI_Send(&h, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD)) == MPI_ERR_RANK);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  double t0 = MPI_Wtime(), t1 = MPI_Wtime();
  CHECK(t1 >= t0 && MPI_Wtick() > 0 && MPI_Wtick() < 1);
}

int main(int argc, char** argv) {
  int finalized = 1, provided = -1, queried = -2;
  MPI_Finalized(&finalized);
  CHECK(!finalized);
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Query_thread(&queried);
  CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE && queried == provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size >= 2) {
    ready_sends();
    improbe_imrecv_test_testany();
    hvector();
  }
  errhandlers_and_time();
  int total_failed = tw_finish("coverage");
  MPI_Finalized(&finalized);
  if (!finalized) {
    fprintf(stderr, "[rank %d] MPI_Finalized is false after MPI_Finalize\n", rank);
    return 1;
  }
  return total_failed == 0 ? 0 : 1;
}
