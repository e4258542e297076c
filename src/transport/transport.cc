#include "transport/transport.h"

namespace tagwire::transport {

namespace {

// Heap words and their registration, released together.
class HeapWords final : public Registration {
 public:
  HeapWords(std::unique_ptr<std::uint64_t[]> words, std::unique_ptr<Registration> registration)
      : words_(std::move(words)), registration_(std::move(registration)) {}
  ~HeapWords() override { registration_.reset(); }  // deregistered before freed
  std::span<const std::uint8_t> packed_key() const override { return registration_->packed_key(); }
  std::uint64_t address() const override { return registration_->address(); }
  std::size_t length() const override { return registration_->length(); }

 private:
  std::unique_ptr<std::uint64_t[]> words_;
  std::unique_ptr<Registration> registration_;
};

}  // namespace

Result<std::unique_ptr<Registration>> Transport::allocate_atomic_words(std::size_t count) {
  auto words = std::make_unique<std::uint64_t[]>(count == 0 ? 1 : count);  // zeroed
  auto registration =
      register_memory(words.get(), count * sizeof(std::uint64_t), RemoteAccess::kReadAndAtomic);
  if (!registration) return registration.status();
  return std::unique_ptr<Registration>(
      new HeapWords(std::move(words), std::move(registration).value()));
}

}  // namespace tagwire::transport
