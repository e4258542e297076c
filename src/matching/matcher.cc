#include "matching/matcher.h"

#include <cassert>

namespace tagwire::matching {

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
