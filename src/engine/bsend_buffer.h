// BsendBuffer: the buffer MPI_Buffer_attach hands over, and the blocks that
// buffered sends take from it until their message has left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tagwire::engine {

class BsendBuffer {
 public:
  // What each block costs beyond its message (MPI_BSEND_OVERHEAD tells
  // users to attach this much more per message).
  static constexpr std::size_t kOverhead = 64;

  Status attach(void* buffer, std::size_t bytes);
  // A block of `bytes` (plus kOverhead), first fit; null if none is
  // attached or it does not fit now.
  void* allocate(std::size_t bytes);
  // A block allocate() gave, back.
  void release(void* block);
  // Blocks still held by buffered sends: detach must wait for them.
  bool in_use() const { return !blocks_.empty(); }
  // The attached buffer, handed back (null, 0 if none); nothing attached after.
  std::pair<void*, std::size_t> detach();

 private:
  std::uint8_t* base_ = nullptr;
  std::size_t size_ = 0;
  std::vector<std::pair<std::size_t, std::size_t>> blocks_;  // offset, length; by offset
};

}  // namespace tagwire::engine
