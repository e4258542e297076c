#include "transport/transport.h"

#include <algorithm>

namespace tagwire::transport {

namespace {

// Heap memory and its registration, released together.
class HeapMemory final : public Registration {
 public:
  HeapMemory(std::unique_ptr<std::uint64_t[]> words, std::unique_ptr<Registration> registration)
      : words_(std::move(words)), registration_(std::move(registration)) {}
  ~HeapMemory() override { registration_.reset(); }  // deregistered before freed
  std::span<const std::uint8_t> packed_key() const override { return registration_->packed_key(); }
  std::uint64_t address() const override { return registration_->address(); }
  std::size_t length() const override { return registration_->length(); }

 private:
  std::unique_ptr<std::uint64_t[]> words_;
  std::unique_ptr<Registration> registration_;
};

// `bytes` zeroed on the heap (whole 64-bit words), registered for `access`.
Result<std::unique_ptr<Registration>> heap_memory(Transport& transport, std::size_t bytes,
                                                  RemoteAccess access) {
  const std::size_t count = std::max<std::size_t>(1, (bytes + 7) / 8);
  auto words = std::make_unique<std::uint64_t[]>(count);  // zeroed
  auto registration = transport.register_memory(words.get(), bytes, access);
  if (!registration) return registration.status();
  return std::unique_ptr<Registration>(
      new HeapMemory(std::move(words), std::move(registration).value()));
}

}  // namespace

Result<std::unique_ptr<Registration>> Transport::allocate_atomic_words(std::size_t count) {
  return heap_memory(*this, count * sizeof(std::uint64_t), RemoteAccess::kReadAndAtomic);
}

Result<std::unique_ptr<Registration>> Transport::allocate_window_memory(std::size_t bytes) {
  return heap_memory(*this, bytes, RemoteAccess::kReadAndWrite);
}

Result<Issued> Transport::fetch_add(PeerId, std::uint64_t, std::span<const std::uint8_t>,
                                    std::uint64_t, std::uint64_t*, Completion) {
  return Status(ErrorCode::kUnsupported, "this transport has no remote fetch-and-add");
}

}  // namespace tagwire::transport
