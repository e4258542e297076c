// A dead peer (docs/architecture.md §5, issue 9): when the launcher reports that a rank
// died, every pending operation that can only finish with that rank's help
// completes with kPeerFailed (MPI_ERR_PROC_FAILED) instead of waiting for
// ever, and new operations towards it fail at once. Operations with live
// peers are untouched: the transport keeps its other connections.
//
// The report arrives on the bootstrap's connection to the launcher, which
// progress() looks at every kFailurePollTicks calls and at most every
// kFailurePollInterval: an 8-byte ping-pong is not slowed by a system call.
#include <chrono>
#include <string>
#include <thread>

#include "common/coarse_clock.h"
#include "common/log.h"
#include "engine/engine.h"

namespace tagwire::engine {

namespace {
constexpr auto kFailurePollInterval = std::chrono::milliseconds(10);
// How long a transport error waits for the launcher's verdict on its peer
// (held_errors.h). The notice follows the death by the launcher's reaping
// and one poll here: milliseconds, more on a loaded machine.
constexpr auto kVerdictWait = std::chrono::seconds(1);
}  // namespace

// Whether the transport's error `s` may be a death the launcher has yet
// to report: not when the transport already said so, nor under a launcher
// that reports none.
bool Engine::worth_a_verdict(const Status& s) const {
  return s.code() != ErrorCode::kPeerFailed && bootstrap_->reports_deaths();
}

void Engine::note_peer_error(Request* r, int world_peer, const Status& s) {
  if (world_peer < 0 || !worth_a_verdict(s) || !r->status.error.is_ok()) {
    return note_error(r, s);
  }
  if (is_dead(world_peer)) return note_error(r, peer_failed_status(world_peer));
  if (r->awaits(kPeerVerdict)) return;  // one held already: the first error wins
  TW_DEBUG("engine", "holding " << s.to_string() << " with rank " << world_peer
                                << " for the launcher's word on it");
  r->await(kPeerVerdict);
  held_errors_.hold({r, r->id, world_peer, coarse_now() + kVerdictWait, s});
  last_failure_poll_ = {};  // ask the launcher at the next look
}

// Waits up to kVerdictWait for `dead_one()` to name a world rank the
// launcher reports dead (-1: none yet), polling with the engine lock and
// letting it go while it sleeps (an error path: no hurry, and no reason
// to stop other threads' calls).
template <typename DeadOne>
Status Engine::await_verdict(Status s, std::unique_lock<EngineLock>& lock, DeadOne dead_one) {
  if (!worth_a_verdict(s)) return s;
  const auto end = coarse_now() + kVerdictWait;
  int dead = dead_one();
  while (dead < 0 && coarse_now() < end) {
    last_failure_poll_ = {};
    look_around();
    progress_locked();
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lock.lock();
    dead = dead_one();
  }
  return dead >= 0 ? peer_failed_status(dead) : s;
}

Status Engine::verdict_on(int world_peer, Status s, std::unique_lock<EngineLock>& lock) {
  return await_verdict(std::move(s), lock, [&] { return is_dead(world_peer) ? world_peer : -1; });
}

Status Engine::verdict_on_any(const Communicator& comm, Status s,
                              std::unique_lock<EngineLock>& lock) {
  return await_verdict(std::move(s), lock, [&] {
    for (int i = 0; i < comm.size(); ++i) {
      if (is_dead(comm.world_rank(i))) return comm.world_rank(i);
    }
    return -1;
  });
}

void Engine::resolve_held(const HeldErrors::Held& h, const Status& error) {
  Request* r = h.request;
  if (r->id != h.request_id || !r->awaits(kPeerVerdict)) return;  // gone meanwhile
  r->stop_awaiting(kPeerVerdict);
  note_error(r, error);
  maybe_complete(r);
}

void Engine::on_peer_unreachable(int peer, const Status& why) {
  on_peer_failed(peer, why);
}

void Engine::watch_failures(std::chrono::steady_clock::time_point now) {
  failure_poll_ticks_ = 0;
  if (now - last_failure_poll_ < kFailurePollInterval) return;
  last_failure_poll_ = now;
  for (int rank : bootstrap_->take_failed_ranks()) on_peer_failed(rank);
  if (!held_errors_.empty()) [[unlikely]] {
    // No word on the peer in time: the transport's error stands.
    for (const HeldErrors::Held& h : held_errors_.take_expired(now)) resolve_held(h, h.error);
  }
}

void Engine::look_around() {
  const auto now = coarse_now();  // one clock read for both, a vDSO one (common/coarse_clock.h)
  watch_failures(now);
  tick_clock(now);
  report_pending_if_asked();
}

// Whether `r` cannot finish without world rank `dead`.
static bool depends_on(const Request& r, int dead) {
  if (r.peer == kProcNull || r.comm == nullptr) return false;
  if (r.kind == RequestKind::kReceive && r.rendezvous != nullptr) {
    return r.rendezvous->origin == dead;  // matched: reading from its sender
  }
  if ((r.collective && !r.partner_only) || r.peer == matching::kAnySource) {
    // ULFM's rules: a wildcard receive on a communicator with a dead member
    // reports the failure rather than wait for a message that may never
    // come, and so does every step of a collective there: the collective
    // cannot complete, and a rank waiting on a live member would wait for
    // ever for a step that member gave up on (the MPI layer's collectives
    // go through a root).
    for (int w : r.comm->peer_group(r.peer_in_own_group())) {
      if (w == dead) return true;
    }
    // An intercommunicator's collective involves the other group too.
    if (!r.collective || !r.comm->inter()) return false;
    for (int w : r.comm->peer_group(r.remote_group)) {
      if (w == dead) return true;
    }
    return false;
  }
  return r.comm->peer_world_rank(r.peer, r.peer_in_own_group()) == dead;
}

int Engine::dead_member(const Communicator* comm) const {
  if (!dead_peers_.any() || comm == nullptr) return -1;
  for (int w : comm->peer_group(true)) {
    if (is_dead(w)) return w;
  }
  // An intercommunicator's collectives need the remote group as well.
  for (int w : comm->remote_world_ranks()) {
    if (is_dead(w)) return w;
  }
  return -1;
}

void Engine::on_peer_failed(int dead, const Status& why) {
  if (dead < 0 || dead >= world_->size() || dead == world_->rank()) return;
  if (!dead_peers_.add(dead, why)) return;
  ++counters_.peers_failed;
  const Status failed = peer_failed_status(dead);
  TW_WARN("engine", failed.message() << ": its pending operations fail");
  for (const HeldErrors::Held& h : held_errors_.take_peer(dead)) resolve_held(h, failed);
  // A blocking receive waiting without a request, by the rules below.
  if (unnamed_.fails_with(dead)) {
    finish_unnamed(kProcNull, -1, 0, failed);  // as note_error leaves a request's status
  }
  requests_.for_each([&](Request* r) {
    if (!r->active() || r->complete() || !depends_on(*r, dead)) return;
    if (r->kind == RequestKind::kReceive && r->rendezvous == nullptr) {
      // Still posted: withdraw it. (Not posted and not reading means a
      // message already matched it; it completes on its own.)
      if (!withdraw_receive(r, failed)) return;
    }
    note_error(r, failed);
    r->stop_awaiting(kCancelAnswer);  // the reply will not come
    // Transport operations with the dead rank may never come back: the
    // request completes without them, and they find it abandoned.
    if (r->local_pending > 0) r->abandoned = true;
    maybe_complete(r);
  });
  // Last: a transport that gives back (cancels) its operations with the
  // dead rank then must find their requests abandoned above.
  transport_->peer_failed(dead);
}

}  // namespace tagwire::engine
