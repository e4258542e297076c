/* User error handlers and the program's own error codes (issue 28):
 * MPI_Comm_create_errhandler / MPI_Win_create_errhandler (called with the
 * object and the code when a call on it fails, inherited by MPI_Comm_dup,
 * still in force after MPI_Errhandler_free), MPI_Comm_call_errhandler /
 * MPI_Win_call_errhandler, MPI_Add_error_class / _code / _string with
 * MPI_Error_class, MPI_Error_string and MPI_LASTUSEDCODE, and the misuses
 * that fail with MPI_ERR_ARG. Runs on any number of ranks >= 1. */
#include <string.h>

#include "check.h"

static int comm_calls, win_calls, last_code;
static MPI_Comm last_comm = MPI_COMM_NULL;
static MPI_Win last_win = MPI_WIN_NULL;
static char last_text[MPI_MAX_ERROR_STRING];

static void on_comm_error(MPI_Comm* comm, int* code, ...) {
  ++comm_calls;
  last_comm = *comm;
  last_code = *code;
  int length = 0;
  MPI_Error_string(*code, last_text, &length); /* MPI calls are allowed here */
}

static void on_win_error(MPI_Win* win, int* code, ...) {
  ++win_calls;
  last_win = *win;
  last_code = *code;
}

static void communicator_handlers(void) {
  MPI_Errhandler handler;
  CHECK(MPI_Comm_create_errhandler(on_comm_error, &handler) == MPI_SUCCESS);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  CHECK(MPI_Comm_set_errhandler(comm, handler) == MPI_SUCCESS);
  MPI_Errhandler got = MPI_ERRHANDLER_NULL;
  CHECK(MPI_Comm_get_errhandler(comm, &got) == MPI_SUCCESS);
  CHECK(got == handler);

  /* A failing call: the handler sees the communicator and the class, and
   * the call returns the same code. */
  int value = 0;
  const int rc = MPI_Send(&value, 1, MPI_INT, size + 3, 0, comm);
  CHECK(comm_calls == 1);
  CHECK(last_comm == comm);
  CHECK(rc == last_code);
  CHECK(tw_class(rc) == MPI_ERR_RANK);
  CHECK(strlen(last_text) > 0);

  /* Inherited by a duplicate; kept after MPI_Errhandler_free. */
  MPI_Comm dup;
  MPI_Comm_dup(comm, &dup);
  CHECK(MPI_Errhandler_free(&handler) == MPI_SUCCESS);
  CHECK(handler == MPI_ERRHANDLER_NULL);
  CHECK(MPI_Recv(&value, -1, MPI_INT, 0, 0, dup, MPI_STATUS_IGNORE) != MPI_SUCCESS);
  CHECK(comm_calls == 2);
  CHECK(last_comm == dup);
  CHECK(tw_class(last_code) == MPI_ERR_COUNT);

  /* Called by the program itself. */
  CHECK(MPI_Comm_call_errhandler(comm, MPI_ERR_OTHER) == MPI_SUCCESS);
  CHECK(comm_calls == 3);
  CHECK(last_code == MPI_ERR_OTHER);
  CHECK(last_comm == comm);

  /* Under MPI_ERRORS_RETURN the call does nothing but return. */
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  CHECK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER) == MPI_SUCCESS);
  CHECK(comm_calls == 3);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&comm);
}

static void window_handlers(void) {
  MPI_Errhandler handler, comm_handler;
  CHECK(MPI_Win_create_errhandler(on_win_error, &handler) == MPI_SUCCESS);
  CHECK(MPI_Comm_create_errhandler(on_comm_error, &comm_handler) == MPI_SUCCESS);
  int memory[4];
  MPI_Win win;
  MPI_Win_create(memory, sizeof(memory), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  CHECK(MPI_Win_set_errhandler(win, handler) == MPI_SUCCESS);
  /* A handler of the other kind is refused, on both objects. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(tw_class(MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Win_set_errhandler(win, comm_handler)) == MPI_ERR_ARG);
  CHECK(win_calls == 1); /* reported through the window's own handler */
  CHECK(last_win == win);
  const int before = win_calls;
  MPI_Win_fence(0, win);
  const int value = 1;
  const int rc = MPI_Put(&value, 1, MPI_INT, size + 1, 0, 1, MPI_INT, win);
  CHECK(win_calls == before + 1);
  CHECK(last_win == win);
  CHECK(rc == last_code);
  CHECK(tw_class(rc) == MPI_ERR_RANK);
  CHECK(MPI_Win_call_errhandler(win, MPI_ERR_RMA_SYNC) == MPI_SUCCESS);
  CHECK(win_calls == before + 2);
  CHECK(last_code == MPI_ERR_RMA_SYNC);
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  CHECK(MPI_Errhandler_free(&handler) == MPI_SUCCESS);
  CHECK(MPI_Errhandler_free(&comm_handler) == MPI_SUCCESS);
  /* A handle freed twice, or never made. */
  MPI_Errhandler bogus = 12345;
  CHECK(tw_class(MPI_Errhandler_free(&bogus)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Comm_set_errhandler(MPI_COMM_WORLD, bogus)) == MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void error_codes(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int cls = -1, code = -1, other = -1;
  CHECK(MPI_Add_error_class(&cls) == MPI_SUCCESS);
  CHECK(cls > MPI_ERR_LASTCODE);
  CHECK(MPI_Add_error_code(cls, &code) == MPI_SUCCESS);
  CHECK(code > cls);
  CHECK(MPI_Add_error_code(MPI_ERR_ARG, &other) == MPI_SUCCESS); /* a predefined class */
  int found = -1;
  CHECK(MPI_Error_class(code, &found) == MPI_SUCCESS);
  CHECK(found == cls);
  CHECK(MPI_Error_class(cls, &found) == MPI_SUCCESS);
  CHECK(found == cls);
  CHECK(MPI_Error_class(other, &found) == MPI_SUCCESS);
  CHECK(found == MPI_ERR_ARG);
  char text[MPI_MAX_ERROR_STRING];
  int length = -1;
  CHECK(MPI_Error_string(code, text, &length) == MPI_SUCCESS);
  CHECK(length == 0); /* no string yet */
  CHECK(MPI_Add_error_string(code, "the solver diverged") == MPI_SUCCESS);
  CHECK(MPI_Error_string(code, text, &length) == MPI_SUCCESS);
  CHECK(strcmp(text, "the solver diverged") == 0);
  CHECK(length == (int)strlen("the solver diverged"));
  int* last = NULL;
  int flag = 0;
  CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag) == MPI_SUCCESS);
  CHECK(flag == 1 && last != NULL && *last == other);
  /* A user code travels through a user handler and the class lookup. */
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(on_comm_error, &handler);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
  CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code) == MPI_SUCCESS);
  CHECK(last_code == code);
  CHECK(strcmp(last_text, "the solver diverged") == 0);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&handler);
  /* Misuse: a predefined code's string, a code that is not a class, a
   * code nobody made. */
  CHECK(tw_class(MPI_Add_error_string(MPI_ERR_TAG, "mine")) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Add_error_code(code, &other)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Error_class(code + 1000, &found)) == MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  communicator_handlers();
  window_handlers();
  error_codes();
  return tw_finish("error_handlers") != 0;
}
