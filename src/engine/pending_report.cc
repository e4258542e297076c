// What a hung job needs to say: every operation under way at this rank
// (tagwire-run asks on --timeout, a user with kill -USR1). The report is
// asked for from a signal handler, so asking only sets a flag; the engine
// writes the report at its next look around (every 256 polls, at most
// every 10 ms, while the application waits in the library) or when a
// helper thread wakes (every 20 ms while the application is away).
#include <atomic>
#include <cstdio>
#include <sstream>

#include "common/log.h"
#include "engine/engine.h"

namespace tagwire::engine {

namespace {

std::atomic<bool> g_report_asked{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

constexpr std::size_t kMostLines = 200;  // a rank with thousands pending: the first ones

const char* mode_name(SendMode mode) {
  switch (mode) {
    case SendMode::kStandard:
      return "send";
    case SendMode::kSynchronous:
      return "ssend";
    case SendMode::kReady:
      return "rsend";
    case SendMode::kBuffered:
      return "bsend";
  }
  return "send";
}

std::string rank_text(int rank) {
  if (rank == matching::kAnySource) return "any";
  if (rank == kProcNull) return "null";
  return std::to_string(rank);
}

}  // namespace

void Engine::ask_for_pending_report() {
  g_report_asked.store(true, std::memory_order_relaxed);
}

void Engine::tick_clock(std::chrono::steady_clock::time_point now) {
  // A coarse time point (look_around) may sit a tick before the start.
  const auto elapsed = now > clock_start_ ? now - clock_start_ : std::chrono::nanoseconds(0);
  clock_ms_.store(static_cast<std::uint32_t>(
                      std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()),
                  std::memory_order_relaxed);
}

void Engine::report_pending_if_asked() {
  if (!g_report_asked.load(std::memory_order_relaxed)) return;
  g_report_asked.store(false, std::memory_order_relaxed);
  tick_clock();
  // Written whatever the log level: it was asked for.
  log::write(log::Level::kWarn, "pending", pending_report());
}

std::string Engine::pending_report() {
  const std::uint32_t now = clock_ms_.load(std::memory_order_relaxed);
  std::ostringstream out;
  std::size_t count = 0;
  std::ostringstream lines;
  requests_.for_each([&](Request* r) {
    if (!r->active() || r->complete()) return;
    if (++count > kMostLines) return;
    lines << "\n  ";
    const double age = static_cast<double>(now - r->started_ms) / 1000.0;  // seconds
    if (r->kind == RequestKind::kGeneralized) {
      lines << "generalized request, for " << age << " s: waiting for MPI_Grequest_complete";
      return;
    }
    if (r->kind == RequestKind::kSchedule) {
      lines << "nonblocking collective on context "
            << (r->comm != nullptr ? r->comm->collective_context() : 0) << ", for " << age
            << " s (its sends and receives are listed apart)";
      return;
    }
    const bool receive = r->kind == RequestKind::kReceive;
    lines << (r->collective ? "collective " : "") << (receive ? "receive" : mode_name(r->mode))
          << (receive ? " from rank " : " to rank ") << rank_text(r->peer);
    if (r->comm != nullptr && r->peer >= 0) {
      lines << " (world " << r->comm->peer_world_rank(r->peer, r->peer_in_own_group()) << ")";
    }
    lines << ", tag "
          << (r->tag == matching::kAnyTag ? std::string("any") : std::to_string(r->tag));
    if (r->comm != nullptr) {
      lines << ", context "
            << (r->collective ? r->comm->collective_context() : r->comm->p2p_context());
    }
    lines << ", " << r->bytes << " B, for " << age << " s: ";
    if (receive) {
      lines << (r->rendezvous != nullptr
                    ? "matched, reading the data from rank " + std::to_string(r->rendezvous->origin)
                    : std::string("posted, no message matched yet"));
    } else {
      std::string waits;
      if (r->local_pending > 0) waits += "the transport to send it";
      if (r->awaits(kRemoteAnswer)) {
        waits += std::string(waits.empty() ? "" : ", ") + (r->mode == SendMode::kSynchronous
                                                               ? "the receiver to match it"
                                                               : "the receiver to read it");
      }
      if (r->awaits(kCancelAnswer))
        waits += std::string(waits.empty() ? "" : ", ") + "a cancel's answer";
      lines << "waiting for " << (waits.empty() ? "completion" : waits);
    }
  });
  // A blocking receive waiting without a request (unnamed_receive.h).
  if (unnamed_.state == UnnamedReceive::State::kArmed) {
    ++count;
    const matching::ReceivePattern& p = unnamed_.pattern;
    lines << "\n  blocking receive from rank " << rank_text(p.source) << ", tag "
          << (p.tag == matching::kAnyTag ? std::string("any") : std::to_string(p.tag))
          << ", context " << p.context << ", " << unnamed_.bytes
          << " B: posted, no message matched yet";
  }
  out << count << " operation" << (count == 1 ? "" : "s") << " pending";
  if (count > kMostLines) out << " (the first " << kMostLines << " shown)";
  out << (count == 0 ? "" : ":") << lines.str();
  return out.str();
}

}  // namespace tagwire::engine
