// VerbsNicMatching: the verbs transport's NicMatching (transport/nic_matching.h),
// the NIC's tag matching for the engine's messages.
//
// While it is on, every message the engine sends a rank -- tagged
// (send_tagged) or not (send_untagged, as IBV_TMH_NO_TAG) -- is a SEND on
// this rank's send QP for that rank, connected to that rank's tagged QP on
// its tag-matching SRQ. One ordered channel per pair: a cancel request or a
// FIN stays behind the message it names, and the receiving NIC sees a
// sender's tagged messages in the order they were sent. A QP attached to a
// TM-SRQ gives up its send queue to the NIC, hence two QPs per peer
// (docs/architecture.md §3). Messages to self take the same way through the NIC, so their
// order against the NIC's matching holds as for any peer. The receive side
// is the NicMatchingPort; the eager ring, READ, WRITE and atomics stay on the
// transport's own QPs.
//
// The QPs are made at start-up and connected through the QP exchange: under
// rdma_cm the two extra QPs per peer would have to travel in the
// connection's private data, which is not built (docs/matching.md).
// Single-threaded, like the transport.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/status.h"
#include "transport/nic_matching.h"
#include "verbs/channel_address.h"
#include "verbs/device.h"
#include "verbs/nic_matching_port.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/tm_srq.h"
#include "verbs/verbs_handles.h"

namespace tagwire::verbs {

struct VerbsNicMatchingOptions {
  std::uint32_t entries = 256;             // receives the NIC may hold (capped by the device)
  std::uint32_t message_bytes = 0;         // largest header + payload
  std::uint32_t unexpected_buffers = 128;  // the SRQ's buffers for what the NIC does not match
  std::uint32_t staging_slots = 64;        // SENDs in flight, all peers
  // The channel the tag-matching CQ raises events on (the transport's, so
  // one fd wakes a sleeping helper for both CQs); null: no events.
  ibv_comp_channel* events = nullptr;
};

struct VerbsNicMatchingCounters {
  std::uint64_t tagged_sent = 0;
  std::uint64_t untagged_sent = 0;
  std::uint64_t waited_for_slot = 0;  // messages that queued for a staging slot
  std::uint64_t send_errors = 0;      // SEND completions in error
};

class VerbsNicMatching final : public transport::NicMatching {
 public:
  // Over the device's TM-SRQ (`srq` null: the device must report
  // IBV_TM_CAP_RC), or over `srq`: a test's SRQ that plays the NIC.
  static Result<std::unique_ptr<VerbsNicMatching>> create(const Device& device, int gid_index,
                                                          int peers,
                                                          const VerbsNicMatchingOptions& options,
                                                          std::unique_ptr<TmSrq> srq);
  ~VerbsNicMatching() override;
  VerbsNicMatching(const VerbsNicMatching&) = delete;
  VerbsNicMatching& operator=(const VerbsNicMatching&) = delete;

  // This rank's two QPs for `peer`, and connecting them to the peer's.
  ChannelAddress address(int peer) const;
  Status connect(int peer, const ChannelAddress& remote);

  // transport::NicMatching.
  std::uint32_t capacity() const override { return port_->capacity(); }
  std::size_t max_tagged_message() const override { return port_->max_tagged_message(); }
  void set_sink(transport::NicMatchingSink* sink) override { sink_ = sink; }
  Result<transport::Issued> send_tagged(transport::PeerId peer, std::uint64_t nic_tag,
                                        std::span<const std::uint8_t> header,
                                        std::span<const std::uint8_t> payload,
                                        transport::Completion done) override;
  Result<transport::Issued> send_untagged(transport::PeerId peer,
                                          std::span<const std::uint8_t> header,
                                          std::span<const std::uint8_t> payload,
                                          transport::Completion done,
                                          transport::Delivery delivery) override;
  Status post_ops(std::span<const matching::NicOp> ops) override { return port_->post_ops(ops); }

  // SEND completions, what waited for a staging slot, then the port's
  // completions (to the sink and, untagged, to `receiver`).
  unsigned progress(transport::Receiver& receiver);
  // An event on the channel at the tag-matching CQ's next completion (a
  // message arrived, matched or not, or an operation ended). Completions
  // already there raise none: poll after asking.
  Status request_event();
  // SENDs posted or waiting: the peer has not acknowledged everything yet.
  bool sending() const { return !backlog_.empty() || in_flight_ != 0; }
  // The engine took the facet (set_sink). Where it did not (it matches in
  // software, as under one-sided cancel; every rank alike, checked at its
  // start-up), the transport keeps its messages on the eager ring.
  bool in_use() const { return sink_ != nullptr; }

  const VerbsNicMatchingCounters& counters() const { return counters_; }
  const NicMatchingPortCounters& port_counters() const { return port_->counters(); }

 private:
  struct Peer {
    std::unique_ptr<RcQueuePair> send;
    std::unique_ptr<RcQueuePair> tagged;
    bool connected = false;
  };
  struct Waiting {
    int peer = 0;
    std::vector<std::uint8_t> bytes;  // TMH | header | payload
  };

  VerbsNicMatching() = default;
  Result<transport::Issued> send(int peer, std::optional<std::uint64_t> tag,
                                 std::span<const std::uint8_t> header,
                                 std::span<const std::uint8_t> payload);
  std::span<std::uint8_t> slot(std::uint32_t index);
  Status post(int peer, std::uint32_t index, std::size_t length);
  unsigned poll_sends();
  unsigned send_backlog();

  VerbsNicMatchingOptions options_;
  int gid_index_ = 0;
  std::unique_ptr<NicMatchingPort> port_;
  transport::NicMatchingSink* sink_ = nullptr;
  CqPtr send_cq_;
  std::vector<std::uint8_t> staging_;  // staging_slots x (TMH + message_bytes)
  MrPtr staging_mr_;
  std::vector<std::uint32_t> free_slots_;
  std::uint32_t in_flight_ = 0;
  std::vector<Peer> peers_;
  std::deque<Waiting> backlog_;  // in order, all peers: no slot was free
  VerbsNicMatchingCounters counters_;
};

}  // namespace tagwire::verbs
