// TagMatchingChannels: the connections of tag-matched messaging between
// ranks, around one TagMatchingReceiver (hardware TM-SRQ or plain SRQ).
//
// A QP attached to a tag-matching SRQ gives up its send queue to the NIC
// (it issues the rendezvous READs and FINs of the matches it makes), so
// every peer gets two QPs (docs/architecture.md §3):
//   send QP  -> the peer's tagged QP: everything this rank sends (eager,
//               rendezvous requests, FINs, control without a tag) and the
//               software READs of the peer's rendezvous data;
//   tagged QP <- the peer's send QP: attached to the receiver's SRQ, so all
//               that the peer sends is matched (or handed to software) in
//               the order it was sent.
// Control messages (cancel requests, acknowledgements) travel as
// IBV_TMH_NO_TAG on the same send QP as the data, so a cancel can never
// overtake the message it names; and a send cancel is decided only after
// the receiver's CQ is drained (cancel_unexpected), so that a message the
// NIC has matched -- final -- is never also cancelled.
//
// The send QP's own receive side takes what the peer's NIC sends back on
// its tagged QP: the FIN after a rendezvous the NIC read itself. (UCX's rc
// transport pairs its QPs the same way when it offloads tag matching: its
// comments say the device owns the send side of the QP bound to the
// TM-SRQ, for the rendezvous READs and ACKs, and the driver wants that QP
// made with a zero-length send queue. Read there, checked against ours.)
//
// Connections are made from addresses exchanged out of band (the
// bootstrap, or a test). Single-threaded.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "matching/envelope.h"
#include "verbs/device.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/tag_matching_receiver.h"
#include "verbs/tm_header.h"
#include "verbs/verbs_handles.h"

namespace tagwire::verbs {

// What a peer needs to connect to this rank's two QPs for it.
struct ChannelAddress {
  QpAddress send;    // connects to the peer's tagged QP
  QpAddress tagged;  // connects to the peer's send QP
};

struct TagMatchingChannelOptions {
  TagMatchingOptions receiver;
  std::uint32_t send_depth = 64;     // work requests in flight per send QP
  std::uint32_t staging_slots = 64;  // eager / control / FIN copies in flight, all peers
  std::uint32_t fin_buffers = 32;    // for FINs the peers' NICs send back
};

struct TagMatchingChannelCounters {
  std::uint64_t eager_sent = 0;
  std::uint64_t rendezvous_sent = 0;
  std::uint64_t control_sent = 0;
  std::uint64_t fins_sent = 0;      // after a software read
  std::uint64_t fins_received = 0;  // for this rank's rendezvous sends
  std::uint64_t software_reads = 0;
  std::uint64_t send_cancels_won = 0;   // the message was still unexpected: removed
  std::uint64_t send_cancels_lost = 0;  // it was matched first (by the NIC or software)
};

class TagMatchingChannels final : private TagMatchingSink {
 public:
  using PeerId = std::int32_t;
  using Completed = TagMatchingReceiver::Completed;

  struct Control {
    PeerId peer = -1;
    std::vector<std::uint8_t> bytes;
  };
  // What progress() found.
  struct Events {
    std::vector<Completed> receives;
    std::vector<std::uint32_t> finished;  // rendezvous sends whose data the peer has (FIN)
    std::vector<Control> controls;        // in arrival order
    void clear() {
      receives.clear();
      finished.clear();
      controls.clear();
    }
  };

  static Result<std::unique_ptr<TagMatchingChannels>> create(
      const Device& device, int gid_index, int peers, const TagMatchingChannelOptions& options);
  ~TagMatchingChannels() override;
  TagMatchingChannels(const TagMatchingChannels&) = delete;
  TagMatchingChannels& operator=(const TagMatchingChannels&) = delete;

  ChannelAddress address(PeerId peer) const;
  Status connect(PeerId peer, const ChannelAddress& remote);

  // Largest eager payload: what fits the peer's SRQ buffer after the TMH.
  std::size_t max_eager() const;

  // The payload is copied: the caller may reuse it at once.
  Status send_eager(PeerId peer, const matching::Envelope& envelope, std::uint32_t sender_request,
                    std::span<const std::uint8_t> payload);
  // `data` (registered with IBV_ACCESS_REMOTE_READ) must stay untouched
  // until `sender_request` shows up in Events::finished.
  Status send_rendezvous(PeerId peer, const matching::Envelope& envelope,
                         std::uint32_t sender_request, const RendezvousHeader& data);
  Status send_control(PeerId peer, std::span<const std::uint8_t> bytes);

  // Receives: as TagMatchingReceiver's.
  Result<TagMatchingReceiver::ReceiveId> post_receive(const matching::ReceivePattern& pattern,
                                                      LocalBuffer into, std::uint64_t cookie);
  Status cancel_receive(TagMatchingReceiver::ReceiveId id);
  std::optional<matching::IncomingMessage> probe(const matching::ReceivePattern& pattern) const {
    return receiver_->probe(pattern);
  }
  std::optional<matching::IncomingMessage> mprobe(const matching::ReceivePattern& pattern) {
    return receiver_->mprobe(pattern);
  }
  Result<TagMatchingReceiver::ReceiveId> mreceive(const matching::IncomingMessage& message,
                                                  LocalBuffer into, std::uint64_t cookie);

  // A sender's cancel of its message `sender_request` to this rank: drains
  // the tag-matching CQ, then removes the message if software still holds
  // it unmatched. False: it was matched (the NIC's match is final) or has
  // not arrived. A cancel request sent behind the message on the same QP
  // always finds it arrived, and reaches the CQ after the NIC's report of
  // any match of it, so handling completions in CQ order already decides;
  // the drain is for a request that came another way (another QP, the
  // verbs transport's ring) while the NIC's report waits in the CQ.
  Result<bool> cancel_unexpected(matching::ContextId context, matching::Rank source,
                                 std::uint32_t sender_request);

  // Polls every CQ once; appends what happened (and what an earlier drain
  // found) to `events`.
  Status progress(Events* events);

  bool hardware() const { return receiver_->hardware(); }
  const matching::NicMatchingCounters& matching_counters() const { return receiver_->counters(); }
  const TagMatchingChannelCounters& counters() const { return counters_; }

 private:
  struct Peer {
    std::unique_ptr<RcQueuePair> send;
    std::unique_ptr<RcQueuePair> tagged;
    bool connected = false;
  };

  TagMatchingChannels() = default;

  // TagMatchingSink.
  void on_control(std::uint32_t qp_num, std::span<const std::uint8_t> bytes) override;
  void on_fin(std::uint32_t qp_num, std::uint32_t app_context) override;
  Status start_read(std::uint32_t qp_num, LocalBuffer into, const RendezvousHeader& header,
                    std::uint32_t id) override;

  Result<PeerId> peer_of_tagged_qp(std::uint32_t qp_num) const;
  Status check_range(PeerId peer) const;
  // In range and connected.
  Status check_peer(PeerId peer) const;
  // Copies TMH | `extra` | `body` into a staging slot and SENDs it.
  Status send_message(PeerId peer, const TmHeader& tmh, std::span<const std::uint8_t> extra,
                      std::span<const std::uint8_t> body);
  Status poll_sends();
  Status poll_fins();
  std::uint8_t* fin_buffer(std::uint32_t index);
  Status post_fin_buffer(std::uint32_t index);
  // FINs for the software reads that completed in receives[from..].
  Status send_fins(const std::vector<Completed>& receives, std::size_t from);

  const Device* device_ = nullptr;
  int gid_index_ = 0;
  TagMatchingChannelOptions options_;
  std::unique_ptr<TagMatchingReceiver> receiver_;
  CqPtr send_cq_;
  CqPtr fin_cq_;
  SrqPtr fin_srq_;
  std::vector<std::uint8_t> staging_;  // staging_slots * slot bytes, then fin_buffers * TMH
  MrPtr staging_mr_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<Peer> peers_;
  std::unordered_map<std::uint32_t, PeerId> peer_of_tagged_;  // local tagged QP -> peer
  Events found_;  // what the sink and drains found, handed out by progress()
  TagMatchingChannelCounters counters_;
};

}  // namespace tagwire::verbs
