// Schedule: a collective operation written down as rounds of steps, as
// libNBC does it. The steps of a round start together, in the order given
// (a local step runs when its turn comes, so a copy can precede the sends
// that read its result); a round starts once every send and receive of the
// round before it has completed. The MPI layer's collectives build one per
// call; the engine runs it to the end (a blocking call: Engine::
// run_schedule) or starts it as a request that the engine's progress moves
// on whoever polls (a nonblocking one, MPI_Ibcast and the like: Engine::
// start_schedule), so a nonblocking collective advances while the
// application computes if the engine's helper thread polls.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "common/status.h"
#include "engine/scratch_pool.h"

namespace tagwire::engine {

class Communicator;

class Schedule {
 public:
  struct Step {
    // kCopy: `bytes` from `from` to `buffer` (a memmove), the commonest
    // local step, without a std::function's allocation.
    enum class Kind { kSend, kReceive, kLocal, kCopy };
    Kind kind = Kind::kLocal;
    void* buffer = nullptr;
    std::size_t bytes = 0;
    int peer = 0;  // communicator rank (or MPI_PROC_NULL)
    int tag = 0;
    std::function<Status()> local;
    bool remote = false;         // peer: a rank of an intercommunicator's remote group
    const void* from = nullptr;  // kCopy's source
  };

  // An intercommunicator's collective moves messages within each group and
  // between the groups, all on its one collective context, where a message
  // from remote rank r and one from local rank r carry the same source.
  // Steps between the groups carry this bit in their tag (no tag of the
  // MPI layer's has it), so neither is ever taken for the other.
  static constexpr int kRemoteTagBit = 1 << 29;

  explicit Schedule(Communicator* comm) : comm_(comm) {}
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  Communicator* comm() const { return comm_; }
  std::size_t round_count() const { return round_ends_.size(); }
  std::span<const Step> round(std::size_t i) const {
    const std::size_t begin = i == 0 ? 0 : round_ends_[i - 1];
    return {steps_.data() + begin, round_ends_[i] - begin};
  }

  // Steps added from here on wait for everything added before (nothing
  // happens if the current round is still empty). The new round starts
  // with the steps after_round() left for it.
  void next_round() {
    if (round_ends_.empty() || current_empty()) return;
    round_ends_.push_back(steps_.size());
    for (auto& fn : after_) local(std::move(fn));
    after_.clear();
  }
  // Ends the schedule: a round for what after_round() still holds.
  void close() {
    if (!after_.empty()) next_round();
  }
  void send(const void* buffer, std::size_t bytes, int peer, int tag) {
    add({Step::Kind::kSend, const_cast<void*>(buffer), bytes, peer, tag, {}});
  }
  void receive(void* buffer, std::size_t bytes, int peer, int tag) {
    add({Step::Kind::kReceive, buffer, bytes, peer, tag, {}});
  }
  void local(std::function<Status()> fn) {
    add({Step::Kind::kLocal, nullptr, 0, 0, 0, std::move(fn)});
  }
  // Steps with the remote group of an intercommunicator (`peer` is a rank
  // there).
  void send_remote(const void* buffer, std::size_t bytes, int peer, int tag) {
    add({Step::Kind::kSend, const_cast<void*>(buffer), bytes, peer, tag | kRemoteTagBit, {}, true});
  }
  void receive_remote(void* buffer, std::size_t bytes, int peer, int tag) {
    add({Step::Kind::kReceive, buffer, bytes, peer, tag | kRemoteTagBit, {}, true});
  }
  // A local step for the start of the next round, once everything of this
  // one has completed (unpacking what a receive of this round brought).
  void after_round(std::function<Status()> fn) { after_.push_back(std::move(fn)); }
  // A copy made when its turn comes (not now: what it copies may be the
  // result of an earlier round).
  void copy(void* to, const void* from, std::size_t bytes) {
    if (bytes == 0 || to == from) return;
    Step step{Step::Kind::kCopy, to, bytes, 0, 0, {}};
    step.from = from;
    add(std::move(step));
  }
  // Bytes that live as long as the schedule: received parts, a reduction's
  // accumulator, a copy of an in-place buffer. Small ones come from the
  // schedule's own bytes (a schedule never moves: it cannot be copied),
  // large ones from ScratchPool, which keeps them mapped for the next call.
  unsigned char* scratch(std::size_t bytes) {
    const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 15) & ~std::size_t{15};
    if (rounded <= sizeof(inline_scratch_) - inline_used_) {
      unsigned char* out = inline_scratch_ + inline_used_;
      inline_used_ += rounded;
      return out;
    }
    scratch_.push_back(ScratchPool::take(rounded));
    return scratch_.back().get();
  }
  // A copy of `bytes` at `data`, taken now.
  unsigned char* keep(const void* data, std::size_t bytes) {
    unsigned char* out = scratch(bytes);
    if (bytes > 0) std::memcpy(out, data, bytes);
    return out;
  }

 private:
  // One run of steps, each round's end in round_ends_ (the last one open):
  // a blocking collective makes a schedule per call, and a vector per
  // round was a measurable part of a small one.
  bool current_empty() const {
    const std::size_t begin = round_ends_.size() < 2 ? 0 : round_ends_[round_ends_.size() - 2];
    return steps_.size() == begin;
  }
  void add(Step step) {
    if (round_ends_.empty()) {
      steps_.reserve(8);
      round_ends_.reserve(4);
      round_ends_.push_back(0);
    }
    steps_.push_back(std::move(step));
    round_ends_.back() = steps_.size();
  }

  Communicator* comm_;
  std::vector<Step> steps_;
  std::vector<std::size_t> round_ends_;
  std::vector<std::function<Status()>> after_;
  std::vector<ScratchPool::Block> scratch_;  // large ones kept for the next call
  // A small collective's scratch (an 8-byte allreduce's operands) without
  // an allocation each; aligned as malloc's would be.
  alignas(16) unsigned char inline_scratch_[256];
  std::size_t inline_used_ = 0;
};

}  // namespace tagwire::engine
