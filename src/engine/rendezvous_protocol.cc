#include "engine/rendezvous_protocol.h"

#include "common/log.h"

#include <memory>
#include <utility>

namespace tagwire::engine {

Status RendezvousProtocol::offer(Request* r, Header* h, std::span<const std::uint8_t>* payload) {
  // From MPI_Alloc_mem memory the region's registration serves; any other
  // buffer is registered for this message only.
  const transport::Registration* key = site_.protocol_pinned(r->buffer, r->bytes);
  if (key == nullptr) {
    auto reg = site_.protocol_transport().register_memory(r->buffer, r->bytes,
                                                          transport::RemoteAccess::kRead);
    if (!reg) return reg.status().with_context("registering a rendezvous buffer");
    r->registration = std::move(reg).value();
    key = r->registration.get();
  }
  h->type = MessageType::kRts;
  h->remote_address = reinterpret_cast<std::uint64_t>(r->buffer);
  if (r->mode == SendMode::kSynchronous) h->flags = kFlagSync;
  r->await(kRemoteAnswer);  // FIN
  *payload = key->packed_key();
  ++site_.protocol_counters().rendezvous_sent;
  return Status::ok();
}

void RendezvousProtocol::accept(Request* r, PendingMessage&& message) {
  r->rendezvous = std::make_unique<PendingMessage>(std::move(message));
  ++r->local_pending;
  site_.protocol_defer_read(r);
}

void RendezvousProtocol::read(Request* r, transport::Completion done) {
  PendingMessage& m = *r->rendezvous;
  if (r->status.count == 0) {
    read_done(r, Status::ok());
    return;
  }
  TW_TRACE("engine", "rendezvous: reading " << r->status.count << " B of send "
                                            << m.sender_request_id << " from rank " << m.origin);
  auto issued = site_.protocol_transport().read(
      m.origin, {static_cast<std::uint8_t*>(r->buffer), r->status.count}, m.remote_address, m.data,
      done);
  if (!issued) {
    read_done(r, issued.status().with_context("rendezvous read"));
  } else if (*issued == transport::Issued::kDone) {
    read_done(r, Status::ok());
  }
}

void RendezvousProtocol::read_done(Request* r, const Status& s) {
  TW_TRACE("engine", "rendezvous: read of send "
                         << r->rendezvous->sender_request_id << " from rank "
                         << r->rendezvous->origin
                         << " done: " << (s.is_ok() ? "ok" : s.to_string()));
  if (!s.is_ok()) site_.protocol_fail(r, r->rendezvous->origin, s);
  // FIN even after a failed read: the sender must not wait forever.
  site_.protocol_send_control(r->rendezvous->origin, MessageType::kFin,
                              r->rendezvous->sender_request_id);
  r->rendezvous.reset();
  --r->local_pending;
  site_.protocol_maybe_complete(r);
}

}  // namespace tagwire::engine
