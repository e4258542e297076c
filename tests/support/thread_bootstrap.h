// Ranks as threads of one process, for tests that run real engines side
// by side: a meeting point where each round's allgather completes once
// every rank has given its part, and the engine's Bootstrap over it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "bootstrap/bootstrap.h"

namespace tagwire::testing {

class ThreadMeeting {
 public:
  explicit ThreadMeeting(int ranks) : ranks_(ranks), slots_(static_cast<std::size_t>(ranks)) {}
  int ranks() const { return ranks_; }

  // Every rank's contribution, once all have given theirs.
  std::vector<std::vector<std::uint8_t>> allgather(int rank, std::span<const std::uint8_t> mine) {
    std::unique_lock lock(mutex_);
    const std::uint64_t round = round_;
    slots_[static_cast<std::size_t>(rank)].assign(mine.begin(), mine.end());
    if (++arrived_ == ranks_) {
      gathered_ = slots_;
      arrived_ = 0;
      ++round_;
      met_.notify_all();
      return gathered_;
    }
    met_.wait(lock, [&] { return round_ != round; });
    // The next round cannot end before this rank joins it: still ours.
    return gathered_;
  }

 private:
  int ranks_;
  std::mutex mutex_;
  std::condition_variable met_;
  std::vector<std::vector<std::uint8_t>> slots_;
  std::vector<std::vector<std::uint8_t>> gathered_;
  int arrived_ = 0;
  std::uint64_t round_ = 0;
};

class ThreadBootstrap final : public bootstrap::Bootstrap {
 public:
  ThreadBootstrap(ThreadMeeting* meeting, int rank) : meeting_(meeting), rank_(rank) {}
  std::string_view kind() const override { return "threads"; }
  int rank() const override { return rank_; }
  int size() const override { return meeting_->ranks(); }
  std::uint64_t job_token() const override { return 0x7461677769726521; }
  Result<std::vector<std::vector<std::uint8_t>>> allgather(
      std::span<const std::uint8_t> mine) override {
    return meeting_->allgather(rank_, mine);
  }

 private:
  ThreadMeeting* meeting_;
  int rank_;
};

}  // namespace tagwire::testing
