// Length-prefixed frames over a stream socket: the bootstrap's wire, shared
// by the rank side (LocalBootstrap) and the launcher (tools/tagwire-run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/status.h"

namespace tagwire::bootstrap {

// Frames above this are refused: the bootstrap carries addresses, not data.
inline constexpr std::uint32_t kMaxFrame = 16u << 20;

Status write_frame(int fd, std::span<const std::uint8_t> payload);
Result<std::vector<std::uint8_t>> read_frame(int fd);

// Frames from a socket as their bytes arrive, never waiting for the rest:
// a server that serves many peers from one poll loop (tools/tagwire-run)
// reads what each has sent, whole frames or not, so a peer that stalls
// mid-frame holds up nobody else (six stalled connections delayed a job's
// start by 30 s when each read waited for its whole frame).
class FrameReader {
 public:
  // Reads what `fd` holds now without blocking; true if the peer has
  // closed its end (its frames before that are still to be taken), an
  // error if the socket failed.
  Result<bool> read_available(int fd);
  // The next whole frame if one has arrived; an error if its length is
  // over kMaxFrame.
  Result<std::optional<std::vector<std::uint8_t>>> next();
  // Bytes received and not yet taken as frames.
  std::size_t pending() const { return buffer_.size() - start_; }

 private:
  std::vector<std::uint8_t> buffer_;
  std::size_t start_ = 0;  // where the next frame begins in buffer_
};

// Table framing for an allgather answer: count, then (length, bytes) each.
std::vector<std::uint8_t> pack_table(const std::vector<std::vector<std::uint8_t>>& entries);
Result<std::vector<std::vector<std::uint8_t>>> unpack_table(std::span<const std::uint8_t> bytes);

}  // namespace tagwire::bootstrap
