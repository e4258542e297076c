// VerbsEndpoint: the verbs transport's state for one peer (as UCX's rc_ep is
// to its rc_iface, verbs/verbs_interface.h).
//
// Sending to the peer: the RC QP, the peer's ring for our messages and the
// credit window over it, the staging slots our unsignaled WRITEs still hold,
// and the backlog of messages waiting for a connection or a credit.
// Receiving from it: our ring for its messages (a slice of the interface's
// block under the QP exchange, or the endpoint's own, made with its rdma_cm
// connection) and the credits we owe it. An endpoint posts and polls; which
// endpoint, when, and what a completion means for the engine is the
// transport's (verbs_transport.cc).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "common/status.h"
#include "transport/transport.h"
#include "verbs/cm_connector.h"
#include "verbs/eager_ring.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/verbs_interface.h"
#include "verbs/work_request.h"

namespace tagwire::verbs {

// In a credit word, above the consumed count: the writer is closing.
inline constexpr std::uint64_t kClosingMark = std::uint64_t{1} << 63;

// Where the peer wants our messages and credits (its published address, or
// its rdma_cm connection's private data for the ring).
struct PeerRing {
  std::uint64_t ring_address = 0;
  std::uint32_t ring_rkey = 0;
  std::uint64_t credit_address = 0;
  std::uint32_t credit_rkey = 0;
  bool wake_all = false;  // the peer sleeps on events for every message
  CmEndpoint cm;          // where the peer listens (rdma_cm)
};

class VerbsEndpoint {
 public:
  // A ring or credit WRITE asks for a completion once in this many (or when
  // staging slots run low): the rest complete with it, by RC order.
  static constexpr std::uint32_t kSignalEvery = 16;
  // Up to this many messages per poll, so that one busy sender cannot
  // starve the others.
  static constexpr unsigned kRingBatch = 16;

  VerbsEndpoint(VerbsInterface* iface, std::size_t peer, const RingLayout& layout);

  std::size_t peer() const { return peer_; }
  bool connected() const { return qp_ != nullptr; }
  RcQueuePair& qp() { return *qp_; }
  const RcQueuePair* qp_if_any() const { return qp_.get(); }
  void attach(std::unique_ptr<RcQueuePair> qp) { qp_ = std::move(qp); }
  void detach() { qp_.reset(); }

  // The peer's published address, or (rdma_cm) the ring from its card.
  void learn(const PeerRing& remote) { remote_ = remote; }
  void learn_ring(std::uint64_t address, std::uint32_t rkey) {
    remote_.ring_address = address;
    remote_.ring_rkey = rkey;
  }
  const PeerRing& remote() const { return remote_; }

  // Where this peer's messages land: a slice of the interface's block, or
  // (rdma_cm) a ring of our own, made and registered on the first attempt
  // to connect and described on `card` for the peer.
  void use_ring(std::uint8_t* ring) { ring_ = ring; }
  Status make_own_ring(CmCard* card);

  // Zero-length receives: a WRITE with immediate consumes one and raises
  // the completion event (its data is in the ring).
  Status post_wake_receive(RcQueuePair& qp);
  Status post_wake_receives(RcQueuePair& qp);
  std::uint32_t wake_receives() const { return layout_.slots + 16; }

  // ---- sending

  // Whether the peer has a free slot for our next message, reading the
  // credit word it writes if the acks we have do not say so.
  bool window_open() { return window_.can_send() || window_reopens(); }
  // One eager message into the peer's ring: connected, the window open, and
  // `slot` a staging slot taken for it (given back at once if the WRITE
  // went inline, else when a signaled WRITE after it completes).
  Status write_message(std::uint32_t slot, std::span<const std::uint8_t> header,
                       std::span<const std::uint8_t> payload, transport::Delivery delivery);
  // One eager message into the peer's ring whose payload the WRITE gathers
  // from the caller's memory (registered: `payload_lkey`) instead of a copy
  // in the staging slot, which holds only the frame's ends. Signaled, as
  // `wr_id`: the caller's buffer is in use until it completes, and then so
  // is every WRITE before it (*held_mark: on_write_completion's argument).
  // Connected, the window open, the QP gathers (can_gather()).
  Status write_gathered(std::uint32_t slot, std::span<const std::uint8_t> header,
                        std::span<const std::uint8_t> payload, std::uint32_t payload_lkey,
                        std::uint64_t wr_id, transport::Delivery delivery,
                        std::uint32_t* held_mark);
  bool can_gather() const { return qp_->max_gather() >= RcQueuePair::kMaxGather; }
  // Whether a message of `bytes` (header and payload) goes as one inline
  // WRITE: its whole frame fits what the QP copies at post time (and the
  // stack image write_inline lays it out in: a device may grant more).
  bool fits_inline(std::size_t bytes) const {
    return kRingPrefix + bytes + kRingTrailer <=
           std::min<std::size_t>(qp_->max_inline(), VerbsInterface::kWantInline);
  }
  // One eager message into the peer's ring as an inline WRITE
  // (fits_inline): no staging slot to take and give back, nothing held
  // until a completion. Connected, the window open.
  Status write_inline(std::span<const std::uint8_t> header, std::span<const std::uint8_t> payload,
                      transport::Delivery delivery);
  // A signaled zero-length WRITE: completes after everything posted before
  // it, and so frees the staging slots they hold.
  Status post_flush();
  // Our consumed count of the peer's messages into its credit word; with
  // kClosingMark, signaled, as the last WRITE before closing.
  Status post_credit(std::uint64_t mark);
  // Whether unsignaled WRITEs hold staging slots and no flush is on its way.
  bool needs_flush() const { return !held_.empty() && flushes_ == 0; }
  // A signaled ring, credit or closing WRITE completed (its work request's
  // index): so did every WRITE before it, and their staging slots are free.
  void on_write_completion(WrKind kind, std::uint32_t held_when_posted);

  // Messages waiting for the connection or a credit, in order.
  struct Backlogged {
    std::vector<std::uint8_t> bytes;  // header, then payload
    std::size_t header_length = 0;
    transport::Delivery delivery = transport::Delivery::kPolled;
  };
  bool has_backlog() const { return !backlog_.empty(); }
  std::size_t backlog_size() const { return backlog_.size(); }
  void queue(std::span<const std::uint8_t> header, std::span<const std::uint8_t> payload,
             transport::Delivery delivery);
  Backlogged next_backlogged();
  void drop_backlog() { backlog_.clear(); }

  // Connecting gave up: every send to the peer fails with this from now on.
  const Status& failed() const { return failed_; }
  void fail(Status why) { failed_ = std::move(why); }

  // ---- closing

  void mark_closed() { closed_ = true; }
  // Neither has our closing mark been acknowledged nor the peer's arrived.
  bool still_open() const {
    return qp_ && !closed_ && (iface_->credit_word(peer_) & kClosingMark) == 0;
  }

  // ---- receiving

  // Up to kRingBatch of the peer's messages to `receiver` (may be null:
  // counted and dropped), returning credits as they fall due; `woke`
  // counts those that came with immediate (kFrameWoke).
  unsigned poll_ring(transport::Receiver* receiver, unsigned* woke);
  bool ring_has_message();

 private:
  // window_open's rare half: the credit word the peer writes.
  bool window_reopens();
  // Whether the next WRITE asks for a completion: one in kSignalEvery, or
  // every one while staging slots run low.
  bool signal_next(bool holds_slot) {
    if (++unsignaled_ >= kSignalEvery ||
        (holds_slot && iface_->free_staging() < VerbsInterface::kSendSlots / 4)) {
      unsignaled_ = 0;
      return true;
    }
    return false;
  }
  // Where our next message lands in the peer's ring and its marker
  // (layout_.slot_offset() and ring_marker() of its serial), taking its
  // serial from the window: kept as it advances, as the receiver does.
  struct Outgoing {
    std::size_t offset;
    std::uint32_t marker;
  };
  Outgoing take_outgoing() {
    window_.take();
    const Outgoing o{out_offset_, out_marker_};
    out_marker_ = next_ring_marker(out_marker_);
    out_offset_ += layout_.slot_size;
    if (out_offset_ == layout_.ring_bytes()) out_offset_ = 0;
    return o;
  }
  // Whether a ring message goes as a WRITE with immediate (and says so in
  // its frame, kFrameWoke): a wake-up, or every message to a peer that
  // asked for events.
  bool with_immediate(transport::Delivery delivery) const {
    return delivery == transport::Delivery::kWake || remote_.wake_all;
  }
  WriteOptions ring_write_options(transport::Delivery delivery, bool holds_slot) {
    WriteOptions o;
    o.inline_data = !holds_slot;
    o.with_immediate = with_immediate(delivery);
    o.signaled = signal_next(holds_slot);
    return o;
  }
  Status write_credit_word(std::uint32_t length, WrKind kind, const WriteOptions& o);
  std::span<std::uint8_t> next_slot() { return {ring_ + next_offset_, layout_.slot_size}; }
  // Whether the next message's trailer is in: an empty poll ends here.
  bool next_trailer_in() {
    return trailer_carries(ring_ + next_offset_ + layout_.slot_size, next_marker_);
  }
  void advance() {
    ++next_serial_;
    next_marker_ = next_ring_marker(next_marker_);
    next_offset_ += layout_.slot_size;
    if (next_offset_ == layout_.ring_bytes()) next_offset_ = 0;
  }

  VerbsInterface* iface_;
  std::size_t peer_;
  RingLayout layout_;
  std::unique_ptr<RcQueuePair> qp_;  // null until connected (and for self)
  PeerRing remote_;
  // Sending to the peer.
  CreditWindow window_;
  std::size_t out_offset_ = 0;  // take_outgoing()
  std::uint32_t out_marker_;    // take_outgoing()
  Status failed_;
  // write_inline's frame image and work request (the device copies both at
  // post time).
  std::array<std::uint8_t, VerbsInterface::kWantInline> inline_image_;
  ibv_sge inline_sge_{};
  ibv_send_wr inline_wr_{};
  std::deque<Backlogged> backlog_;
  std::uint32_t unsignaled_ = 0;
  std::uint32_t flushes_ = 0;  // signaled credit WRITEs and flushes in flight
  bool closed_ = false;        // our closing mark was acknowledged
  // Staging slots of unsignaled WRITEs, freed when a later signaled one on
  // this QP completes (RC completes a QP's work in order).
  std::deque<std::uint32_t> held_;
  std::uint64_t held_pushed_ = 0, held_released_ = 0;
  // Holds `slot` until a signaled WRITE posted from now on completes; the
  // count of slots held so far is that WRITE's on_write_completion mark.
  std::uint64_t hold(std::uint32_t slot) {
    held_.push_back(slot);
    return ++held_pushed_;
  }
  // Receiving from the peer.
  std::uint8_t* ring_ = nullptr;
  AlignedBytes own_ring_;
  MrPtr own_ring_mr_;
  std::uint64_t next_serial_ = 1;
  // Message next_serial_'s place and marker, kept as the serial advances
  // (layout_.slot_offset() and ring_marker() of it) so that a poll does
  // no division: under the VM's emulation each is a helper call.
  std::size_t next_offset_ = 0;
  std::uint32_t next_marker_;
  CreditReturn back_;
};

}  // namespace tagwire::verbs
