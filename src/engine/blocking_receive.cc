// A blocking receive: without a request while nothing else is posted
// (unnamed_receive.h says why and when), with one otherwise.
#include "common/small_copy.h"

#include "engine/engine.h"

namespace tagwire::engine {

Status Engine::recv(void* buffer, std::size_t bytes, int source, int tag, Communicator* comm,
                    MessageStatus* status) {
  MessageStatus local;
  TAGWIRE_RETURN_IF_ERROR(receive(buffer, bytes, source, tag, comm, &local));
  if (status != nullptr) *status = local;
  return local.error;
}

Status Engine::receive(void* buffer, std::size_t bytes, int source, int tag, Communicator* comm,
                       MessageStatus* status) {
  if (receive_unnamed(buffer, bytes, source, tag, comm, status)) return Status::ok();
  auto r = irecv(buffer, bytes, source, tag, comm);
  if (!r) return r.status();
  return wait(*r, status);
}

bool Engine::sendrecv_unnamed(const void* out, std::size_t out_bytes, int dest, int send_tag,
                              void* in, std::size_t in_bytes, int source, int recv_tag,
                              Communicator* comm, MessageStatus* status, Status* result) {
  // A receive the request path would refuse must not follow a message
  // already sent: that path reports both halves' errors before either
  // starts.
  if (!check_request(RequestKind::kReceive, in, in_bytes, source, recv_tag, comm, false).is_ok()) {
    return false;
  }
  Status failed;
  if (!send_unnamed(out, out_bytes, dest, send_tag, comm, SendMode::kStandard, &failed)) {
    return false;
  }
  // (A refused send argument: nothing went, and the request path says why.)
  if (!failed.is_ok()) return false;
  *result = receive(in, in_bytes, source, recv_tag, comm, status);
  return true;
}

bool Engine::receive_unnamed(void* buffer, std::size_t bytes, int source, int tag,
                             Communicator* comm, MessageStatus* status, bool collective) {
  // Only where the arrival path can see every receive: no NIC matching
  // (the NIC would match messages the direct path never sees), no
  // one-sided cancel (a match must first win the slot descriptor), one
  // application thread (another's receive, posted later, must not take a
  // message this one let pass to the unexpected queue), an
  // intracommunicator (one group: the source's rank names one world rank),
  // no dead rank (the request path knows the rules for those).
  if (comm == nullptr || comm->inter() || source == kProcNull || nic_matching_ != nullptr ||
      one_sided_ || mutex_.application_threads() || dead_peers_.any()) {
    return false;
  }
  if (!check_request(RequestKind::kReceive, buffer, bytes, source, tag, comm, collective).is_ok()) {
    return false;  // the request path reports it
  }
  const matching::ReceivePattern pattern{
      collective ? comm->collective_context() : comm->p2p_context(), source, tag};
  MessageStatus ignored;
  // One hold of the lock from arming to the first run of polls (each hold
  // is a few stores and a fence, twice per ping-pong iteration already).
  std::unique_lock lock(mutex_);
  // An earlier receive could match what arrives next, or a message that
  // matches is queued already: both are the request path's.
  if (unnamed_.state != UnnamedReceive::State::kIdle || matching_.matcher().posted_count() != 0 ||
      (matching_.matcher().unexpected_count() != 0 && matching_.matcher().probe(pattern))) {
    return false;
  }
  unnamed_.pattern = pattern;
  unnamed_.comm = comm;
  unnamed_.whole_group = collective;
  unnamed_.buffer = buffer;
  unnamed_.bytes = bytes;
  unnamed_.status = status != nullptr ? status : &ignored;
  unnamed_.state = UnnamedReceive::State::kArmed;
  poll_until(lock, [this] { return unnamed_.state != UnnamedReceive::State::kArmed; });
  // kFallBack: the message that stopped it is the unexpected queue's first
  // match for the pattern; a request posted now takes it, with everything
  // a request does (rendezvous, truncation).
  const bool received = unnamed_.state == UnnamedReceive::State::kDone;
  unnamed_.state = UnnamedReceive::State::kIdle;
  return received;
}

void Engine::finish_unnamed(int source, int tag, std::size_t count, Status error) {
  // Field by field: the caller's status is a fresh one, and a whole
  // MessageStatus assigned was a tenth of this path.
  MessageStatus& out = *unnamed_.status;
  out.source = source;
  out.tag = tag;
  out.count = count;
  out.cancelled = false;
  if (!error.is_ok() || !out.error.is_ok()) out.error = std::move(error);
  unnamed_.state = UnnamedReceive::State::kDone;
}

bool Engine::take_unnamed(const Header& h, std::span<const std::uint8_t> payload) {
  if (h.type != MessageType::kEager || h.length > unnamed_.bytes) {
    unnamed_.state = UnnamedReceive::State::kFallBack;
    return false;
  }
  copy_small(unnamed_.buffer, payload.data(), h.length);
  if ((h.flags & kFlagSync) != 0) send_control(h.origin, MessageType::kSyncAck, h.request_id);
  finish_unnamed(h.source, h.tag, h.length, Status::ok());
  matching_.matcher().count_software_match();
  ++counters_.receives_unnamed;
  return true;
}

}  // namespace tagwire::engine
