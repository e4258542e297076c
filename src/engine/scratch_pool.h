// ScratchPool: the large scratch blocks of collective schedules, kept for
// the next call instead of going back to the C library at each call's end.
//
// Why: a 1 MiB MPI_Allreduce takes 2 MiB of scratch (its accumulator and
// the partner's operand). Freed, that much at the top of glibc's heap is
// past its trim threshold, so the pages went back to the kernel, and the
// next call faulted every one of them in again: on this machine's VM a
// fault costs about 10 us, and 2 MiB a call took 5.2 ms where the transfer
// takes 0.1 (docs/measurements.md, "Scratch that stays"). On bare metal a
// fault is some 0.1-0.25 us, still 50-130 us a call. Kept here, the pages
// stay mapped and warm.
#pragma once

#include <cstddef>
#include <memory>

namespace tagwire::engine {

class ScratchPool {
 public:
  // Blocks from this size up are pooled; smaller ones are malloc's (which
  // keeps them in its own free lists without giving pages back).
  static constexpr std::size_t kPooledFrom = std::size_t{64} << 10;
  // The most the pool keeps between calls, in bytes and in blocks; past
  // either, the least recently returned block is freed.
  static constexpr std::size_t kKeptBytes = std::size_t{64} << 20;
  static constexpr std::size_t kKeptBlocks = 16;

  // Hands a block back to the pool (or to the C library, past its limits).
  struct GiveBack {
    std::size_t size = 0;
    void operator()(unsigned char* block) const;
  };
  using Block = std::unique_ptr<unsigned char[], GiveBack>;

  // A block of at least `bytes`, 16-byte aligned: the smallest kept one
  // that fits, or a new one.
  static Block take(std::size_t bytes);

  // What the pool holds now (tests).
  static std::size_t kept_bytes();
  static std::size_t kept_blocks();
  // Frees every kept block (tests).
  static void clear();
};

}  // namespace tagwire::engine
