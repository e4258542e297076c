// One-sided send cancel (docs/architecture.md §4; TAGWIRE_CANCEL_MODE=onesided).
//
// The sender decides alone: MPI_Cancel is a remote compare-and-swap on the
// message's slot descriptor at the receiver (expected -> CANCELLED), and
// the receiver's matcher claims the same word (expected -> MATCHED) before
// it copies, reads or acknowledges a byte. Whichever CAS lands first wins;
// the transport makes the receiver's claim atomic with the peer's CAS (a
// CPU atomic where the NIC's atomics are coherent with the CPU's, through
// the NIC otherwise: Transport::local_compare_and_swap). A cancelled
// message is dropped wherever the receiver next meets it (arrival, probe,
// a receive about to take it), and a notice on the data's channel purges
// it from the unexpected queue at once.
//
// What the agent mode does not need and this one does: a registered table
// at every receiver, a CAS per matched message, and read-backs of settled
// slots by the sender. What it buys: Cancel + Wait never waits for the
// receiver's CPU where the NIC executes the CAS (verbs), and under UCX
// (which emulates atomics in the target's progress where it has no device
// atomic) it is still correct. src/cancel/model/send_cancel_onesided.pml
// is the proof of the rule; slot_descriptor.h has the word and slot reuse.
#include <atomic>
#include <cstring>
#include <string>

#include "common/log.h"
#include "engine/engine.h"

namespace tagwire::engine {

struct Engine::SlotCancel {
  Engine* engine = nullptr;
  std::uint64_t request_id = 0;  // the user's request, completed by the outcome
  int peer = 0;                  // the receiver's world rank
  SlotTicket ticket;
  std::uint64_t old_value = 0;
  Header notice;  // tells the receiver to purge the message, once cancelled
};

namespace {

void append(std::vector<std::uint8_t>* out, const void* data, std::size_t n) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  out->insert(out->end(), p, p + n);
}

bool take(std::span<const std::uint8_t>* in, void* data, std::size_t n) {
  if (in->size() < n) return false;
  std::memcpy(data, in->data(), n);
  *in = in->subspan(n);
  return true;
}

}  // namespace

// ------------------------------------------------------------- start-up

Status Engine::publish_slot_table(std::vector<std::uint8_t>* out) {
  auto reg = transport_->allocate_atomic_words(static_cast<std::size_t>(bootstrap_->size()) *
                                               kSlotsPerPeer);
  if (!reg) return reg.status().with_context("registering the slot descriptors");
  slot_registration_ = std::move(reg).value();
  const std::uint64_t address = slot_registration_->address();
  const auto key = slot_registration_->packed_key();
  const auto key_length = static_cast<std::uint32_t>(key.size());
  append(out, &address, sizeof(address));
  append(out, &key_length, sizeof(key_length));
  append(out, key.data(), key.size());
  return Status::ok();
}

Status Engine::take_slot_table(int rank, std::span<const std::uint8_t>* entry) {
  std::uint64_t address = 0;
  std::uint32_t key_length = 0;
  if (!take(entry, &address, sizeof(address)) || !take(entry, &key_length, sizeof(key_length)) ||
      key_length > entry->size()) {
    return {ErrorCode::kProtocol, "malformed slot table from rank " + std::to_string(rank)};
  }
  RemoteSlots& rs = remote_slots_[static_cast<std::size_t>(rank)];
  rs.engine = this;
  rs.rank = rank;
  rs.address = address + static_cast<std::uint64_t>(bootstrap_->rank()) * kSlotsPerPeer *
                             sizeof(std::uint64_t);
  rs.key.assign(entry->begin(), entry->begin() + key_length);
  rs.read_back.assign(kSlotsPerPeer, 0);
  *entry = entry->subspan(key_length);
  return Status::ok();
}

// ------------------------------------------------------------- sender

std::optional<SlotTicket> Engine::assign_slot(int world_dest) {
  if (!one_sided_ || world_dest == world_->rank()) return std::nullopt;
  RemoteSlots& rs = remote_slots_[static_cast<std::size_t>(world_dest)];
  auto ticket = rs.slots.acquire();
  // Settled slots are learnt by reading our words back, once half of them
  // are in use: one READ per kSlotsPerPeer / 2 messages in a steady stream.
  if (rs.slots.free_count() < kSlotsPerPeer / 2) read_back_slots(world_dest);
  if (ticket) {
    ++counters_.slotted_sends;
  } else {
    ++counters_.unslotted_sends;  // its cancel takes the agent's path
  }
  return ticket;
}

void Engine::read_back_slots(int world_dest) {
  RemoteSlots& rs = remote_slots_[static_cast<std::size_t>(world_dest)];
  if (rs.reading || is_dead(world_dest)) return;
  rs.reading = true;
  ++counters_.slot_read_backs;
  auto issued = transport_->read(world_dest,
                                 {reinterpret_cast<std::uint8_t*>(rs.read_back.data()),
                                  rs.read_back.size() * sizeof(std::uint64_t)},
                                 rs.address, rs.key, {&Engine::slot_read_done, &rs});
  if (!issued) {
    rs.reading = false;
    TW_WARN("engine", "reading back slot descriptors at rank " << world_dest << ": "
                                                               << issued.status().to_string());
  } else if (*issued == transport::Issued::kDone) {
    slot_read_done(&rs, Status::ok());
  }
}

void Engine::slot_read_done(void* ctx, const Status& s) {
  auto* rs = static_cast<RemoteSlots*>(ctx);
  rs->reading = false;
  if (s.is_ok()) {
    rs->slots.settle_all(rs->read_back);
  } else {
    TW_WARN("engine", "slot read-back from rank " << rs->rank << " failed: " << s.to_string());
  }
}

Status Engine::cancel_by_slot(Request* r) {
  const int peer = r->comm->peer_world_rank(r->peer, r->collective);
  RemoteSlots& rs = remote_slots_[static_cast<std::size_t>(peer)];
  const SlotTicket ticket = *r->slot;
  // A settled slot was matched: our own successful cancel would have
  // completed the request as cancelled already.
  if (!rs.slots.holds(ticket)) return Status::ok();
  auto* op = new SlotCancel;
  op->engine = this;
  op->request_id = r->id;
  op->peer = peer;
  op->ticket = ticket;
  Header& n = op->notice;
  n.type = MessageType::kCancelRequest;
  n.flags = kFlagCancelled;
  n.context = r->collective ? r->comm->collective_context() : r->comm->p2p_context();
  n.source = r->comm->rank();
  n.tag = r->tag;
  n.request_id = r->mode == SendMode::kBuffered ? r->bsend_wire_id : r->id;
  n.slot = static_cast<std::uint8_t>(ticket.index + 1);
  n.slot_expected = static_cast<std::uint32_t>(ticket.expected);
  auto issued = transport_->compare_and_swap(
      peer, rs.address + ticket.index * sizeof(std::uint64_t), rs.key, ticket.expected,
      SlotWord::cancelled(ticket.expected), &op->old_value, {&Engine::slot_cancel_done, op});
  if (!issued) {
    delete op;
    return issued.status().with_context("MPI_Cancel (remote compare-and-swap)");
  }
  // A send that completed locally but was not waited for is open again.
  r->cancel_pending = true;
  r->complete = false;
  if (*issued == transport::Issued::kDone) slot_cancel_done(op, Status::ok());
  return Status::ok();
}

void Engine::slot_cancel_done(void* ctx, const Status& s) {
  auto* op = static_cast<SlotCancel*>(ctx);
  op->engine->on_slot_cancel_done(*op, s);
  delete op;
}

void Engine::on_slot_cancel_done(SlotCancel& op, const Status& s) {
  const bool cancelled = s.is_ok() && op.old_value == op.ticket.expected;
  RemoteSlots& rs = remote_slots_[static_cast<std::size_t>(op.peer)];
  if (s.is_ok()) {
    rs.slots.settle(op.ticket, cancelled ? SlotWord::cancelled(op.ticket.expected) : op.old_value);
  } else {
    TW_WARN("engine", "cancel CAS at rank " << op.peer << " failed: " << s.to_string());
  }
  if (cancelled) {
    ++counters_.one_sided_cancels;
    ++counters_.sends_cancelled;
    Deferred notice{};
    notice.kind = Deferred::Kind::kHeader;
    notice.peer = op.peer;
    notice.header = op.notice;
    deferred_.push_back(notice);
  }
  Request* r = requests_.find(op.request_id);
  if (r == nullptr || r->kind != RequestKind::kSend || !r->cancel_pending) return;
  r->cancel_pending = false;
  if (cancelled) {
    complete_cancelled_send(r);
  } else {
    maybe_complete(r);
  }
}

// ------------------------------------------------------------- receiver

std::uint64_t* Engine::slot_word(const PendingMessage& m) {
  auto* table = reinterpret_cast<std::uint64_t*>(slot_registration_->address());
  return &table[static_cast<std::size_t>(m.origin) * kSlotsPerPeer + (m.slot - 1u)];
}

bool Engine::claim(const PendingMessage& m) {
  if (m.slot == 0) return true;
  ++counters_.slot_claims;
  const std::uint64_t matched = SlotWord::matched(m.slot_expected);
  auto old = transport_->local_compare_and_swap(*slot_registration_, slot_word(m), m.slot_expected,
                                                matched);
  if (!old) {
    // The NIC cannot arbitrate any more. Delivering is right unless the
    // sender cancels this very message; dropping would lose it silently.
    TW_ERROR("engine", "claiming a slot descriptor: " << old.status().to_string());
    return true;
  }
  return *old == m.slot_expected || *old == matched;
}

bool Engine::undeliverable(const PendingMessage& m) {
  if (m.slot == 0) return false;
  // Only this message's claim (which takes it at once) or its sender's
  // cancel moves the word off what it expects, and the sender reuses the
  // slot only once the move is settled: a word that moved means cancelled,
  // whatever has happened to the slot since (send_cancel_onesided.pml).
  std::atomic_ref<std::uint64_t> word(*slot_word(m));
  return word.load() != m.slot_expected;
}

void Engine::drop_cancelled(matching::ContextId context, matching::Rank source,
                            std::uint64_t sender_request_id) {
  auto taken = matching_.cancel_unexpected(context, source, sender_request_id);
  if (!taken) return;  // dropped already, when the receiver met it
  ++counters_.messages_cancelled;
}

void Engine::settle_unexpected(const matching::ReceivePattern& pattern, bool claim_head) {
  if (!one_sided_) return;
  for (;;) {
    auto head = matching_.matcher().probe(pattern);
    if (!head) return;
    const PendingMessage& m = matching_.queued(*head);
    if (m.slot == 0) return;
    if (claim_head ? claim(m) : !undeliverable(m)) return;
    // Its sender won: the next one in line.
    drop_cancelled(head->envelope.context, head->envelope.source, head->sender_request_id);
  }
}

void Engine::on_cancel_notice(const Header& h) {
  PendingMessage named;
  named.origin = h.origin;
  named.slot = h.slot;
  named.slot_expected = h.slot_expected;
  // Only a message that can no longer be claimed is purged: a notice
  // cannot cancel anything by itself.
  if (!one_sided_ || !undeliverable(named)) {
    ++counters_.dropped_messages;
    TW_WARN("engine", "cancel notice from rank " << h.origin << " names no cancelled slot");
    return;
  }
  drop_cancelled(h.context, h.source, h.request_id);
}

}  // namespace tagwire::engine
