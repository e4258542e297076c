// The engine's helper thread: progress thread or cancel agent.
//
// Progress thread (TAGWIRE_PROGRESS_THREAD=1): serves the transport all the
// time and sleeps on its event fd when there is nothing to do.
//
// Cancel agent (the default): the standard says MPI_Cancel is local, so a
// sender's cancel must be answered even when this rank computes or sleeps
// and never calls the library. The agent sleeps on the transport's event fd
// (an interrupt, not a spin), and serves the transport only once the
// application has left the library: while the application polls, it
// answers cancels itself, and an agent competing for the lock would only
// add latency to every message.
//
// Either thread takes arrivals into the unexpected queue only up to
// TAGWIRE_UNEXPECTED_LIMIT (Config::unexpected_limit): past it, it leaves
// them in the transport, whose flow control then makes their senders wait
// (a full shared-memory ring, no verbs credits, a full TCP window), as
// they would if this rank had no helper. Without the bound an agent drained
// a flood into the queue while its application slept: 0.8 GiB for 2 M
// 8-byte messages over TCP (issue 31). A cancel that arrives behind the
// flood waits for the application too: the agent cannot reach it.
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/log.h"
#include "common/topology.h"
#include "engine/engine.h"

namespace tagwire::engine {

namespace {

// How long the application must stay out of the library before the agent
// steps in, and how often it looks meanwhile: paid only while the
// application is in the library (it answers cancels itself then).
constexpr auto kAgentNap = std::chrono::milliseconds(5);
// While every look finds the application inside the library (a benchmark,
// a rank that only communicates), the agent doubles its nap up to this:
// each look is a wake-up on some core, OS noise to the ranks, and in the
// soft-RoCE VM 200 looks a second took 15 % of the verbs message rate
// (there a look costs far more than a bare thread's wake-up, for a reason
// not found: docs/measurements.md). A look
// that finds the application outside the library (between calls, or gone
// to compute) looks again after kAgentNap, so the agent still steps in
// within about kAgentNapMax + kAgentNap of the application's leaving.
constexpr auto kAgentNapMax = std::chrono::milliseconds(40);
// While the application is away, the longest the agent sleeps between looks
// when no event wakes it. On a transport that declares wake_events (shm,
// verbs: every kWake message, a cancel request among them, makes the armed
// fd readable) the event is what answers a sleeping peer's cancel, and the
// look only moves other traffic along: a few a second will do, and the
// agent leaves the core to whoever computes. Without it (UCX 1.13's
// shared-memory lanes raise no event for active messages, and refuse to
// arm with cma) the look is what bounds the answer time, at about a
// thousand cheap wake-ups a second.
constexpr int kAwayPollMs = 1;
constexpr int kAwayPollWithEventsMs = 20;
constexpr auto kAwayNap = std::chrono::milliseconds(kAwayPollMs);
// The progress thread's pause when it cannot get in, or has no event fd.
constexpr auto kProgressNap = std::chrono::microseconds(50);
}  // namespace

void Engine::helper_thread_main(HelperMode mode, const Result<Topology>& topology, int pu) {
  const char* name = mode == HelperMode::kAgent ? "cancel agent" : "progress thread";
  if (topology) {
    Status bound = topology->bind_current_thread(pu);
    if (bound.is_ok()) {
      TW_INFO("engine", name << " bound to PU " << pu);
    } else {
      TW_WARN("engine", name << " left unbound: " << bound.to_string());
    }
  }
  const int fd = transport_->event_fd();
  // The progress thread serves every message, and only kWake ones are sure
  // to raise the event: it keeps looking every millisecond.
  const int away_poll_ms =
      mode == HelperMode::kAgent && caps_.wake_events ? kAwayPollWithEventsMs : kAwayPollMs;
  std::uint64_t seen_activity = mutex_.activity();
  auto nap = kAgentNap;
  // The next nap after a look that found the application active: longer
  // while it is inside the library. Found outside (between two calls, or
  // gone to compute), the agent looks again after kAgentNap, which says
  // which of the two it was, and keeps the long nap for the first: a
  // ping-pong is outside between its calls often enough that starting
  // over from kAgentNap there kept the agent looking twice as often as
  // the doubling meant (strace of a 40,000-iteration verbs ping-pong:
  // 1,622 looks a rank before, 706 after).
  auto next_nap = [this, &nap] {
    if (!mutex_.application_waiting()) return kAgentNap;
    nap = std::min(nap * 2, kAgentNapMax);
    return nap;
  };
  while (!stop_helper_thread_.load(std::memory_order_relaxed)) {
    if (mode == HelperMode::kAgent) {
      const std::uint64_t now = mutex_.activity();
      if (now != seen_activity) {
        // The application is in the library, or was a moment ago.
        seen_activity = now;
        std::this_thread::sleep_for(next_nap());
        continue;
      }
    }
    if (!mutex_.helper_try_enter()) {  // the application came back meanwhile
      std::this_thread::sleep_for(mode == HelperMode::kAgent ? next_nap() : kProgressNap);
      continue;
    }
    nap = kAgentNap;
    // Serve until there is nothing to do or the application comes back.
    ++counters_.helper_entries;
    tick_clock();
    report_pending_if_asked();  // a rank that computes still answers SIGUSR1
    unsigned progressed = 0;
    bool full = holds_enough();
    while (!full) {
      progressed = progress_locked();
      counters_.helper_progressed += progressed;
      full = holds_enough();
      if (progressed == 0 || mutex_.application_waiting()) break;
    }
    if (full) {
      // What arrives next stays in the transport until the application
      // asks for it: a full ring or no credits make its sender wait.
      ++counters_.helper_held_back;
      progressed = 0;
    }
    bool armed = false;
    if (progressed == 0 && !full && fd >= 0) {
      auto a = transport_->arm();
      armed = a.is_ok() && *a;
    }
    mutex_.helper_leave();
    if (armed) {
      // Sleep until the NIC / socket / shared memory says there is work.
      pollfd pfd{fd, POLLIN, 0};
      ::poll(&pfd, 1, away_poll_ms);
    } else if (full) {
      // Only the application's receives can make room.
      std::this_thread::sleep_for(std::chrono::milliseconds(away_poll_ms));
    } else if (progressed == 0) {
      std::this_thread::sleep_for(mode == HelperMode::kAgent ? kAwayNap : kProgressNap);
    }
  }
}

}  // namespace tagwire::engine
