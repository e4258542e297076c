// After a rank died, the launcher's barrier still waits for every survivor
// (tests/launcher_test.sh runs this with 4 ranks under tagwire-run).
// MPI_Finalize ends with that barrier so that no rank takes its transport
// down while a live peer may still be reading its last message; answered at
// once after a death, it let each survivor leave on its own
// (docs/using-tagwire.md, "`MPI_Finalize` after a death").
//
// Rank 3 dies (SIGKILL) once everyone has joined. Rank 1 waits 1 s, prints
// the monotonic time at which it enters the barrier, and enters it; rank 0
// enters at once and prints the time at which it came out. Each must come
// out with kPeerFailed (the barrier did not include everyone), and rank 0
// no sooner than rank 1 went in: the script compares the two times.
// Then ranks 0 and 1 meet once more while rank 2, done after one barrier
// (as a survivor that finalized before the death's news reached it),
// stays connected for 1 s and leaves: its leaving must complete the
// second barrier, or the job runs into the script's --timeout (the script
// looks for the launcher's "timeout after" line: the status stays the
// dead rank's).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "bootstrap/bootstrap.h"

namespace {

double monotonic_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main() {
  using namespace tagwire;
  auto boot = bootstrap::create_bootstrap();
  if (!boot) {
    std::fprintf(stderr, "survivors-barrier: %s\n", boot.status().to_string().c_str());
    return 2;
  }
  bootstrap::Bootstrap& b = **boot;
  const int rank = b.rank();
  if (auto all = b.allgather({}); !all) {  // everyone has joined
    std::fprintf(stderr, "survivors-barrier: rank %d: %s\n", rank,
                 all.status().to_string().c_str());
    return 2;
  }
  if (rank == 3) ::raise(SIGKILL);
  if (rank == 1) {
    ::usleep(1000 * 1000);
    std::printf("survivors-barrier: rank 1 enters at %.6f\n", monotonic_seconds());
    std::fflush(stdout);
  }
  int progressed = 0;
  Status s = b.barrier_with_progress([&] { ++progressed; });
  const double out = monotonic_seconds();
  if (s.code() != ErrorCode::kPeerFailed) {
    std::printf("survivors-barrier: rank %d: the barrier returned %s, not peer-failed\n", rank,
                s.to_string().c_str());
    return 1;
  }
  if (rank == 2) {
    ::usleep(1000 * 1000);
  } else if (Status again = b.barrier_with_progress([] {});
             again.code() != ErrorCode::kPeerFailed) {
    std::printf("survivors-barrier: rank %d: the second barrier returned %s\n", rank,
                again.to_string().c_str());
    return 1;
  }
  b.finalized();  // as MPI_Finalize ends: this rank's exit is a normal one
  if (rank == 0) std::printf("survivors-barrier: rank 0 leaves at %.6f\n", out);
  // It waited, serving its transport meanwhile.
  if (rank == 0 && progressed == 0) {
    std::printf("survivors-barrier: rank 0 never progressed while it waited\n");
    return 1;
  }
  std::printf("survivors-barrier: rank %d ok\n", rank);
  return 0;
}
