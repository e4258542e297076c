#include "matching/nic_tag.h"

namespace tagwire::matching {
namespace {

constexpr std::uint64_t field_mask(unsigned bits) {
  return (std::uint64_t{1} << bits) - 1;
}

constexpr unsigned kTagShift = 0;
constexpr unsigned kSourceShift = kNicTagBits;
constexpr unsigned kContextShift = kNicTagBits + kNicSourceBits;

bool fits(std::int64_t value, unsigned bits) {
  return value >= 0 && static_cast<std::uint64_t>(value) <= field_mask(bits);
}

}  // namespace

std::optional<std::uint64_t> encode_nic_tag(const Envelope& envelope) {
  if (!fits(envelope.context, kNicContextBits) || !fits(envelope.source, kNicSourceBits) ||
      !fits(envelope.tag, kNicTagBits)) {
    return std::nullopt;
  }
  return std::uint64_t{envelope.context} << kContextShift |
         static_cast<std::uint64_t>(envelope.source) << kSourceShift |
         static_cast<std::uint64_t>(envelope.tag) << kTagShift;
}

std::optional<NicTagPattern> encode_nic_pattern(const ReceivePattern& pattern) {
  if (!fits(pattern.context, kNicContextBits)) return std::nullopt;
  NicTagPattern out;
  out.tag = std::uint64_t{pattern.context} << kContextShift;
  out.mask = field_mask(kNicContextBits) << kContextShift;
  if (pattern.source != kAnySource) {
    if (!fits(pattern.source, kNicSourceBits)) return std::nullopt;
    out.tag |= static_cast<std::uint64_t>(pattern.source) << kSourceShift;
    out.mask |= field_mask(kNicSourceBits) << kSourceShift;
  }
  if (pattern.tag != kAnyTag) {
    if (!fits(pattern.tag, kNicTagBits)) return std::nullopt;
    out.tag |= static_cast<std::uint64_t>(pattern.tag) << kTagShift;
    out.mask |= field_mask(kNicTagBits) << kTagShift;
  }
  return out;
}

Envelope decode_nic_tag(std::uint64_t tag) {
  Envelope e;
  e.context = static_cast<ContextId>((tag >> kContextShift) & field_mask(kNicContextBits));
  e.source = static_cast<Rank>((tag >> kSourceShift) & field_mask(kNicSourceBits));
  e.tag = static_cast<Tag>((tag >> kTagShift) & field_mask(kNicTagBits));
  return e;
}

}  // namespace tagwire::matching
