// NicMatchingPort: the receive half of the verbs transport's NicMatching
// (transport/nic_matching.h) over a tag-matching SRQ, and the bytes of the
// messages it takes. The engine decides (its NicMatcher); the port
// carries the decisions out and reports what the NIC did:
//  - post_ops(): an ADD takes one of the port's entry buffers (one scatter
//    entry: mlx5 takes no more) and keeps the handle ibv_post_srq_ops
//    returns, which the entry's DEL names;
//  - progress(): each completion, classified (tm_completion.h), becomes a
//    sink call: a match hands over the message from its entry buffer, an
//    unexpected message from its SRQ buffer, a NO_TAG one goes to the
//    transport's Receiver; the entry buffer or SRQ buffer is reused after;
//  - a DEL of an entry the NIC refused or consumed before the engine heard
//    is not posted (its handle may name another entry by then): the port
//    answers it, failed, as the NIC would.
// A message on the wire is TMH | engine header | payload; the TMH's 32-bit
// opaque field carries the header's length, so the port can hand the two
// apart without knowing the engine's format. The engine sends no TMH
// rendezvous (its RTS is a tagged message like any other: the NIC matches
// it, the engine reads); one that arrives anyway fails the receive it
// consumed, and its entry buffer waits for the NIC's read to end.
//
// VerbsNicMatching (verbs_nic_matching.h) puts it under VerbsTransport.
// Single-threaded, like the transport.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "matching/nic_matcher.h"
#include "transport/nic_matching.h"
#include "verbs/device.h"
#include "verbs/tm_srq.h"
#include "verbs/verbs_handles.h"

namespace tagwire::verbs {

struct NicMatchingPortOptions {
  std::uint32_t entries = 64;             // entries the NIC may hold (capped by tm_max_tags)
  std::uint32_t message_bytes = 16384;    // largest engine header + payload
  std::uint32_t unexpected_buffers = 64;  // SRQ buffers: TMH + message_bytes each
  ibv_comp_channel* events = nullptr;     // create(): the channel the CQ raises events on
};

// The bytes of one message to a tag-matching SRQ. `tag`: the NIC tag, or
// nothing for IBV_TMH_NO_TAG (the transport's untagged messages).
std::vector<std::uint8_t> encode_port_message(std::optional<std::uint64_t> tag,
                                              std::span<const std::uint8_t> header,
                                              std::span<const std::uint8_t> payload);
// The same into `out`: the bytes written, 0 if they do not fit.
std::size_t encode_port_message_into(std::optional<std::uint64_t> tag,
                                     std::span<const std::uint8_t> header,
                                     std::span<const std::uint8_t> payload,
                                     std::span<std::uint8_t> out);

// `body` (what follows the TMH) split by the header length the TMH carries.
struct PortMessage {
  std::span<const std::uint8_t> header;
  std::span<const std::uint8_t> payload;
};
std::optional<PortMessage> split_port_message(std::uint32_t header_length,
                                              std::span<const std::uint8_t> body);

struct NicMatchingPortCounters {
  std::uint64_t matched = 0;
  std::uint64_t unexpected = 0;
  std::uint64_t untagged = 0;
  std::uint64_t malformed = 0;  // no valid TMH, a header longer than the message, a TMH rendezvous
};

class NicMatchingPort {
 public:
  // A TM-SRQ on `device` (needs IBV_TM_CAP_RC); pools registered.
  static Result<std::unique_ptr<NicMatchingPort>> create(const Device& device,
                                                         const NicMatchingPortOptions& options);
  // Over any TmSrq (tests play the NIC); the pools registered on `device`,
  // or unregistered (lkey 0) without one, for an SRQ that is not a device's.
  static Result<std::unique_ptr<NicMatchingPort>> create_with(const NicMatchingPortOptions& options,
                                                              std::unique_ptr<TmSrq> srq,
                                                              const Device* device = nullptr);
  ~NicMatchingPort();
  NicMatchingPort(const NicMatchingPort&) = delete;
  NicMatchingPort& operator=(const NicMatchingPort&) = delete;

  std::uint32_t capacity() const { return options_.entries; }
  std::size_t max_tagged_message() const { return options_.message_bytes; }
  ibv_srq* srq() const { return srq_->srq(); }
  ibv_cq* cq() const { return srq_->cq(); }

  Status post_ops(std::span<const matching::NicOp> ops);
  // Polls once; what it found goes to `sink` and (NO_TAG) `receiver`, then
  // the sink's end of batch. Returns how many completions it handled.
  Result<unsigned> progress(transport::NicMatchingSink& sink, transport::Receiver& receiver);

  std::size_t entries_in_use() const { return entries_.size(); }
  const NicMatchingPortCounters& counters() const { return counters_; }

 private:
  struct Entry {
    std::uint32_t slot = 0;  // its buffer
    std::uint32_t handle = 0;
  };

  NicMatchingPort() = default;
  // After the pools exist (and are registered: their keys).
  Status start(std::unique_ptr<TmSrq> srq, std::uint32_t entries_lkey, std::uint32_t srq_lkey);
  std::uint8_t* entry_buffer(std::uint32_t slot);
  std::uint8_t* srq_buffer(std::uint32_t index);
  std::uint32_t srq_buffer_bytes() const;
  Status post_srq_buffer(std::uint32_t index);
  void release(std::uint64_t entry);
  Status handle(const TmCompletion& c, transport::NicMatchingSink& sink,
                transport::Receiver& receiver);
  // A message in SRQ buffer c.wr_id; `counted`: the NIC counted it as
  // unexpected (a tagged one), else it is NO_TAG.
  Status on_buffer(const TmCompletion& c, bool counted, bool sync_requested,
                   transport::NicMatchingSink& sink, transport::Receiver& receiver);

  NicMatchingPortOptions options_;
  std::unique_ptr<TmSrq> srq_;
  std::vector<std::uint8_t> entry_pool_;  // entries * message_bytes
  std::vector<std::uint8_t> srq_pool_;    // unexpected_buffers * (TMH + message_bytes)
  MrPtr entry_mr_;
  MrPtr srq_mr_;
  std::uint32_t lkey_entries_ = 0;
  std::uint32_t lkey_srq_ = 0;
  std::vector<std::uint32_t> free_slots_;
  std::unordered_map<std::uint64_t, Entry> entries_;  // by NIC entry (the engine's id)
  // DELs of entries the NIC no longer held when they were posted (refused
  // or consumed): reported as failed at the next progress().
  std::vector<std::uint64_t> answered_dels_;
  NicMatchingPortCounters counters_;
};

}  // namespace tagwire::verbs
