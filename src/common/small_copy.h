// copy_small: memcpy for the few bytes of a small message without a call
// into libc. An 8-byte message's payload went through memcpy at the shm
// ring's push and again at the receiver's delivery, each a call through
// the PLT and a size dispatch that cost more than the copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tagwire {

// Two overlapping fixed-size copies cover any length from 8 to 64; the
// compiler turns each fixed-size memcpy into one or two moves. Anything
// else (under 8, over 64) goes to memcpy.
[[gnu::always_inline]] inline void copy_small(void* to_ptr, const void* from_ptr, std::size_t n) {
  auto* to = static_cast<std::uint8_t*>(to_ptr);
  const auto* from = static_cast<const std::uint8_t*>(from_ptr);
  if (n >= 8 && n <= 16) {
    std::memcpy(to, from, 8);
    std::memcpy(to + n - 8, from + n - 8, 8);
  } else if (n > 16 && n <= 32) {
    std::memcpy(to, from, 16);
    std::memcpy(to + n - 16, from + n - 16, 16);
  } else if (n > 32 && n <= 64) {
    std::memcpy(to, from, 32);
    std::memcpy(to + n - 32, from + n - 32, 32);
  } else if (n != 0) {
    std::memcpy(to, from, n);
  }
}

}  // namespace tagwire
