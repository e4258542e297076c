#include "matching/matcher.h"

#include <cassert>

namespace tagwire::matching {

PostResult Matcher::post_receive(const ReceivePattern& pattern, std::uint64_t receive_cookie) {
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

ArrivalResult Matcher::arrive(const IncomingMessage& message) {
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

std::optional<IncomingMessage> Matcher::probe(const ReceivePattern& pattern) const {
  assert(validate_pattern(pattern).is_ok());
  if (const IncomingMessage* message = unexpected_.peek(pattern)) return *message;
  return std::nullopt;
}

std::optional<IncomingMessage> Matcher::mprobe(const ReceivePattern& pattern) {
  assert(validate_pattern(pattern).is_ok());
  return unexpected_.take(pattern);
}

bool Matcher::cancel_receive(ReceiveHandle handle) {
  return posted_.remove(handle);
}

std::optional<IncomingMessage> Matcher::cancel_unexpected(ContextId context, Rank source,
                                                          std::uint64_t sender_request_id) {
  return unexpected_.take_by_sender_request(context, source, sender_request_id);
}

}  // namespace tagwire::matching
