// Length-prefixed frames over a stream socket: the bootstrap's wire, shared
// by the rank side (LocalBootstrap) and the launcher (tools/tagwire-run).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"

namespace tagwire::bootstrap {

// Frames above this are refused: the bootstrap carries addresses, not data.
inline constexpr std::uint32_t kMaxFrame = 16u << 20;

Status write_frame(int fd, std::span<const std::uint8_t> payload);
Result<std::vector<std::uint8_t>> read_frame(int fd);

// Table framing for an allgather answer: count, then (length, bytes) each.
std::vector<std::uint8_t> pack_table(const std::vector<std::vector<std::uint8_t>>& entries);
Result<std::vector<std::vector<std::uint8_t>>> unpack_table(std::span<const std::uint8_t> bytes);

}  // namespace tagwire::bootstrap
