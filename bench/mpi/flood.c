/* An unexpected-message flood (issue 31): rank 0 sends N small messages to
 * rank 1, which sleeps outside the library first, then receives them all.
 * What a receiver holds meanwhile is the library's choice: it can make the
 * sender wait, or take everything in and grow. Prints the job's seconds
 * (rank 0, from the first send to the receiver's answer) and each rank's
 * peak resident set, and checks every message arrived once, in order.
 *
 *   flood [MESSAGES] [BYTES] [SLEEP_SECONDS]
 *   prints "flood seconds S receiver_rss_mib R sender_rss_mib T"
 *
 * Plain MPI: bench/compare --flood builds it with each MPI's wrapper. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static double peak_rss_mib(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_maxrss / 1024.0; /* ru_maxrss is in KiB on Linux */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long messages = argc > 1 ? atol(argv[1]) : 2000000;
  const long bytes = argc > 2 ? atol(argv[2]) : 8;
  const double nap = argc > 3 ? atof(argv[3]) : 5.0;
  if (size != 2 || messages <= 0 || bytes < 8) {
    if (rank == 0) fprintf(stderr, "flood: 2 ranks, MESSAGES > 0, BYTES >= 8\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* buffer = calloc(1, (size_t)bytes);
  double answer[2] = {0, 0}; /* receiver: messages out of order, its peak RSS */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const double t0 = MPI_Wtime();
    for (long i = 0; i < messages; ++i) {
      const uint64_t sequence = (uint64_t)i;
      memcpy(buffer, &sequence, sizeof sequence);
      MPI_Send(buffer, (int)bytes, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
    }
    MPI_Recv(answer, 2, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const double seconds = MPI_Wtime() - t0;
    if (answer[0] != 0) {
      fprintf(stderr, "flood: %.0f messages arrived out of order or not at all\n", answer[0]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("flood seconds %.3f receiver_rss_mib %.1f sender_rss_mib %.1f\n", seconds, answer[1],
           peak_rss_mib());
  } else {
    usleep((useconds_t)(nap * 1e6)); /* away from the library */
    long wrong = 0;
    for (long i = 0; i < messages; ++i) {
      uint64_t sequence = 0;
      MPI_Recv(buffer, (int)bytes, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      memcpy(&sequence, buffer, sizeof sequence);
      if (sequence != (uint64_t)i) ++wrong;
    }
    answer[0] = (double)wrong;
    answer[1] = peak_rss_mib();
    MPI_Send(answer, 2, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD);
  }
  free(buffer);
  MPI_Finalize();
  return 0;
}
