// Waking a receiver that sleeps: a named FIFO beside its shared segment.
//
// The receiver's helper thread sleeps in poll() on the FIFO's read end
// (Transport::event_fd); a sender that finds the receiver's `armed` word
// set writes one byte. A FIFO rather than an eventfd: a peer can open it by
// name, with no descriptor passing; rather than a socket: it works across
// network namespaces on one host, as the segment does.
#pragma once

#include <string>

#include "common/status.h"

namespace tagwire::shm {

// The receiver's end: made, opened and, when done, removed by the owner.
class WakeFifo {
 public:
  WakeFifo() = default;
  static Result<WakeFifo> create(const std::string& path);
  WakeFifo(WakeFifo&& other) noexcept;
  WakeFifo& operator=(WakeFifo&& other) noexcept;
  WakeFifo(const WakeFifo&) = delete;
  WakeFifo& operator=(const WakeFifo&) = delete;
  ~WakeFifo();

  int fd() const { return fd_; }
  // Reads every byte waiting (before the receiver sleeps again).
  void drain() const;
  void unlink();

 private:
  int fd_ = -1;
  std::string path_;  // set while the FIFO's name exists
};

// A sender's end, opened on first use.
class WakeTarget {
 public:
  WakeTarget() = default;
  explicit WakeTarget(std::string path) : path_(std::move(path)) {}
  WakeTarget(WakeTarget&& other) noexcept;
  WakeTarget& operator=(WakeTarget&& other) noexcept;
  WakeTarget(const WakeTarget&) = delete;
  WakeTarget& operator=(const WakeTarget&) = delete;
  ~WakeTarget();

  // One byte down the FIFO; a full FIFO already wakes the receiver.
  void notify();

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace tagwire::shm
