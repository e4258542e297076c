#include "matching/envelope.h"

#include <string>

namespace tagwire::matching {

Status validate_envelope(const Envelope& envelope) {
  if (envelope.source < 0) {
    return {ErrorCode::kInvalidRank,
            "message source " + std::to_string(envelope.source) + " is not a rank"};
  }
  if (envelope.tag < 0) {
    return {ErrorCode::kInvalidTag, "message tag " + std::to_string(envelope.tag) +
                                        " is negative (wildcards are for receives only)"};
  }
  return Status::ok();
}

Status validate_pattern(const ReceivePattern& pattern) {
  if (pattern.source < 0 && pattern.source != kAnySource) {
    return {ErrorCode::kInvalidRank, "receive source " + std::to_string(pattern.source) +
                                         " is neither a rank nor ANY_SOURCE"};
  }
  if (pattern.tag < 0 && pattern.tag != kAnyTag) {
    return {ErrorCode::kInvalidTag,
            "receive tag " + std::to_string(pattern.tag) + " is neither >= 0 nor ANY_TAG"};
  }
  return Status::ok();
}

}  // namespace tagwire::matching
