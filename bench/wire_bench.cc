// Wire benchmarks over the engine, in the OSU point-to-point shapes:
//   latency   ping-pong between ranks 0 and 1, half round-trip time
//   bw        rank 0 streams a window of messages to rank 1, which acks each window
//   rate      like bw, 8-byte messages: messages per second
// Sizes run in powers of two between --min and --max; iterations shrink as
// size grows. Run with tagwire-run -n 2. Output: one line per size, and
// with --json a machine-readable line per size for bench/compare.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_check.h"
#include "cancel/send_cancel_factory.h"
#include "engine/engine.h"

namespace {

using namespace tagwire;
using namespace tagwire::engine;
using Clock = std::chrono::steady_clock;
using tagwire::bench::check;

struct Args {
  std::string test = "latency";
  std::size_t min_size = 0;
  std::size_t max_size = 4u << 20;
  int window = 64;
  double scale = 1.0;  // multiplies iteration counts
  bool json = false;
};

int iterations_for(std::size_t size, double scale, int base) {
  int n = size <= 8192 ? base : static_cast<int>(base * 8192.0 / static_cast<double>(size));
  return std::max(10, static_cast<int>(n * scale));
}

double latency_us(Engine& e, std::vector<char>& buf, std::size_t size, int iterations) {
  Communicator* w = e.world();
  const int me = w->rank();
  const int warmup = std::max(2, iterations / 10);
  Clock::time_point t0;
  for (int i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) t0 = Clock::now();
    if (me == 0) {
      check(e.send(buf.data(), size, 1, 1, w), "send");
      check(e.recv(buf.data(), size, 1, 1, w, nullptr), "recv");
    } else if (me == 1) {
      check(e.recv(buf.data(), size, 0, 1, w, nullptr), "recv");
      check(e.send(buf.data(), size, 0, 1, w), "send");
    }
  }
  double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  return us / iterations / 2;
}

// Returns messages per second; bandwidth = that * size.
double stream_rate(Engine& e, std::vector<char>& buf, std::size_t size, int windows, int window) {
  Communicator* w = e.world();
  const int me = w->rank();
  std::vector<Request*> requests(static_cast<std::size_t>(window));
  char ack = 0;
  const int warmup = std::max(1, windows / 10);
  Clock::time_point t0;
  for (int i = 0; i < warmup + windows; ++i) {
    if (i == warmup) t0 = Clock::now();
    for (int k = 0; k < window; ++k) {
      requests[static_cast<std::size_t>(k)] =
          me == 0 ? check(e.isend(buf.data(), size, 1, 2, w), "isend")
                  : check(e.irecv(buf.data(), size, 0, 2, w), "irecv");
    }
    check(e.wait_all(requests, {}), "wait_all");
    if (me == 0) {
      check(e.recv(&ack, 1, 1, 3, w, nullptr), "ack recv");
    } else {
      check(e.send(&ack, 1, 0, 3, w), "ack send");
    }
  }
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return static_cast<double>(windows) * window / s;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto next = [&] {
      return i + 1 < argc ? argv[++i] : (std::fprintf(stderr, "missing value\n"), std::exit(2), "");
    };
    if (s == "--test")
      a.test = next();
    else if (s == "--min")
      a.min_size = std::strtoull(next(), nullptr, 0);
    else if (s == "--max")
      a.max_size = std::strtoull(next(), nullptr, 0);
    else if (s == "--window")
      a.window = std::atoi(next());
    else if (s == "--scale")
      a.scale = std::atof(next());
    else if (s == "--json")
      a.json = true;
    else {
      std::fprintf(stderr,
                   "usage: tagwire-run -n 2 wire_bench [--test latency|bw|rate] [--min B] [--max B]"
                   " [--window N] [--scale X] [--json]\n");
      return 2;
    }
  }
  auto engine =
      check(Engine::create_from_environment(tagwire::cancel::kSendCancelLayer), "engine start");
  Engine& e = *engine;
  if (e.world_size() < 2) {
    std::fprintf(stderr, "wire_bench needs 2 ranks: tagwire-run -n 2 %s\n", argv[0]);
    return 2;
  }
  std::vector<char> buf(std::max<std::size_t>(a.max_size, 8), 'x');
  if (e.world_rank() == 0 && !a.json) {
    std::printf("# tagwire %s over %s, eager threshold %zu B\n", a.test.c_str(),
                std::string(e.transport_name()).c_str(), e.config().eager_threshold);
    std::printf(a.test == "latency" ? "%-10s %12s\n" : "%-10s %12s %14s\n", "bytes",
                a.test == "latency" ? "latency_us" : "MB/s", "messages/s");
  }
  std::vector<std::size_t> sizes;
  if (a.test == "rate") {
    sizes.push_back(8);
  } else {
    for (std::size_t s = a.min_size; s <= a.max_size; s = s == 0 ? 1 : s * 2) sizes.push_back(s);
  }
  for (std::size_t size : sizes) {
    check(e.barrier(e.world()), "barrier");
    if (a.test == "latency") {
      double us = latency_us(e, buf, size, iterations_for(size, a.scale, 10000));
      if (e.world_rank() == 0) {
        if (a.json) {
          std::printf("{\"test\":\"latency\",\"bytes\":%zu,\"latency_us\":%.3f}\n", size, us);
        } else {
          std::printf("%-10zu %12.2f\n", size, us);
        }
      }
    } else {
      int windows = std::max(5, iterations_for(size, a.scale, 2000) / 10);
      double rate = stream_rate(e, buf, size, windows, a.window);
      if (e.world_rank() == 0) {
        double mbs = rate * static_cast<double>(size) / 1e6;
        if (a.json) {
          std::printf("{\"test\":\"%s\",\"bytes\":%zu,\"mb_per_s\":%.3f,\"messages_per_s\":%.1f}\n",
                      a.test.c_str(), size, mbs, rate);
        } else {
          std::printf("%-10zu %12.2f %14.0f\n", size, mbs, rate);
        }
      }
    }
    std::fflush(stdout);
  }
  check(e.finalize(), "finalize");
  return 0;
}
