// NicMatching: the optional facet of a Transport whose NIC matches tagged
// messages against posted receives (rdma-core's tag-matching SRQ; UCX's
// uct tag interface is the same idea one layer down).
//
// The engine stays the authority on matching (matching/nic_matcher.h
// keeps the book): it decides which receives the NIC holds and posts the
// NIC operations; the transport carries them out and reports what the NIC
// did. The engine's messages keep one wire format: a tagged message is the
// engine's header and payload, as send() would carry them, plus the NIC tag
// (matching/nic_tag.h) the NIC compares. The NIC puts a message it matches
// into a buffer of the transport's that it gave the entry (the mlx5 driver
// takes one scatter entry per receive: the engine's header could not go
// elsewhere than the user's data), and the engine copies or reads from
// there as it does for a message software matched.
//
// Order: a facet's tagged and untagged messages to one peer share one
// ordered channel, and the sink hears about them -- matched, unexpected or
// untagged (Receiver::on_message) -- in the order they arrived, interleaved
// with the completions of the operations posted. So a cancel request that
// follows a message is handled after the NIC's report of any match of it.
// Once the engine holds the facet (set_sink), everything it sends goes by
// send_tagged or send_untagged: the transport's own send() then refuses
// (kInvalidArgument) rather than take another channel, on which a control
// message could overtake the tagged message it names.
#pragma once

#include <cstdint>
#include <span>

#include "common/status.h"
#include "matching/nic_matcher.h"
#include "transport/transport.h"

namespace tagwire::transport {

// What the NIC did, as the engine hears it. Called from Transport::progress().
class NicMatchingSink {
 public:
  virtual ~NicMatchingSink() = default;
  // The NIC matched `entry` (IBV_WC_TM_RECV with IBV_WC_TM_MATCH): the
  // message as it was sent; both spans valid during the call only.
  virtual void on_tag_match(std::uint64_t entry, std::span<const std::uint8_t> header,
                            std::span<const std::uint8_t> payload) = 0;
  // A tagged message the NIC did not match, which it counted as
  // unexpected; `sync_requested`: the NIC asks for a TAG_SYNC.
  virtual void on_tag_unexpected(std::span<const std::uint8_t> header,
                                 std::span<const std::uint8_t> payload, bool sync_requested) = 0;
  // IBV_WC_TM_ADD / _DEL / _SYNC; `ok` false is IBV_WC_TM_ERR.
  virtual void on_tag_op_done(matching::NicOp::Kind kind, std::uint64_t entry, bool ok,
                              bool sync_requested) = 0;
  // After each batch of the above (NicMatcher::end_of_batch).
  virtual void on_tag_batch_end() = 0;
};

class NicMatching {
 public:
  virtual ~NicMatching() = default;
  // Entries the NIC may hold at once (at most tm_caps.max_num_tags).
  virtual std::uint32_t capacity() const = 0;
  // Largest header + payload a tagged message may have: what an entry's
  // buffer holds.
  virtual std::size_t max_tagged_message() const = 0;
  virtual void set_sink(NicMatchingSink* sink) = 0;
  // As Transport::send, with the NIC tag the peer's NIC matches on.
  virtual Result<Issued> send_tagged(PeerId peer, std::uint64_t nic_tag,
                                     std::span<const std::uint8_t> header,
                                     std::span<const std::uint8_t> payload, Completion done) = 0;
  // As Transport::send, on the same channel as send_tagged, with no tag
  // (IBV_TMH_NO_TAG): the NIC hands it to the transport's Receiver.
  virtual Result<Issued> send_untagged(PeerId peer, std::span<const std::uint8_t> header,
                                       std::span<const std::uint8_t> payload, Completion done,
                                       Delivery delivery) = 0;
  // Posts `ops` to the NIC, in order (ibv_post_srq_ops).
  virtual Status post_ops(std::span<const matching::NicOp> ops) = 0;
};

}  // namespace tagwire::transport
