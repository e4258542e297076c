#include "common/siphash.h"

#include <bit>
#include <cstring>

namespace tagwire {

namespace {

std::uint64_t load_le(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

struct State {
  std::uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1;
    v1 = std::rotl(v1, 13);
    v1 ^= v0;
    v0 = std::rotl(v0, 32);
    v2 += v3;
    v3 = std::rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = std::rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = std::rotl(v1, 17);
    v1 ^= v2;
    v2 = std::rotl(v2, 32);
  }
  void absorb(std::uint64_t m) {
    v3 ^= m;
    round();  // two compression rounds per word: the "2" of 2-4
    round();
    v0 ^= m;
  }
};

}  // namespace

std::uint64_t siphash24(std::span<const std::uint8_t, 16> key,
                        std::span<const std::uint8_t> message) {
  const std::uint64_t k0 = load_le(key.data());
  const std::uint64_t k1 = load_le(key.data() + 8);
  State s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
          k1 ^ 0x7465646279746573ull};
  const std::size_t whole = message.size() / 8 * 8;
  for (std::size_t i = 0; i < whole; i += 8) s.absorb(load_le(message.data() + i));
  // The last word: the remaining bytes, and the length's low byte on top.
  std::uint8_t last[8] = {};
  // (An empty message may have no data pointer at all: no memcpy from it.)
  if (message.size() > whole) std::memcpy(last, message.data() + whole, message.size() - whole);
  last[7] = static_cast<std::uint8_t>(message.size());
  s.absorb(load_le(last));
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();  // the "4": finalization rounds
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace tagwire
