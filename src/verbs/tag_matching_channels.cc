#include "verbs/tag_matching_channels.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "matching/nic_tag.h"
#include "verbs/verbs_status.h"

namespace tagwire::verbs {
namespace {

// Send-side work request ids: what completed, and which slot or receive.
enum class WorkKind : std::uint64_t { kStaged = 1, kRead = 2 };
std::uint64_t work_id(WorkKind kind, std::uint32_t index) {
  return (static_cast<std::uint64_t>(kind) << 32) | index;
}
WorkKind kind_of(std::uint64_t wr_id) {
  return static_cast<WorkKind>(wr_id >> 32);
}
std::uint32_t index_of(std::uint64_t wr_id) {
  return static_cast<std::uint32_t>(wr_id);
}

constexpr std::uint32_t kFinBufferBytes = 64;  // a FIN is a TMH; room for a mistake's bytes

Result<std::uint64_t> nic_tag_of(const matching::Envelope& envelope) {
  auto tag = matching::encode_nic_tag(envelope);
  if (!tag) return Status{ErrorCode::kInvalidArgument, "envelope does not fit the 64-bit NIC tag"};
  return *tag;
}

}  // namespace

Result<std::unique_ptr<TagMatchingChannels>> TagMatchingChannels::create(
    const Device& device, int gid_index, int peers, const TagMatchingChannelOptions& options) {
  if (peers <= 0) return Status{ErrorCode::kInvalidArgument, "tag-matching channels for no peer"};
  std::unique_ptr<TagMatchingChannels> c(new TagMatchingChannels());
  c->device_ = &device;
  c->gid_index_ = gid_index;
  c->options_ = options;
  auto receiver = TagMatchingReceiver::create(device, options.receiver);
  if (!receiver) return receiver.status();
  c->receiver_ = std::move(receiver).value();
  c->receiver_->set_sink(c.get());

  const int send_cqe = static_cast<int>(options.send_depth) * peers + 16;
  c->send_cq_.reset(ibv_create_cq(device.context(), send_cqe, nullptr, nullptr, 0));
  if (!c->send_cq_) return verbs_error("ibv_create_cq(send)", errno);
  c->fin_cq_.reset(ibv_create_cq(device.context(), static_cast<int>(options.fin_buffers) + 16,
                                 nullptr, nullptr, 0));
  if (!c->fin_cq_) return verbs_error("ibv_create_cq(fin)", errno);
  ibv_srq_init_attr srq_attr{};
  srq_attr.attr.max_wr = options.fin_buffers;
  srq_attr.attr.max_sge = 1;
  c->fin_srq_.reset(ibv_create_srq(device.pd(), &srq_attr));
  if (!c->fin_srq_) return verbs_error("ibv_create_srq(fin)", errno);

  const std::size_t slot_bytes = options.receiver.buffer_bytes;
  c->staging_.assign(std::size_t{options.staging_slots} * slot_bytes +
                         std::size_t{options.fin_buffers} * kFinBufferBytes,
                     0);
  auto mr = register_memory(device, c->staging_.data(), c->staging_.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!mr) return mr.status();
  c->staging_mr_ = std::move(mr).value();
  for (std::uint32_t i = options.staging_slots; i > 0; --i) c->free_slots_.push_back(i - 1);
  for (std::uint32_t i = 0; i < options.fin_buffers; ++i) {
    if (Status s = c->post_fin_buffer(i); !s) return s;
  }

  c->peers_.resize(static_cast<std::size_t>(peers));
  for (Peer& p : c->peers_) {
    auto send = RcQueuePair::create_on_srq(device, c->send_cq_.get(), c->fin_cq_.get(),
                                           c->fin_srq_.get(), options.send_depth);
    if (!send) return send.status();
    // On a TM-SRQ the NIC owns the send queue; on a plain SRQ (software
    // path) it is as unused, so both paths build the same QPs.
    auto tagged = RcQueuePair::create_on_srq(device, c->receiver_->cq(), c->receiver_->srq(), 0);
    if (!tagged) return tagged.status();
    p.send = std::make_unique<RcQueuePair>(std::move(send).value());
    p.tagged = std::make_unique<RcQueuePair>(std::move(tagged).value());
    c->peer_of_tagged_[p.tagged->qpn()] = static_cast<PeerId>(&p - c->peers_.data());
  }
  return c;
}

TagMatchingChannels::~TagMatchingChannels() {
  // QPs before the SRQs and CQs they use, and those before the memory.
  peers_.clear();
  receiver_.reset();
  fin_srq_.reset();
  fin_cq_.reset();
  send_cq_.reset();
}

Status TagMatchingChannels::check_range(PeerId peer) const {
  if (peer < 0 || static_cast<std::size_t>(peer) >= peers_.size()) {
    return {ErrorCode::kInvalidRank, "no tag-matching channel to rank " + std::to_string(peer)};
  }
  return Status::ok();
}

Status TagMatchingChannels::check_peer(PeerId peer) const {
  TAGWIRE_RETURN_IF_ERROR(check_range(peer));
  if (!peers_[static_cast<std::size_t>(peer)].connected) {
    return {ErrorCode::kInvalidRank,
            "tag-matching channel to rank " + std::to_string(peer) + " is not connected"};
  }
  return Status::ok();
}

ChannelAddress TagMatchingChannels::address(PeerId peer) const {
  const Peer& p = peers_.at(static_cast<std::size_t>(peer));
  return {p.send->address(gid_index_), p.tagged->address(gid_index_)};
}

Status TagMatchingChannels::connect(PeerId peer, const ChannelAddress& remote) {
  TAGWIRE_RETURN_IF_ERROR(check_range(peer));
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  TAGWIRE_RETURN_IF_ERROR(p.send->connect(remote.tagged, gid_index_));
  TAGWIRE_RETURN_IF_ERROR(p.tagged->connect(remote.send, gid_index_));
  p.connected = true;
  return Status::ok();
}

std::size_t TagMatchingChannels::max_eager() const {
  return options_.receiver.buffer_bytes - kTmHeaderBytes;
}

std::uint8_t* TagMatchingChannels::fin_buffer(std::uint32_t index) {
  // After the staging slots, in the same registration.
  return staging_.data() + std::size_t{options_.staging_slots} * options_.receiver.buffer_bytes +
         std::size_t{index} * kFinBufferBytes;
}

Status TagMatchingChannels::post_fin_buffer(std::uint32_t index) {
  return post_srq_receive(fin_srq_.get(), index,
                          {fin_buffer(index), kFinBufferBytes, staging_mr_->lkey})
      .with_context("FIN buffer");
}

Status TagMatchingChannels::send_message(PeerId peer, const TmHeader& tmh,
                                         std::span<const std::uint8_t> extra,
                                         std::span<const std::uint8_t> body) {
  TAGWIRE_RETURN_IF_ERROR(check_peer(peer));
  const std::size_t slot_bytes = options_.receiver.buffer_bytes;
  const std::size_t n = kTmHeaderBytes + extra.size() + body.size();
  if (n > slot_bytes) {
    return {ErrorCode::kInvalidArgument, "a tag-matching message of " + std::to_string(n) +
                                             " bytes does not fit an SRQ buffer of " +
                                             std::to_string(slot_bytes)};
  }
  // Every slot in flight: wait for sends to complete (they do unless the
  // connection is broken, which their completions then say).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (free_slots_.empty()) {
    TAGWIRE_RETURN_IF_ERROR(poll_sends());
    if (free_slots_.empty() && std::chrono::steady_clock::now() > until) {
      return {ErrorCode::kOutOfResources, "no tag-matching send completed in 10 s"};
    }
  }
  const std::uint32_t slot = free_slots_.back();
  std::uint8_t* out = staging_.data() + std::size_t{slot} * slot_bytes;
  encode_tm_header(tmh, std::span<std::uint8_t, kTmHeaderBytes>(out, kTmHeaderBytes));
  if (!extra.empty()) std::memcpy(out + kTmHeaderBytes, extra.data(), extra.size());
  if (!body.empty()) std::memcpy(out + kTmHeaderBytes + extra.size(), body.data(), body.size());
  const Peer& p = peers_[static_cast<std::size_t>(peer)];
  const bool fits_inline = n <= p.send->max_inline();
  TAGWIRE_RETURN_IF_ERROR(p.send->post_send(work_id(WorkKind::kStaged, slot),
                                            {out, static_cast<std::uint32_t>(n), staging_mr_->lkey},
                                            true, fits_inline));
  free_slots_.pop_back();
  return Status::ok();
}

Status TagMatchingChannels::send_eager(PeerId peer, const matching::Envelope& envelope,
                                       std::uint32_t sender_request,
                                       std::span<const std::uint8_t> payload) {
  auto tag = nic_tag_of(envelope);
  if (!tag) return tag.status();
  TAGWIRE_RETURN_IF_ERROR(send_message(peer, {IBV_TMH_EAGER, sender_request, *tag}, {}, payload));
  ++counters_.eager_sent;
  return Status::ok();
}

Status TagMatchingChannels::send_rendezvous(PeerId peer, const matching::Envelope& envelope,
                                            std::uint32_t sender_request,
                                            const RendezvousHeader& data) {
  auto tag = nic_tag_of(envelope);
  if (!tag) return tag.status();
  std::uint8_t rvh[kRendezvousHeaderBytes];
  encode_rendezvous_header(data, rvh);
  TAGWIRE_RETURN_IF_ERROR(send_message(peer, {IBV_TMH_RNDV, sender_request, *tag}, rvh, {}));
  ++counters_.rendezvous_sent;
  return Status::ok();
}

Status TagMatchingChannels::send_control(PeerId peer, std::span<const std::uint8_t> bytes) {
  TAGWIRE_RETURN_IF_ERROR(send_message(peer, {IBV_TMH_NO_TAG, 0, 0}, {}, bytes));
  ++counters_.control_sent;
  return Status::ok();
}

Result<TagMatchingReceiver::ReceiveId> TagMatchingChannels::post_receive(
    const matching::ReceivePattern& pattern, LocalBuffer into, std::uint64_t cookie) {
  const std::size_t from = found_.receives.size();
  auto id = receiver_->post_receive(pattern, into, cookie, &found_.receives);
  TAGWIRE_RETURN_IF_ERROR(send_fins(found_.receives, from));
  return id;
}

Result<TagMatchingReceiver::ReceiveId> TagMatchingChannels::mreceive(
    const matching::IncomingMessage& message, LocalBuffer into, std::uint64_t cookie) {
  const std::size_t from = found_.receives.size();
  auto id = receiver_->mreceive(message, into, cookie, &found_.receives);
  TAGWIRE_RETURN_IF_ERROR(send_fins(found_.receives, from));
  return id;
}

Status TagMatchingChannels::cancel_receive(TagMatchingReceiver::ReceiveId id) {
  return receiver_->cancel(id, &found_.receives);
}

Result<bool> TagMatchingChannels::cancel_unexpected(matching::ContextId context,
                                                    matching::Rank source,
                                                    std::uint32_t sender_request) {
  const std::size_t from = found_.receives.size();
  Status drained = receiver_->drain(&found_.receives);
  TAGWIRE_RETURN_IF_ERROR(send_fins(found_.receives, from));
  TAGWIRE_RETURN_IF_ERROR(drained);
  const bool won = receiver_->cancel_unexpected(context, source, sender_request);
  ++(won ? counters_.send_cancels_won : counters_.send_cancels_lost);
  return won;
}

Result<TagMatchingChannels::PeerId> TagMatchingChannels::peer_of_tagged_qp(
    std::uint32_t qp_num) const {
  auto it = peer_of_tagged_.find(qp_num);
  if (it == peer_of_tagged_.end()) {
    return Status{ErrorCode::kInternal, "a tag-matching completion names QP " +
                                            std::to_string(qp_num) + ", which is no peer's"};
  }
  return it->second;
}

void TagMatchingChannels::on_control(std::uint32_t qp_num, std::span<const std::uint8_t> bytes) {
  auto peer = peer_of_tagged_qp(qp_num);
  found_.controls.push_back({peer ? *peer : -1, {bytes.begin(), bytes.end()}});
}

void TagMatchingChannels::on_fin(std::uint32_t /*qp_num*/, std::uint32_t app_context) {
  ++counters_.fins_received;
  found_.finished.push_back(app_context);
}

Status TagMatchingChannels::start_read(std::uint32_t qp_num, LocalBuffer into,
                                       const RendezvousHeader& header, std::uint32_t id) {
  auto peer = peer_of_tagged_qp(qp_num);
  if (!peer) return peer.status();
  TAGWIRE_RETURN_IF_ERROR(check_peer(*peer));
  ++counters_.software_reads;
  return peers_[static_cast<std::size_t>(*peer)].send->post_read(work_id(WorkKind::kRead, id), into,
                                                                 header.address, header.rkey);
}

Status TagMatchingChannels::send_fins(const std::vector<Completed>& receives, std::size_t from) {
  Status first = Status::ok();
  for (std::size_t i = from; i < receives.size(); ++i) {
    const Completed& c = receives[i];
    if (!c.needs_fin()) continue;
    // Even after a failed read: its sender must not wait forever.
    auto peer = peer_of_tagged_qp(c.qp_num);
    Status s =
        peer ? send_message(*peer, {IBV_TMH_FIN, c.sender_request, 0}, {}, {}) : peer.status();
    if (s) {
      ++counters_.fins_sent;
    } else if (first) {
      first = s.with_context("rendezvous FIN");
    }
  }
  return first;
}

Status TagMatchingChannels::poll_sends() {
  ibv_wc wc[16];
  const int n = ibv_poll_cq(send_cq_.get(), 16, wc);
  if (n < 0) return verbs_error("ibv_poll_cq(send)", -n);
  Status first = Status::ok();
  for (int i = 0; i < n; ++i) {
    const Status status =
        wc[i].status == IBV_WC_SUCCESS
            ? Status::ok()
            : Status{ErrorCode::kTransport,
                     std::string("tag-matching send failed: ") + ibv_wc_status_str(wc[i].status)};
    switch (kind_of(wc[i].wr_id)) {
      case WorkKind::kStaged:
        free_slots_.push_back(index_of(wc[i].wr_id));
        if (!status && first) first = status;
        break;
      case WorkKind::kRead: {
        const std::size_t from = found_.receives.size();
        Status s = receiver_->read_done(index_of(wc[i].wr_id), status, &found_.receives);
        if (Status f = send_fins(found_.receives, from); !f && first) first = f;
        if (!s && first) first = s;
        break;
      }
    }
  }
  return first;
}

Status TagMatchingChannels::poll_fins() {
  ibv_wc wc[16];
  const int n = ibv_poll_cq(fin_cq_.get(), 16, wc);
  if (n < 0) return verbs_error("ibv_poll_cq(fin)", -n);
  Status first = Status::ok();
  for (int i = 0; i < n; ++i) {
    const auto index = static_cast<std::uint32_t>(wc[i].wr_id);
    if (wc[i].status != IBV_WC_SUCCESS) {
      if (first) {
        first = {ErrorCode::kTransport,
                 std::string("receive on a send QP failed: ") + ibv_wc_status_str(wc[i].status)};
      }
      continue;  // the QP is in error: its buffers come back flushed
    }
    auto tmh = decode_tm_header(
        {fin_buffer(index), std::min<std::size_t>(wc[i].byte_len, kFinBufferBytes)});
    if (tmh && tmh->op == IBV_TMH_FIN) {
      on_fin(wc[i].qp_num, tmh->app_context);
    } else if (first) {
      first = {ErrorCode::kProtocol, "a message other than a FIN reached a send QP"};
    }
    if (Status s = post_fin_buffer(index); !s) return s;
  }
  return first;
}

Status TagMatchingChannels::progress(Events* events) {
  const std::size_t from = found_.receives.size();
  Status first = receiver_->progress(&found_.receives);
  if (Status s = send_fins(found_.receives, from); !s && first) first = s;
  if (Status s = poll_sends(); !s && first) first = s;
  if (Status s = poll_fins(); !s && first) first = s;
  for (Completed& c : found_.receives) events->receives.push_back(std::move(c));
  for (std::uint32_t f : found_.finished) events->finished.push_back(f);
  for (Control& c : found_.controls) events->controls.push_back(std::move(c));
  found_.clear();
  return first;
}

}  // namespace tagwire::verbs
