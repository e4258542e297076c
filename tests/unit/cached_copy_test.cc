// copy_cached (common/cached_copy.h): every byte of every length lands,
// one piece, several with a short last one, and past the largest it
// splits; nothing is written past the end.
#include "common/cached_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace tagwire {
namespace {

TEST(CachedCopy, EveryLengthCopiesExactlyItsBytes) {
  const std::size_t piece = kCachedCopyPiece;
  const std::vector<std::size_t> lengths = {
      0, 1, 64, piece - 1, piece, piece + 1, 3 * piece + 17, kCachedCopyMax, kCachedCopyMax + 1};
  for (std::size_t n : lengths) {
    std::vector<std::uint8_t> from(n);
    for (std::size_t i = 0; i < n; ++i) from[i] = static_cast<std::uint8_t>(i * 131 + (i >> 16));
    std::vector<std::uint8_t> to(n + 64, 0xEE);
    copy_cached(to.data() + 32, from.data(), n);
    for (std::size_t i = 0; i < 32; ++i) ASSERT_EQ(to[i], 0xEE) << "before, length " << n;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(to[32 + i], from[i]) << "byte " << i << " of length " << n;
    }
    for (std::size_t i = 0; i < 32; ++i) ASSERT_EQ(to[32 + n + i], 0xEE) << "past, length " << n;
  }
}

// Which distances take one memcpy: the destination 1-63 bytes past the
// source modulo a page, either way round the page.
TEST(CachedCopy, ShortPageDistancesAreTheOnesJustPastTheSource) {
  alignas(4096) static std::uint8_t page[3 * 4096];
  const std::uint8_t* from = page + 4096;
  EXPECT_FALSE(short_page_distance(from, from));
  EXPECT_FALSE(short_page_distance(from + 4096, from));
  EXPECT_TRUE(short_page_distance(from + 16, from));
  EXPECT_TRUE(short_page_distance(from + 4096 + 63, from));
  EXPECT_TRUE(short_page_distance(from - 4096 + 8, from));
  EXPECT_FALSE(short_page_distance(from + 64, from));
  EXPECT_FALSE(short_page_distance(from - 16, from));  // the source just past the destination
}

// Such a copy, longer than a piece, still lands whole.
TEST(CachedCopy, AShortPageDistanceCopiesEveryByte) {
  const std::size_t n = 3 * kCachedCopyPiece + 5;
  std::vector<std::uint8_t> from(n + 4096);
  std::vector<std::uint8_t> to(n + 2 * 4096, 0xEE);
  const auto page_of = [](std::uint8_t* p) {
    return p + (4096 - reinterpret_cast<std::uintptr_t>(p) % 4096) % 4096;
  };
  std::uint8_t* src = page_of(from.data());
  std::uint8_t* dst = page_of(to.data()) + 16;
  ASSERT_TRUE(short_page_distance(dst, src));
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 3);
  copy_cached(dst, src, n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(dst[i], src[i]) << "byte " << i;
  EXPECT_EQ(dst[n], 0xEE);
  EXPECT_EQ(dst[-1], 0xEE);
}

}  // namespace
}  // namespace tagwire
