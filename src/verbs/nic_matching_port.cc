#include "verbs/nic_matching_port.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "common/log.h"
#include "verbs/tm_header.h"

namespace tagwire::verbs {

using matching::NicOp;

std::size_t encode_port_message_into(std::optional<std::uint64_t> tag,
                                     std::span<const std::uint8_t> header,
                                     std::span<const std::uint8_t> payload,
                                     std::span<std::uint8_t> out) {
  const std::size_t length = kTmHeaderBytes + header.size() + payload.size();
  if (length > out.size()) return 0;
  const TmHeader tmh{tag ? IBV_TMH_EAGER : IBV_TMH_NO_TAG,
                     static_cast<std::uint32_t>(header.size()), tag.value_or(0)};
  encode_tm_header(tmh, out.first<kTmHeaderBytes>());
  if (!header.empty()) std::memcpy(out.data() + kTmHeaderBytes, header.data(), header.size());
  if (!payload.empty()) {
    std::memcpy(out.data() + kTmHeaderBytes + header.size(), payload.data(), payload.size());
  }
  return length;
}

std::vector<std::uint8_t> encode_port_message(std::optional<std::uint64_t> tag,
                                              std::span<const std::uint8_t> header,
                                              std::span<const std::uint8_t> payload) {
  std::vector<std::uint8_t> out(kTmHeaderBytes + header.size() + payload.size());
  encode_port_message_into(tag, header, payload, out);
  return out;
}

std::optional<PortMessage> split_port_message(std::uint32_t header_length,
                                              std::span<const std::uint8_t> body) {
  if (header_length > body.size()) return std::nullopt;
  return PortMessage{body.first(header_length), body.subspan(header_length)};
}

Result<std::unique_ptr<NicMatchingPort>> NicMatchingPort::create(
    const Device& device, const NicMatchingPortOptions& options) {
  const DeviceCaps& caps = device.caps();
  if (!caps.tm_rc) {
    return Status{ErrorCode::kConfig,
                  "device " + caps.name + " has no tag matching (no IBV_TM_CAP_RC)"};
  }
  NicMatchingPortOptions granted = options;
  granted.entries = std::min(options.entries, caps.tm_max_tags);
  auto srq = create_verbs_tm_srq(device, true, granted.unexpected_buffers, granted.entries,
                                 options.events);
  if (!srq) return srq.status();
  return create_with(granted, std::move(srq).value(), &device);
}

Result<std::unique_ptr<NicMatchingPort>> NicMatchingPort::create_with(
    const NicMatchingPortOptions& options, std::unique_ptr<TmSrq> srq, const Device* device) {
  std::unique_ptr<NicMatchingPort> port(new NicMatchingPort());
  port->options_ = options;
  port->entry_pool_.assign(std::size_t{options.entries} * options.message_bytes, 0);
  port->srq_pool_.assign(std::size_t{options.unexpected_buffers} * port->srq_buffer_bytes(), 0);
  std::uint32_t entries_lkey = 0;
  std::uint32_t srq_lkey = 0;
  if (device != nullptr) {
    auto entries_mr = register_memory(*device, port->entry_pool_.data(), port->entry_pool_.size(),
                                      IBV_ACCESS_LOCAL_WRITE);
    if (!entries_mr) return entries_mr.status();
    port->entry_mr_ = std::move(entries_mr).value();
    auto srq_mr = register_memory(*device, port->srq_pool_.data(), port->srq_pool_.size(),
                                  IBV_ACCESS_LOCAL_WRITE);
    if (!srq_mr) return srq_mr.status();
    port->srq_mr_ = std::move(srq_mr).value();
    entries_lkey = port->entry_mr_->lkey;
    srq_lkey = port->srq_mr_->lkey;
  }
  TAGWIRE_RETURN_IF_ERROR(port->start(std::move(srq), entries_lkey, srq_lkey));
  return port;
}

Status NicMatchingPort::start(std::unique_ptr<TmSrq> srq, std::uint32_t entries_lkey,
                              std::uint32_t srq_lkey) {
  srq_ = std::move(srq);
  lkey_entries_ = entries_lkey;
  lkey_srq_ = srq_lkey;
  for (std::uint32_t slot = options_.entries; slot > 0; --slot) free_slots_.push_back(slot - 1);
  for (std::uint32_t i = 0; i < options_.unexpected_buffers; ++i) {
    TAGWIRE_RETURN_IF_ERROR(post_srq_buffer(i));
  }
  return Status::ok();
}

NicMatchingPort::~NicMatchingPort() {
  srq_.reset();  // the SRQ goes before the memory its buffers name
}

std::uint32_t NicMatchingPort::srq_buffer_bytes() const {
  return static_cast<std::uint32_t>(kTmHeaderBytes) + options_.message_bytes;
}

std::uint8_t* NicMatchingPort::entry_buffer(std::uint32_t slot) {
  return entry_pool_.data() + std::size_t{slot} * options_.message_bytes;
}

std::uint8_t* NicMatchingPort::srq_buffer(std::uint32_t index) {
  return srq_pool_.data() + std::size_t{index} * srq_buffer_bytes();
}

Status NicMatchingPort::post_srq_buffer(std::uint32_t index) {
  return srq_->post_buffer(index, {srq_buffer(index), srq_buffer_bytes(), lkey_srq_});
}

Status NicMatchingPort::post_ops(std::span<const NicOp> ops) {
  for (const NicOp& op : ops) {
    LocalBuffer add_buffer{nullptr, 0, 0};
    std::uint32_t del_handle = 0;
    std::uint32_t slot = 0;
    if (op.kind == NicOp::Kind::kAdd) {
      if (free_slots_.empty() || entries_.count(op.entry) != 0) {
        return {ErrorCode::kInternal, "NIC matching: an ADD beyond the port's entries (entry " +
                                          std::to_string(op.entry) + ")"};
      }
      slot = free_slots_.back();
      add_buffer = {entry_buffer(slot), options_.message_bytes, lkey_entries_};
    } else if (op.kind == NicOp::Kind::kDel) {
      auto it = entries_.find(op.entry);
      if (it == entries_.end()) {
        // The NIC refused the entry or consumed it, and the engine posted
        // the DEL before it heard (its ops wait while a batch of ours is
        // reported). Its handle may already name another entry: answer as
        // the NIC would, a DEL that found nothing (IBV_WC_TM_ERR).
        answered_dels_.push_back(op.entry);
        continue;
      }
      del_handle = it->second.handle;
    }
    auto handle = srq_->post_op(op, add_buffer, del_handle);
    if (!handle) return handle.status();
    if (op.kind == NicOp::Kind::kAdd) {
      free_slots_.pop_back();
      entries_.emplace(op.entry, Entry{slot, *handle});
    }
  }
  return Status::ok();
}

void NicMatchingPort::release(std::uint64_t entry) {
  auto it = entries_.find(entry);
  if (it == entries_.end()) return;
  free_slots_.push_back(it->second.slot);
  entries_.erase(it);
}

Result<unsigned> NicMatchingPort::progress(transport::NicMatchingSink& sink,
                                           transport::Receiver& receiver) {
  // DELs the port answered itself go first: they answer operations
  // posted before anything the CQ can now report.
  const std::vector<std::uint64_t> answered = std::exchange(answered_dels_, {});
  for (std::uint64_t entry : answered) {
    sink.on_tag_op_done(NicOp::Kind::kDel, entry, /*ok=*/false, /*sync_requested=*/false);
  }
  std::vector<TmCompletion> completions;
  TAGWIRE_RETURN_IF_ERROR(srq_->poll(16, &completions));
  Status first_error;
  for (const TmCompletion& c : completions) {
    Status s = handle(c, sink, receiver);
    if (!s.is_ok() && first_error.is_ok()) first_error = s;
  }
  if (!completions.empty() || !answered.empty()) sink.on_tag_batch_end();
  if (!first_error.is_ok()) return first_error;
  return static_cast<unsigned>(completions.size() + answered.size());
}

Status NicMatchingPort::handle(const TmCompletion& c, transport::NicMatchingSink& sink,
                               transport::Receiver& receiver) {
  const TmEvent e = classify_tm_completion(c);
  switch (e.kind) {
    case TmEventKind::kAddDone:
      if (!e.ok) release(c.wr_id);  // refused: the NIC never held it
      sink.on_tag_op_done(NicOp::Kind::kAdd, c.wr_id, e.ok, e.sync_requested);
      return Status::ok();
    case TmEventKind::kDelDone:
      // Gone from the NIC. A failed DEL means the NIC consumed the entry:
      // its match (reported before) released the buffer.
      if (e.ok) release(c.wr_id);
      sink.on_tag_op_done(NicOp::Kind::kDel, c.wr_id, e.ok, e.sync_requested);
      return Status::ok();
    case TmEventKind::kSyncDone:
      sink.on_tag_op_done(NicOp::Kind::kSync, 0, e.ok, e.sync_requested);
      return Status::ok();
    case TmEventKind::kMatched:
    case TmEventKind::kMatchedDataFollows:
    case TmEventKind::kRendezvousInSoftware: {
      auto it = entries_.find(c.wr_id);
      if (it == entries_.end()) {
        return {ErrorCode::kInternal,
                "NIC matching: a match for an entry not held (" + std::to_string(c.wr_id) + ")"};
      }
      // The other two kinds are a TMH rendezvous, which Tagwire does not
      // send: no message, and the engine fails the receive it took.
      std::optional<PortMessage> message;
      if (e.kind == TmEventKind::kMatched) {
        ++counters_.matched;
        const std::span<const std::uint8_t> body(entry_buffer(it->second.slot),
                                                 std::min(c.byte_len, options_.message_bytes));
        message = split_port_message(c.app_context, body);
      }
      if (!message) {
        ++counters_.malformed;
        message = PortMessage{};  // the engine fails the receive it consumed
      }
      sink.on_tag_match(c.wr_id, message->header, message->payload);
      // While the NIC still reads into the entry, its buffer waits for the
      // read's end (kDataArrived).
      if (e.kind != TmEventKind::kMatchedDataFollows) release(c.wr_id);
      return Status::ok();
    }
    case TmEventKind::kDataArrived:
      release(c.wr_id);
      return Status::ok();
    case TmEventKind::kUnexpected:
      return on_buffer(c, true, e.sync_requested, sink, receiver);
    case TmEventKind::kUntagged:
      return on_buffer(c, false, false, sink, receiver);
    case TmEventKind::kFailed:
      break;
  }
  return {ErrorCode::kTransport, "NIC matching: a failed completion (status " +
                                     std::string(ibv_wc_status_str(c.status)) + ")"};
}

Status NicMatchingPort::on_buffer(const TmCompletion& c, bool counted, bool sync_requested,
                                  transport::NicMatchingSink& sink, transport::Receiver& receiver) {
  if (c.wr_id >= options_.unexpected_buffers) {
    return {ErrorCode::kInternal,
            "NIC matching: a message in an unknown SRQ buffer (" + std::to_string(c.wr_id) + ")"};
  }
  const auto index = static_cast<std::uint32_t>(c.wr_id);
  const std::span<const std::uint8_t> bytes(srq_buffer(index),
                                            std::min(c.byte_len, srq_buffer_bytes()));
  const auto tmh = decode_tm_header(bytes);
  std::optional<PortMessage> message;
  if (tmh && tmh->op == (counted ? IBV_TMH_EAGER : IBV_TMH_NO_TAG)) {
    message = split_port_message(tmh->app_context, bytes.subspan(kTmHeaderBytes));
  }
  if (!message) {
    ++counters_.malformed;
    // A message the NIC counted as unexpected is counted by software too:
    // the engine's decode of an empty header fails, and counts it.
    if (counted) sink.on_tag_unexpected({}, {}, sync_requested);
  } else if (!counted) {
    ++counters_.untagged;
    receiver.on_message(message->header, message->payload);
  } else {
    ++counters_.unexpected;
    sink.on_tag_unexpected(message->header, message->payload, sync_requested);
  }
  return post_srq_buffer(index);
}

}  // namespace tagwire::verbs
