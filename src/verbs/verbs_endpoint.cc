#include "verbs/verbs_endpoint.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/log.h"

namespace tagwire::verbs {

VerbsEndpoint::VerbsEndpoint(VerbsInterface* iface, std::size_t peer, const RingLayout& layout)
    : iface_(iface),
      peer_(peer),
      layout_(layout),
      window_(layout.slots),
      out_marker_(ring_marker(1)),
      next_marker_(ring_marker(1)),
      back_(std::max(1u, layout.slots / 4)) {
  inline_wr_.num_sge = 1;  // lkey 0: inline data needs no registration
}

Status VerbsEndpoint::make_own_ring(CmCard* card) {
  if (!own_ring_) {
    AlignedBytes ring = aligned_zeroed(layout_.ring_bytes());
    if (!ring) {
      return Status(ErrorCode::kOutOfResources,
                    "verbs transport: out of memory for the ring of rank " + std::to_string(peer_));
    }
    auto mr = verbs::register_memory(iface_->device(), ring.get(), layout_.ring_bytes(),
                                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!mr) return mr.status().with_context("eager ring of rank " + std::to_string(peer_));
    own_ring_ = std::move(ring);
    own_ring_mr_ = std::move(mr).value();
    ring_ = own_ring_.get();
    iface_->counters().registered_bytes += layout_.ring_bytes();
  }
  card->address = reinterpret_cast<std::uint64_t>(own_ring_.get());
  card->key = own_ring_mr_->rkey;
  return Status::ok();
}

Status VerbsEndpoint::post_wake_receive(RcQueuePair& qp) {
  return qp.post_recv(wr_id(WrKind::kRecv, peer_index(peer_, 0)),
                      LocalBuffer{iface_->credit_out(peer_), 0, iface_->credit_out_lkey()});
}

Status VerbsEndpoint::post_wake_receives(RcQueuePair& qp) {
  for (std::uint32_t k = 0; k < wake_receives(); ++k) {
    TAGWIRE_RETURN_IF_ERROR(post_wake_receive(qp));
  }
  return Status::ok();
}

bool VerbsEndpoint::window_reopens() {
  window_.on_ack(static_cast<std::uint32_t>(iface_->credit_word(peer_)));
  return window_.can_send();
}

Status VerbsEndpoint::write_message(std::uint32_t slot, std::span<const std::uint8_t> header,
                                    std::span<const std::uint8_t> payload,
                                    transport::Delivery delivery) {
  RcQueuePair& qp = *qp_;
  const Outgoing out = take_outgoing();
  // Our consumed count of the peer's messages rides along for free.
  const std::uint32_t ack = back_.tell();
  std::span<std::uint8_t> image = iface_->staging_slot(slot);
  const FrameEnds ends =
      frame_ends(out.marker, ack, header.size(), payload.size(), with_immediate(delivery));
  const StagedWrite w = stage_frame(image, ends, header, payload);
  const WriteOptions o = ring_write_options(delivery, w.length > qp.max_inline());
  if (!o.inline_data) hold(slot);
  Status s =
      qp.post_write(wr_id(WrKind::kRing, peer_index(peer_, held_pushed_)),
                    LocalBuffer{image.data() + w.offset, static_cast<std::uint32_t>(w.length),
                                iface_->staging_lkey()},
                    remote_.ring_address + out.offset + w.offset, remote_.ring_rkey, o);
  // Inline data was copied by the post: the slot is free again.
  if (o.inline_data) iface_->give_staging(slot);
  if (!s.is_ok()) return s.with_context("eager WRITE to rank " + std::to_string(peer_));
  if (o.with_immediate) ++iface_->counters().wake_writes;
  return Status::ok();
}

Status VerbsEndpoint::write_gathered(std::uint32_t slot, std::span<const std::uint8_t> header,
                                     std::span<const std::uint8_t> payload,
                                     std::uint32_t payload_lkey, std::uint64_t wr_id,
                                     transport::Delivery delivery, std::uint32_t* held_mark) {
  RcQueuePair& qp = *qp_;
  const Outgoing out = take_outgoing();
  const bool wake = with_immediate(delivery);
  const FrameEnds ends = frame_ends(out.marker, back_.tell(), header.size(), payload.size(), wake);
  std::span<std::uint8_t> image = iface_->staging_slot(slot);
  const GatheredEnds g = stage_frame_ends(image, ends, header);
  const std::uint32_t lkey = iface_->staging_lkey();
  const LocalBuffer pieces[] = {
      {image.data(), static_cast<std::uint32_t>(g.head), lkey},
      {const_cast<std::uint8_t*>(payload.data()), static_cast<std::uint32_t>(payload.size()),
       payload_lkey},
      {image.data() + g.head, static_cast<std::uint32_t>(kRingTrailer), lkey}};
  *held_mark = static_cast<std::uint32_t>(hold(slot));
  unsignaled_ = 0;  // it asks for a completion: the WRITEs before it complete with it
  Status s = qp.post_gathered_write(
      wr_id, pieces, remote_.ring_address + out.offset + layout_.slot_size - g.length,
      remote_.ring_rkey, wake);
  if (!s.is_ok()) [[unlikely]]
    return s.with_context("eager WRITE to rank " + std::to_string(peer_));
  if (wake) ++iface_->counters().wake_writes;
  return Status::ok();
}

Status VerbsEndpoint::write_inline(std::span<const std::uint8_t> header,
                                   std::span<const std::uint8_t> payload,
                                   transport::Delivery delivery) {
  const Outgoing out = take_outgoing();
  const bool wake = with_immediate(delivery);
  const FrameEnds ends = frame_ends(out.marker, back_.tell(), header.size(), payload.size(), wake);
  // The frame is laid out in the endpoint's image: the device copies it at
  // post time, so the next message may reuse it at once. (Gathered from
  // four pieces instead, rxe's post cost 50 instructions more than this
  // copy saved: its inline copy is a loop of memcpy calls.)
  const StagedWrite w = stage_frame(inline_image_, ends, header, payload);
  // The work request is the endpoint's too, its constant fields set once:
  // building one per message (zeroed, from WriteOptions, in post_write)
  // was 90 of the sender's instructions (bench/instructions in the VM).
  inline_sge_.addr = reinterpret_cast<std::uint64_t>(inline_image_.data() + w.offset);
  inline_sge_.length = static_cast<std::uint32_t>(w.length);
  inline_wr_.wr_id = wr_id(WrKind::kRing, peer_index(peer_, held_pushed_));
  inline_wr_.sg_list = &inline_sge_;
  inline_wr_.opcode = wake ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
  inline_wr_.send_flags =
      signal_next(false) ? IBV_SEND_INLINE | IBV_SEND_SIGNALED : IBV_SEND_INLINE;
  inline_wr_.wr.rdma.remote_addr = remote_.ring_address + out.offset + layout_.slot_size - w.length;
  inline_wr_.wr.rdma.rkey = remote_.ring_rkey;
  Status s = qp_->post_prepared(inline_wr_, "ibv_post_send(inline RDMA_WRITE)");
  if (!s.is_ok()) [[unlikely]]
    return s.with_context("eager WRITE to rank " + std::to_string(peer_));
  if (wake) ++iface_->counters().wake_writes;
  return Status::ok();
}

Status VerbsEndpoint::post_flush() {
  WriteOptions o;
  o.signaled = true;
  unsignaled_ = 0;
  Status s = write_credit_word(0, WrKind::kCredit, o);
  if (s.is_ok()) ++flushes_;
  return s;
}

// A WRITE of `length` bytes (0 or 8) of our count for the peer into its
// credit word: a count, a closing mark, or nothing (a flush).
Status VerbsEndpoint::write_credit_word(std::uint32_t length, WrKind kind, const WriteOptions& o) {
  return qp_->post_write(wr_id(kind, peer_index(peer_, held_pushed_)),
                         LocalBuffer{iface_->credit_out(peer_), length, iface_->credit_out_lkey()},
                         remote_.credit_address, remote_.credit_rkey, o);
}

Status VerbsEndpoint::post_credit(std::uint64_t mark) {
  auto* out = reinterpret_cast<std::uint64_t*>(iface_->credit_out(peer_));
  // If the device reads this after a later count overwrote it, the peer
  // just learns more: counts only grow.
  *out = back_.tell() | mark;
  WriteOptions o;
  o.inline_data = true;
  o.with_immediate = remote_.wake_all;
  o.signaled = mark != 0 || signal_next(false);
  Status s = write_credit_word(8, mark != 0 ? WrKind::kClose : WrKind::kCredit, o);
  if (!s.is_ok()) return s.with_context("credit WRITE to rank " + std::to_string(peer_));
  if (o.signaled && mark == 0) ++flushes_;
  return Status::ok();
}

void VerbsEndpoint::on_write_completion(WrKind kind, std::uint32_t held_when_posted) {
  while (static_cast<std::uint32_t>(held_released_) != held_when_posted && !held_.empty()) {
    iface_->give_staging(held_.front());
    held_.pop_front();
    ++held_released_;
  }
  if (kind == WrKind::kClose) closed_ = true;
  if (kind == WrKind::kCredit && flushes_ > 0) --flushes_;
}

void VerbsEndpoint::queue(std::span<const std::uint8_t> header,
                          std::span<const std::uint8_t> payload, transport::Delivery delivery) {
  Backlogged b;
  b.bytes.assign(header.begin(), header.end());
  b.bytes.insert(b.bytes.end(), payload.begin(), payload.end());
  b.header_length = header.size();
  b.delivery = delivery;
  backlog_.push_back(std::move(b));
}

VerbsEndpoint::Backlogged VerbsEndpoint::next_backlogged() {
  Backlogged b = std::move(backlog_.front());
  backlog_.pop_front();
  return b;
}

unsigned VerbsEndpoint::poll_ring(transport::Receiver* receiver, unsigned* woke) {
  if (!qp_) return 0;
  unsigned n = 0;
  for (unsigned k = 0; k < kRingBatch; ++k) {
    if (!next_trailer_in()) break;
    ArrivedMessage m;
    const Arrival a = peek_message(next_slot(), next_serial_, &m);
    if (a == Arrival::kEmpty) break;
    if (a == Arrival::kReady) {
      window_.on_ack(m.ack);
      if (m.woke) ++*woke;
      iface_->deliver(receiver, m.header, m.payload);
    } else {
      TW_WARN("verbs",
              "malformed eager message " << next_serial_ << " from rank " << peer_ << " dropped");
    }
    release_slot(next_slot());
    advance();
    back_.consumed_one();
    if (back_.write_due()) {
      Status s = post_credit(0);
      if (s.is_ok()) {
        ++iface_->counters().credit_writes;
      } else {
        TW_WARN("verbs", s.to_string());
      }
    }
    ++n;
  }
  return n;
}

bool VerbsEndpoint::ring_has_message() {
  if (!qp_ || !next_trailer_in()) return false;
  ArrivedMessage m;
  return peek_message(next_slot(), next_serial_, &m) != Arrival::kEmpty;
}

}  // namespace tagwire::verbs
