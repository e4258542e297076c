#include "ucx/message_rma.h"

#include <algorithm>
#include <atomic>
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
using transport::RemoteAccess;

namespace {

// Active-message ids beside the transport's own (17).
constexpr unsigned kRequestId = 18;  // read, write (bytes follow) or CAS
constexpr unsigned kAnswerId = 19;   // its answer (a read's bytes follow)

// Reads and writes go in pieces, several in flight. A piece fits one
// segment of UCX's TCP transport (create_ucx_transport sets
// UCX_TCP_TX_SEG_SIZE to 64 KiB), headers included, so UCX hands it over
// where it received it and it is copied once; a larger message UCX first
// reassembles in a buffer of its own (a second copy, and memory as large
// as the message). osu_p2p bw over loopback TCP, one size per run, 3
// interleaved runs each (2026-11-30): 256 KiB reads as one piece
// 2.2-2.9 GB/s, in 60 KB pieces 4.6-5.0; 1 MiB reads in 1 MiB pieces
// 2.6-2.8, in 60 KB pieces 3.9-4.5. 16 pieces (1 MiB) in flight kept up
// as well as 32. Against UCX's emulated get, warm (a sweep from 8 B):
// level (64 KiB to 1 MiB within 5 %), and 6-13 % less latency from 64 KiB
// to 1 MiB; docs/measurements.md has the figures.
constexpr std::uint64_t kPiece = 60 * 1024;
constexpr std::uint64_t kPiecesInFlight = 16;

struct AnswerHeader {
  std::uint64_t token;
  std::uint64_t offset;   // of the piece answered
  std::uint64_t value;    // CAS: the old value
  std::uint32_t refused;  // 1: not memory the target registered for that
  std::uint32_t unused;
};

template <typename T>
std::span<const std::uint8_t> bytes_of(const T& t) {
  return {reinterpret_cast<const std::uint8_t*>(&t), sizeof(T)};
}

const char* kind_name(std::uint32_t kind) {
  switch (kind) {
    case 1:
      return "read";
    case 2:
      return "write";
    case 3:
      return "compare-and-swap";
    default:
      return "operation";
  }
}

}  // namespace

struct MessageRma::RequestHeader {
  std::uint64_t token;   // the origin's, echoed in the answer
  std::uint64_t offset;  // of this piece in the operation, echoed too
  std::uint64_t address;
  std::uint64_t length;
  std::uint64_t compare;  // CAS
  std::uint32_t kind;     // Kind
  std::uint32_t unused;
  std::uint64_t swap;  // CAS
};

void RemoteRegions::add(std::uint64_t address, std::size_t length, RemoteAccess access) {
  regions_.emplace(address, Region{address + length, access});
}

void RemoteRegions::remove(std::uint64_t address, std::size_t length) {
  auto [first, last] = regions_.equal_range(address);
  for (auto it = first; it != last; ++it) {
    if (it->second.end == address + length) {
      regions_.erase(it);
      return;
    }
  }
}

bool RemoteRegions::covers(std::uint64_t address, std::uint64_t length, RemoteAccess access) const {
  if (address + length < address) return false;  // wraps around
  // Every region starting at or below `address`, nearest first: a few live
  // registrations (rendezvous buffers in flight, windows), so a walk.
  for (auto it = regions_.upper_bound(address); it != regions_.begin();) {
    --it;
    if (it->second.end >= address + length && it->second.access >= access) return true;
  }
  return false;
}

MessageRma::MessageRma(ucp_worker_h worker, transport::TransportCounters* counters)
    : worker_(worker), counters_(counters) {}

Status MessageRma::install_handlers() {
  for (auto [id, cb] : {std::pair{kRequestId, &MessageRma::on_request},
                        std::pair{kAnswerId, &MessageRma::on_answer}}) {
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

std::uint64_t MessageRma::start(const Pending& p) {
  const std::uint64_t token = next_token_++;
  pending_.emplace(token, p);
  if (p.kind == Kind::kWrite) writes_.insert(token);
  return token;
}

Result<Issued> MessageRma::read(ucp_ep_h ep, PeerId peer, std::span<std::uint8_t> local,
                                std::uint64_t remote_address, Completion done) {
  if (local.empty()) return Issued::kDone;
  const std::uint64_t token = start(Pending{Kind::kRead, peer, ep, local.data(), nullptr, nullptr,
                                            local.size(), remote_address, 0, 0, done});
  Status s = ask(pending_.at(token), token);
  if (!s.is_ok()) {
    pending_.erase(token);
    return s;
  }
  return Issued::kPending;
}

Result<Issued> MessageRma::write(ucp_ep_h ep, PeerId peer, std::span<const std::uint8_t> local,
                                 std::uint64_t remote_address, Completion done) {
  if (local.empty()) return Issued::kDone;
  const std::uint64_t token = start(Pending{Kind::kWrite, peer, ep, nullptr, local.data(), nullptr,
                                            local.size(), remote_address, 0, 0, done});
  Status s = ask(pending_.at(token), token);
  if (!s.is_ok()) {
    pending_.erase(token);
    writes_.erase(token);
    return s;
  }
  return Issued::kPending;
}

Result<Issued> MessageRma::compare_and_swap(ucp_ep_h ep, PeerId peer, std::uint64_t remote_address,
                                            std::uint64_t expected, std::uint64_t desired,
                                            std::uint64_t* old_value, Completion done) {
  const std::uint64_t token =
      start(Pending{Kind::kCas, peer, ep, nullptr, nullptr, old_value, sizeof(std::uint64_t),
                    remote_address, sizeof(std::uint64_t), 0, done});
  const RequestHeader h{token,
                        0,
                        remote_address,
                        sizeof(std::uint64_t),
                        expected,
                        static_cast<std::uint32_t>(Kind::kCas),
                        0,
                        desired};
  Status s = send(ep, kRequestId, bytes_of(h), nullptr, 0,
                  UCP_AM_SEND_FLAG_EAGER | UCP_AM_SEND_FLAG_REPLY);
  if (!s.is_ok()) {
    pending_.erase(token);
    return s.with_context("asking for a compare-and-swap");
  }
  return Issued::kPending;
}

Issued MessageRma::flush_writes(Completion done) {
  if (writes_.empty()) return Issued::kDone;
  flushes_.push_back(FlushWaiter{next_token_ - 1, done});
  return Issued::kPending;
}

Status MessageRma::ask(Pending& p, std::uint64_t token) {
  while (p.asked < p.length && p.asked - p.answered < kPiece * kPiecesInFlight) {
    const std::uint64_t n = std::min<std::uint64_t>(kPiece, p.length - p.asked);
    const RequestHeader h{
        token, p.asked, p.remote_address + p.asked, n, 0, static_cast<std::uint32_t>(p.kind), 0, 0};
    // The answer comes on the origin's endpoint (UCP_AM_SEND_FLAG_REPLY):
    // the target need not have one to us yet, nor know our rank.
    Status s =
        send(p.ep, kRequestId, bytes_of(h), p.kind == Kind::kWrite ? p.from + p.asked : nullptr,
             p.kind == Kind::kWrite ? n : 0, UCP_AM_SEND_FLAG_EAGER | UCP_AM_SEND_FLAG_REPLY);
    if (!s.is_ok()) {
      return s.with_context(std::string("asking for a ") +
                            kind_name(static_cast<std::uint32_t>(p.kind)));
    }
    p.asked += n;
  }
  return Status::ok();
}

void MessageRma::peer_failed(PeerId peer) {
  std::vector<std::uint64_t> failed;
  for (const auto& [token, p] : pending_) {
    if (p.peer == peer) failed.push_back(token);
  }
  const Status why(ErrorCode::kPeerFailed, "rank " + std::to_string(peer) + " died");
  for (std::uint64_t token : failed) finish(token, why);
}

Status MessageRma::send(ucp_ep_h ep, unsigned id, std::span<const std::uint8_t> header,
                        const void* data, std::size_t length, std::uint32_t flags) {
  static_assert(sizeof(RequestHeader) <= sizeof(Ticket::bytes) &&
                sizeof(AnswerHeader) <= sizeof(Ticket::bytes));
  Ticket* out = take_ticket();
  std::memcpy(out->bytes, header.data(), header.size());
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.cb.send = &MessageRma::on_sent;
  param.user_data = out;
  param.flags = flags;
  ucs_status_ptr_t request =
      ucp_am_send_nbx(ep, id, out->bytes, header.size(), data, length, &param);
  if (request == nullptr || UCS_PTR_IS_ERR(request)) free_tickets_.push_back(out);
  if (UCS_PTR_IS_ERR(request)) return ucx_error("ucp_am_send_nbx", UCS_PTR_STATUS(request));
  return Status::ok();
}

MessageRma::Ticket* MessageRma::take_ticket() {
  if (free_tickets_.empty()) {
    return tickets_.emplace_back(std::make_unique<Ticket>(Ticket{{}, this})).get();
  }
  Ticket* ticket = free_tickets_.back();
  free_tickets_.pop_back();
  return ticket;
}

void MessageRma::on_sent(void* request, ucs_status_t status, void* user_data) {
  auto* out = static_cast<Ticket*>(user_data);
  ucp_request_free(request);
  MessageRma* self = out->owner;
  if (self->closing_) return;  // tickets_ frees it with us
  self->free_tickets_.push_back(out);
  // A request that failed leaves its operation to the peer's death
  // (peer_failed); an answer that failed had an origin that died. Neither
  // is ours to report. (A write's bytes are the caller's until its answer
  // comes, so a write sent is not a write done.)
  if (status != UCS_OK) {
    TW_DEBUG("ucx", "a one-sided operation's message failed: " << ucs_status_string(status));
  }
}

ucs_status_t MessageRma::on_request(void* arg, const void* header, std::size_t header_length,
                                    void* data, std::size_t length,
                                    const ucp_am_recv_param_t* param) {
  auto* self = static_cast<MessageRma*>(arg);
  if (header_length != sizeof(RequestHeader) ||
      (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) == 0 ||
      (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
    TW_ERROR("ucx",
             "dropping a malformed one-sided request (" << header_length << " header bytes)");
    return UCS_OK;
  }
  RequestHeader h;
  std::memcpy(&h, header, sizeof h);
  if (!self->closing_) self->serve(param->reply_ep, h, data, length);
  return UCS_OK;
}

// At the target: does what a peer asked, on memory registered for it, and
// answers.
void MessageRma::serve(ucp_ep_h origin, const RequestHeader& request, const void* data,
                       std::size_t length) {
  const auto kind = static_cast<Kind>(request.kind);
  const RemoteAccess needs = kind == Kind::kRead  ? RemoteAccess::kRead
                             : kind == Kind::kCas ? RemoteAccess::kReadAndAtomic
                                                  : RemoteAccess::kReadAndWrite;
  bool allowed = (kind == Kind::kRead || kind == Kind::kWrite || kind == Kind::kCas) &&
                 regions_->covers(request.address, request.length, needs);
  if (kind == Kind::kWrite && length != request.length) allowed = false;
  if (kind == Kind::kCas && (request.length != 8 || request.address % 8 != 0)) allowed = false;
  if (!allowed) {
    TW_WARN("ucx", "refused a peer's " << kind_name(request.kind) << " of " << request.length
                                       << " B at 0x" << std::hex << request.address << std::dec
                                       << ": not memory registered here for it");
  }
  AnswerHeader h{request.token, request.offset, 0, allowed ? 0u : 1u, 0};
  const void* bytes = nullptr;
  std::size_t bytes_length = 0;
  if (allowed) {
    auto* at = reinterpret_cast<std::uint8_t*>(request.address);
    switch (kind) {
      case Kind::kRead:
        bytes = at;
        bytes_length = request.length;
        break;
      case Kind::kWrite:
        std::memcpy(at, data, length);
        break;
      case Kind::kCas: {
        // A CPU atomic, as the owner's local_compare_and_swap is: the two
        // see each other.
        std::atomic_ref<std::uint64_t> word(*reinterpret_cast<std::uint64_t*>(at));
        std::uint64_t seen = request.compare;
        word.compare_exchange_strong(seen, request.swap);
        h.value = seen;
        break;
      }
    }
  }
  // Eagerly, whatever the size: the origin gets the answer whole in one
  // callback and copies it. (UCX's own rendezvous for active messages over
  // TCP was slower: 4 MiB reads 1.9 GB/s against 2.9 eager.)
  Status s = send(origin, kAnswerId, bytes_of(h), bytes, bytes_length, UCP_AM_SEND_FLAG_EAGER);
  if (!s.is_ok()) {
    TW_DEBUG("ucx",
             "answering a peer's " << kind_name(request.kind) << " failed: " << s.to_string());
  } else if (bytes_length > 0) {
    counters_->bytes_helped += bytes_length;
  }
}

ucs_status_t MessageRma::on_answer(void* arg, const void* header, std::size_t header_length,
                                   void* data, std::size_t length,
                                   const ucp_am_recv_param_t* param) {
  auto* self = static_cast<MessageRma*>(arg);
  if (header_length != sizeof(AnswerHeader)) {
    TW_ERROR("ucx", "dropping a malformed one-sided answer (" << header_length << " header bytes)");
    return UCS_OK;
  }
  AnswerHeader h;
  std::memcpy(&h, header, sizeof h);
  auto it = self->pending_.find(h.token);
  // An operation that failed with its peer's death, or a transport closing.
  if (it == self->pending_.end() || self->closing_) return UCS_OK;
  Pending& p = it->second;
  const char* what = kind_name(static_cast<std::uint32_t>(p.kind));
  if (h.refused != 0) {
    self->finish(h.token, Status(ErrorCode::kInvalidArgument,
                                 "rank " + std::to_string(p.peer) + " refused the " + what +
                                     ": not memory it registered for it"));
    return UCS_OK;
  }
  const std::uint64_t piece =
      h.offset < p.length ? std::min<std::uint64_t>(kPiece, p.length - h.offset) : 0;
  const std::uint64_t expected_bytes = p.kind == Kind::kRead ? piece : 0;
  if (piece == 0 || length != expected_bytes || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    self->finish(h.token, Status(ErrorCode::kInternal,
                                 std::string("a ") + what + " of " + std::to_string(p.length) +
                                     " B was answered with " + std::to_string(length) + " B at " +
                                     std::to_string(h.offset)));
    return UCS_OK;
  }
  switch (p.kind) {
    case Kind::kRead:
      std::memcpy(p.into + h.offset, data, length);
      break;
    case Kind::kWrite:
      break;
    case Kind::kCas:
      *p.old_value = h.value;
      break;
  }
  p.answered += piece;
  if (p.answered == p.length) {
    self->finish(h.token, Status::ok());
    return UCS_OK;
  }
  Status s = self->ask(p, h.token);
  if (!s.is_ok()) self->finish(h.token, s);
  return UCS_OK;
}

void MessageRma::finish(std::uint64_t token, const Status& status) {
  auto it = pending_.find(token);
  if (it == pending_.end()) return;
  const Completion done = it->second.done;
  if (status.is_ok() && it->second.kind == Kind::kRead) {
    counters_->bytes_helped_by_peers += it->second.length;
  }
  pending_.erase(it);
  done(status);
  if (writes_.erase(token) == 0 || flushes_.empty()) return;
  // Flushes whose writes are all answered now complete, in order.
  const std::uint64_t oldest = writes_.empty() ? next_token_ : *writes_.begin();
  std::vector<Completion> ready;
  std::erase_if(flushes_, [&](const FlushWaiter& f) {
    if (f.last >= oldest) return false;
    ready.push_back(f.done);
    return true;
  });
  for (const Completion& c : ready) c(Status::ok());
}

bool rma_is_emulated(ucp_ep_h ep) {
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
