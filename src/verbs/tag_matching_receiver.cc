#include "verbs/tag_matching_receiver.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

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
  TagMatchingOptions granted = options;
  granted.nic_entries = options.hardware ? std::min(options.nic_entries, caps.tm_max_tags) : 0;
  auto srq = create_verbs_tm_srq(device, granted.hardware, granted.buffers, granted.nic_entries);
  if (!srq) return srq.status();
  std::unique_ptr<TagMatchingReceiver> r(new TagMatchingReceiver());
  r->pool_.assign(std::size_t{options.buffers} * options.buffer_bytes, 0);
  auto mr = register_memory(device, r->pool_.data(), r->pool_.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!mr) return mr.status();
  r->pool_mr_ = std::move(mr).value();
  TAGWIRE_RETURN_IF_ERROR(r->start(granted, std::move(srq).value(), r->pool_mr_->lkey));
  return r;
}

Result<std::unique_ptr<TagMatchingReceiver>> TagMatchingReceiver::create_with(
    const TagMatchingOptions& options, std::unique_ptr<TmSrq> srq) {
  std::unique_ptr<TagMatchingReceiver> r(new TagMatchingReceiver());
  r->pool_.assign(std::size_t{options.buffers} * options.buffer_bytes, 0);
  TagMatchingOptions granted = options;
  if (!options.hardware) granted.nic_entries = 0;
  TAGWIRE_RETURN_IF_ERROR(r->start(granted, std::move(srq), 0));
  return r;
}

Status TagMatchingReceiver::start(const TagMatchingOptions& options, std::unique_ptr<TmSrq> srq,
                                  std::uint32_t pool_lkey) {
  options_ = options;
  matcher_ = matching::OffloadedMatcher(options.nic_entries);
  srq_ = std::move(srq);
  pool_lkey_ = pool_lkey;
  for (std::uint32_t i = 0; i < options.buffers; ++i) TAGWIRE_RETURN_IF_ERROR(post_buffer(i));
  return Status::ok();
}

TagMatchingReceiver::~TagMatchingReceiver() {
  // The SRQ goes before the memory its buffers name.
  srq_.reset();
}

Status TagMatchingReceiver::post_buffer(std::uint32_t index) {
  return srq_->post_buffer(index, {pool_.data() + std::size_t{index} * options_.buffer_bytes,
                                   options_.buffer_bytes, pool_lkey_});
}

Status TagMatchingReceiver::post_ops() {
  for (const NicOp& op : matcher_.take_ops()) {
    LocalBuffer add_buffer{nullptr, 0, 0};
    std::uint32_t del_handle = 0;
    if (op.kind == NicOp::Kind::kAdd) add_buffer = receives_[entry_receive_.at(op.entry)].buffer;
    if (op.kind == NicOp::Kind::kDel) del_handle = entry_handle_.at(op.entry);
    auto handle = srq_->post_op(op, add_buffer, del_handle);
    if (!handle) return handle.status();
    if (op.kind == NicOp::Kind::kAdd) entry_handle_[op.entry] = *handle;
  }
  return Status::ok();
}

TagMatchingReceiver::ReceiveId TagMatchingReceiver::new_receive(LocalBuffer into,
                                                                std::uint64_t cookie,
                                                                const ReceivePattern& pattern) {
  ReceiveId id;
  if (!free_receives_.empty()) {
    id = free_receives_.back();
    free_receives_.pop_back();
  } else {
    id = static_cast<ReceiveId>(receives_.size());
    receives_.emplace_back();
  }
  receives_[id] = Receive{into, cookie, true, false, pattern, {}, {}};
  return id;
}

Result<TagMatchingReceiver::ReceiveId> TagMatchingReceiver::mreceive(const IncomingMessage& message,
                                                                     LocalBuffer into,
                                                                     std::uint64_t cookie,
                                                                     std::vector<Completed>* done) {
  if (!stored_.contains(message.cookie)) {
    return Status{ErrorCode::kInvalidRequest, "mreceive of a message mprobe did not return"};
  }
  const ReceiveId id = new_receive(
      into, cookie, {message.envelope.context, message.envelope.source, message.envelope.tag});
  deliver_stored(id, message, done);
  return id;
}

Result<TagMatchingReceiver::ReceiveId> TagMatchingReceiver::post_receive(
    const ReceivePattern& pattern, LocalBuffer into, std::uint64_t cookie,
    std::vector<Completed>* done) {
  const ReceiveId id = new_receive(into, cookie, pattern);
  Receive& r = receives_[id];
  // Where the NIC hands a rendezvous back to software it leaves the RVH in
  // the receive's buffer: one too small for it stays in software.
  matching::PostResult posted =
      matcher_.post_receive(pattern, id, into.length >= kRendezvousHeaderBytes);
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

bool TagMatchingReceiver::cancel_unexpected(matching::ContextId context, matching::Rank source,
                                            std::uint32_t sender_request) {
  auto taken = matcher_.cancel_unexpected(context, source, sender_request);
  if (!taken) return false;
  stored_.erase(taken->cookie);
  return true;
}

void TagMatchingReceiver::deliver_stored(ReceiveId id, const IncomingMessage& message,
                                         std::vector<Completed>* done) {
  auto node = stored_.extract(message.cookie);
  Receive& r = receives_[id];
  r.result.envelope = message.envelope;
  if (node.empty()) {
    finish(id, done).error = {ErrorCode::kInternal, "a matched message's data is missing"};
    return;
  }
  const Stored& s = node.mapped();
  r.result.sender_request = s.sender_request;
  r.result.qp_num = s.qp_num;
  if (s.rendezvous) {
    begin_read(id, s.rendezvous_header, done);
    return;
  }
  const LocalBuffer buffer = r.buffer;
  const std::size_t n = std::min<std::size_t>(s.payload.size(), buffer.length);
  if (n > 0) std::memcpy(buffer.address, s.payload.data(), n);
  Completed& c = finish(id, done);
  c.truncated = s.payload.size() > buffer.length;
  c.length = static_cast<std::uint32_t>(n);
}

void TagMatchingReceiver::begin_read(ReceiveId id, const RendezvousHeader& header,
                                     std::vector<Completed>* done) {
  Receive& r = receives_[id];
  const std::uint32_t n = std::min(header.length, r.buffer.length);
  r.result.rendezvous = true;
  r.result.truncated = header.length > r.buffer.length;
  r.result.length = n;
  if (n == 0) {
    finish(id, done);
    return;
  }
  if (sink_ == nullptr) {
    finish(id, done).error = {ErrorCode::kTransport,
                              "a rendezvous reached software but nothing can read it (no sink)"};
    return;
  }
  r.reading = true;
  ++software_reads_;
  Status s = sink_->start_read(r.result.qp_num, {r.buffer.address, n, r.buffer.lkey}, header, id);
  if (!s) finish(id, done).error = s.with_context("rendezvous read");
}

Status TagMatchingReceiver::read_done(ReceiveId id, const Status& status,
                                      std::vector<Completed>* done) {
  if (id >= receives_.size() || !receives_[id].active || !receives_[id].reading) {
    return {ErrorCode::kInternal,
            "read_done for receive " + std::to_string(id) + ", which is not reading"};
  }
  Completed& c = finish(id, done);
  if (!status) c.error = status;
  return Status::ok();
}

TagMatchingReceiver::Completed& TagMatchingReceiver::finish(ReceiveId id,
                                                            std::vector<Completed>* done) {
  Receive& r = receives_[id];
  r.active = false;
  r.reading = false;
  free_receives_.push_back(id);
  Completed& c = done->emplace_back(std::exchange(r.result, Completed{}));
  c.id = id;
  c.cookie = r.cookie;
  return c;
}

void TagMatchingReceiver::forget_entry(std::uint64_t entry) {
  entry_receive_.erase(entry);
  entry_handle_.erase(entry);
}

Status TagMatchingReceiver::on_buffer(const TmCompletion& c, bool counted, bool sync_requested,
                                      std::vector<Completed>* done) {
  const auto index = static_cast<std::uint32_t>(c.wr_id);
  if (index >= options_.buffers) {
    return {ErrorCode::kInternal, "a completion names SRQ buffer " + std::to_string(index)};
  }
  std::span<const std::uint8_t> bytes(pool_.data() + std::size_t{index} * options_.buffer_bytes,
                                      std::min<std::size_t>(c.byte_len, options_.buffer_bytes));
  auto tmh = decode_tm_header(bytes);
  Status result = Status::ok();
  if (!tmh) {
    // Counted (the NIC counts it too) but not matchable: say so loudly.
    if (counted) matcher_.on_unmatchable(sync_requested);
    result = {ErrorCode::kTransport, "a message on the tag-matching SRQ has no valid TMH"};
  } else {
    switch (tmh->op) {
      case IBV_TMH_NO_TAG:
        ++untagged_;
        if (counted) matcher_.on_unmatchable(sync_requested);
        if (sink_ != nullptr) sink_->on_control(c.qp_num, bytes.subspan(kTmHeaderBytes));
        break;
      case IBV_TMH_FIN:
        if (counted) matcher_.on_unmatchable(sync_requested);
        if (sink_ != nullptr) sink_->on_fin(c.qp_num, tmh->app_context);
        break;
      case IBV_TMH_EAGER:
      case IBV_TMH_RNDV:
        result = on_tagged(*tmh, bytes.subspan(kTmHeaderBytes), c, sync_requested, done);
        break;
    }
  }
  // Everything needed is copied out (or handed to the sink) by now.
  if (Status s = post_buffer(index); !s) return s;
  return result;
}

Status TagMatchingReceiver::on_tagged(const TmHeader& tmh, std::span<const std::uint8_t> body,
                                      const TmCompletion& c, bool sync_requested,
                                      std::vector<Completed>* done) {
  Stored s;
  s.sender_request = tmh.app_context;
  s.qp_num = c.qp_num;
  std::size_t length = 0;
  if (tmh.op == IBV_TMH_RNDV) {
    auto rvh = decode_rendezvous_header(body);
    if (!rvh) {
      matcher_.on_unmatchable(sync_requested);
      return {ErrorCode::kTransport, "a rendezvous request without its RVH"};
    }
    s.rendezvous = true;
    s.rendezvous_header = *rvh;
    length = rvh->length;
  } else {
    s.payload.assign(body.begin(), body.end());
    length = s.payload.size();
  }
  const std::uint64_t cookie = next_cookie_++;
  stored_.emplace(cookie, std::move(s));
  IncomingMessage m{matching::decode_nic_tag(tmh.tag), tmh.app_context, length, cookie};
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
      const auto id = static_cast<ReceiveId>(match->receive_cookie);
      Receive& r = receives_[id];
      r.result.by_nic = true;
      r.result.envelope = matching::decode_nic_tag(c.tag);
      r.result.sender_request = c.app_context;
      r.result.qp_num = c.qp_num;
      if (e.kind == TmEventKind::kMatched) {
        forget_entry(c.wr_id);
        finish(id, done).length = c.byte_len;
        return Status::ok();
      }
      if (e.kind == TmEventKind::kMatchedDataFollows) {
        // The NIC reads; kDataArrived finds the receive by its entry.
        r.reading = true;
        r.result.rendezvous = true;
        r.result.read_by_nic = true;
        return Status::ok();
      }
      // IBV_WC_TM_RNDV_INCOMPLETE: matched, but the read is software's.
      // Our reading of the contract: the RVH is in the receive's buffer
      // (never seen on hardware; post_receive keeps smaller ones out).
      forget_entry(c.wr_id);
      auto rvh = decode_rendezvous_header(
          {static_cast<const std::uint8_t*>(r.buffer.address), r.buffer.length});
      if (!rvh) {
        finish(id, done).error = {ErrorCode::kTransport,
                                  "the NIC handed back a rendezvous without its RVH"};
        return Status::ok();
      }
      begin_read(id, *rvh, done);
      return Status::ok();
    }
    case TmEventKind::kDataArrived: {
      auto it = entry_receive_.find(c.wr_id);
      if (it == entry_receive_.end() || !receives_[it->second].reading) {
        return {ErrorCode::kInternal, "rendezvous data for an unknown NIC entry"};
      }
      const ReceiveId id = it->second;
      forget_entry(c.wr_id);
      finish(id, done).length = c.byte_len;
      return Status::ok();
    }
    case TmEventKind::kUnexpected:
      return on_buffer(c, true, e.sync_requested, done);
    case TmEventKind::kUntagged:
      return on_buffer(c, false, e.sync_requested, done);
    case TmEventKind::kFailed:
      break;
  }
  return {ErrorCode::kTransport, std::string("tag-matching completion failed: ") +
                                     ibv_wc_status_str(c.status) + " (opcode " +
                                     std::to_string(static_cast<int>(c.opcode)) + ")"};
}

Status TagMatchingReceiver::progress(std::vector<Completed>* done) {
  unsigned polled = 0;
  return poll(done, &polled);
}

Status TagMatchingReceiver::drain(std::vector<Completed>* done) {
  // Bounded: a peer that keeps sending cannot hold a cancel here forever;
  // what arrives after the first empty poll came after the question.
  for (int i = 0; i < 1024; ++i) {
    unsigned polled = 0;
    if (Status s = poll(done, &polled); !s) return s;
    if (polled == 0) return Status::ok();
  }
  return Status::ok();
}

Status TagMatchingReceiver::poll(std::vector<Completed>* done, unsigned* polled) {
  std::vector<TmCompletion> batch;
  TAGWIRE_RETURN_IF_ERROR(srq_->poll(64, &batch));
  *polled = static_cast<unsigned>(batch.size());
  Status first = Status::ok();
  for (const TmCompletion& c : batch) {
    if (Status s = handle(c, done); !s && first) first = s;
  }
  matcher_.end_of_batch();
  if (Status s = post_ops(); !s) return s;
  return first;
}

}  // namespace tagwire::verbs
