// Memory as the transports that tests make up (the wire fuzzer's, the NIC
// fabric's) see it: "registered" memory is the address and length as given
// with a fixed key that nothing checks, and a compare-and-swap is the CPU's
// (one thread at a time touches the word).
#pragma once

#include <cstdint>
#include <span>

#include "transport/transport.h"

namespace tagwire::testing {

class PlainRegistration final : public transport::Registration {
 public:
  PlainRegistration(void* address, std::size_t length)
      : address_(reinterpret_cast<std::uint64_t>(address)), length_(length) {}
  std::span<const std::uint8_t> packed_key() const override { return key_; }
  std::uint64_t address() const override { return address_; }
  std::size_t length() const override { return length_; }

 private:
  std::uint64_t address_;
  std::size_t length_;
  std::uint8_t key_[8] = {'t', 'a', 'g', 'w', 'i', 'r', 'e', 0};
};

inline std::uint64_t plain_compare_and_swap(std::uint64_t* word, std::uint64_t expected,
                                            std::uint64_t desired) {
  const std::uint64_t old = *word;
  if (old == expected) *word = desired;
  return old;
}

}  // namespace tagwire::testing
