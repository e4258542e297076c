// MatchingState: the engine's matching state with one owner. The matcher
// holds envelopes (posted receives, unexpected messages' envelopes and the
// NIC's book); what else an unexpected message carries (eager bytes, an
// RTS's remote key and address, the sender's rank and slot descriptor)
// lives here beside it, in a pool slot the envelope's cookie names. Every
// way a queued message leaves the matcher (a receive that takes it,
// mprobe, a send cancel) goes through this class and hands back the rest
// of the message with the envelope, so the two cannot fall out of step.
//
// matcher() stays open for what takes no queued message: posting that
// queues, arrivals, probe, counters and the NIC's bookkeeping.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "engine/request.h"
#include "matching/nic_matcher.h"
#include "matching/node_pool.h"

namespace tagwire::engine {

class MatchingState {
 public:
  // A receive posted: it took a queued message (`message` set, or
  // `in_slot` for an eager one), or it waits in the matcher under `handle`.
  // An eager message stays in its slot: the caller reads it with queued()
  // and queued_data() and then drop()s it, with no PendingMessage and no
  // copy of its bytes made on the heap (two allocations per message in a
  // crowded all-to-all whose receives mostly find their message queued).
  struct Posted {
    matching::ReceiveHandle handle;
    std::unique_ptr<PendingMessage> message;
    std::optional<matching::IncomingMessage> in_slot;
  };

  // A NIC that holds up to `nic_capacity` posted receives (0: none).
  void use_nic(std::uint32_t nic_capacity) {
    assert(kept_.live() == 0 && matcher_.posted_count() == 0);
    matcher_ = matching::NicMatcher(nic_capacity);
  }

  matching::NicMatcher& matcher() { return matcher_; }
  const matching::NicMatcher& matcher() const { return matcher_; }

  // The cookie the next arrival's envelope must carry, in case it is queued.
  std::uint64_t next_cookie() { return std::uint64_t{kept_.next()} + 1; }

  // An arrival the matcher queued as unexpected (its envelope carried
  // `cookie`, from next_cookie()): keeps what the envelope does not hold
  // (`message`'s type, origin, flags, address and slot; its envelope
  // fields and data are not read) and `data`, until it is taken.
  void keep(std::uint64_t cookie, const PendingMessage& message,
            std::span<const std::uint8_t> data);

  Posted post_receive(const matching::ReceivePattern& pattern, std::uint64_t receive_cookie) {
    auto posted = matcher_.post_receive(pattern, receive_cookie);
    Posted result;
    if (posted.matched) {
      if (kept_.at(slot_of(posted.message.cookie)).type == MessageType::kEager) {
        result.in_slot = posted.message;
      } else {
        result.message = take(posted.message);
      }
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

  // A queued message (the envelope from probe()), left in place: every
  // field but its data.
  PendingMessage queued(const matching::IncomingMessage& envelope) const;

  // Post_receive's `in_slot` message: its bytes, valid until drop().
  std::span<const std::uint8_t> queued_data(const matching::IncomingMessage& envelope) const {
    return kept_.at(slot_of(envelope.cookie)).data();
  }
  // Frees the slot of post_receive's `in_slot` message, once delivered.
  void drop(const matching::IncomingMessage& envelope);

  std::size_t queued_count() const { return kept_.live(); }

  // What the queued messages hold in this process's memory, in bytes: the
  // engine's bound on what its helper thread takes in (Config's
  // unexpected_limit) is on this. Each message counts kQueuedMessageBytes
  // (its node in the matcher, 80 bytes, its Kept slot here, 32, and both
  // pools' free-list entries; matching_state_test measures the heap one
  // costs, 105-119 bytes, and checks this is not less) and its data when
  // that does not fit the slot. It was about 460 bytes before issue 31
  // (a map entry, a PendingMessage and a vector per message, and an index
  // by request id).
  static constexpr std::size_t kQueuedMessageBytes = 128;
  std::size_t held_bytes() const { return held_bytes_; }
  std::size_t held_peak() const { return held_peak_; }

 private:
  // Data up to this many bytes stays in the slot (an 8-byte message's).
  static constexpr std::size_t kInlineBytes = 16;
  // Data that does not fit a slot, and an RTS's address beside it.
  struct HeapData {
    std::uint8_t* data;
    std::uint64_t remote_address;
  };
  // One queued message's part beyond its envelope: 32 bytes.
  struct Kept {
    std::int32_t origin = 0;
    std::uint32_t slot_expected = 0;
    std::uint32_t size = 0;  // bytes of data
    MessageType type = MessageType::kEager;
    bool synchronous = false;
    std::uint8_t slot = 0;
    bool on_heap = false;  // data in `heap` (an RTS's, or too long to fit)
    union {
      std::uint8_t bytes[kInlineBytes];
      HeapData heap;
    };
    Kept() : bytes{} {}
    // The pool's chunks die with the state: a message still queued then
    // frees its own data.
    ~Kept() {
      if (on_heap) delete[] heap.data;
    }
    Kept(const Kept&) = delete;
    Kept& operator=(const Kept&) = delete;
    std::span<const std::uint8_t> data() const { return {on_heap ? heap.data : bytes, size}; }
  };

  static std::uint32_t slot_of(std::uint64_t cookie) {
    return static_cast<std::uint32_t>(cookie - 1);
  }
  static_assert(sizeof(Kept) == 32);
  static std::size_t held_by(const Kept& k) {
    return kQueuedMessageBytes + (k.on_heap ? k.size : 0);
  }
  // The whole message, out of the pool.
  std::unique_ptr<PendingMessage> take(const matching::IncomingMessage& envelope);
  std::unique_ptr<PendingMessage> taken(const std::optional<matching::IncomingMessage>& envelope) {
    return envelope ? take(*envelope) : nullptr;
  }

  matching::NicMatcher matcher_{0};
  matching::NodePool<Kept> kept_;
  std::size_t held_bytes_ = 0;
  std::size_t held_peak_ = 0;
};

}  // namespace tagwire::engine
