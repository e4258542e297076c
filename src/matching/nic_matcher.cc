#include "matching/nic_matcher.h"

#include <string>

namespace tagwire::matching {
namespace {

bool overlap(const ReceivePattern& a, const ReceivePattern& b) {
  return a.context == b.context &&
         (a.source == kAnySource || b.source == kAnySource || a.source == b.source) &&
         (a.tag == kAnyTag || b.tag == kAnyTag || a.tag == b.tag);
}

// Past this many software-only receives rule 1 stops scanning and keeps the
// new receive in software too: conservative, and bounded per post.
constexpr std::size_t kOverlapScanLimit = 64;

Status inconsistent(const std::string& what, std::uint64_t entry) {
  return {ErrorCode::kInternal,
          "tag matching: " + what + " (NIC entry " + std::to_string(entry) + ")"};
}

}  // namespace

bool NicMatcher::blocked_by_earlier(const ReceivePattern& pattern) const {
  if (software_only_.size() > kOverlapScanLimit) return true;
  for (const auto& [sequence, earlier] : software_only_) {
    if (overlap(earlier, pattern)) return true;
  }
  // An ADD still in flight that carried a stale count may yet be refused
  // (then software alone holds that receive): wait until the NIC answers.
  for (const auto& [id, entry] : entries_) {
    if (entry.state == State::kHeld && !entry.add_done && entry.added_with != handled_ &&
        overlap(entry.pattern, pattern)) {
      return true;
    }
  }
  return false;
}

void NicMatcher::post_op(NicOp::Kind kind, std::uint64_t entry, NicTagPattern pattern) {
  ops_.push_back(NicOp{kind, entry, pattern, handled_});
  reported_ = handled_;
}

void NicMatcher::post_del(Entry& entry) {
  entry.del_posted = true;
  ++counters_.tag_dels;
  post_op(NicOp::Kind::kDel, entry.handle.sequence);
}

void NicMatcher::offer_to_nic(ReceiveHandle handle, const ReceivePattern& pattern,
                              std::uint64_t receive_cookie, bool nic_may_hold) {
  const std::uint64_t id = handle.sequence;
  auto encoded = encode_nic_pattern(pattern);
  bool offload = false;
  if (!nic_may_hold) {
    ++counters_.kept_by_caller;
  } else if (!encoded) {
    ++counters_.kept_unencodable;
  } else if (entries_.size() >= capacity_) {
    ++counters_.kept_full;
  } else if (blocked_by_earlier(pattern)) {
    ++counters_.kept_for_order;
  } else {
    offload = true;
  }
  if (!offload) {
    software_only_.emplace(id, pattern);
    return;
  }
  Entry entry;
  entry.handle = handle;
  entry.pattern = pattern;
  entry.cookie = receive_cookie;
  entry.added_with = handled_;
  entries_.emplace(id, entry);
  ++counters_.tag_adds;
  post_op(NicOp::Kind::kAdd, id, *encoded);
}

NicMatcher::CancelOutcome NicMatcher::cancel_receive(ReceiveHandle handle) {
  auto it = entries_.find(handle.sequence);
  if (it == entries_.end() || !(it->second.handle == handle)) {
    if (!software_.cancel_receive(handle)) return CancelOutcome::kAlreadyMatched;
    software_only_.erase(handle.sequence);
    return CancelOutcome::kCancelled;
  }
  Entry& entry = it->second;
  if (entry.state == State::kSoftwareMatched) return CancelOutcome::kAlreadyMatched;
  if (entry.state == State::kCancelling) return CancelOutcome::kPending;
  // Rule 4: out of software now, so no unexpected message can take it; the
  // NIC's answer to the DEL decides.
  software_.cancel_receive(handle);
  entry.state = State::kCancelling;
  post_del(entry);
  return CancelOutcome::kPending;
}

void NicMatcher::forget_software_match(std::uint64_t id) {
  if (auto it = entries_.find(id); it != entries_.end()) {
    // Rule 3: the NIC's copy goes before anything can re-enable it. The
    // NIC never consumed it: it would have matched this very message.
    it->second.state = State::kSoftwareMatched;
    post_del(it->second);
  } else {
    software_only_.erase(id);
  }
}

void NicMatcher::on_unmatchable(bool sync_requested) {
  ++handled_;
  sync_requested_ = sync_requested_ || sync_requested;
}

Result<NicMatcher::NicMatch> NicMatcher::on_nic_match(std::uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return inconsistent("match reported for an unknown entry", id);
  Entry& entry = it->second;
  if (entry.consumed || entry.rejected) {
    return inconsistent("match reported twice, or for a refused entry", id);
  }
  NicMatch match{entry.cookie, false};
  switch (entry.state) {
    case State::kSoftwareMatched:
      return inconsistent("the NIC consumed a receive software had matched", id);
    case State::kHeld:
      if (!software_.cancel_receive(entry.handle)) {
        return inconsistent("the NIC consumed a receive software no longer holds", id);
      }
      break;
    case State::kCancelling:
      match.cancel_lost = true;
      ++counters_.cancel_lost_to_nic;
      break;
  }
  entry.consumed = true;
  ++counters_.matched_by_nic;
  retire_if_settled(it);
  return match;
}

Status NicMatcher::on_add_done(std::uint64_t id, bool ok, bool sync_requested) {
  sync_requested_ = sync_requested_ || sync_requested;
  auto it = entries_.find(id);
  if (it == entries_.end()) return inconsistent("ADD completion for an unknown entry", id);
  Entry& entry = it->second;
  entry.add_done = true;
  if (!ok) {
    entry.rejected = true;
    ++counters_.add_rejected;
    // Still in software's queue: software alone matches it from now on.
    if (entry.state == State::kHeld) software_only_.emplace(id, entry.pattern);
  }
  retire_if_settled(it);
  return Status::ok();
}

Result<std::optional<std::uint64_t>> NicMatcher::on_del_done(std::uint64_t id, bool ok,
                                                             bool sync_requested) {
  sync_requested_ = sync_requested_ || sync_requested;
  auto it = entries_.find(id);
  if (it == entries_.end() || !it->second.del_posted) {
    return inconsistent("DEL completion for an entry with no DEL out", id);
  }
  Entry& entry = it->second;
  entry.del_done = true;
  // An entry the NIC refused was never there to delete: not a consumption.
  entry.del_failed = !ok && !entry.rejected;
  std::optional<std::uint64_t> cancelled;
  if (entry.del_failed && entry.state == State::kSoftwareMatched) {
    return inconsistent("the NIC consumed a receive software had matched", id);
  }
  if (entry.state == State::kCancelling && !entry.del_failed && !entry.consumed) {
    cancelled = entry.cookie;
  }
  retire_if_settled(it);
  return cancelled;
}

void NicMatcher::on_sync_done(bool sync_requested) {
  sync_requested_ = sync_requested_ || sync_requested;
}

void NicMatcher::end_of_batch() {
  const bool behind = reported_ != handled_ && !entries_.empty();
  if (!sync_requested_ && !behind) return;
  sync_requested_ = false;
  ++counters_.syncs;
  post_op(NicOp::Kind::kSync, 0);
}

void NicMatcher::retire_if_settled(Entries::iterator it) {
  const Entry& e = it->second;
  if (!e.add_done) return;  // its completion is still to come
  bool settled = false;
  if (e.del_posted) {
    // A failed DEL of a cancelled receive waits for the match it lost to.
    settled = e.del_done && (!e.del_failed || e.consumed);
  } else {
    settled = e.consumed || e.rejected;
  }
  if (settled) entries_.erase(it);
}

}  // namespace tagwire::matching
