#include "matching/list_matcher.h"

#include <algorithm>

namespace tagwire::matching {

PostResult ListMatcher::post_receive(const ReceivePattern& pattern, std::uint64_t receive_cookie) {
  PostResult result;
  auto it = std::find_if(unexpected_.begin(), unexpected_.end(),
                         [&](const IncomingMessage& m) { return pattern.matches(m.envelope); });
  if (it != unexpected_.end()) {
    result.matched = true;
    result.message = *it;
    unexpected_.erase(it);
    return result;
  }
  std::uint64_t sequence = next_sequence_++;
  posted_.push_back(Posted{pattern, receive_cookie, sequence});
  // The reference model has no slots; handles are told apart by sequence.
  result.handle = ReceiveHandle{0, sequence};
  return result;
}

ArrivalResult ListMatcher::arrive(const IncomingMessage& message) {
  ArrivalResult result;
  auto it = std::find_if(posted_.begin(), posted_.end(),
                         [&](const Posted& p) { return p.pattern.matches(message.envelope); });
  if (it != posted_.end()) {
    result.matched = true;
    result.receive_cookie = it->cookie;
    result.receive = ReceiveHandle{0, it->sequence};
    posted_.erase(it);
    return result;
  }
  unexpected_.push_back(message);
  return result;
}

std::optional<IncomingMessage> ListMatcher::probe(const ReceivePattern& pattern) const {
  for (const auto& m : unexpected_) {
    if (pattern.matches(m.envelope)) return m;
  }
  return std::nullopt;
}

std::optional<IncomingMessage> ListMatcher::mprobe(const ReceivePattern& pattern) {
  auto it = std::find_if(unexpected_.begin(), unexpected_.end(),
                         [&](const IncomingMessage& m) { return pattern.matches(m.envelope); });
  if (it == unexpected_.end()) return std::nullopt;
  IncomingMessage message = *it;
  unexpected_.erase(it);
  return message;
}

bool ListMatcher::cancel_receive(ReceiveHandle handle) {
  auto it = std::find_if(posted_.begin(), posted_.end(),
                         [&](const Posted& p) { return p.sequence == handle.sequence; });
  if (it == posted_.end()) return false;
  posted_.erase(it);
  return true;
}

std::optional<IncomingMessage> ListMatcher::cancel_unexpected(ContextId context, Rank source,
                                                              std::uint64_t sender_request_id) {
  // Newest first: walk from the back.
  for (auto it = unexpected_.rbegin(); it != unexpected_.rend(); ++it) {
    if (it->envelope.context == context && it->envelope.source == source &&
        it->sender_request_id == sender_request_id) {
      IncomingMessage message = *it;
      unexpected_.erase(std::next(it).base());
      return message;
    }
  }
  return std::nullopt;
}

}  // namespace tagwire::matching
