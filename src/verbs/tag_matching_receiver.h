// TagMatchingReceiver: tagged receives over verbs, matched by the NIC where
// it can (a tag-matching SRQ, ConnectX-5 and later) and by software
// otherwise (a plain SRQ), with one OffloadedMatcher deciding in both cases,
// so that the two paths differ only in who consumes a receive.
//
// Messages are RC SENDs that start with a TMH (verbs/tm_header.h) to QPs
// attached to srq(): eager (TMH | payload), rendezvous requests (TMH | RVH),
// a rendezvous's FIN (TMH), and control without a tag (TMH NO_TAG | bytes).
// In hardware mode the NIC puts the payload of an eager message it matched
// straight into the receive's buffer, and reads a rendezvous it matched
// itself. Every other message lands, TMH and all, in one of this receiver's
// SRQ buffers; an eager payload is copied out at once (the buffer goes
// straight back to the SRQ) and kept until a receive takes it.
//
// What needs a send queue -- the software read of a rendezvous that reached
// software or that the NIC handed back (IBV_WC_TM_RNDV_INCOMPLETE), and the
// FIN after it -- is the owner's (TagMatchingSink, TagMatchingChannels):
// a QP attached to a TM-SRQ gives up its send queue to the NIC, so the
// owner keeps a second QP per peer (docs/architecture.md §3). Single-threaded, like the
// matcher.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "matching/offloaded_matcher.h"
#include "verbs/device.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/tm_completion.h"
#include "verbs/tm_header.h"
#include "verbs/tm_srq.h"
#include "verbs/verbs_handles.h"

namespace tagwire::verbs {

struct TagMatchingOptions {
  bool hardware = false;           // a TM-SRQ; needs DeviceCaps::tm_rc
  std::uint32_t nic_entries = 64;  // receives the NIC may hold (capped by tm_max_tags)
  std::uint32_t buffers = 64;      // SRQ buffers for messages software matches
  std::uint32_t buffer_bytes = 4096;
};

// What the receiver needs from its owner, which holds the send side of
// every connection. `qp_num` is the local QP a message arrived on: the
// owner knows which peer that is.
class TagMatchingSink {
 public:
  virtual ~TagMatchingSink() = default;
  // A message without a tag (IBV_TMH_NO_TAG): control, in order with the
  // tagged messages on the same QP. `bytes` is valid during the call only.
  virtual void on_control(std::uint32_t qp_num, std::span<const std::uint8_t> bytes) = 0;
  // A rendezvous this rank sent is over: the peer has its data (IBV_TMH_FIN;
  // `app_context` is the one the request carried).
  virtual void on_fin(std::uint32_t qp_num, std::uint32_t app_context) = 0;
  // Software reads a rendezvous: `into.length` bytes from `header`'s
  // address into `into` (already registered), then calls read_done(`id`).
  virtual Status start_read(std::uint32_t qp_num, LocalBuffer into, const RendezvousHeader& header,
                            std::uint32_t id) = 0;
};

class TagMatchingReceiver {
 public:
  using ReceiveId = std::uint32_t;

  struct Completed {
    ReceiveId id = 0;          // reused once the receive completes
    std::uint64_t cookie = 0;  // the caller's, from post_receive
    bool cancelled = false;
    bool by_nic = false;
    bool truncated = false;
    bool rendezvous = false;   // the data came by RDMA READ
    bool read_by_nic = false;  // ... which the NIC did itself
    matching::Envelope envelope;
    std::uint32_t length = 0;          // payload bytes placed in the buffer
    std::uint32_t sender_request = 0;  // the TMH's opaque field
    std::uint32_t qp_num = 0;          // the local QP it arrived on
    Status error = Status::ok();       // a failed software read
    // A rendezvous software read: its sender waits for a FIN, which the
    // owner sends (the NIC sends its own after a read it did).
    bool needs_fin() const { return rendezvous && !read_by_nic; }
  };

  static Result<std::unique_ptr<TagMatchingReceiver>> create(const Device& device,
                                                             const TagMatchingOptions& options);
  // Over any TmSrq (tests play the NIC with one); the SRQ buffers are not
  // registered (lkey 0). `options.nic_entries` is taken as granted.
  static Result<std::unique_ptr<TagMatchingReceiver>> create_with(const TagMatchingOptions& options,
                                                                  std::unique_ptr<TmSrq> srq);
  ~TagMatchingReceiver();
  TagMatchingReceiver(const TagMatchingReceiver&) = delete;
  TagMatchingReceiver& operator=(const TagMatchingReceiver&) = delete;

  bool hardware() const { return options_.hardware; }
  ibv_srq* srq() const { return srq_->srq(); }
  ibv_cq* cq() const { return srq_->cq(); }

  // Where control messages, FINs and software reads go; may be null when
  // only eager messages arrive (then control and FINs are counted, dropped).
  void set_sink(TagMatchingSink* sink) { sink_ = sink; }

  // `into` must stay registered and untouched until the receive completes.
  Result<ReceiveId> post_receive(const matching::ReceivePattern& pattern, LocalBuffer into,
                                 std::uint64_t cookie, std::vector<Completed>* done);
  // Completes (cancelled or matched) through progress() or at once.
  Status cancel(ReceiveId id, std::vector<Completed>* done);
  std::optional<matching::IncomingMessage> probe(const matching::ReceivePattern& pattern) const {
    return matcher_.probe(pattern);
  }
  // MPI_Mprobe: takes the message out of matching (no receive or probe
  // sees it again) and hands it back for mreceive(); a message the NIC
  // matched never got here, so mprobe sees exactly what a receive would.
  std::optional<matching::IncomingMessage> mprobe(const matching::ReceivePattern& pattern) {
    return matcher_.mprobe(pattern);
  }
  // MPI_Mrecv of what mprobe() returned: completes like a receive (a
  // rendezvous through the sink's read).
  Result<ReceiveId> mreceive(const matching::IncomingMessage& message, LocalBuffer into,
                             std::uint64_t cookie, std::vector<Completed>* done);

  // A sender's cancel: removes the unexpected message it names from
  // software, if it is still there. A message the NIC matched, or software
  // already gave a receive, is final: so call progress() until the CQ is
  // empty first (TagMatchingChannels::cancel_unexpected does), or a match
  // the NIC has made but not yet reported would be missed.
  bool cancel_unexpected(matching::ContextId context, matching::Rank source,
                         std::uint32_t sender_request);

  // The owner's read for receive `id` (TagMatchingSink::start_read) ended.
  Status read_done(ReceiveId id, const Status& status, std::vector<Completed>* done);

  // Polls the CQ once; appends finished receives to `done`.
  Status progress(std::vector<Completed>* done);
  // Polls until the CQ is empty: every match the NIC has reported is known.
  Status drain(std::vector<Completed>* done);

  const matching::NicMatchingCounters& counters() const { return matcher_.counters(); }
  std::uint64_t untagged() const { return untagged_; }
  std::uint64_t software_reads() const { return software_reads_; }

 private:
  struct Receive {
    LocalBuffer buffer{};
    std::uint64_t cookie = 0;
    bool active = false;
    bool reading = false;  // matched; its rendezvous data is on the way
    matching::ReceivePattern pattern;
    matching::ReceiveHandle handle;
    Completed result;  // filled in as far as known while reading
  };
  struct Stored {
    std::vector<std::uint8_t> payload;
    std::uint32_t sender_request = 0;
    std::uint32_t qp_num = 0;
    bool rendezvous = false;
    RendezvousHeader rendezvous_header;
  };

  TagMatchingReceiver() = default;
  Status start(const TagMatchingOptions& options, std::unique_ptr<TmSrq> srq,
               std::uint32_t pool_lkey);
  Status post_buffer(std::uint32_t index);
  Status post_ops();
  ReceiveId new_receive(LocalBuffer into, std::uint64_t cookie,
                        const matching::ReceivePattern& pattern);
  Status poll(std::vector<Completed>* done, unsigned* polled);
  Status handle(const TmCompletion& c, std::vector<Completed>* done);
  // A message in SRQ buffer c.wr_id; `counted`: the NIC counted it as
  // unexpected (IBV_WC_TM_RECV), so software counts it too.
  Status on_buffer(const TmCompletion& c, bool counted, bool sync_requested,
                   std::vector<Completed>* done);
  Status on_tagged(const TmHeader& tmh, std::span<const std::uint8_t> body, const TmCompletion& c,
                   bool sync_requested, std::vector<Completed>* done);
  // A stored (software-matched) message into receive `id`.
  void deliver_stored(ReceiveId id, const matching::IncomingMessage& message,
                      std::vector<Completed>* done);
  // Receive `id` is matched to a rendezvous software must read.
  void begin_read(ReceiveId id, const RendezvousHeader& header, std::vector<Completed>* done);
  // A Completed for receive `id`, which is then free for reuse.
  Completed& finish(ReceiveId id, std::vector<Completed>* done);
  // The NIC will report nothing more about `entry`.
  void forget_entry(std::uint64_t entry);

  TagMatchingOptions options_;
  std::unique_ptr<TmSrq> srq_;
  std::vector<std::uint8_t> pool_;
  MrPtr pool_mr_;
  std::uint32_t pool_lkey_ = 0;
  matching::OffloadedMatcher matcher_{0};
  std::vector<Receive> receives_;
  std::vector<ReceiveId> free_receives_;
  std::unordered_map<std::uint64_t, ReceiveId> entry_receive_;     // NIC entry -> receive
  std::unordered_map<std::uint64_t, std::uint32_t> entry_handle_;  // NIC entry -> driver handle
  std::unordered_map<std::uint64_t, Stored> stored_;               // unexpected payloads by cookie
  std::uint64_t next_cookie_ = 1;
  std::uint64_t untagged_ = 0;
  std::uint64_t software_reads_ = 0;
  TagMatchingSink* sink_ = nullptr;
};

}  // namespace tagwire::verbs
