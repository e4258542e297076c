// Bytes for transport tests: a string seen as the bytes a transport takes,
// and payloads recognisable in every byte, so that a torn, short or
// misplaced copy shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tagwire::testing {

inline std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Payload n of `size` bytes.
inline std::string payload_for(std::size_t n, std::size_t size) {
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i) s[i] = static_cast<char>((n * 131 + i * 7) & 0xff);
  return s;
}

}  // namespace tagwire::testing
