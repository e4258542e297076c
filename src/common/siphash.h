// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit hash that,
// without the 128-bit key, tells nothing about the key or predicts other
// outputs. Used where a value derived from a secret goes on the wire (the
// job token from the bootstrap key): a slice of the key would give the
// key away, the hash does not.
#pragma once

#include <cstdint>
#include <span>

namespace tagwire {

std::uint64_t siphash24(std::span<const std::uint8_t, 16> key,
                        std::span<const std::uint8_t> message);

}  // namespace tagwire
