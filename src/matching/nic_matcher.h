// NicMatcher: the software matcher plus the book of which posted
// receives a tag-matching NIC also holds (rdma-core's TM-SRQ; contract:
// rdma-core Documentation/tag_matching.md and ibv_post_srq_ops(3)).
//
// Software stays the authority: every posted receive is in the Matcher's
// posted queue, every unexpected message in its unexpected queue, and probe
// and mprobe look only there, so they see exactly what a receive would. The
// NIC holds copies of some posted receives and may consume one when a
// message arrives; that match is final, and software removes the receive.
//
// MPI order is kept by four rules:
//  1. A receive is offloaded only if no earlier receive that could take the
//     same message stays in software (or might yet bounce back to it): the
//     NIC would otherwise give the message to the later receive.
//  2. Every NIC operation carries the number of unexpected messages software
//     has handled. The NIC leaves entries added with a stale count unused
//     until that count catches up, so a receive posted while a matching
//     message was on its way to software cannot take a later message first.
//  3. When software matches an unexpected message to a receive the NIC also
//     holds, the DEL for it goes out before any operation that could bring
//     the count up to date, so the NIC can never consume it as well.
//  4. A receive cancel removes the receive from software at once and asks
//     the NIC to DEL its copy; if the NIC consumed it first, the receive
//     completes normally and the cancel fails.
// Each rule has a test in tests/unit/nic_matcher_test.cc that drives
// this class through the contract's event sequences against a model NIC.
//
// Pure logic, no I/O: the verbs layer turns NicOps into ibv_post_srq_ops
// work requests and tag-matching completions into the on_*() calls.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "matching/matcher.h"
#include "matching/nic_tag.h"

namespace tagwire::matching {

// One ibv_post_srq_ops work request, in the contract's terms.
struct NicOp {
  enum class Kind : std::uint8_t { kAdd, kDel, kSync };
  Kind kind = Kind::kSync;
  std::uint64_t entry = 0;             // kAdd, kDel: the entry (kAdd's recv_wr_id)
  NicTagPattern pattern;               // kAdd
  std::uint32_t unexpected_count = 0;  // every op carries it, with IBV_OPS_TM_SYNC
  friend bool operator==(const NicOp&, const NicOp&) = default;
};

struct NicMatchingCounters {
  std::uint64_t matched_by_nic = 0;
  std::uint64_t matched_by_software = 0;
  std::uint64_t tag_adds = 0;            // TAG_ADDs posted
  std::uint64_t tag_dels = 0;            // TAG_DELs posted (cancel or software match)
  std::uint64_t syncs = 0;               // TAG_SYNCs posted
  std::uint64_t kept_full = 0;           // stayed in software: the NIC held all it may
  std::uint64_t kept_unencodable = 0;    // stayed in software: a field did not fit the tag
  std::uint64_t kept_by_caller = 0;      // stayed in software: the caller said so (small buffer)
  std::uint64_t kept_for_order = 0;      // stayed in software: rule 1
  std::uint64_t add_rejected = 0;        // the NIC refused a TAG_ADD; software took over
  std::uint64_t cancel_lost_to_nic = 0;  // a receive cancel the NIC's match beat
};

class NicMatcher {
 public:
  // `nic_capacity`: how many entries the NIC may hold (at most tm_caps.max_num_tags).
  explicit NicMatcher(std::uint32_t nic_capacity) : capacity_(nic_capacity) {}

  // ---- What the application asks (same meaning as Matcher's).
  // `nic_may_hold` false keeps the receive in software whatever else holds
  // (the verbs layer: a buffer too small for the rendezvous header the NIC
  // would leave in it when it hands a rendezvous back to software).
  // Without a NIC (capacity 0: soft-RoCE, UCX, every engine today) this is
  // the plain matcher plus a counter, inline: the engine pays it on every
  // message, and the out-of-line book cost 10-14 % per post + arrival.
  PostResult post_receive(const ReceivePattern& pattern, std::uint64_t receive_cookie,
                          bool nic_may_hold = true) {
    PostResult result = software_.post_receive(pattern, receive_cookie);
    if (result.matched) {
      ++counters_.matched_by_software;
    } else if (capacity_ != 0) {
      offer_to_nic(result.handle, pattern, receive_cookie, nic_may_hold);
    }
    return result;
  }
  // Matcher::post_expected, when no NIC can hold a receive (capacity 0)
  // and no message waits: nothing to offer, nothing to count.
  bool posts_only_queue() const { return capacity_ == 0 && software_.nothing_unexpected(); }
  [[gnu::always_inline]] ReceiveHandle post_expected(ReceivePattern pattern,
                                                     std::uint64_t receive_cookie) {
    return software_.post_expected(pattern, receive_cookie);
  }
  std::optional<IncomingMessage> probe(const ReceivePattern& pattern) const {
    return software_.probe(pattern);
  }
  // Whether a message arriving in software now would match a posted receive.
  bool would_match(const Envelope& envelope) const { return software_.would_match(envelope); }
  // A message mprobe takes is matched (only its mrecv can receive it).
  std::optional<IncomingMessage> mprobe(const ReceivePattern& pattern) {
    auto taken = software_.mprobe(pattern);
    if (taken) ++counters_.matched_by_software;
    return taken;
  }
  std::optional<IncomingMessage> cancel_unexpected(ContextId context, Rank source,
                                                   std::uint64_t sender_request_id) {
    return software_.cancel_unexpected(context, source, sender_request_id);
  }

  enum class CancelOutcome { kCancelled, kAlreadyMatched, kPending };
  // kPending: the NIC holds a copy; on_del_done() or on_nic_match() decides.
  CancelOutcome cancel_receive(ReceiveHandle handle);

  // A message the engine matched to a receive it never posted here (a
  // blocking receive while nothing else was posted): counted as software's.
  void count_software_match() { ++counters_.matched_by_software; }

  // ---- What the NIC reports, one call per tag-matching completion.
  // A tagged message the NIC did not match landed in an SRQ buffer.
  ArrivalResult on_unexpected(const IncomingMessage& message, bool sync_requested) {
    ++handled_;
    sync_requested_ = sync_requested_ || sync_requested;
    return on_untagged(message);
  }
  // A message that reached software without the NIC seeing it: it carried
  // no NIC tag because a field of its envelope did not fit. Not counted as
  // unexpected (the NIC did not count it). Order holds without the count:
  // a sender's messages on one communicator are all tagged or all not
  // (the fields are its own rank and the context; every tag fits), and a
  // context that does not fit has no receive in the NIC.
  ArrivalResult on_untagged(const IncomingMessage& message) {
    ArrivalResult result = software_.arrive(message);
    if (!result.matched) return result;
    ++counters_.matched_by_software;
    if (capacity_ != 0) forget_software_match(result.receive.sequence);
    return result;
  }
  // The NIC counted a message as unexpected that software cannot match (a
  // rendezvous FIN, a message without a valid TMH): counted, never queued,
  // so that no probe or receive ever sees it.
  void on_unmatchable(bool sync_requested);

  // The NIC consumed `entry` (IBV_WC_TM_RECV with IBV_WC_TM_MATCH, or
  // IBV_WC_TM_RNDV_INCOMPLETE): that receive is matched, final.
  struct NicMatch {
    std::uint64_t receive_cookie = 0;
    bool cancel_lost = false;  // a cancel of this receive was under way: it fails
  };
  Result<NicMatch> on_nic_match(std::uint64_t entry);

  // IBV_WC_TM_ADD: `ok` false is IBV_WC_TM_ERR (the NIC refused the entry).
  Status on_add_done(std::uint64_t entry, bool ok, bool sync_requested);

  // IBV_WC_TM_DEL: `ok` false is IBV_WC_TM_ERR (the entry was gone: consumed).
  // Returns the cookie of a receive whose cancel thereby succeeded.
  Result<std::optional<std::uint64_t>> on_del_done(std::uint64_t entry, bool ok,
                                                   bool sync_requested);

  // IBV_WC_TM_SYNC.
  void on_sync_done(bool sync_requested);

  // After each batch of completions: brings the NIC's count up to date with
  // a TAG_SYNC when software has handled unexpected messages it has not yet
  // reported, or when the NIC asked (IBV_WC_TM_SYNC_REQ).
  void end_of_batch();

  // Operations to post, in order (the NIC executes them in order).
  std::vector<NicOp> take_ops() { return std::exchange(ops_, {}); }

  const NicMatchingCounters& counters() const { return counters_; }
  std::size_t nic_entries() const { return entries_.size(); }
  std::size_t posted_count() const { return software_.posted_count(); }
  std::size_t unexpected_count() const { return software_.unexpected_count(); }
  std::uint32_t unexpected_handled() const { return handled_; }

 private:
  enum class State : std::uint8_t {
    kHeld,             // in software's queue and (once added) in the NIC's list
    kSoftwareMatched,  // software matched it; a DEL is out
    kCancelling,       // cancelled in software; a DEL is out
  };
  struct Entry {
    ReceiveHandle handle;
    ReceivePattern pattern;
    std::uint64_t cookie = 0;
    std::uint32_t added_with = 0;  // the unexpected count its ADD carried
    State state = State::kHeld;
    bool add_done = false;
    bool rejected = false;  // the ADD failed: the NIC never held it
    bool consumed = false;  // the NIC matched it
    bool del_posted = false;
    bool del_done = false;
    bool del_failed = false;  // the DEL found the entry gone
  };

  // A receive software queued: handed to the NIC (a TAG_ADD), or kept in
  // software with the counter that says why.
  void offer_to_nic(ReceiveHandle handle, const ReceivePattern& pattern,
                    std::uint64_t receive_cookie, bool nic_may_hold);
  // Software matched receive `id` to an unexpected message: the NIC's copy
  // goes (rule 3), or the software-only record does.
  void forget_software_match(std::uint64_t id);
  // Rule 1: whether an earlier receive that could take the same message is,
  // or may become, software's alone.
  bool blocked_by_earlier(const ReceivePattern& pattern) const;
  void post_op(NicOp::Kind kind, std::uint64_t entry, NicTagPattern pattern = {});
  void post_del(Entry& entry);
  using Entries = std::unordered_map<std::uint64_t, Entry>;
  // Forgets an entry once nothing more can be reported about it.
  void retire_if_settled(Entries::iterator it);

  Matcher software_;
  std::uint32_t capacity_;
  Entries entries_;                                        // by receive sequence
  std::map<std::uint64_t, ReceivePattern> software_only_;  // posted, not offloaded
  std::vector<NicOp> ops_;
  std::uint32_t handled_ = 0;   // unexpected messages software has handled
  std::uint32_t reported_ = 0;  // the count the last posted op carried
  bool sync_requested_ = false;
  NicMatchingCounters counters_;
};

}  // namespace tagwire::matching
