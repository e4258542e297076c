// The vocabulary of matching: envelopes, receive patterns, messages and
// handles. Pure data, no I/O.
#pragma once

#include <cstdint>
#include <functional>

#include "common/status.h"

namespace tagwire::matching {

using ContextId = std::uint32_t;  // one per communicator (and per p2p/collective use of it)
using Rank = std::int32_t;        // communicator-relative source rank
using Tag = std::int32_t;

inline constexpr Rank kAnySource = -1;
inline constexpr Tag kAnyTag = -1;

// What a message carries: always concrete, never a wildcard.
struct Envelope {
  ContextId context = 0;
  Rank source = 0;
  Tag tag = 0;
  friend bool operator==(const Envelope&, const Envelope&) = default;
};

// What a receive or probe asks for: source and tag may be wildcards.
struct ReceivePattern {
  ContextId context = 0;
  Rank source = 0;
  Tag tag = 0;

  bool matches(const Envelope& e) const {
    return context == e.context && (source == kAnySource || source == e.source) &&
           (tag == kAnyTag || tag == e.tag);
  }
  friend bool operator==(const ReceivePattern&, const ReceivePattern&) = default;
};

// A message that has arrived and is known to the matcher. `cookie` is the
// engine's handle to its data (an eager slot, an RTS record); the matcher
// never looks at it.
struct IncomingMessage {
  Envelope envelope;
  std::uint64_t sender_request_id = 0;  // unique among the sender's active requests
  std::uint64_t length = 0;             // payload bytes, for probe status
  std::uint64_t cookie = 0;
  friend bool operator==(const IncomingMessage&, const IncomingMessage&) = default;
};

// Names a posted receive for cancel. Stale handles (receive already matched
// or cancelled) are recognised, never misread.
struct ReceiveHandle {
  std::uint32_t slot = UINT32_MAX;
  std::uint64_t sequence = 0;  // post order; 0 is never issued
  friend bool operator==(const ReceiveHandle&, const ReceiveHandle&) = default;
};

struct PostResult {
  // Set when an unexpected message satisfied the receive at once; the
  // receive was then never queued and `handle` is unset.
  bool matched = false;
  IncomingMessage message;
  ReceiveHandle handle;
};

struct ArrivalResult {
  // Set when the message matched a posted receive (which left the queue);
  // otherwise the message was queued as unexpected.
  bool matched = false;
  std::uint64_t receive_cookie = 0;
  ReceiveHandle receive;
};

// Checks that come before the matcher: wildcards only in receives, no
// negative ranks or tags. The matcher itself trusts its input.
Status validate_envelope(const Envelope& envelope);
Status validate_pattern(const ReceivePattern& pattern);

// Key of a bin: a pattern, wildcards and all, so that the exact bin and each
// wildcard bin are one hash lookup apiece.
struct BinKey {
  ContextId context;
  Rank source;
  Tag tag;
  friend bool operator==(const BinKey&, const BinKey&) = default;
};

// splitmix64's finaliser: spreads nearby keys (sequential tags, request ids)
// over the whole hash range.
inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// (context, source) packed in one word, a second word folded in by a
// multiplicative spread, then mixed.
inline std::size_t hash_words(ContextId context, Rank source, std::uint64_t third) {
  std::uint64_t x = (std::uint64_t{context} << 32 | static_cast<std::uint32_t>(source)) ^
                    (third * 0x9e3779b97f4a7c15ull);
  return static_cast<std::size_t>(mix64(x));
}

struct BinKeyHash {
  std::size_t operator()(const BinKey& k) const {
    return hash_words(k.context, k.source, static_cast<std::uint32_t>(k.tag));
  }
};

}  // namespace tagwire::matching
