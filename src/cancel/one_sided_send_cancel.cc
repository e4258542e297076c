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
// is the proof of the rule; engine/slot_word.h has the word, sender_slots.h
// slot reuse.
#include "cancel/one_sided_send_cancel.h"

#include <atomic>
#include <cstring>
#include <string>

#include "common/log.h"
#include "engine/communicator.h"
#include "engine/engine_counters.h"
#include "engine/matching_state.h"

namespace tagwire::cancel {

using engine::Header;
using engine::kCancelAnswer;
using engine::PendingMessage;
using engine::Request;
using engine::RequestKind;

struct OneSidedSendCancel::SlotCancel {
  OneSidedSendCancel* owner = nullptr;
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

Status OneSidedSendCancel::publish(std::vector<std::uint8_t>* out) {
  auto reg = site_.cancel_transport().allocate_atomic_words(
      static_cast<std::size_t>(site_.cancel_size()) * kSlotsPerPeer);
  if (!reg) return reg.status().with_context("registering the slot descriptors");
  table_ = std::move(reg).value();
  remote_slots_.resize(static_cast<std::size_t>(site_.cancel_size()));
  const std::uint64_t address = table_->address();
  const auto key = table_->packed_key();
  const auto key_length = static_cast<std::uint32_t>(key.size());
  append(out, &address, sizeof(address));
  append(out, &key_length, sizeof(key_length));
  append(out, key.data(), key.size());
  return Status::ok();
}

Status OneSidedSendCancel::take_peer(int rank, std::span<const std::uint8_t>* entry) {
  std::uint64_t address = 0;
  std::uint32_t key_length = 0;
  if (!take(entry, &address, sizeof(address)) || !take(entry, &key_length, sizeof(key_length)) ||
      key_length > entry->size()) {
    return {ErrorCode::kProtocol, "malformed slot table from rank " + std::to_string(rank)};
  }
  RemoteSlots& rs = remote_slots_[static_cast<std::size_t>(rank)];
  rs.owner = this;
  rs.rank = rank;
  rs.address = address + static_cast<std::uint64_t>(site_.cancel_rank()) * kSlotsPerPeer *
                             sizeof(std::uint64_t);
  rs.key.assign(entry->begin(), entry->begin() + key_length);
  rs.read_back.assign(kSlotsPerPeer, 0);
  *entry = entry->subspan(key_length);
  return Status::ok();
}

// ------------------------------------------------------------- sender

std::optional<SlotTicket> OneSidedSendCancel::take_slot(int world_dest) {
  if (world_dest == site_.cancel_rank()) return std::nullopt;
  RemoteSlots& rs = remote_slots_[static_cast<std::size_t>(world_dest)];
  auto ticket = rs.slots.acquire();
  // Settled slots are learnt by reading our words back, once half of them
  // are in use: one READ per kSlotsPerPeer / 2 messages in a steady stream.
  if (rs.slots.free_count() < kSlotsPerPeer / 2) read_back_slots(world_dest);
  if (ticket) {
    ++site_.cancel_counters().slotted_sends;
  } else {
    ++site_.cancel_counters().unslotted_sends;  // its cancel takes the agent's path
  }
  return ticket;
}

void OneSidedSendCancel::give_back(int world_dest, const SlotTicket& ticket) {
  remote_slots_[static_cast<std::size_t>(world_dest)].slots.abandon(ticket);
}

void OneSidedSendCancel::read_back_slots(int world_dest) {
  RemoteSlots& rs = remote_slots_[static_cast<std::size_t>(world_dest)];
  if (rs.reading || site_.cancel_peer_dead(world_dest)) return;
  rs.reading = true;
  ++site_.cancel_counters().slot_read_backs;
  auto issued =
      site_.cancel_transport().read(world_dest,
                                    {reinterpret_cast<std::uint8_t*>(rs.read_back.data()),
                                     rs.read_back.size() * sizeof(std::uint64_t)},
                                    rs.address, rs.key, {&OneSidedSendCancel::slot_read_done, &rs});
  if (!issued) {
    rs.reading = false;
    TW_WARN("cancel", "reading back slot descriptors at rank " << world_dest << ": "
                                                               << issued.status().to_string());
  } else if (*issued == transport::Issued::kDone) {
    slot_read_done(&rs, Status::ok());
  }
}

void OneSidedSendCancel::slot_read_done(void* ctx, const Status& s) {
  auto* rs = static_cast<RemoteSlots*>(ctx);
  rs->reading = false;
  if (s.is_ok()) {
    rs->slots.settle_all(rs->read_back);
  } else {
    TW_WARN("cancel", "slot read-back from rank " << rs->rank << " failed: " << s.to_string());
  }
}

Status OneSidedSendCancel::cancel(Request* r) {
  if (!worth_asking(*r)) return Status::ok();
  // The message holds a slot descriptor at the receiver, and our CAS on it
  // decides; one that went without a slot asks the receiver.
  if (r->slot) return cancel_by_slot(r);
  return ask_receiver(r);
}

Status OneSidedSendCancel::cancel_by_slot(Request* r) {
  int peer = 0;
  Header notice = cancel_header(*r, &peer);
  RemoteSlots& rs = remote_slots_[static_cast<std::size_t>(peer)];
  const SlotTicket ticket = *r->slot;
  // A settled slot was matched: our own successful cancel would have
  // completed the request as cancelled already.
  if (!rs.slots.holds(ticket)) return Status::ok();
  auto* op = new SlotCancel;
  op->owner = this;
  op->request_id = r->id;
  op->peer = peer;
  op->ticket = ticket;
  notice.flags = engine::kFlagCancelled;
  notice.slot = static_cast<std::uint8_t>(ticket.index + 1);
  notice.slot_expected = static_cast<std::uint32_t>(ticket.expected);
  op->notice = notice;
  auto issued = site_.cancel_transport().compare_and_swap(
      peer, rs.address + ticket.index * sizeof(std::uint64_t), rs.key, ticket.expected,
      SlotWord::cancelled(ticket.expected), &op->old_value,
      {&OneSidedSendCancel::slot_cancel_done, op});
  if (!issued) {
    delete op;
    return issued.status().with_context("MPI_Cancel (remote compare-and-swap)");
  }
  reopen(r);
  if (*issued == transport::Issued::kDone) slot_cancel_done(op, Status::ok());
  return Status::ok();
}

void OneSidedSendCancel::slot_cancel_done(void* ctx, const Status& s) {
  auto* op = static_cast<SlotCancel*>(ctx);
  op->owner->on_slot_cancel_done(*op, s);
  delete op;
}

void OneSidedSendCancel::on_slot_cancel_done(SlotCancel& op, const Status& s) {
  const bool cancelled = s.is_ok() && op.old_value == op.ticket.expected;
  RemoteSlots& rs = remote_slots_[static_cast<std::size_t>(op.peer)];
  if (s.is_ok()) {
    rs.slots.settle(op.ticket, cancelled ? SlotWord::cancelled(op.ticket.expected) : op.old_value);
  } else {
    TW_WARN("cancel", "cancel CAS at rank " << op.peer << " failed: " << s.to_string());
  }
  if (cancelled) {
    ++site_.cancel_counters().one_sided_cancels;
    ++site_.cancel_counters().sends_cancelled;
    site_.cancel_defer_header(op.peer, op.notice);
  }
  TW_DEBUG("cancel", "compare-and-swap on rank "
                         << op.peer << "'s slot descriptor for send " << op.request_id << ": "
                         << (cancelled ? "cancelled" : "too late, it was matched"));
  Request* r = site_.cancel_find(op.request_id);
  if (r == nullptr || r->kind != RequestKind::kSend || !r->awaits(kCancelAnswer)) return;
  conclude(r, cancelled);
}

// ------------------------------------------------------------- receiver

std::uint64_t* OneSidedSendCancel::slot_word(int origin, std::uint8_t slot) {
  auto* table = reinterpret_cast<std::uint64_t*>(table_->address());
  return &table[static_cast<std::size_t>(origin) * kSlotsPerPeer + (slot - 1u)];
}

bool OneSidedSendCancel::claim(HeldSlot m) {
  if (m.slot == 0) return true;
  ++site_.cancel_counters().slot_claims;
  const std::uint64_t matched = SlotWord::matched(m.expected);
  auto old = site_.cancel_transport().local_compare_and_swap(*table_, slot_word(m.origin, m.slot),
                                                             m.expected, matched);
  if (!old) {
    // The NIC cannot arbitrate any more. Delivering is right unless the
    // sender cancels this very message; dropping would lose it silently.
    TW_ERROR("cancel", "claiming a slot descriptor: " << old.status().to_string());
    return true;
  }
  return *old == m.expected || *old == matched;
}

bool OneSidedSendCancel::undeliverable(HeldSlot m) {
  if (m.slot == 0) return false;
  // Only this message's claim (which takes it at once) or its sender's
  // cancel moves the word off what it expects, and the sender reuses the
  // slot only once the move is settled: a word that moved means cancelled,
  // whatever has happened to the slot since (send_cancel_onesided.pml).
  std::atomic_ref<std::uint64_t> word(*slot_word(m.origin, m.slot));
  return word.load() != m.expected;
}

bool OneSidedSendCancel::admit(const Header& h, const matching::Envelope& envelope) {
  if (h.slot == 0) return true;
  const HeldSlot message = HeldSlot::of(h);
  // Cancelled by its sender already, or about to match a receive that
  // must first win the slot descriptor: a message lost either way is
  // dropped here and never seen by a receive or a probe.
  if (undeliverable(message) ||
      (site_.cancel_matching().matcher().would_match(envelope) && !claim(message))) {
    ++site_.cancel_counters().messages_cancelled;
    return false;
  }
  return true;
}

void OneSidedSendCancel::drop_cancelled(matching::ContextId context, matching::Rank source,
                                        std::uint64_t sender_request_id) {
  auto taken = site_.cancel_matching().cancel_unexpected(context, source, sender_request_id);
  if (!taken) return;  // dropped already, when the receiver met it
  ++site_.cancel_counters().messages_cancelled;
}

void OneSidedSendCancel::settle(const matching::ReceivePattern& pattern, bool claim_head) {
  engine::MatchingState& matching = site_.cancel_matching();
  for (;;) {
    auto head = matching.matcher().probe(pattern);
    if (!head) return;
    const PendingMessage& m = matching.queued(*head);
    if (m.slot == 0) return;
    if (claim_head ? claim(HeldSlot::of(m)) : !undeliverable(HeldSlot::of(m))) return;
    // Its sender won: the next one in line.
    drop_cancelled(head->envelope.context, head->envelope.source, head->sender_request_id);
  }
}

void OneSidedSendCancel::on_taken(const PendingMessage& m) {
  // A message that holds a slot descriptor is arbitrated on it even when
  // the agent's path takes it, so that no path decides without the word
  // (an unexpected message is not claimed yet: the CAS succeeds).
  if (m.slot == 0) return;
  auto old = site_.cancel_transport().local_compare_and_swap(
      *table_, slot_word(m.origin, m.slot), m.slot_expected, SlotWord::cancelled(m.slot_expected));
  if (!old || (*old != m.slot_expected && *old != SlotWord::cancelled(m.slot_expected))) {
    TW_ERROR("cancel", "an unexpected message's slot descriptor was already claimed");
  }
}

void OneSidedSendCancel::on_cancel_request(const Header& h) {
  if ((h.flags & engine::kFlagCancelled) == 0) {
    AgentSendCancel::on_cancel_request(h);  // an unslotted send's cancel
    return;
  }
  // A notice: the sender's CAS decided already; purge the message. Only a
  // message that can no longer be claimed is purged: a notice cannot
  // cancel anything by itself.
  if (h.slot == 0 || !undeliverable(HeldSlot::of(h))) {
    ++site_.cancel_counters().dropped_messages;
    TW_WARN("cancel", "cancel notice from rank " << h.origin << " names no cancelled slot");
    return;
  }
  drop_cancelled(h.context, h.source, h.request_id);
}

}  // namespace tagwire::cancel
