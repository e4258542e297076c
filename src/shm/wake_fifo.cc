#include "shm/wake_fifo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace tagwire::shm {

Result<WakeFifo> WakeFifo::create(const std::string& path) {
  if (::mkfifo(path.c_str(), 0600) != 0) {
    return Status(ErrorCode::kTransport, "mkfifo " + path + ": " + std::strerror(errno));
  }
  // Read-write, so that the FIFO never reports end-of-file while no
  // sender holds it open.
  WakeFifo fifo;
  fifo.path_ = path;
  fifo.fd_ = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fifo.fd_ < 0) {
    return Status(ErrorCode::kTransport, "open " + path + ": " + std::strerror(errno));
  }
  return fifo;
}

WakeFifo::WakeFifo(WakeFifo&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::exchange(other.path_, {})) {}

WakeFifo& WakeFifo::operator=(WakeFifo&& other) noexcept {
  if (this != &other) {
    this->~WakeFifo();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

WakeFifo::~WakeFifo() {
  unlink();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void WakeFifo::drain() const {
  char bytes[64];
  while (::read(fd_, bytes, sizeof(bytes)) > 0) {
  }
}

void WakeFifo::unlink() {
  if (path_.empty()) return;
  ::unlink(path_.c_str());
  path_.clear();
}

WakeTarget::WakeTarget(WakeTarget&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

WakeTarget& WakeTarget::operator=(WakeTarget&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

WakeTarget::~WakeTarget() {
  if (fd_ >= 0) ::close(fd_);
}

void WakeTarget::notify() {
  if (fd_ < 0) fd_ = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) return;  // gone: the receiver finalized; its next look finds the data
  const char byte = 1;
  (void)!::write(fd_, &byte, 1);
}

}  // namespace tagwire::shm
