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

}  // namespace
}  // namespace tagwire
