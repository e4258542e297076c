// Memory registered for its whole lifetime (MPI_Alloc_mem): a rendezvous
// send from it names the region's key instead of registering the buffer,
// so the per-message registration (a system call and, on verbs, pinning
// pages) is skipped.
#include <cstdlib>
#include <string>

#include "engine/engine.h"

namespace tagwire::engine {

namespace {
constexpr std::size_t kPage = 4096;
}

Result<void*> Engine::alloc_registered(std::size_t bytes) {
  const std::size_t length = std::max<std::size_t>(1, (bytes + kPage - 1) / kPage) * kPage;
  void* memory = std::aligned_alloc(kPage, length);
  if (memory == nullptr) {
    return Status(ErrorCode::kOutOfResources,
                  "cannot allocate " + std::to_string(bytes) + " bytes of registered memory");
  }
  EngineGuard lock(mutex_);
  auto reg = transport_->register_memory(memory, length, transport::RemoteAccess::kRead);
  if (!reg) {
    std::free(memory);
    return reg.status().with_context("registering MPI_Alloc_mem memory");
  }
  pinned_[reinterpret_cast<std::uintptr_t>(memory)] = Pinned{length, std::move(reg).value()};
  return memory;
}

Status Engine::free_registered(void* memory) {
  EngineGuard lock(mutex_);
  auto it = pinned_.find(reinterpret_cast<std::uintptr_t>(memory));
  if (it == pinned_.end()) {
    return {ErrorCode::kInvalidArgument, "memory not from MPI_Alloc_mem, or freed already"};
  }
  pinned_.erase(it);  // deregisters: the peers' keys stop working here
  std::free(memory);
  return Status::ok();
}

const transport::Registration* Engine::pinned_for(const void* address, std::size_t bytes) const {
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  auto it = pinned_.upper_bound(start);
  if (it == pinned_.begin()) return nullptr;
  --it;
  if (start + bytes > it->first + it->second.length) return nullptr;
  return it->second.registration.get();
}

}  // namespace tagwire::engine
