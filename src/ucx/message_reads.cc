#include "ucx/message_reads.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "common/log.h"
#include "ucx/ucx_status.h"

namespace tagwire::ucx {

using transport::Completion;
using transport::Issued;
using transport::PeerId;

namespace {

// Active-message ids beside the transport's own (17).
constexpr unsigned kRequestId = 18;  // "send me these bytes"
constexpr unsigned kAnswerId = 19;   // the bytes, or a refusal

// A read goes in pieces, several in flight. A piece's answer fits one
// segment of UCX's TCP transport (create_ucx_transport sets
// UCX_TCP_TX_SEG_SIZE to 64 KiB), headers included, so UCX hands it over
// where it received it and it is copied once; a larger answer UCX first
// reassembles in a buffer of its own (a second copy, and memory as large
// as the answer). osu_p2p bw over loopback TCP, one size per run, 3
// interleaved runs each (2026-11-30): 256 KiB messages as one piece
// 2.2-2.9 GB/s, in 60 KB pieces 4.6-5.0; 1 MiB messages in 1 MiB pieces
// 2.6-2.8, in 60 KB pieces 3.9-4.5. 16 pieces (1 MiB) in flight kept up
// as well as 32. Against UCX's emulated get, warm (a sweep from 8 B):
// level (64 KiB to 1 MiB within 5 %), and 6-13 % less latency from 64 KiB
// to 1 MiB; docs/measurements.md has the figures.
constexpr std::uint64_t kPiece = 60 * 1024;
constexpr std::uint64_t kPiecesInFlight = 16;

struct AnswerHeader {
  std::uint64_t token;
  std::uint64_t offset;
  std::uint32_t refused;  // 1: not memory the owner registered; no bytes follow
  std::uint32_t unused;
};

template <typename T>
std::span<const std::uint8_t> bytes_of(const T& t) {
  return {reinterpret_cast<const std::uint8_t*>(&t), sizeof(T)};
}

}  // namespace

struct MessageReads::RequestHeader {
  std::uint64_t token;   // the reader's, echoed in the answer
  std::uint64_t offset;  // of this piece in the read, echoed too
  std::uint64_t address;
  std::uint64_t length;
};

void ReadableRegions::add(std::uint64_t address, std::size_t length) {
  regions_.emplace(address, address + length);
}

void ReadableRegions::remove(std::uint64_t address, std::size_t length) {
  auto [first, last] = regions_.equal_range(address);
  for (auto it = first; it != last; ++it) {
    if (it->second == address + length) {
      regions_.erase(it);
      return;
    }
  }
}

bool ReadableRegions::covers(std::uint64_t address, std::uint64_t length) const {
  if (address + length < address) return false;  // wraps around
  // Every region starting at or below `address`, nearest first: a few live
  // registrations (rendezvous buffers in flight, windows), so a walk.
  for (auto it = regions_.upper_bound(address); it != regions_.begin();) {
    --it;
    if (it->second >= address + length) return true;
  }
  return false;
}

MessageReads::MessageReads(ucp_worker_h worker, transport::TransportCounters* counters)
    : worker_(worker), counters_(counters) {}

Status MessageReads::install_handlers() {
  for (auto [id, cb] : {std::pair{kRequestId, &MessageReads::on_request},
                        std::pair{kAnswerId, &MessageReads::on_answer}}) {
    ucp_am_handler_param_t param{};
    param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                       UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    param.id = id;
    param.flags = UCP_AM_FLAG_WHOLE_MSG;
    param.cb = cb;
    param.arg = this;
    ucs_status_t s = ucp_worker_set_am_recv_handler(worker_, &param);
    if (s != UCS_OK) return ucx_error("ucp_worker_set_am_recv_handler", s);
  }
  return Status::ok();
}

Result<Issued> MessageReads::read(ucp_ep_h ep, PeerId peer, std::span<std::uint8_t> local,
                                  std::uint64_t remote_address, Completion done) {
  if (local.empty()) return Issued::kDone;
  const std::uint64_t token = next_token_++;
  Pending& p =
      pending_
          .emplace(token, Pending{peer, ep, local.data(), local.size(), remote_address, 0, 0, done})
          .first->second;
  Status s = ask(p, token);
  if (!s.is_ok()) {
    pending_.erase(token);
    return s;
  }
  return Issued::kPending;
}

Status MessageReads::ask(Pending& p, std::uint64_t token) {
  while (p.asked < p.length && p.asked - p.answered < kPiece * kPiecesInFlight) {
    const std::uint64_t n = std::min<std::uint64_t>(kPiece, p.length - p.asked);
    const RequestHeader h{token, p.asked, p.remote_address + p.asked, n};
    // The answer comes on the reader's endpoint (UCP_AM_SEND_FLAG_REPLY):
    // the owner need not have one to us yet, nor know our rank.
    Status s = send(p.ep, kRequestId, bytes_of(h), nullptr, 0,
                    UCP_AM_SEND_FLAG_EAGER | UCP_AM_SEND_FLAG_REPLY);
    if (!s.is_ok()) return s.with_context("asking for a read");
    p.asked += n;
  }
  return Status::ok();
}

void MessageReads::peer_failed(PeerId peer) {
  std::vector<std::uint64_t> failed;
  for (const auto& [token, p] : pending_) {
    if (p.peer == peer) failed.push_back(token);
  }
  const Status why(ErrorCode::kPeerFailed, "rank " + std::to_string(peer) + " died");
  for (std::uint64_t token : failed) finish(token, why);
}

Status MessageReads::send(ucp_ep_h ep, unsigned id, std::span<const std::uint8_t> header,
                          const void* data, std::size_t length, std::uint32_t flags) {
  static_assert(sizeof(RequestHeader) <= sizeof(Ticket::bytes) &&
                sizeof(AnswerHeader) <= sizeof(Ticket::bytes));
  Ticket* out = take_ticket();
  std::memcpy(out->bytes, header.data(), header.size());
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.cb.send = &MessageReads::on_sent;
  param.user_data = out;
  param.flags = flags;
  ucs_status_ptr_t request =
      ucp_am_send_nbx(ep, id, out->bytes, header.size(), data, length, &param);
  if (request == nullptr || UCS_PTR_IS_ERR(request)) free_tickets_.push_back(out);
  if (UCS_PTR_IS_ERR(request)) return ucx_error("ucp_am_send_nbx", UCS_PTR_STATUS(request));
  return Status::ok();
}

MessageReads::Ticket* MessageReads::take_ticket() {
  if (free_tickets_.empty()) {
    return tickets_.emplace_back(std::make_unique<Ticket>(Ticket{{}, this})).get();
  }
  Ticket* ticket = free_tickets_.back();
  free_tickets_.pop_back();
  return ticket;
}

void MessageReads::on_sent(void* request, ucs_status_t status, void* user_data) {
  auto* out = static_cast<Ticket*>(user_data);
  ucp_request_free(request);
  MessageReads* self = out->owner;
  if (self->closing_) return;  // tickets_ frees it with us
  self->free_tickets_.push_back(out);
  // A request that failed leaves its read to the peer's death (peer_failed);
  // an answer that failed had a reader that died. Neither is ours to report.
  if (status != UCS_OK) {
    TW_DEBUG("ucx", "a read's message failed: " << ucs_status_string(status));
  }
}

ucs_status_t MessageReads::on_request(void* arg, const void* header, std::size_t header_length,
                                      void* /*data*/, std::size_t /*length*/,
                                      const ucp_am_recv_param_t* param) {
  auto* self = static_cast<MessageReads*>(arg);
  if (header_length != sizeof(RequestHeader) ||
      (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) == 0) {
    TW_ERROR("ucx", "dropping a malformed read request (" << header_length << " header bytes)");
    return UCS_OK;
  }
  RequestHeader h;
  std::memcpy(&h, header, sizeof h);
  self->answer(param->reply_ep, h);
  return UCS_OK;
}

void MessageReads::answer(ucp_ep_h reader, const RequestHeader& request) {
  if (closing_) return;
  const std::uint64_t address = request.address;
  const std::uint64_t length = request.length;
  const bool readable = regions_->covers(address, length);
  if (!readable) {
    TW_WARN("ucx", "refused a peer's read of " << length << " B at 0x" << std::hex << address
                                               << std::dec << ": not memory registered here");
  }
  const AnswerHeader h{request.token, request.offset, readable ? 0u : 1u, 0};
  // Eagerly, whatever the size: the reader gets the answer whole in one
  // callback (UCX reassembles the fragments) and copies it. UCX's own
  // rendezvous for active messages over TCP was slower: 4 MiB messages
  // 1.9 GB/s against 2.9 eager on loopback (osu_p2p bw, 3 runs each).
  Status s = send(reader, kAnswerId, bytes_of(h),
                  readable ? reinterpret_cast<const void*>(address) : nullptr,
                  readable ? length : 0, UCP_AM_SEND_FLAG_EAGER);
  if (!s.is_ok()) {
    TW_DEBUG("ucx", "answering a read failed: " << s.to_string());
  } else if (readable) {
    counters_->bytes_helped += length;
  }
}

ucs_status_t MessageReads::on_answer(void* arg, const void* header, std::size_t header_length,
                                     void* data, std::size_t length,
                                     const ucp_am_recv_param_t* param) {
  auto* self = static_cast<MessageReads*>(arg);
  if (header_length != sizeof(AnswerHeader)) {
    TW_ERROR("ucx", "dropping a malformed read answer (" << header_length << " header bytes)");
    return UCS_OK;
  }
  AnswerHeader h;
  std::memcpy(&h, header, sizeof h);
  auto it = self->pending_.find(h.token);
  // A read that failed with its peer's death, or a transport closing.
  if (it == self->pending_.end() || self->closing_) return UCS_OK;
  Pending& p = it->second;
  if (h.refused != 0) {
    self->finish(h.token, Status(ErrorCode::kInvalidArgument,
                                 "rank " + std::to_string(p.peer) +
                                     " refused the read: not memory it registered"));
    return UCS_OK;
  }
  if (h.offset >= p.length || length != std::min<std::uint64_t>(kPiece, p.length - h.offset)) {
    self->finish(h.token, Status(ErrorCode::kInternal,
                                 "a read of " + std::to_string(p.length) + " B was answered with " +
                                     std::to_string(length) + " at " + std::to_string(h.offset)));
    return UCS_OK;
  }
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
    // Answers are sent eagerly (answer()); returning without taking it
    // cancels UCX's rendezvous.
    self->finish(h.token, Status(ErrorCode::kInternal, "a read was answered by rendezvous"));
    return UCS_OK;
  }
  std::memcpy(p.into + h.offset, data, length);
  p.answered += length;
  if (p.answered == p.length) {
    self->finish(h.token, Status::ok());
    return UCS_OK;
  }
  Status s = self->ask(p, h.token);
  if (!s.is_ok()) self->finish(h.token, s);
  return UCS_OK;
}

void MessageReads::finish(std::uint64_t token, const Status& status) {
  auto it = pending_.find(token);
  if (it == pending_.end()) return;
  const Completion done = it->second.done;
  if (status.is_ok()) counters_->bytes_helped_by_peers += it->second.length;
  pending_.erase(it);
  done(status);
}

bool reads_are_emulated(ucp_ep_h ep) {
  char* text = nullptr;
  std::size_t size = 0;
  FILE* f = open_memstream(&text, &size);
  if (f == nullptr) return false;
  ucp_ep_print_info(ep, f);
  std::fclose(f);
  const std::string info(text, size);
  std::free(text);
  bool lanes = false;
  std::size_t at = 0;
  while ((at = info.find("lane[", at)) != std::string::npos) {
    const std::size_t end = info.find('\n', at);
    const std::string_view line(info.data() + at,
                                (end == std::string::npos ? info.size() : end) - at);
    lanes = true;
    if (line.find(" rma") != std::string_view::npos) return false;
    at += 5;
  }
  return lanes;
}

}  // namespace tagwire::ucx
