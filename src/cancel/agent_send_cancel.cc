// MPI_Cancel of a send, the cancel agent's way (docs/architecture.md §4;
// a receive's cancel is local and stays in the engine: Engine::cancel).
//
// The sender asks, the receiver decides, and only the receiver's
// matcher can decide, because matching is the moment a message becomes
// received. CANCEL_REQUEST travels on the ordered channel that carried the
// message, so the message is at the receiver first; there it is either
// still unexpected (nothing has read a byte of it: drop it, answer YES) or
// already matched, mprobed or being read (answer NO). Both decisions are
// taken under the engine lock that every match also holds, so exactly one
// of "received" and "cancelled" happens. A NO is always safe; a YES names
// one message: wire ids are unique per operation (persistent sends take a
// fresh one per start), and the receiver searches newest-first as the IMPI
// protocol asks.
#include "cancel/agent_send_cancel.h"

#include <string>

#include "common/log.h"
#include "engine/communicator.h"
#include "engine/engine_counters.h"
#include "engine/matching_state.h"

namespace tagwire::cancel {

using engine::Header;
using engine::kCancelAnswer;
using engine::kRemoteAnswer;
using engine::MessageStatus;
using engine::MessageType;
using engine::Request;
using engine::RequestKind;
using engine::RequestPhase;
using engine::SendMode;

bool AgentSendCancel::worth_asking(const Request& r) {
  return !r.awaits(kCancelAnswer) && !r.remote_matched && r.peer != engine::kProcNull &&
         r.status.error.is_ok() && !r.status.cancelled;
}

Status AgentSendCancel::cancel(Request* r) {
  if (!worth_asking(*r)) return Status::ok();
  return ask_receiver(r);
}

Header AgentSendCancel::cancel_header(const Request& r, int* peer) {
  *peer = r.comm->peer_world_rank(r.peer, r.collective);
  Header h;
  h.type = MessageType::kCancelRequest;
  h.context = r.collective ? r.comm->collective_context() : r.comm->p2p_context();
  h.source = r.comm->rank();
  h.tag = r.tag;
  // The message on the wire: a buffered send's travels on its internal
  // request, every other send's on the request itself.
  h.request_id = r.mode == SendMode::kBuffered ? r.bsend_wire_id : r.id;
  return h;
}

void AgentSendCancel::reopen(Request* r) {
  r->await(kCancelAnswer);
  r->set_phase(RequestPhase::kRunning);
}

void AgentSendCancel::conclude(Request* r, bool cancelled) {
  r->stop_awaiting(kCancelAnswer);
  if (cancelled) {
    complete_cancelled(r);
  } else {
    site_.cancel_maybe_complete(r);
  }
}

Status AgentSendCancel::ask_receiver(Request* r) {
  int peer = 0;
  Header h = cancel_header(*r, &peer);
  engine::set_reply_to(&h, r->id);
  TAGWIRE_RETURN_IF_ERROR(site_.cancel_send_header(peer, h).with_context("MPI_Cancel"));
  ++site_.cancel_counters().cancel_requests_sent;
  reopen(r);
  return Status::ok();
}

void AgentSendCancel::on_cancel_request(const Header& h) {
  if ((h.flags & engine::kFlagCancelled) != 0) {
    // A one-sided sender's notice: this job does not cancel that way.
    ++site_.cancel_counters().dropped_messages;
    TW_WARN("cancel", "cancel notice from rank " << h.origin << " names no cancelled slot");
    return;
  }
  // Taken with its data, or the sender's rkey: never read.
  auto taken = site_.cancel_matching().cancel_unexpected(h.context, h.source, h.request_id);
  std::uint8_t flags = 0;
  TW_DEBUG("cancel", "rank " << h.origin << " asks to cancel its send " << h.request_id << ": "
                             << (taken ? "granted (the message was not received)"
                                       : "refused (received, or not here)"));
  if (taken) {
    on_taken(*taken);
    ++site_.cancel_counters().messages_cancelled;
    flags = engine::kFlagCancelled;
  } else {
    ++site_.cancel_counters().cancels_refused;
  }
  site_.cancel_send_control(h.origin, MessageType::kCancelReply, engine::reply_to(h), flags);
}

void AgentSendCancel::on_cancel_reply(const Header& h) {
  Request* r = site_.cancel_find(h.request_id);
  if (r == nullptr || r->kind != RequestKind::kSend || !r->awaits(kCancelAnswer)) {
    ++site_.cancel_counters().dropped_messages;
    TW_WARN("cancel",
            "cancel reply for unknown send request " << h.request_id << " from rank " << h.origin);
    return;
  }
  const bool cancelled = (h.flags & engine::kFlagCancelled) != 0;
  if (cancelled) ++site_.cancel_counters().sends_cancelled;
  TW_DEBUG("cancel", "rank " << h.origin << " answered the cancel of send " << h.request_id << ": "
                             << (cancelled ? "cancelled" : "too late, it was received"));
  conclude(r, cancelled);
}

void AgentSendCancel::complete_cancelled(Request* r) {
  // No FIN or SYNC_ACK will come, and nobody will read the buffer.
  r->stop_awaiting(kRemoteAnswer);
  r->registration.reset();
  const int source = r->status.source;
  r->status = MessageStatus{};
  r->status.source = source;
  r->status.cancelled = true;
  if (r->mode == SendMode::kBuffered) {
    // The internal send still holds attached-buffer space while it waits
    // for a FIN (rendezvous); free it now. An eager one is gone already.
    if (Request* internal = site_.cancel_find(r->bsend_wire_id)) {
      internal->stop_awaiting(kRemoteAnswer);
      internal->registration.reset();
      site_.cancel_maybe_complete(internal);
    }
  }
  site_.cancel_maybe_complete(r);
}

}  // namespace tagwire::cancel
