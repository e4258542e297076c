// SharedSegment: a POSIX shared-memory object (shm_open) mapped into this
// process, owned (created, and unlinked when done) or attached to (a
// peer's). Mode 0600: only the job's own user can map it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace tagwire {

class SharedSegment {
 public:
  SharedSegment() = default;
  // Creates `name` (it must not exist) of `bytes` zeroed bytes, and maps it.
  // `reserve`: its pages are taken now, so that a /dev/shm too small is an
  // error here rather than a SIGBUS at the first touch (a window's memory);
  // without, pages come as they are touched (the rings, mostly untouched).
  static Result<SharedSegment> create(const std::string& name, std::size_t bytes,
                                      bool reserve = false);
  // Maps an existing segment, which must hold at least `bytes`.
  static Result<SharedSegment> attach(const std::string& name, std::size_t bytes);

  SharedSegment(SharedSegment&& other) noexcept;
  SharedSegment& operator=(SharedSegment&& other) noexcept;
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  ~SharedSegment();

  std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool mapped() const { return data_ != nullptr; }
  // Removes the name (owner only): mappings stay valid, nobody new can
  // attach, and nothing is left in /dev/shm if the process dies later.
  void unlink();

 private:
  void reset();

  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::string name_;  // set while this process owns a name to remove
};

}  // namespace tagwire
