// What a send cancel costs: the time from MPI_Cancel to the end of the
// Wait that follows, between ranks 0 (sender) and 1 (receiver), for an
// eager and a rendezvous size, in three situations:
//   unmatched  the receiver has posted nothing and sits in the library
//              (it answers the cancel itself): cancelled;
//   matched    the receiver has already received the message: the cancel
//              is refused (one round trip);
//   away       the receiver has posted nothing and sleeps, never calling
//              the library: its cancel agent answers.
// Run with tagwire-run -n 2. Prints microseconds per Cancel+Wait, median of
// the iterations, and checks every outcome.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench_check.h"
#include "cancel/send_cancel_factory.h"
#include "engine/engine.h"

namespace {

using namespace tagwire;
using namespace tagwire::engine;
using tagwire::bench::check;
using Clock = std::chrono::steady_clock;

constexpr int kData = 1, kDone = 2, kToken = 3;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "cancel_bench: %s\n", what);
    std::exit(1);
  }
}

// Rank 0 cancels `iterations` sends that rank 1 never receives. `away`:
// rank 1 sleeps through it instead of waiting in the library.
double unmatched(Engine& e, std::vector<char>& buf, std::size_t size, int iterations, bool away) {
  Communicator* w = e.world();
  std::vector<double> us;
  check(e.barrier(w), "barrier");
  if (w->rank() == 0) {
    for (int i = 0; i < iterations; ++i) {
      Request* s = check(e.isend(buf.data(), size, 1, kData, w), "isend");
      const auto t0 = Clock::now();
      check(e.cancel(s), "cancel");
      MessageStatus st;
      check(e.wait(s, &st), "wait");
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      expect(st.cancelled, "an unreceived send was not cancelled");
    }
    char done = 1;
    check(e.send(&done, 1, 1, kDone, w), "send done");
  } else if (w->rank() == 1) {
    if (away) {
      // Long enough for rank 0's whole loop; no library call meanwhile.
      std::this_thread::sleep_for(std::chrono::milliseconds(200 + iterations * 2));
    }
    char done = 0;
    check(e.recv(&done, 1, 0, kDone, w, nullptr), "recv done");
    bool stray = check(e.iprobe(0, kData, w, nullptr), "iprobe");
    expect(!stray, "a cancelled message was left at the receiver");
  }
  return median(us);
}

// Rank 1 receives each message before rank 0 cancels it: always refused.
double matched(Engine& e, std::vector<char>& buf, std::size_t size, int iterations) {
  Communicator* w = e.world();
  std::vector<double> us;
  check(e.barrier(w), "barrier");
  char token = 0;
  for (int i = 0; i < iterations; ++i) {
    if (w->rank() == 0) {
      Request* s = check(e.isend(buf.data(), size, 1, kData, w), "isend");
      check(e.recv(&token, 1, 1, kToken, w, nullptr), "recv token");  // received by now
      const auto t0 = Clock::now();
      check(e.cancel(s), "cancel");
      MessageStatus st;
      check(e.wait(s, &st), "wait");
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      expect(!st.cancelled, "a received send was cancelled");
    } else if (w->rank() == 1) {
      check(e.recv(buf.data(), size, 0, kData, w, nullptr), "recv");
      check(e.send(&token, 1, 0, kToken, w), "send token");
    }
  }
  return median(us);
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (iterations <= 0) {
    std::fprintf(stderr, "usage: tagwire-run -n 2 cancel_bench [iterations]\n");
    return 2;
  }
  auto engine =
      check(Engine::create_from_environment(tagwire::cancel::kSendCancelLayer), "engine start");
  Engine& e = *engine;
  if (e.world_size() < 2) {
    std::fprintf(stderr, "cancel_bench needs 2 ranks: tagwire-run -n 2 %s\n", argv[0]);
    return 2;
  }
  const std::size_t sizes[] = {8, e.config().eager_threshold * 8};
  std::vector<char> buf(sizes[1], 'c');
  if (e.world_rank() == 0) {
    std::printf(
        "# Cancel + Wait over %s, %s cancel, median microseconds (%d iterations; away: %d)\n",
        std::string(e.transport_name()).c_str(), e.cancels_one_sided() ? "one-sided" : "agent",
        iterations, iterations / 10);
    std::printf("%-10s %12s %12s %12s\n", "bytes", "unmatched", "matched", "away");
  }
  for (std::size_t size : sizes) {
    double u = unmatched(e, buf, size, iterations, false);
    double m = matched(e, buf, size, iterations);
    double a = unmatched(e, buf, size, std::max(10, iterations / 10), true);
    if (e.world_rank() == 0) std::printf("%-10zu %12.2f %12.2f %12.2f\n", size, u, m, a);
    std::fflush(stdout);
  }
  check(e.finalize(), "finalize");
  return 0;
}
