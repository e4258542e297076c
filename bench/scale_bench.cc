// What each rank and each connected peer costs, measured on the running job:
//   - start-up: time in Engine::create (bootstrap, address exchange), and the
//     process's memory once the engine is up with 0 peers connected;
//   - per connected peer: resident and proportional memory (RSS, PSS), file
//     descriptors, transport endpoints (QPs on verbs) and registered bytes,
//     found by connecting every pair and dividing the growth by the peers;
//   - time to first message: the first round trip with a peer not yet
//     connected, next to a warm round trip with the same peer.
// Every pair meets in its own round (partner = rank XOR round) after a
// barrier, so a round trip does not wait for a partner still busy elsewhere.
// Rank 0 prints one line (and with --json one JSON line for bench/scale).
//
//   tagwire-run -n N scale_bench [--json] [--warm K]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <time.h>
#include <unistd.h>

#include "bench_check.h"
#include "cancel/send_cancel_factory.h"
#include "engine/engine.h"

namespace {

using namespace tagwire;
using namespace tagwire::engine;
using Clock = std::chrono::steady_clock;
using tagwire::bench::check;

double rss_kb() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1024;
}

// Proportional set size: shared pages (UCX's shared-memory FIFOs, the
// libraries) divided among the processes that map them.
double pss_kb() {
  std::ifstream rollup("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(rollup, line)) {
    double value = 0;
    if (std::sscanf(line.c_str(), "Pss: %lf kB", &value) == 1) return value;
  }
  return 0;
}

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++n;
  }
  return static_cast<double>(n);
}

// Where memory and descriptors stand at one moment.
struct Snapshot {
  double rss_kb = 0;
  double pss_kb = 0;
  double fds = 0;
  double connections = 0;
};

Snapshot snapshot(const Engine& e) {
  return {rss_kb(), pss_kb(), open_fds(), static_cast<double>(e.transport_counters().connections)};
}

// One rank's figures, sent to rank 0 as raw bytes.
struct Sample {
  double init_ms = 0;
  double init_cpu_ms = 0;    // CPU this process spent in it (the job shares the cores)
  double rss_before_kb = 0;  // the process before the engine
  Snapshot init;             // engine up, no message sent
  Snapshot first;            // one peer connected
  Snapshot all;              // every peer connected
  double registered_kb = 0;
  double cold_send_us = 0;  // median first send to a peer not yet connected
  double warm_send_us = 0;  // median send to a connected peer
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double max_of(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// Times the sender's side of each send: the first send to a new peer makes
// the connection inside the call, so cold minus warm is what a connection
// costs the rank that opens it. (Round trips would measure the scheduler:
// the jobs here run many ranks per core.)
struct SendTimes {
  std::vector<double> cold, warm;
};

void ping_pong(Engine& e, int partner, int tag, SendTimes& times) {
  Communicator* w = e.world();
  std::uint64_t word = 0;
  auto timed_send = [&] {
    const auto before = e.transport_counters().connections;
    const auto t0 = Clock::now();
    check(e.send(&word, sizeof(word), partner, tag, w), "send");
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    (e.transport_counters().connections > before ? times.cold : times.warm).push_back(us);
  };
  if (w->rank() < partner) {
    timed_send();
    check(e.recv(&word, sizeof(word), partner, tag, w, nullptr), "recv");
  } else {
    check(e.recv(&word, sizeof(word), partner, tag, w, nullptr), "recv");
    timed_send();
  }
}

// Every pair meets once, in round r with partner rank XOR r; a few more
// round trips follow so that warm sends are timed with the same peers.
void connect_everyone(Engine& e, int warm, Sample& s) {
  Communicator* w = e.world();
  const int n = w->size();
  const int me = w->rank();
  int rounds = 1;
  while (rounds < n) rounds <<= 1;
  SendTimes times;
  for (int r = 1; r < rounds; ++r) {
    const int partner = me ^ r;
    // Round 1 needs no barrier (everyone left the bootstrap's exchange
    // together): its snapshot is the cost of the first connection alone.
    if (r > 1) check(e.barrier(w), "barrier");
    if (partner < n) {
      for (int i = 0; i <= warm; ++i) ping_pong(e, partner, r, times);
    }
    if (r == 1) s.first = snapshot(e);
  }
  s.cold_send_us = median(times.cold);
  s.warm_send_us = median(times.warm);
}

// Prints rank 0's summary; false when the figures do not describe what
// should have happened (connections before the first message, or a pair
// connected twice or never).
bool report(const std::vector<Sample>& all, std::string_view transport_name,
            std::size_t address_bytes, bool json) {
  const auto n = static_cast<int>(all.size());
  std::vector<double> init_ms, init_cpu, rss_init, engine_kb, first_kb, peer_rss, peer_pss,
      peer_fds, conns_init, conns, registered, cold, hot;
  for (const Sample& x : all) {
    init_ms.push_back(x.init_ms);
    init_cpu.push_back(x.init_cpu_ms);
    rss_init.push_back(x.init.rss_kb);
    engine_kb.push_back(x.init.rss_kb - x.rss_before_kb);
    first_kb.push_back(x.first.rss_kb - x.init.rss_kb);
    // Past the first peer: the marginal cost of one more connection.
    const double more = x.all.connections - x.first.connections;
    if (more > 0) {
      peer_rss.push_back((x.all.rss_kb - x.first.rss_kb) / more);
      peer_pss.push_back((x.all.pss_kb - x.first.pss_kb) / more);
      peer_fds.push_back((x.all.fds - x.first.fds) / more);
    }
    conns_init.push_back(x.init.connections);
    conns.push_back(x.all.connections);
    registered.push_back(x.registered_kb);
    if (x.cold_send_us > 0) cold.push_back(x.cold_send_us);
    if (x.warm_send_us > 0) hot.push_back(x.warm_send_us);
  }
  const std::string transport(transport_name);
  struct Field {
    const char* key;  // JSON name
    const char* label;
    double value;
    int decimals;
  };
  const Field fields[] = {
      {"init_ms_median", "init ms", median(init_ms), 1},
      {"init_ms_max", "init ms (max)", max_of(init_ms), 1},
      {"init_cpu_ms", "init CPU ms", median(init_cpu), 1},
      {"rss_init_kb", "RSS at init KiB", mean(rss_init), 0},
      {"engine_init_kb", "of which the engine KiB", mean(engine_kb), 0},
      {"first_peer_kb", "first peer KiB", mean(first_kb), 0},
      {"connections_at_init", "connections at init", max_of(conns_init), 0},
      {"connections", "connections after all-to-all", mean(conns), 0},
      {"per_peer_rss_kb", "per further peer RSS KiB", mean(peer_rss), 1},
      {"per_peer_pss_kb", "PSS KiB", mean(peer_pss), 1},
      {"per_peer_fds", "fds", mean(peer_fds), 2},
      {"registered_kb", "registered KiB", mean(registered), 0},
      {"address_bytes", "address B", static_cast<double>(address_bytes), 0},
      {"cold_send_us", "send to a new peer us", median(cold), 1},
      {"warm_send_us", "warm send us", median(hot), 2},
  };
  if (json) {
    std::printf("{\"ranks\":%d,\"transport\":\"%s\"", n, transport.c_str());
    for (const Field& f : fields) std::printf(",\"%s\":%.*f", f.key, f.decimals, f.value);
    std::printf("}\n");
  } else {
    std::printf("%d ranks over %s:", n, transport.c_str());
    for (const Field& f : fields) std::printf(" %s %.*f;", f.label, f.decimals, f.value);
    std::printf("\n");
  }
  bool ok = true;
  if (max_of(conns_init) != 0 && transport != "verbs") {
    std::fprintf(stderr, "scale_bench: connections existed before any message\n");
    ok = false;
  }
  for (const Sample& x : all) {
    if (x.all.connections != n - 1) {
      std::fprintf(stderr, "scale_bench: a rank holds %.0f connections, expected %d\n",
                   x.all.connections, n - 1);
      ok = false;
      break;
    }
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  int warm = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--warm" && i + 1 < argc) {
      warm = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: tagwire-run -n N %s [--json] [--warm K]\n", argv[0]);
      return 2;
    }
  }
  Sample s;
  s.rss_before_kb = rss_kb();
  const auto t0 = Clock::now();
  const double cpu0 = cpu_ms();
  auto engine =
      check(Engine::create_from_environment(tagwire::cancel::kSendCancelLayer), "engine start");
  s.init_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  s.init_cpu_ms = cpu_ms() - cpu0;
  Engine& e = *engine;
  s.init = snapshot(e);
  connect_everyone(e, warm, s);
  check(e.barrier(e.world()), "barrier");
  s.all = snapshot(e);
  s.registered_kb = static_cast<double>(e.transport_counters().registered_bytes) / 1024;

  // Rank 0 collects every rank's sample (everyone is connected by now).
  Communicator* w = e.world();
  const int n = w->size();
  std::vector<Sample> all{s};
  if (w->rank() == 0) {
    for (int r = 1; r < n; ++r) {
      Sample theirs;
      check(e.recv(&theirs, sizeof(theirs), r, 0, w, nullptr), "gather");
      all.push_back(theirs);
    }
  } else {
    check(e.send(&s, sizeof(s), 0, 0, w), "gather");
  }
  if (w->rank() == 0 && !report(all, e.transport_name(), e.address_bytes(), json)) return 1;
  check(e.finalize(), "finalize");
  return 0;
}
