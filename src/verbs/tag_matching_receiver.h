// TagMatchingReceiver: tagged receives over verbs, matched by the NIC where
// it can (a tag-matching SRQ, ConnectX-5 and later) and by software
// otherwise (a plain SRQ), with one OffloadedMatcher deciding in both cases,
// so that the two paths differ only in who consumes a receive.
//
// Messages are RC SENDs of TMH | payload (verbs/tm_header.h) to QPs
// attached to srq(). In hardware mode the NIC puts the payload of a message
// it matched straight into the receive's buffer; every other message lands,
// TMH and all, in one of this receiver's SRQ buffers, whose payload is
// copied out at once (the buffer goes straight back to the SRQ) and kept
// until a receive takes it.
//
// Eager messages only: a rendezvous request is classified (the NIC reads the
// data of one it matched) but the software read needs a send queue, which a
// QP on a TM-SRQ gives up; the engine's second QP per peer is the place for
// it (DESIGN §3). Single-threaded, like the matcher.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "matching/offloaded_matcher.h"
#include "verbs/device.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/tm_completion.h"
#include "verbs/verbs_handles.h"

namespace tagwire::verbs {

struct TagMatchingOptions {
  bool hardware = false;           // a TM-SRQ; needs DeviceCaps::tm_rc
  std::uint32_t nic_entries = 64;  // receives the NIC may hold (capped by tm_max_tags)
  std::uint32_t buffers = 64;      // SRQ buffers for messages software matches
  std::uint32_t buffer_bytes = 4096;
};

class TagMatchingReceiver {
 public:
  using ReceiveId = std::uint32_t;

  struct Completed {
    ReceiveId id = 0;          // reused once the receive completes
    std::uint64_t cookie = 0;  // the caller's, from post_receive
    bool cancelled = false;
    bool by_nic = false;
    bool truncated = false;
    matching::Envelope envelope;
    std::uint32_t length = 0;          // payload bytes placed in the buffer
    std::uint32_t sender_request = 0;  // the TMH's opaque field
  };

  static Result<std::unique_ptr<TagMatchingReceiver>> create(const Device& device,
                                                             const TagMatchingOptions& options);
  ~TagMatchingReceiver();
  TagMatchingReceiver(const TagMatchingReceiver&) = delete;
  TagMatchingReceiver& operator=(const TagMatchingReceiver&) = delete;

  bool hardware() const { return options_.hardware; }
  ibv_srq* srq() const { return srq_.get(); }
  ibv_cq* cq() const { return ibv_cq_ex_to_cq(cq_.get()); }

  // `into` must stay registered and untouched until the receive completes.
  Result<ReceiveId> post_receive(const matching::ReceivePattern& pattern, LocalBuffer into,
                                 std::uint64_t cookie, std::vector<Completed>* done);
  // Completes (cancelled or matched) through progress() or at once.
  Status cancel(ReceiveId id, std::vector<Completed>* done);
  std::optional<matching::IncomingMessage> probe(const matching::ReceivePattern& pattern) const {
    return matcher_.probe(pattern);
  }

  // Polls the CQ once; appends finished receives to `done`.
  Status progress(std::vector<Completed>* done);

  const matching::NicMatchingCounters& counters() const { return matcher_.counters(); }
  std::uint64_t untagged() const { return untagged_; }

 private:
  struct Receive {
    LocalBuffer buffer{};
    std::uint64_t cookie = 0;
    bool active = false;
    matching::ReceivePattern pattern;
    matching::ReceiveHandle handle;
  };
  struct Stored {
    std::vector<std::uint8_t> payload;
    std::uint32_t sender_request = 0;
  };

  TagMatchingReceiver() = default;
  Status post_buffer(std::uint32_t index);
  Status post_ops();
  Status handle(const TmCompletion& c, std::vector<Completed>* done);
  Status on_unexpected(const TmCompletion& c, bool sync_requested, std::vector<Completed>* done);
  // A stored (software-matched) message into receive `id`.
  void deliver_stored(ReceiveId id, const matching::IncomingMessage& message,
                      std::vector<Completed>* done);
  // A Completed for receive `id`, which is then free for reuse.
  Completed& finish(ReceiveId id, std::vector<Completed>* done);
  // Receive `id` completed by the NIC (its data in the receive's buffer).
  Completed& finish_by_nic(ReceiveId id, const TmCompletion& c, std::vector<Completed>* done);
  // The NIC will report nothing more about `entry`.
  void forget_entry(std::uint64_t entry);
  ReceiveId receive_of_entry(std::uint64_t entry) const;

  TagMatchingOptions options_;
  CqExPtr cq_;
  SrqPtr srq_;
  std::vector<std::uint8_t> pool_;
  MrPtr pool_mr_;
  matching::OffloadedMatcher matcher_{0};
  std::vector<Receive> receives_;
  std::vector<ReceiveId> free_receives_;
  std::unordered_map<std::uint64_t, ReceiveId> entry_receive_;     // NIC entry -> receive
  std::unordered_map<std::uint64_t, std::uint32_t> entry_handle_;  // NIC entry -> driver handle
  std::unordered_map<std::uint64_t, Stored> stored_;               // unexpected payloads by cookie
  std::uint64_t next_cookie_ = 1;
  std::uint64_t untagged_ = 0;
};

}  // namespace tagwire::verbs
