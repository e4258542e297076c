/* A flood of unexpected messages to a rank that sleeps outside the library
 * (issue 31): its helper thread takes them in only up to
 * TAGWIRE_UNEXPECTED_LIMIT, and the senders wait for the rest; nothing is
 * lost or reordered, and the receiver's own receives then take it all.
 * Rank 0 receives; every other rank sends kMessages 8-byte messages. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

enum { kMessages = 40000 };
static const unsigned long long kLimit = 1 << 20; /* the setting below */

static unsigned long long read_pvar(const char* name) {
  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
  int index = -1, count = 0;
  unsigned long long value = 0;
  CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_read(session, handle, &value) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_handle_free(session, &handle) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_session_free(&session) == MPI_SUCCESS);
  return value;
}

int main(int argc, char** argv) {
  /* Unless the job says otherwise (a run with the bound lifted must fail). */
  setenv("TAGWIRE_UNEXPECTED_LIMIT", "1M", 0);
  int provided = 0;
  MPI_Init(&argc, &argv);
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) {
    for (uint64_t i = 0; i < kMessages; ++i) {
      CHECK(MPI_Send(&i, 8, MPI_BYTE, 0, 3, MPI_COMM_WORLD) == MPI_SUCCESS);
    }
  } else {
    /* Away from the library while the senders flood: only the helper
     * thread takes messages in now. Unbounded it took them all: 128 bytes
     * each, 5 MB per sender here. */
    usleep(1500 * 1000);
    const unsigned long long peak = read_pvar("tagwire_unexpected_bytes_peak");
    const unsigned long long held_back = read_pvar("tagwire_helper_held_back");
    /* The bound is checked between polls: one poll may take a ring's
     * worth (or a socket buffer's) from each sender past it. Either the
     * bound stopped the helper, or the transport's own flow control held
     * the senders first (verbs: the eager ring's credits stopped them at
     * about 0.5 MB on rxe0). */
    CHECK(peak <= 3 * kLimit);
    CHECK(peak < kLimit || held_back > 0);
    if (peak > 3 * kLimit || (peak >= kLimit && held_back == 0))
      fprintf(stderr, "[rank 0] peak %llu bytes held, held back %llu times\n", peak, held_back);
    for (int source = 1; source < size; ++source) {
      int out_of_order = 0;
      for (uint64_t i = 0; i < kMessages; ++i) {
        uint64_t got = UINT64_MAX;
        MPI_Status status;
        CHECK(MPI_Recv(&got, 8, MPI_BYTE, source, 3, MPI_COMM_WORLD, &status) == MPI_SUCCESS);
        if (got != i) ++out_of_order;
      }
      CHECK(out_of_order == 0);
    }
    /* The application's own receives are not bounded: they took the rest. */
    CHECK(read_pvar("tagwire_unexpected_bytes_peak") >= peak);
  }
  MPI_T_finalize();
  return tw_finish("flood_bound") != 0;
}
