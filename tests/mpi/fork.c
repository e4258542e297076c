/* fork() after MPI_Init, as programs do it (a helper child that exits,
 * system()): the child must neither finalize nor talk on the job's
 * connections, and the parent's job must go on unharmed. */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* The child's status, or -1 if it did not end within 20 s (then killed). */
static int reap(pid_t child) {
  for (int i = 0; i < 2000; ++i) {
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) return status;
    struct timespec ten_ms = {0, 10 * 1000 * 1000};
    nanosleep(&ten_ms, NULL);
  }
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  return -1;
}

static void check_job_works(int round) {
  int sum = 0, mine = rank + round;
  CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(sum == size * (size - 1) / 2 + size * round);
  int got = -1, next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, next, round, &got, 1, MPI_INT, prev, round, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(got == prev);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check_job_works(0);

  /* A child that leaves by exit(): atexit handlers and static destructors
   * run in it, the library's among them. */
  pid_t child = fork();
  if (child == 0) exit(0);
  int status = reap(child);
  CHECK(status != -1);                                  /* it ended (no finalize barrier) */
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0); /* and cleanly (no assertion) */
  check_job_works(1);

  /* A child that returns its own status the same way. */
  child = fork();
  if (child == 0) exit(5);
  status = reap(child);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 5);

  /* system(): fork and exec. */
  CHECK(system("exit 3") == 3 << 8);
  check_job_works(2);

  /* A child that lives on while the parents talk, then exits. */
  child = fork();
  if (child == 0) {
    struct timespec fifty_ms = {0, 50 * 1000 * 1000};
    nanosleep(&fifty_ms, NULL);
    exit(0);
  }
  check_job_works(3);
  status = reap(child);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  check_job_works(4);
  return tw_finish("fork") != 0;
}
