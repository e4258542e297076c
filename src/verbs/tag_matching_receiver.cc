#include "verbs/tag_matching_receiver.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "matching/nic_tag.h"
#include "verbs/tm_header.h"
#include "verbs/verbs_status.h"

namespace tagwire::verbs {

using matching::IncomingMessage;
using matching::NicOp;
using matching::ReceivePattern;

Result<std::unique_ptr<TagMatchingReceiver>> TagMatchingReceiver::create(
    const Device& device, const TagMatchingOptions& options) {
  const DeviceCaps& caps = device.caps();
  if (options.hardware && !caps.tm_rc) {
    return Status{ErrorCode::kConfig,
                  "device " + caps.name + " has no tag matching (no IBV_TM_CAP_RC)"};
  }
  std::unique_ptr<TagMatchingReceiver> r(new TagMatchingReceiver());
  r->options_ = options;
  if (options.hardware) {
    r->options_.nic_entries = std::min(options.nic_entries, caps.tm_max_tags);
  } else {
    r->options_.nic_entries = 0;
  }
  r->matcher_ = matching::OffloadedMatcher(r->options_.nic_entries);

  ibv_cq_init_attr_ex cq_attr{};
  cq_attr.cqe = options.buffers * 2 + r->options_.nic_entries * 4 + 64;
  cq_attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
  if (options.hardware) cq_attr.wc_flags |= IBV_WC_EX_WITH_TM_INFO;
  r->cq_.reset(ibv_create_cq_ex(device.context(), &cq_attr));
  if (!r->cq_) return verbs_error("ibv_create_cq_ex", errno);

  ibv_srq_init_attr_ex srq_attr{};
  srq_attr.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
  srq_attr.srq_type = IBV_SRQT_BASIC;
  srq_attr.pd = device.pd();
  srq_attr.attr.max_wr = options.buffers;
  srq_attr.attr.max_sge = 1;
  if (options.hardware) {
    srq_attr.comp_mask |= IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
    srq_attr.srq_type = IBV_SRQT_TM;
    srq_attr.cq = r->cq();
    srq_attr.tm_cap.max_num_tags = r->options_.nic_entries;
    srq_attr.tm_cap.max_ops = r->options_.nic_entries * 2 + 16;
  }
  r->srq_.reset(ibv_create_srq_ex(device.context(), &srq_attr));
  if (!r->srq_) {
    return verbs_error(options.hardware ? "ibv_create_srq_ex(IBV_SRQT_TM)" : "ibv_create_srq_ex",
                       errno);
  }

  r->pool_.assign(std::size_t{options.buffers} * options.buffer_bytes, 0);
  auto mr = register_memory(device, r->pool_.data(), r->pool_.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!mr) return mr.status();
  r->pool_mr_ = std::move(mr).value();
  for (std::uint32_t i = 0; i < options.buffers; ++i) {
    if (Status s = r->post_buffer(i); !s) return s;
  }
  return r;
}

TagMatchingReceiver::~TagMatchingReceiver() {
  // The SRQ goes before its CQ and the memory its buffers name.
  srq_.reset();
  cq_.reset();
}

Status TagMatchingReceiver::post_buffer(std::uint32_t index) {
  ibv_sge sge{
      reinterpret_cast<std::uint64_t>(pool_.data()) + std::uint64_t{index} * options_.buffer_bytes,
      options_.buffer_bytes, pool_mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = index;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_srq_recv(srq_.get(), &wr, &bad); rc != 0) {
    return verbs_error("ibv_post_srq_recv", rc);
  }
  return Status::ok();
}

Status TagMatchingReceiver::post_ops() {
  for (const NicOp& op : matcher_.take_ops()) {
    ibv_ops_wr wr{};
    ibv_sge sge{};
    wr.wr_id = op.entry;
    wr.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC;
    wr.tm.unexpected_cnt = op.unexpected_count;
    switch (op.kind) {
      case NicOp::Kind::kAdd: {
        const Receive& r = receives_[entry_receive_.at(op.entry)];
        sge = ibv_sge{reinterpret_cast<std::uint64_t>(r.buffer.address), r.buffer.length,
                      r.buffer.lkey};
        wr.opcode = IBV_WR_TAG_ADD;
        wr.tm.add.recv_wr_id = op.entry;
        wr.tm.add.sg_list = &sge;
        wr.tm.add.num_sge = 1;
        wr.tm.add.tag = op.pattern.tag;
        wr.tm.add.mask = op.pattern.mask;
        break;
      }
      case NicOp::Kind::kDel:
        wr.opcode = IBV_WR_TAG_DEL;
        wr.tm.handle = entry_handle_.at(op.entry);
        break;
      case NicOp::Kind::kSync:
        wr.opcode = IBV_WR_TAG_SYNC;
        break;
    }
    ibv_ops_wr* bad = nullptr;
    if (int rc = ibv_post_srq_ops(srq_.get(), &wr, &bad); rc != 0) {
      return verbs_error("ibv_post_srq_ops", rc);
    }
    if (op.kind == NicOp::Kind::kAdd) entry_handle_[op.entry] = wr.tm.handle;
  }
  return Status::ok();
}

Result<TagMatchingReceiver::ReceiveId> TagMatchingReceiver::post_receive(
    const ReceivePattern& pattern, LocalBuffer into, std::uint64_t cookie,
    std::vector<Completed>* done) {
  ReceiveId id;
  if (!free_receives_.empty()) {
    id = free_receives_.back();
    free_receives_.pop_back();
  } else {
    id = static_cast<ReceiveId>(receives_.size());
    receives_.emplace_back();
  }
  Receive& r = receives_[id];
  r = Receive{into, cookie, true, pattern, {}};
  matching::PostResult posted = matcher_.post_receive(pattern, id);
  if (posted.matched) {
    deliver_stored(id, posted.message, done);
    return id;
  }
  r.handle = posted.handle;
  // Read by the ADD, if the matcher offloads it; kept for the NIC's
  // completions, which name the entry.
  entry_receive_[posted.handle.sequence] = id;
  if (Status s = post_ops(); !s) return s;
  if (!entry_handle_.contains(posted.handle.sequence)) entry_receive_.erase(posted.handle.sequence);
  return id;
}

Status TagMatchingReceiver::cancel(ReceiveId id, std::vector<Completed>* done) {
  if (id >= receives_.size() || !receives_[id].active) {
    return {ErrorCode::kInvalidArgument, "cancel of a receive that is not active"};
  }
  switch (matcher_.cancel_receive(receives_[id].handle)) {
    case matching::OffloadedMatcher::CancelOutcome::kCancelled:
      finish(id, done).cancelled = true;
      break;
    case matching::OffloadedMatcher::CancelOutcome::kAlreadyMatched:
    case matching::OffloadedMatcher::CancelOutcome::kPending:
      break;
  }
  return post_ops();
}

void TagMatchingReceiver::deliver_stored(ReceiveId id, const IncomingMessage& message,
                                         std::vector<Completed>* done) {
  const LocalBuffer buffer = receives_[id].buffer;
  auto node = stored_.extract(message.cookie);
  Completed& c = finish(id, done);
  c.envelope = message.envelope;
  if (!node.empty()) {
    const Stored& s = node.mapped();
    c.sender_request = s.sender_request;
    const std::size_t n = std::min<std::size_t>(s.payload.size(), buffer.length);
    c.truncated = s.payload.size() > buffer.length;
    if (n > 0) std::memcpy(buffer.address, s.payload.data(), n);
    c.length = static_cast<std::uint32_t>(n);
  }
}

TagMatchingReceiver::Completed& TagMatchingReceiver::finish(ReceiveId id,
                                                            std::vector<Completed>* done) {
  Receive& r = receives_[id];
  r.active = false;
  free_receives_.push_back(id);
  Completed& c = done->emplace_back();
  c.id = id;
  c.cookie = r.cookie;
  return c;
}

TagMatchingReceiver::Completed& TagMatchingReceiver::finish_by_nic(ReceiveId id,
                                                                   const TmCompletion& c,
                                                                   std::vector<Completed>* done) {
  Completed& out = finish(id, done);
  out.by_nic = true;
  out.envelope = matching::decode_nic_tag(c.tag);
  out.length = c.byte_len;
  forget_entry(c.wr_id);
  return out;
}

void TagMatchingReceiver::forget_entry(std::uint64_t entry) {
  entry_receive_.erase(entry);
  entry_handle_.erase(entry);
}

Status TagMatchingReceiver::on_unexpected(const TmCompletion& c, bool sync_requested,
                                          std::vector<Completed>* done) {
  const auto index = static_cast<std::uint32_t>(c.wr_id);
  std::span<const std::uint8_t> bytes(pool_.data() + std::size_t{index} * options_.buffer_bytes,
                                      std::min<std::size_t>(c.byte_len, options_.buffer_bytes));
  auto tmh = decode_tm_header(bytes);
  if (!tmh || tmh->op != IBV_TMH_EAGER) {
    // Counted (the NIC counts it too) but not matchable: say so loudly.
    matcher_.on_unexpected({matching::Envelope{0, 0, 0}, 0, 0, 0}, sync_requested);
    (void)post_buffer(index);
    return {ErrorCode::kTransport,
            tmh ? "rendezvous request reached software: not supported by this receiver"
                : "a message on the tag-matching SRQ has no valid TMH"};
  }
  const std::uint64_t cookie = next_cookie_++;
  Stored& s = stored_[cookie];
  s.payload.assign(bytes.begin() + kTmHeaderBytes, bytes.end());
  s.sender_request = tmh->app_context;
  if (Status st = post_buffer(index); !st) return st;
  IncomingMessage m{matching::decode_nic_tag(tmh->tag), tmh->app_context, s.payload.size(), cookie};
  matching::ArrivalResult a = matcher_.on_unexpected(m, sync_requested);
  if (a.matched) deliver_stored(static_cast<ReceiveId>(a.receive_cookie), m, done);
  return Status::ok();
}

Status TagMatchingReceiver::handle(const TmCompletion& c, std::vector<Completed>* done) {
  const TmEvent e = classify_tm_completion(c);
  switch (e.kind) {
    case TmEventKind::kAddDone:
      if (!e.ok) forget_entry(c.wr_id);  // refused: the NIC never held it, no DEL will name it
      return matcher_.on_add_done(c.wr_id, e.ok, e.sync_requested);
    case TmEventKind::kDelDone: {
      auto cancelled = matcher_.on_del_done(c.wr_id, e.ok, e.sync_requested);
      if (!cancelled) return cancelled.status();
      if (cancelled->has_value())
        finish(static_cast<ReceiveId>(**cancelled), done).cancelled = true;
      forget_entry(c.wr_id);
      return Status::ok();
    }
    case TmEventKind::kSyncDone:
      matcher_.on_sync_done(e.sync_requested);
      return Status::ok();
    case TmEventKind::kMatched:
    case TmEventKind::kMatchedDataFollows:
    case TmEventKind::kRendezvousInSoftware: {
      auto match = matcher_.on_nic_match(c.wr_id);
      if (!match) return match.status();
      auto id = static_cast<ReceiveId>(match->receive_cookie);
      if (e.kind == TmEventKind::kRendezvousInSoftware) {
        return {ErrorCode::kTransport,
                "the NIC left a rendezvous read to software: not supported by this receiver"};
      }
      // A rendezvous the NIC is reading completes at kDataArrived, which
      // finds it through entry_receive_.
      if (e.kind == TmEventKind::kMatchedDataFollows) return Status::ok();
      finish_by_nic(id, c, done).sender_request = c.app_context;
      return Status::ok();
    }
    case TmEventKind::kDataArrived: {
      auto it = entry_receive_.find(c.wr_id);
      if (it == entry_receive_.end()) {
        return {ErrorCode::kInternal, "rendezvous data for an unknown NIC entry"};
      }
      finish_by_nic(it->second, c, done);
      return Status::ok();
    }
    case TmEventKind::kUnexpected:
      return on_unexpected(c, e.sync_requested, done);
    case TmEventKind::kUntagged:
      ++untagged_;
      return post_buffer(static_cast<std::uint32_t>(c.wr_id));
    case TmEventKind::kFailed:
      break;
  }
  return {ErrorCode::kTransport, std::string("tag-matching completion failed: ") +
                                     ibv_wc_status_str(c.status) + " (opcode " +
                                     std::to_string(static_cast<int>(c.opcode)) + ")"};
}

Status TagMatchingReceiver::progress(std::vector<Completed>* done) {
  // One completion per start/end batch: the documented contract lets a
  // batch run until ibv_next_poll() says ENOENT and then wants
  // ibv_end_poll(), but rxe's provider (rdma-core 44) already closes the
  // batch inside that failing ibv_next_poll(), so the end_poll moves the
  // consumer index past the producer and the CQ -- and every QP on it --
  // goes to the error state. Seen on rxe0 in the VM; a single-entry batch
  // is correct under both readings.
  std::vector<TmCompletion> batch;
  for (int i = 0; i < 64; ++i) {
    ibv_poll_cq_attr attr{};
    const int rc = ibv_start_poll(cq_.get(), &attr);
    if (rc == ENOENT) break;
    if (rc != 0) return verbs_error("ibv_start_poll", rc);
    TmCompletion c;
    c.wr_id = cq_->wr_id;
    c.status = cq_->status;
    c.opcode = ibv_wc_read_opcode(cq_.get());
    c.flags = static_cast<unsigned>(ibv_wc_read_wc_flags(cq_.get()));
    c.byte_len = ibv_wc_read_byte_len(cq_.get());
    if (options_.hardware) {
      ibv_wc_tm_info info{};
      ibv_wc_read_tm_info(cq_.get(), &info);
      c.tag = info.tag;
      c.app_context = info.priv;
    }
    ibv_end_poll(cq_.get());
    batch.push_back(c);
  }
  Status first = Status::ok();
  for (const TmCompletion& c : batch) {
    if (Status s = handle(c, done); !s && first) first = s;
  }
  matcher_.end_of_batch();
  if (Status s = post_ops(); !s) return s;
  return first;
}

}  // namespace tagwire::verbs
