// Matcher: MPI point-to-point matching for one process, all communicators.
//
// Pure logic, no I/O, no threads, no locks: the engine serialises calls.
// Semantics (MPI-4.1 §3.5, §3.8; docs/architecture.md §2):
//  - a message matches the earliest-posted receive whose pattern accepts it;
//  - a receive takes the earliest-arrived message it accepts, so messages
//    from one source on one context are received in send order;
//  - probe names exactly the message a receive would take now, and a later
//    receive with the probed source and tag gets it unless something else
//    took it first; mprobe takes it out so that nothing else can.
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>

#include "matching/envelope.h"
#include "matching/posted_queue.h"
#include "matching/unexpected_queue.h"

namespace tagwire::matching {

class Matcher {
 public:
  // Posts a receive. If an unexpected message matches, the receive takes it
  // at once and is never queued.
  PostResult post_receive(const ReceivePattern& pattern, std::uint64_t receive_cookie);

  // post_receive when nothing_unexpected(): the receive only queues. The
  // pattern by value, so that a caller that builds it in registers keeps
  // it there: post_receive's reference had it stored field by field and
  // reloaded wider into the queue's node, a load the CPU cannot forward
  // from its store buffer.
  bool nothing_unexpected() const { return unexpected_.size() == 0; }
  [[gnu::always_inline]] ReceiveHandle post_expected(ReceivePattern pattern,
                                                     std::uint64_t receive_cookie) {
    assert(validate_pattern(pattern).is_ok() && nothing_unexpected());
    return posted_.push(pattern, receive_cookie, next_sequence_++);
  }

  // A message arrives: it matches a posted receive or waits as unexpected.
  ArrivalResult arrive(const IncomingMessage& message);

  // Whether arrive() would match a posted receive now (nothing changes):
  // lets the engine claim a message before it commits to the match.
  bool would_match(const Envelope& envelope) const { return posted_.has_match(envelope); }

  // The message a receive with this pattern would take now, left in place.
  std::optional<IncomingMessage> probe(const ReceivePattern& pattern) const;

  // The same message, removed: only an mrecv of its handle can receive it.
  std::optional<IncomingMessage> mprobe(const ReceivePattern& pattern);

  // Cancels a posted receive; false if it already matched (or was cancelled).
  bool cancel_receive(ReceiveHandle handle);

  // Send cancel at the receiver: removes the newest unexpected message from
  // (context, source) with this sender request id. Nothing if it matched.
  std::optional<IncomingMessage> cancel_unexpected(ContextId context, Rank source,
                                                   std::uint64_t sender_request_id);

  std::size_t posted_count() const { return posted_.size(); }
  std::size_t unexpected_count() const { return unexpected_.size(); }

 private:
  PostedQueue posted_;
  UnexpectedQueue unexpected_;
  std::uint64_t next_sequence_ = 1;
};

// Inline (one each per message): with the queues' own steps they fold
// into the engine's arrival and post, not four calls deep.

inline PostResult Matcher::post_receive(const ReceivePattern& pattern,
                                        std::uint64_t receive_cookie) {
  assert(validate_pattern(pattern).is_ok());
  PostResult result;
  // The empty checks skip a hash lookup on the common path of a ping-pong
  // (nothing waiting on the other side).
  if (unexpected_.size() == 0) {
    result.handle = posted_.push(pattern, receive_cookie, next_sequence_++);
    return result;
  }
  if (auto message = unexpected_.take(pattern)) {
    result.matched = true;
    result.message = *message;
    return result;
  }
  result.handle = posted_.push(pattern, receive_cookie, next_sequence_++);
  return result;
}

inline ArrivalResult Matcher::arrive(const IncomingMessage& message) {
  assert(validate_envelope(message.envelope).is_ok());
  ArrivalResult result;
  if (posted_.size() == 0) {
    unexpected_.push(message);
    return result;
  }
  if (auto taken = posted_.take_match(message.envelope)) {
    result.matched = true;
    result.receive_cookie = taken->cookie;
    result.receive = taken->handle;
    return result;
  }
  unexpected_.push(message);
  return result;
}

}  // namespace tagwire::matching
