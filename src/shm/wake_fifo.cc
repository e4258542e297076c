#include "shm/wake_fifo.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
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
    // What the destructor does, without ending path_'s lifetime (assigning
    // to a destroyed string was a use after free: ASan, wake_fifo_test).
    unlink();
    if (fd_ >= 0) ::close(fd_);
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
  // The receiver holds the only read end: once it has died, a write to the
  // FIFO raises SIGPIPE, whose default action killed the *sender* (a
  // survivor of tests/mpi/kill_random.c died of "Broken pipe"). A FIFO
  // takes no MSG_NOSIGNAL, so SIGPIPE is blocked around the write and the
  // one this write raised is taken back; wakes are rare (a sleeping
  // receiver), the three extra system calls do not matter.
  sigset_t pipe_only;
  sigset_t before;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigset_t pending;
  sigpending(&pending);
  const bool already_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_only, &before);
  const char byte = 1;
  if (::write(fd_, &byte, 1) < 0 && errno == EPIPE) {
    if (!already_pending) {
      const timespec none{};
      while (::sigtimedwait(&pipe_only, nullptr, &none) < 0 && errno == EINTR) {
      }
    }
    ::close(fd_);  // the next notify's open finds no reader (ENXIO) and returns
    fd_ = -1;
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

}  // namespace tagwire::shm
