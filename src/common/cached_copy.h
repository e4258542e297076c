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

// Whether the destination lies 1-63 bytes past the source modulo a 4 KiB
// page. glibc copies up to about the L2 cache's size with `rep movsb`,
// which on this machine's CPU then runs at a tenth of its speed (64 KiB
// to 384 KiB: 1.5-1.7 GB/s against 22-37 in cache, 2026-12-02); glibc's
// own check looks at the plain distance only. A 1 MiB MPI_Get from a
// page-aligned window into malloc's memory (16 bytes past a page) is
// such a copy: by 256 KiB pieces it ran at 1.5-2.1 GB/s where Open MPI's
// one memcpy ran at 8.0-8.6. One memcpy of more than L2 takes glibc's
// vector loop instead, which does not mind.
inline bool short_page_distance(const void* to, const void* from) {
  const auto d =
      (reinterpret_cast<std::uintptr_t>(to) - reinterpret_cast<std::uintptr_t>(from)) % 4096;
  return d != 0 && d < 64;
}

inline void copy_cached(void* to_ptr, const void* from_ptr, std::size_t n) {
  if (n <= kCachedCopyPiece || n > kCachedCopyMax || short_page_distance(to_ptr, from_ptr)) {
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
