// NicTag: how a matching envelope is packed into the 64-bit tag that a
// tag-matching NIC compares (rdma-core's TM-SRQ: an entry matches when
// TMH.tag & entry.mask == entry.tag), and a receive pattern into tag + mask.
//
// Layout, high to low: context (14 bits) | source (20 bits) | tag (30 bits).
// The source is in the tag, so ANY_SOURCE is a mask that clears the source
// bits and ANY_TAG one that clears the tag bits: both wildcards can be left
// to the NIC. (UCX refuses to offload a receive whose mask is not full.)
// An envelope whose fields do not fit is never offloaded; the software
// matcher takes it, and a counter says so.
#pragma once

#include <cstdint>
#include <optional>

#include "matching/envelope.h"

namespace tagwire::matching {

inline constexpr unsigned kNicContextBits = 14;
inline constexpr unsigned kNicSourceBits = 20;
inline constexpr unsigned kNicTagBits = 30;
static_assert(kNicContextBits + kNicSourceBits + kNicTagBits == 64);

struct NicTagPattern {
  std::uint64_t tag = 0;
  std::uint64_t mask = 0;
  bool accepts(std::uint64_t message_tag) const { return (message_tag & mask) == tag; }
  friend bool operator==(const NicTagPattern&, const NicTagPattern&) = default;
};

// The NIC tag a message carries; nothing if a field does not fit.
std::optional<std::uint64_t> encode_nic_tag(const Envelope& envelope);

// The NIC entry for a receive; nothing if a concrete field does not fit.
std::optional<NicTagPattern> encode_nic_pattern(const ReceivePattern& pattern);

// The envelope back from a NIC tag (for messages the NIC hands to software).
Envelope decode_nic_tag(std::uint64_t tag);

}  // namespace tagwire::matching
