#include "engine/bsend_buffer.h"

#include <algorithm>

namespace tagwire::engine {

Status BsendBuffer::attach(void* buffer, std::size_t bytes) {
  if (base_ != nullptr) return {ErrorCode::kInvalidBuffer, "a buffer is already attached"};
  if (buffer == nullptr && bytes > 0) return {ErrorCode::kInvalidBuffer, "null buffer"};
  base_ = static_cast<std::uint8_t*>(buffer);
  size_ = bytes;
  return Status::ok();
}

void* BsendBuffer::allocate(std::size_t bytes) {
  // First fit over the in-use blocks, kept sorted by offset.
  const std::size_t need = bytes + kOverhead;
  std::size_t offset = 0;
  auto it = blocks_.begin();
  for (; it != blocks_.end(); ++it) {
    if (it->first - offset >= need) break;
    offset = it->first + it->second;
  }
  if (base_ == nullptr || offset + need > size_) return nullptr;
  blocks_.insert(it, {offset, need});
  return base_ + offset;
}

void BsendBuffer::release(void* block) {
  const auto offset = static_cast<std::size_t>(static_cast<std::uint8_t*>(block) - base_);
  auto it = std::find_if(blocks_.begin(), blocks_.end(),
                         [offset](const auto& b) { return b.first == offset; });
  if (it != blocks_.end()) blocks_.erase(it);
}

std::pair<void*, std::size_t> BsendBuffer::detach() {
  std::pair<void*, std::size_t> out{base_, size_};
  base_ = nullptr;
  size_ = 0;
  return out;
}

}  // namespace tagwire::engine
