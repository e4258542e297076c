// ListMatcher: the reference model of matching. Two plain lists scanned
// front to back, written to be obviously right rather than fast. The
// differential test holds Matcher to it, operation by operation, and the
// benchmark measures how much faster Matcher is.
#pragma once

#include <cstdint>
#include <list>
#include <optional>

#include "matching/envelope.h"

namespace tagwire::matching {

class ListMatcher {
 public:
  PostResult post_receive(const ReceivePattern& pattern, std::uint64_t receive_cookie);
  ArrivalResult arrive(const IncomingMessage& message);
  std::optional<IncomingMessage> probe(const ReceivePattern& pattern) const;
  std::optional<IncomingMessage> mprobe(const ReceivePattern& pattern);
  bool cancel_receive(ReceiveHandle handle);
  std::optional<IncomingMessage> cancel_unexpected(ContextId context, Rank source,
                                                   std::uint64_t sender_request_id);

  std::size_t posted_count() const { return posted_.size(); }
  std::size_t unexpected_count() const { return unexpected_.size(); }

 private:
  struct Posted {
    ReceivePattern pattern;
    std::uint64_t cookie;
    std::uint64_t sequence;
  };
  std::list<Posted> posted_;               // post order
  std::list<IncomingMessage> unexpected_;  // arrival order
  std::uint64_t next_sequence_ = 1;
};

}  // namespace tagwire::matching
