// The verbs transport's work request ids: what a completion is for.
//
// The kind sits in the top byte and an index below it. Ring and credit
// WRITEs and wake-up receives carry their peer in bits 32..55 and, below,
// how many staging slots that peer's endpoint had held when the WRITE was
// posted (VerbsEndpoint::release_held); READs, WRITEs, CASes and gathered
// eager WRITEs carry the operation's number (the transport's pending table).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tagwire::verbs {

enum class WrKind : std::uint64_t {
  kRecv = 1,
  kRead = 3,
  kAtomic = 4,  // compare-and-swap or fetch-and-add
  kWrite = 5,
  kRing = 6,      // an eager message into the peer's ring
  kCredit = 7,    // our consumed count into the peer's credit word (or a flush)
  kClose = 8,     // the closing mark into the peer's credit word
  kGathered = 9,  // an eager message whose payload the WRITE gathers (an operation number)
};

inline std::uint64_t wr_id(WrKind kind, std::uint64_t index) {
  return (static_cast<std::uint64_t>(kind) << 56) | index;
}
inline WrKind kind_of(std::uint64_t id) {
  return static_cast<WrKind>(id >> 56);
}
inline std::uint64_t index_of(std::uint64_t id) {
  return id & ((std::uint64_t{1} << 56) - 1);
}
inline std::uint64_t peer_index(std::size_t peer, std::uint64_t held) {
  return (static_cast<std::uint64_t>(peer) << 32) | (held & 0xffffffffu);
}
inline std::size_t peer_of(std::uint64_t index) {
  return static_cast<std::size_t>(index >> 32);
}

}  // namespace tagwire::verbs
