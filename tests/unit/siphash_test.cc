#include "common/siphash.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

namespace tagwire {
namespace {

std::array<std::uint8_t, 16> counting_key() {
  std::array<std::uint8_t, 16> key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(i);
  return key;
}

std::vector<std::uint8_t> counting_message(std::size_t n) {
  std::vector<std::uint8_t> m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = static_cast<std::uint8_t>(i);
  return m;
}

// The authors' published vectors: key 00..0f, message 00..(n-1).
TEST(SipHash, MatchesThePublishedVectors) {
  const auto key = counting_key();
  EXPECT_EQ(siphash24(key, counting_message(0)), 0x726fdb47dd0e0e31ull);
  EXPECT_EQ(siphash24(key, counting_message(15)), 0xa129ca6149be45e5ull);
}

TEST(SipHash, EveryKeyBitAndLengthMatters) {
  auto key = counting_key();
  const auto message = counting_message(20);
  const std::uint64_t base = siphash24(key, message);
  key[9] ^= 1;
  EXPECT_NE(siphash24(key, message), base);
  key[9] ^= 1;
  EXPECT_NE(siphash24(key, counting_message(19)), base);
  EXPECT_NE(siphash24(key, counting_message(21)), base);
}

}  // namespace
}  // namespace tagwire
