// copy_cached: memcpy in pieces small enough that glibc copies each with
// ordinary stores. Above its non-temporal threshold (a share of the
// last-level cache) glibc's memcpy streams the bytes past the cache, so a
// window's bytes that the next put overwrites, or that the target reads
// next, come from memory again: here one 1 MiB memcpy ran at 44-45 GB/s
// where 256 KiB pieces ran at 53, and 1 MiB MPI_Put + flush bandwidth was
// 42-44 GB/s against Open MPI's 52-55 (its copies go by pieces too;
// docs/measurements.md, "Put bandwidth and glibc's streaming stores").
// Copies larger than a cache holds keep glibc's streaming: past
// kCachedCopyMax there is nothing in cache to keep.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tagwire {

inline constexpr std::size_t kCachedCopyPiece = std::size_t{256} << 10;
inline constexpr std::size_t kCachedCopyMax = std::size_t{8} << 20;

inline void copy_cached(void* to_ptr, const void* from_ptr, std::size_t n) {
  if (n <= kCachedCopyPiece || n > kCachedCopyMax) {
    if (n != 0) std::memcpy(to_ptr, from_ptr, n);
    return;
  }
  auto* to = static_cast<std::uint8_t*>(to_ptr);
  const auto* from = static_cast<const std::uint8_t*>(from_ptr);
  for (std::size_t done = 0; done < n; done += kCachedCopyPiece) {
    const std::size_t piece = n - done < kCachedCopyPiece ? n - done : kCachedCopyPiece;
    std::memcpy(to + done, from + done, piece);
  }
}

}  // namespace tagwire
