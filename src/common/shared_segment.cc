#include "common/shared_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace tagwire {

namespace {

Status os_error(const std::string& what, const std::string& name) {
  return {ErrorCode::kTransport, what + " " + name + ": " + std::strerror(errno)};
}

Result<std::uint8_t*> map(int fd, std::size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return os_error("mmap of shared segment", name);
  return static_cast<std::uint8_t*>(p);
}

}  // namespace

Result<SharedSegment> SharedSegment::create(const std::string& name, std::size_t bytes,
                                            bool reserve) {
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return os_error("shm_open (create)", name);
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    Status s = os_error("ftruncate of shared segment", name);
    ::close(fd);
    ::shm_unlink(name.c_str());
    return s;
  }
  // (A file system without fallocate says EOPNOTSUPP: pages as touched.)
  if (const int rc = reserve ? ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)) : 0;
      rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) {
    errno = rc;
    Status s = os_error("reserving the shared segment's pages (is /dev/shm full?)", name);
    ::close(fd);
    ::shm_unlink(name.c_str());
    return s;
  }
  auto data = map(fd, bytes, name);
  ::close(fd);
  if (!data) {
    ::shm_unlink(name.c_str());
    return data.status();
  }
  SharedSegment segment;
  segment.data_ = *data;
  segment.size_ = bytes;
  segment.name_ = name;
  return segment;
}

Result<SharedSegment> SharedSegment::attach(const std::string& name, std::size_t bytes) {
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return os_error("shm_open (attach)", name);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < bytes) {
    ::close(fd);
    return Status(ErrorCode::kProtocol, "shared segment " + name + " is smaller than announced");
  }
  auto data = map(fd, bytes, name);
  ::close(fd);
  if (!data) return data.status();
  SharedSegment segment;
  segment.data_ = *data;
  segment.size_ = bytes;
  return segment;
}

SharedSegment::SharedSegment(SharedSegment&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      name_(std::move(other.name_)) {
  other.name_.clear();
}

SharedSegment& SharedSegment::operator=(SharedSegment&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    name_ = std::move(other.name_);
    other.name_.clear();
  }
  return *this;
}

SharedSegment::~SharedSegment() {
  reset();
}

void SharedSegment::unlink() {
  if (name_.empty()) return;
  ::shm_unlink(name_.c_str());
  name_.clear();
}

void SharedSegment::reset() {
  unlink();
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace tagwire
