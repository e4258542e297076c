// MatchingState: the engine's matching state with one owner. The matcher
// holds envelopes (posted receives, unexpected messages' envelopes and the
// NIC's book); the payloads of unexpected messages (eager bytes, an RTS's
// remote key) live here beside it, keyed by the cookie each envelope
// carries. Every way a queued message leaves the matcher (a receive that
// takes it, mprobe, a send cancel) goes through this class and hands back
// the payload with the envelope, so the two cannot fall out of step.
//
// matcher() stays open for what takes no queued message: posting that
// queues, arrivals, probe, counters and the NIC's bookkeeping.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "engine/request.h"
#include "matching/nic_matcher.h"

namespace tagwire::engine {

class MatchingState {
 public:
  // A receive posted: either it took a queued message (`message` set) or it
  // waits in the matcher under `handle`.
  struct Posted {
    matching::ReceiveHandle handle;
    std::unique_ptr<PendingMessage> message;
  };

  // A NIC that holds up to `nic_capacity` posted receives (0: none).
  void use_nic(std::uint32_t nic_capacity) {
    assert(payloads_.empty() && matcher_.posted_count() == 0);
    matcher_ = matching::NicMatcher(nic_capacity);
  }

  matching::NicMatcher& matcher() { return matcher_; }
  const matching::NicMatcher& matcher() const { return matcher_; }

  // The cookie the next arrival's envelope must carry, in case it is queued.
  std::uint64_t next_cookie() const { return next_cookie_; }

  // An arrival the matcher queued as unexpected (its envelope carried
  // `cookie`, from next_cookie()): keeps its payload until it is taken.
  void keep(std::uint64_t cookie, std::unique_ptr<PendingMessage> message) {
    assert(cookie == next_cookie_);
    held_bytes_ += held_by(*message);
    if (held_bytes_ > held_peak_) held_peak_ = held_bytes_;
    payloads_.emplace(cookie, std::move(message));
    next_cookie_ = cookie + 1;
  }

  Posted post_receive(const matching::ReceivePattern& pattern, std::uint64_t receive_cookie) {
    auto posted = matcher_.post_receive(pattern, receive_cookie);
    Posted result;
    if (posted.matched) {
      result.message = take_payload(posted.message.cookie);
    } else {
      result.handle = posted.handle;
    }
    return result;
  }

  // The queued message a receive with `pattern` would take, removed (only
  // an mrecv of it can receive it); null if none.
  std::unique_ptr<PendingMessage> mprobe(const matching::ReceivePattern& pattern) {
    return taken(matcher_.mprobe(pattern));
  }

  // Send cancel at the receiver: the newest queued message from (context,
  // source) with the sender's request id, removed; null if it matched.
  std::unique_ptr<PendingMessage> cancel_unexpected(matching::ContextId context,
                                                    matching::Rank source,
                                                    std::uint64_t sender_request_id) {
    return taken(matcher_.cancel_unexpected(context, source, sender_request_id));
  }

  // A queued message's payload, left in place (the envelope from probe()).
  const PendingMessage& queued(const matching::IncomingMessage& envelope) const {
    return *payloads_.at(envelope.cookie);
  }

  std::size_t queued_count() const { return payloads_.size(); }

  // What the queued messages hold in this process's memory, in bytes: the
  // engine's bound on what its helper thread takes in (Config's
  // unexpected_limit) is on this. Each message counts its payload and
  // kQueuedMessageBytes for the rest (matching_state_test measures the heap
  // one costs and checks this is not less).
  static constexpr std::size_t kQueuedMessageBytes = 480;
  std::size_t held_bytes() const { return held_bytes_; }
  std::size_t held_peak() const { return held_peak_; }

 private:
  std::unique_ptr<PendingMessage> take_payload(std::uint64_t cookie) {
    auto it = payloads_.find(cookie);
    assert(it != payloads_.end());
    std::unique_ptr<PendingMessage> message = std::move(it->second);
    payloads_.erase(it);
    held_bytes_ -= held_by(*message);
    return message;
  }

  std::unique_ptr<PendingMessage> taken(const std::optional<matching::IncomingMessage>& envelope) {
    return envelope ? take_payload(envelope->cookie) : nullptr;
  }

  static std::size_t held_by(const PendingMessage& message) {
    return kQueuedMessageBytes + message.data.capacity();
  }

  matching::NicMatcher matcher_{0};
  std::unordered_map<std::uint64_t, std::unique_ptr<PendingMessage>> payloads_;
  std::uint64_t next_cookie_ = 1;
  std::size_t held_bytes_ = 0;
  std::size_t held_peak_ = 0;
};

}  // namespace tagwire::engine
