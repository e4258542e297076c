// MPI_Cancel for both kinds of request (docs/architecture.md §4).
//
// Receive: local. The posted receive leaves the matcher, or it has already
// matched and completes normally.
//
// Send: the sender asks, the receiver decides, and only the receiver's
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
#include <string>

#include "common/log.h"
#include "engine/engine.h"

namespace tagwire::engine {

Status Engine::cancel(Request* r) {
  if (r == nullptr) return {ErrorCode::kInvalidRequest, "cancel of a null request"};
  std::lock_guard lock(mutex_);
  if (!r->active) return Status::ok();  // nothing under way: reports not cancelled
  if (r->kind == RequestKind::kSend) return cancel_send(r);
  if (r->complete) return Status::ok();
  // Else a message took it, or the NIC's answer to the DEL decides.
  if (withdraw_receive(r, Status::ok())) complete_withdrawn(r, Status::ok());
  return Status::ok();
}

Status Engine::cancel_send(Request* r) {
  // Nothing to ask: already asked, already answered by the receiver,
  // never sent (PROC_NULL), or failed (the send reports its error).
  if (r->cancel_pending || r->remote_matched || r->peer == kProcNull || !r->status.error.is_ok() ||
      r->status.cancelled) {
    return Status::ok();
  }
  // One-sided mode: the message holds a slot descriptor at the receiver,
  // and our CAS on it decides (slot_arbitration.cc).
  if (r->slot) return cancel_by_slot(r);
  // The message on the wire: a buffered send's travels on its internal
  // request; every other send's on the request itself.
  const std::uint64_t wire_id = r->mode == SendMode::kBuffered ? r->bsend_wire_id : r->id;
  Header h;
  h.type = MessageType::kCancelRequest;
  h.context = r->collective ? r->comm->collective_context() : r->comm->p2p_context();
  h.source = r->comm->rank();
  h.tag = r->tag;
  h.request_id = wire_id;
  h.remote_address = r->id;  // whom the reply completes
  TAGWIRE_RETURN_IF_ERROR(
      send_header(r->comm->peer_world_rank(r->peer, r->collective), h).with_context("MPI_Cancel"));
  ++counters_.cancel_requests_sent;
  // A send that completed locally (eager, buffered) but was not yet waited
  // for is open again: it completes by the reply.
  r->cancel_pending = true;
  r->complete = false;
  return Status::ok();
}

void Engine::on_cancel_request(const Header& h) {
  if ((h.flags & kFlagCancelled) != 0) {
    on_cancel_notice(h);  // one-sided: decided already, purge the message
    return;
  }
  // Taken with its data, or the sender's rkey: never read.
  auto taken = matching_.cancel_unexpected(h.context, h.source, h.request_id);
  std::uint8_t flags = 0;
  if (taken) {
    // A message that holds a slot descriptor is arbitrated on it even
    // here, so that no path decides without the word (an unexpected
    // message is not claimed yet: the CAS succeeds).
    if (one_sided_ && taken->slot != 0) {
      const PendingMessage& m = *taken;
      auto old = transport_->local_compare_and_swap(
          *slot_registration_, slot_word(m), m.slot_expected, SlotWord::cancelled(m.slot_expected));
      if (!old || (*old != m.slot_expected && *old != SlotWord::cancelled(m.slot_expected))) {
        TW_ERROR("engine", "an unexpected message's slot descriptor was already claimed");
      }
    }
    ++counters_.messages_cancelled;
    flags = kFlagCancelled;
  } else {
    ++counters_.cancels_refused;
  }
  send_control(h.origin, MessageType::kCancelReply, h.remote_address, flags);
}

void Engine::on_cancel_reply(const Header& h) {
  Request* r = requests_.find(h.request_id);
  if (r == nullptr || r->kind != RequestKind::kSend || !r->cancel_pending) {
    ++counters_.dropped_messages;
    TW_WARN("engine",
            "cancel reply for unknown send request " << h.request_id << " from rank " << h.origin);
    return;
  }
  r->cancel_pending = false;
  if ((h.flags & kFlagCancelled) != 0) {
    ++counters_.sends_cancelled;
    complete_cancelled_send(r);
    return;
  }
  maybe_complete(r);
}

void Engine::complete_cancelled_send(Request* r) {
  // No FIN or SYNC_ACK will come, and nobody will read the buffer.
  r->awaiting_remote = false;
  r->registration.reset();
  const int source = r->status.source;
  r->status = MessageStatus{};
  r->status.source = source;
  r->status.cancelled = true;
  if (r->mode == SendMode::kBuffered) {
    // The internal send still holds attached-buffer space while it waits
    // for a FIN (rendezvous); free it now. An eager one is gone already.
    if (Request* internal = requests_.find(r->bsend_wire_id)) {
      internal->awaiting_remote = false;
      internal->registration.reset();
      maybe_complete(internal);
    }
  }
  maybe_complete(r);
}

}  // namespace tagwire::engine
