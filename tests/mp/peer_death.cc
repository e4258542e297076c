// A rank killed mid-exchange (tests/peer_death_test.sh runs this with 3
// ranks under tagwire-run). Rank 2 is the victim. Before it dies, rank 0
// has towards it: a posted receive (eager, never sent), a rendezvous send
// whose FIN will never come, a send whose cancel is in flight, and a
// posted wildcard receive on the world; rank 1 waits in a blocking
// wildcard receive with nothing else posted, which the engine serves
// without a request (src/engine/unnamed_receive.h). Rank 2 then stops calling the
// library and is killed with SIGKILL. The survivors must see every one of
// those operations complete with kPeerFailed within a bound, new
// operations towards rank 2 fail at once, and operations between the two
// live ranks still work. Each survivor prints "peer-death: rank R ok".
//
// Run with TAGWIRE_CANCEL_AGENT=0: the victim's agent would otherwise
// answer the cancel before the kill.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cancel/send_cancel_factory.h"
#include "engine/engine.h"

namespace {

using namespace tagwire;
using namespace tagwire::engine;
using Clock = std::chrono::steady_clock;

int g_failures = 0;
int g_rank = -1;

void expect(bool ok, const std::string& what) {
  if (ok) return;
  ++g_failures;
  std::fprintf(stderr, "peer-death: rank %d: FAILED: %s\n", g_rank, what.c_str());
}

// Waits for `r` and checks that it failed because rank 2 died, in time.
void expect_peer_failed(Engine& e, Request* r, const char* what, double bound_s) {
  const auto t0 = Clock::now();
  MessageStatus st;
  Status s = e.wait(r, &st);
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  const Status& err = s.is_ok() ? st.error : s;
  expect(err.code() == ErrorCode::kPeerFailed,
         std::string(what) + ": expected a peer-failed error, got '" + err.to_string() + "'");
  expect(waited < bound_s, std::string(what) + " took " + std::to_string(waited) + " s");
  std::printf("peer-death: rank %d: %s failed after %.3f s: %s\n", g_rank, what, waited,
              err.to_string().c_str());
}

void exchange_with(Engine& e, int peer, std::size_t bytes, int tag) {
  Communicator* w = e.world();
  std::vector<std::uint8_t> out(bytes), in(bytes, 0);
  for (std::size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::uint8_t>(i * 7 + tag);
  auto r = e.irecv(in.data(), bytes, peer, tag, w);
  expect(r.is_ok(), "irecv from a live peer");
  Status s = e.send(out.data(), bytes, peer, tag, w);
  expect(s.is_ok(), "send to a live peer: " + s.to_string());
  MessageStatus st;
  if (r) expect(e.wait(*r, &st).is_ok() && st.error.is_ok(), "receive from a live peer");
  expect(in == out, "content from a live peer (" + std::to_string(bytes) + " B)");
}

}  // namespace

int main() {
  auto created = Engine::create_from_environment(tagwire::cancel::kSendCancelLayer);
  if (!created) {
    std::fprintf(stderr, "engine: %s\n", created.status().to_string().c_str());
    return 1;
  }
  Engine& e = **created;
  Communicator* w = e.world();
  g_rank = w->rank();
  if (w->size() != 3) {
    std::fprintf(stderr, "peer_death needs 3 ranks\n");
    return 2;
  }
  const std::size_t big = e.config().eager_threshold * 4;
  std::vector<std::uint8_t> big_out(big, 0x5a), small_out(8, 1), in(64);
  Request* posted_receive = nullptr;
  Request* rendezvous_send = nullptr;
  Request* cancelled_send = nullptr;
  Request* wildcard = nullptr;
  if (g_rank == 0) {
    posted_receive = e.irecv(in.data(), in.size(), 2, 5, w).value();
    rendezvous_send = e.isend(big_out.data(), big, 2, 6, w, SendMode::kStandard).value();
    cancelled_send = e.isend(small_out.data(), 8, 2, 7, w, SendMode::kSynchronous).value();
    wildcard = e.irecv(in.data(), in.size(), matching::kAnySource, 9, w).value();
  }
  // Everything above is on its way before the victim stops.
  expect(e.barrier(w).is_ok(), "barrier before the kill");
  // The victim says it has stopped calling the library before rank 0
  // cancels: a cancel that reached a victim still progressing (in the
  // barrier's last round) would be answered, legitimately, and the test
  // would see a cancelled send instead of a cancel in flight.
  int word = 0;
  if (g_rank == 2) {
    expect(e.send(&word, sizeof(word), 0, 77, w).is_ok(), "victim's last word");
    // Busy elsewhere (no library call), then killed: the cancel request
    // and the rendezvous stay unanswered.
    usleep(300 * 1000);
    raise(SIGKILL);
  }
  if (g_rank == 0) {
    expect(e.recv(&word, sizeof(word), 2, 77, w, nullptr).is_ok(), "the victim's last word");
    expect(e.cancel(cancelled_send).is_ok(), "cancel call");
  }

  // A generous bound: the launcher's notice is polled every 10 ms.
  constexpr double kBound = 5.0;
  if (g_rank == 0) {
    expect_peer_failed(e, posted_receive, "posted receive from rank 2", kBound);
    expect_peer_failed(e, rendezvous_send, "rendezvous send to rank 2", kBound);
    expect_peer_failed(e, cancelled_send, "send with its cancel in flight", kBound);
    expect_peer_failed(e, wildcard, "ANY_SOURCE receive on the world", kBound);
  } else {
    // Armed before rank 2 stops (it sleeps 300 ms first), failed by the
    // launcher's notice: no request exists for the failure to find.
    const auto t0 = Clock::now();
    MessageStatus st;
    Status s = e.receive(in.data(), in.size(), matching::kAnySource, 9, w, &st);
    const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
    expect(s.is_ok(), "blocking ANY_SOURCE receive: the call itself: " + s.to_string());
    expect(st.error.code() == ErrorCode::kPeerFailed,
           "blocking ANY_SOURCE receive: expected a peer-failed error, got '" +
               st.error.to_string() + "'");
    expect(waited < kBound, "blocking ANY_SOURCE receive took " + std::to_string(waited) + " s");
    std::printf("peer-death: rank %d: blocking ANY_SOURCE receive failed after %.3f s: %s\n",
                g_rank, waited, st.error.to_string().c_str());
  }
  // New operations towards the dead rank fail at once.
  auto late_send = e.isend(small_out.data(), 8, 2, 8, w, SendMode::kStandard);
  expect(!late_send && late_send.status().code() == ErrorCode::kPeerFailed,
         "a new send to rank 2 fails at once");
  auto late_recv = e.irecv(in.data(), 8, 2, 8, w);
  expect(late_recv.is_ok(), "a new receive from rank 2 is accepted");
  if (late_recv) expect_peer_failed(e, *late_recv, "new receive from rank 2", 0.5);

  // The live pair still talks, eager and rendezvous.
  const int other = 1 - g_rank;
  exchange_with(e, other, 8, 20);
  exchange_with(e, other, big, 21);

  // Finalize includes the dead rank: it must end, and say why.
  Status fin = e.finalize();
  expect(fin.code() == ErrorCode::kPeerFailed,
         "finalize reports the dead rank: " + fin.to_string());
  created->reset();
  if (g_failures == 0) std::printf("peer-death: rank %d ok\n", g_rank);
  std::fflush(stdout);
  return g_failures == 0 ? 0 : 1;
}
