// RAII owners for UCP objects: each releases its object with the matching
// UCX call, in the one place that knows how.
#pragma once

#include <ucp/api/ucp.h>

#include <memory>

namespace tagwire::ucx {

struct ContextDeleter {
  void operator()(ucp_context* c) const { ucp_cleanup(c); }
};
using ContextPtr = std::unique_ptr<ucp_context, ContextDeleter>;

struct WorkerDeleter {
  void operator()(ucp_worker* w) const { ucp_worker_destroy(w); }
};
using WorkerPtr = std::unique_ptr<ucp_worker, WorkerDeleter>;

// A worker address must be released through the worker that made it.
class WorkerAddress {
 public:
  WorkerAddress() = default;
  WorkerAddress(ucp_worker_h worker, ucp_address_t* address, std::size_t length)
      : worker_(worker), address_(address), length_(length) {}
  WorkerAddress(WorkerAddress&& o) noexcept { *this = std::move(o); }
  WorkerAddress& operator=(WorkerAddress&& o) noexcept {
    std::swap(worker_, o.worker_);
    std::swap(address_, o.address_);
    std::swap(length_, o.length_);
    return *this;
  }
  ~WorkerAddress() {
    if (address_ != nullptr) ucp_worker_release_address(worker_, address_);
  }
  const std::uint8_t* data() const { return reinterpret_cast<const std::uint8_t*>(address_); }
  std::size_t size() const { return length_; }

 private:
  ucp_worker_h worker_ = nullptr;
  ucp_address_t* address_ = nullptr;
  std::size_t length_ = 0;
};

// Mapped memory and its packed remote key, both released with the context.
class MemoryMap {
 public:
  MemoryMap(ucp_context_h context, ucp_mem_h memh, void* rkey_buffer, std::size_t rkey_length)
      : context_(context), memh_(memh), rkey_buffer_(rkey_buffer), rkey_length_(rkey_length) {}
  MemoryMap(const MemoryMap&) = delete;
  MemoryMap& operator=(const MemoryMap&) = delete;
  ~MemoryMap() {
    if (rkey_buffer_ != nullptr) ucp_rkey_buffer_release(rkey_buffer_);
    if (memh_ != nullptr) ucp_mem_unmap(context_, memh_);
  }
  const std::uint8_t* rkey() const { return static_cast<const std::uint8_t*>(rkey_buffer_); }
  std::size_t rkey_length() const { return rkey_length_; }

 private:
  ucp_context_h context_;
  ucp_mem_h memh_;
  void* rkey_buffer_;
  std::size_t rkey_length_;
};

struct RkeyDeleter {
  void operator()(ucp_rkey* k) const { ucp_rkey_destroy(k); }
};
using RkeyPtr = std::unique_ptr<ucp_rkey, RkeyDeleter>;

}  // namespace tagwire::ucx
