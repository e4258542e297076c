// ContractNic: a model of a tag-matching SRQ as rdma-core's contract
// describes it (Documentation/tag_matching.md, ibv_post_srq_ops(3)), for
// driving NicMatcher without hardware. Only the observable contract:
//  - operations (TAG_ADD / TAG_DEL / TAG_SYNC) run in the order posted, at
//    a time of the test's choosing (the NIC works asynchronously);
//  - an arriving message takes the first usable entry, in ADD order, whose
//    tag & mask accept it; otherwise it is unexpected, lands in an SRQ
//    buffer, and the NIC's unexpected count goes up;
//  - every operation carries software's count; while it is behind the
//    NIC's, entries added are not used for matching (or, in the stricter
//    reading, refused with IBV_WC_TM_ERR) and the completion asks for a
//    sync; once an operation's count equals the NIC's, every entry is usable;
//  - TAG_DEL of an entry that is gone completes with IBV_WC_TM_ERR;
//  - completions queue on one CQ, in the order the NIC produced them.
// The two readings of "tag matching is disabled for new tags" are both
// modelled; the matcher must be correct under each.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "matching/nic_matcher.h"
#include "matching/nic_tag.h"

namespace tagwire::matching::testing {

class ContractNic {
 public:
  enum class StaleAdd { kHeldUnused, kRefused };

  struct Message {
    std::uint64_t nic_tag = 0;
    std::uint64_t id = 0;  // the test's name for it
  };
  struct Completion {
    enum class Kind { kAdd, kDel, kSync, kMatch, kUnexpected };
    Kind kind = Kind::kSync;
    std::uint64_t entry = 0;
    bool ok = true;
    bool sync_requested = false;
    Message message;  // kMatch, kUnexpected
  };

  ContractNic(StaleAdd stale, std::uint32_t sync_request_every)
      : stale_(stale), sync_request_every_(sync_request_every) {}

  void submit(const std::vector<NicOp>& ops) {
    pending_.insert(pending_.end(), ops.begin(), ops.end());
  }
  bool has_pending_ops() const { return !pending_.empty(); }

  // Executes the oldest posted operation.
  void execute_one() {
    NicOp op = pending_.front();
    pending_.pop_front();
    const bool in_sync = op.unexpected_count == unexpected_;
    if (in_sync) {
      for (Entry& e : list_) e.usable = true;
    }
    Completion c;
    c.entry = op.entry;
    c.sync_requested = !in_sync;
    switch (op.kind) {
      case NicOp::Kind::kAdd:
        c.kind = Completion::Kind::kAdd;
        if (in_sync || stale_ == StaleAdd::kHeldUnused) {
          list_.push_back(Entry{op.entry, op.pattern, in_sync});
        } else {
          c.ok = false;
        }
        break;
      case NicOp::Kind::kDel: {
        c.kind = Completion::Kind::kDel;
        c.ok = false;
        for (auto it = list_.begin(); it != list_.end(); ++it) {
          if (it->id == op.entry) {
            list_.erase(it);
            c.ok = true;
            break;
          }
        }
        break;
      }
      case NicOp::Kind::kSync:
        c.kind = Completion::Kind::kSync;
        break;
    }
    cq.push_back(c);
  }

  // A message reaches the NIC. Returns the entry that took it, or 0.
  std::uint64_t arrive(const Message& message) {
    Completion c;
    c.message = message;
    for (auto it = list_.begin(); it != list_.end(); ++it) {
      if (it->usable && it->pattern.accepts(message.nic_tag)) {
        c.kind = Completion::Kind::kMatch;
        c.entry = it->id;
        list_.erase(it);
        cq.push_back(c);
        return c.entry;
      }
    }
    ++unexpected_;
    c.kind = Completion::Kind::kUnexpected;
    c.sync_requested = sync_request_every_ != 0 && unexpected_ % sync_request_every_ == 0;
    cq.push_back(c);
    return 0;
  }

  std::size_t entries() const { return list_.size(); }
  bool all_usable() const {
    for (const Entry& e : list_) {
      if (!e.usable) return false;
    }
    return true;
  }
  std::uint32_t unexpected() const { return unexpected_; }

  std::deque<Completion> cq;

 private:
  struct Entry {
    std::uint64_t id;
    NicTagPattern pattern;
    bool usable;
  };
  StaleAdd stale_;
  std::uint32_t sync_request_every_;
  std::deque<NicOp> pending_;
  std::vector<Entry> list_;
  std::uint32_t unexpected_ = 0;
};

}  // namespace tagwire::matching::testing
