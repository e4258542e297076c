#include "verbs/verbs_nic_matching.h"

#include <cerrno>
#include <string>
#include <utility>

#include "common/log.h"
#include "verbs/tm_header.h"
#include "verbs/verbs_status.h"

namespace tagwire::verbs {
namespace {

// Where the engine did not take the facet (it matches in software, e.g.
// under one-sided cancel) no rank sends tagged messages: the ranks agree at
// start-up. Anything tagged arriving anyway is a peer's mistake, said loudly.
class NoSink final : public transport::NicMatchingSink {
 public:
  void on_tag_match(std::uint64_t entry, std::span<const std::uint8_t>,
                    std::span<const std::uint8_t>) override {
    TW_ERROR("verbs", "NIC matching: a match of entry " << entry << " with no engine to take it");
  }
  void on_tag_unexpected(std::span<const std::uint8_t>, std::span<const std::uint8_t>,
                         bool) override {
    TW_ERROR("verbs", "NIC matching: a tagged message, but this rank matches in software");
  }
  void on_tag_op_done(matching::NicOp::Kind, std::uint64_t, bool, bool) override {}
  void on_tag_batch_end() override {}
};

}  // namespace

Result<std::unique_ptr<VerbsNicMatching>> VerbsNicMatching::create(
    const Device& device, int gid_index, int peers, const VerbsNicMatchingOptions& options,
    std::unique_ptr<TmSrq> srq) {
  if (peers <= 0 || options.message_bytes == 0 || options.staging_slots == 0) {
    return Status{ErrorCode::kInvalidArgument, "NIC matching: no peers, messages or slots"};
  }
  std::unique_ptr<VerbsNicMatching> t(new VerbsNicMatching());
  t->options_ = options;
  t->gid_index_ = gid_index;
  NicMatchingPortOptions port_options;
  port_options.entries = options.entries;
  port_options.message_bytes = options.message_bytes;
  port_options.unexpected_buffers = options.unexpected_buffers;
  port_options.events = options.events;
  auto port = srq ? NicMatchingPort::create_with(port_options, std::move(srq), &device)
                  : NicMatchingPort::create(device, port_options);
  if (!port) return port.status();
  t->port_ = std::move(port).value();
  if (t->port_->srq() == nullptr || t->port_->cq() == nullptr) {
    return Status{ErrorCode::kInternal, "NIC matching: its SRQ has no verbs objects to attach to"};
  }

  t->send_cq_.reset(ibv_create_cq(device.context(), static_cast<int>(options.staging_slots) + 16,
                                  nullptr, nullptr, 0));
  if (!t->send_cq_) return verbs_error("ibv_create_cq (NIC matching sends)", errno);
  const std::size_t slot_bytes = kTmHeaderBytes + options.message_bytes;
  t->staging_.assign(slot_bytes * options.staging_slots, 0);
  auto mr = register_memory(device, t->staging_.data(), t->staging_.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!mr) return mr.status().with_context("NIC matching staging");
  t->staging_mr_ = std::move(mr).value();
  for (std::uint32_t i = options.staging_slots; i > 0; --i) t->free_slots_.push_back(i - 1);

  t->peers_.resize(static_cast<std::size_t>(peers));
  for (Peer& p : t->peers_) {
    // The send QP receives nothing: the engine sends no TMH rendezvous, so
    // no peer's NIC sends a FIN back on it.
    auto send =
        RcQueuePair::create(device, t->send_cq_.get(), t->send_cq_.get(), options.staging_slots, 0);
    if (!send) return send.status().with_context("NIC matching send QP");
    // On a TM-SRQ the NIC owns the send queue; on a test's plain SRQ it is
    // as unused, so both build the same QPs.
    auto tagged = RcQueuePair::create_on_srq(device, t->port_->cq(), t->port_->srq(), 0);
    if (!tagged) return tagged.status().with_context("NIC matching tagged QP");
    p.send = std::make_unique<RcQueuePair>(std::move(send).value());
    p.tagged = std::make_unique<RcQueuePair>(std::move(tagged).value());
  }
  return t;
}

VerbsNicMatching::~VerbsNicMatching() {
  peers_.clear();  // QPs before the CQs and SRQ they use
  send_cq_.reset();
  port_.reset();
}

ChannelAddress VerbsNicMatching::address(int peer) const {
  const Peer& p = peers_.at(static_cast<std::size_t>(peer));
  return {p.send->address(gid_index_), p.tagged->address(gid_index_)};
}

Status VerbsNicMatching::connect(int peer, const ChannelAddress& remote) {
  if (peer < 0 || static_cast<std::size_t>(peer) >= peers_.size()) {
    return {ErrorCode::kInvalidRank, "NIC matching: no rank " + std::to_string(peer)};
  }
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  TAGWIRE_RETURN_IF_ERROR(p.send->connect(remote.tagged, gid_index_));
  TAGWIRE_RETURN_IF_ERROR(p.tagged->connect(remote.send, gid_index_));
  p.connected = true;
  return Status::ok();
}

std::span<std::uint8_t> VerbsNicMatching::slot(std::uint32_t index) {
  const std::size_t bytes = kTmHeaderBytes + options_.message_bytes;
  return {staging_.data() + std::size_t{index} * bytes, bytes};
}

Status VerbsNicMatching::post(int peer, std::uint32_t index, std::size_t length) {
  const LocalBuffer data{slot(index).data(), static_cast<std::uint32_t>(length), staging_mr_->lkey};
  TAGWIRE_RETURN_IF_ERROR(
      peers_[static_cast<std::size_t>(peer)].send->post_send(index, data, true, false));
  ++in_flight_;
  return Status::ok();
}

Result<transport::Issued> VerbsNicMatching::send(int peer, std::optional<std::uint64_t> tag,
                                                 std::span<const std::uint8_t> header,
                                                 std::span<const std::uint8_t> payload) {
  if (peer < 0 || static_cast<std::size_t>(peer) >= peers_.size() ||
      !peers_[static_cast<std::size_t>(peer)].connected) {
    return Status{ErrorCode::kInvalidRank,
                  "NIC matching: no connection to rank " + std::to_string(peer)};
  }
  if (header.size() + payload.size() > options_.message_bytes) {
    return Status{ErrorCode::kInvalidArgument,
                  "NIC matching: a message of " + std::to_string(header.size() + payload.size()) +
                      " bytes exceeds the " + std::to_string(options_.message_bytes) +
                      " an entry holds"};
  }
  ++(tag ? counters_.tagged_sent : counters_.untagged_sent);
  if (!backlog_.empty() || free_slots_.empty()) {
    // Behind what already waits: one queue for all peers keeps each
    // peer's order. progress() posts them as SENDs complete.
    ++counters_.waited_for_slot;
    backlog_.push_back({peer, encode_port_message(tag, header, payload)});
    return transport::Issued::kDone;
  }
  const std::uint32_t index = free_slots_.back();
  const std::size_t length = encode_port_message_into(tag, header, payload, slot(index));
  TAGWIRE_RETURN_IF_ERROR(post(peer, index, length));
  free_slots_.pop_back();
  // The bytes are ours now: the caller's buffers are free at once.
  return transport::Issued::kDone;
}

// Every untagged SEND raises the receiver's event (its TM CQ reports every
// message), so `delivery` asks for nothing more.
Result<transport::Issued> VerbsNicMatching::send_untagged(transport::PeerId peer,
                                                          std::span<const std::uint8_t> header,
                                                          std::span<const std::uint8_t> payload,
                                                          transport::Completion,
                                                          transport::Delivery) {
  return send(peer, std::nullopt, header, payload);
}

Result<transport::Issued> VerbsNicMatching::send_tagged(transport::PeerId peer,
                                                        std::uint64_t nic_tag,
                                                        std::span<const std::uint8_t> header,
                                                        std::span<const std::uint8_t> payload,
                                                        transport::Completion) {
  return send(peer, nic_tag, header, payload);
}

unsigned VerbsNicMatching::poll_sends() {
  unsigned n = 0;
  ibv_wc wc[16];
  for (;;) {
    const int got = ibv_poll_cq(send_cq_.get(), 16, wc);
    if (got <= 0) break;
    for (int i = 0; i < got; ++i) {
      free_slots_.push_back(static_cast<std::uint32_t>(wc[i].wr_id));
      --in_flight_;
      if (wc[i].status != IBV_WC_SUCCESS && wc[i].status != IBV_WC_WR_FLUSH_ERR) {
        ++counters_.send_errors;
        TW_ERROR("verbs", "NIC matching SEND: " << ibv_wc_status_str(wc[i].status));
      }
    }
    n += static_cast<unsigned>(got);
  }
  return n;
}

unsigned VerbsNicMatching::send_backlog() {
  unsigned n = 0;
  while (!backlog_.empty() && !free_slots_.empty()) {
    Waiting& w = backlog_.front();
    const std::uint32_t index = free_slots_.back();
    std::span<std::uint8_t> into = slot(index);
    std::copy(w.bytes.begin(), w.bytes.end(), into.begin());
    if (Status s = post(w.peer, index, w.bytes.size()); !s.is_ok()) {
      ++counters_.send_errors;
      TW_ERROR("verbs",
               "NIC matching: a waiting message to rank " << w.peer << ": " << s.to_string());
    } else {
      free_slots_.pop_back();
    }
    backlog_.pop_front();
    ++n;
  }
  return n;
}

Status VerbsNicMatching::request_event() {
  ibv_cq* cq = port_->cq();  // checked at create(); the compiler cannot know
  if (cq == nullptr) return {ErrorCode::kInternal, "NIC matching: no CQ to ask for events"};
  if (int rc = ibv_req_notify_cq(cq, 0); rc != 0) {
    return verbs_error("ibv_req_notify_cq (tag matching)", rc);
  }
  return Status::ok();
}

unsigned VerbsNicMatching::progress(transport::Receiver& receiver) {
  unsigned n = poll_sends();
  if (!backlog_.empty()) n += send_backlog();
  static NoSink no_sink;
  auto polled = port_->progress(sink_ != nullptr ? *sink_ : no_sink, receiver);
  if (!polled) {
    TW_ERROR("verbs", "NIC matching: " << polled.status().to_string());
    return n;
  }
  return n + *polled;
}

}  // namespace tagwire::verbs
