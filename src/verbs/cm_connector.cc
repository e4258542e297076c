#include "verbs/cm_connector.h"

#include <fcntl.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/log.h"
#include "verbs/verbs_status.h"

namespace tagwire::verbs {

namespace {

constexpr int kResolveMs = 5000;  // generous: under TCG the VM's timers run in real time
constexpr int kMaxTries = 5;

// The private data of a connect request, an accept and a tie-break reject.
struct Hello {
  std::uint32_t magic;
  std::int32_t rank;
  CmCard card;  // the transport's (zero in a reject)
};
static_assert(sizeof(Hello) <= 56, "a connect request carries at most 56 bytes (RDMA_PS_TCP)");
constexpr std::uint32_t kHelloMagic = 0x5457434d;  // "TWCM"

bool read_hello(const void* data, std::uint8_t length, Hello* out) {
  if (data == nullptr || length < sizeof(Hello)) return false;
  std::memcpy(out, data, sizeof(Hello));
  return out->magic == kHelloMagic;
}

Status cm_error(const std::string& call) {
  return verbs_error(call, errno);
}

sockaddr_in ipv4_address(CmEndpoint e) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = e.ipv4;
  a.sin_port = e.port;
  return a;
}

rdma_conn_param connection_parameters(const RcQueuePair& qp, const Hello& hello) {
  rdma_conn_param p{};
  p.private_data = &hello;
  p.private_data_len = sizeof(hello);
  p.responder_resources = 4;  // RDMA READs and atomics answered at once (as connect() sets)
  p.initiator_depth = 4;
  p.retry_count = 7;
  p.rnr_retry_count = 7;  // infinite: a receiver without a posted receive is waited for
  p.qp_num = qp.qpn();
  return p;
}

}  // namespace

Result<std::unique_ptr<CmConnector>> CmConnector::listen(std::uint32_t ipv4, int rank,
                                                         MakeQp make_qp) {
  std::unique_ptr<CmConnector> c(new CmConnector());
  c->rank_ = rank;
  c->make_qp_ = std::move(make_qp);
  c->channel_.reset(rdma_create_event_channel());
  if (!c->channel_) return cm_error("rdma_create_event_channel");
  const int flags = fcntl(c->channel_->fd, F_GETFL);
  if (fcntl(c->channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return cm_error("fcntl(O_NONBLOCK) on the rdma_cm channel");
  }
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(c->channel_.get(), &id, nullptr, RDMA_PS_TCP) != 0) {
    return cm_error("rdma_create_id(listener)");
  }
  c->listener_.reset(id);
  sockaddr_in at = ipv4_address(CmEndpoint{ipv4, 0});
  if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&at)) != 0) {
    return cm_error("rdma_bind_addr");
  }
  if (rdma_listen(id, 64) != 0) return cm_error("rdma_listen");
  c->local_.ipv4 = ipv4;
  c->local_.port = rdma_get_src_port(id);
  return c;
}

CmConnector::~CmConnector() {
  // Ids before the channel they report to; the transport has destroyed
  // the QPs it was handed.
  attempts_.clear();
  finished_.clear();
  listener_.reset();
}

CmConnector::Attempt* CmConnector::find(rdma_cm_id* id) {
  for (auto& a : attempts_) {
    if (a->id.get() == id) return a.get();
  }
  return nullptr;
}

CmConnector::Attempt* CmConnector::live_attempt(int peer) {
  for (auto& a : attempts_) {
    if (a->peer == peer && !a->dropped) return a.get();
  }
  return nullptr;
}

void CmConnector::erase(rdma_cm_id* id) {
  std::erase_if(attempts_, [id](const auto& a) { return a->id.get() == id; });
}

Status CmConnector::connect(int peer, CmEndpoint at) {
  if (peer < 0) return {ErrorCode::kInvalidRank, "rdma_cm: no rank " + std::to_string(peer)};
  const auto p = static_cast<std::size_t>(peer);
  if (p < connected_.size() && connected_[p]) return Status::ok();
  if (live_attempt(peer) != nullptr) return Status::ok();
  auto a = std::make_unique<Attempt>();
  a->peer = peer;
  a->at = at;
  TAGWIRE_RETURN_IF_ERROR(start(*a));
  attempts_.push_back(std::move(a));
  return Status::ok();
}

Status CmConnector::start(Attempt& a) {
  ++a.tries;
  a.qp.reset();
  a.id.reset();
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(channel_.get(), &id, nullptr, RDMA_PS_TCP) != 0) {
    return cm_error("rdma_create_id");
  }
  a.id.reset(id);
  sockaddr_in from = ipv4_address(CmEndpoint{local_.ipv4, 0});
  sockaddr_in to = ipv4_address(a.at);
  if (rdma_resolve_addr(id, reinterpret_cast<sockaddr*>(&from), reinterpret_cast<sockaddr*>(&to),
                        kResolveMs) != 0) {
    return cm_error("rdma_resolve_addr");
  }
  return Status::ok();
}

Status CmConnector::to_rts(Attempt& a) {
  ibv_qp_attr attr{};
  int mask = 0;
  attr.qp_state = IBV_QPS_RTR;
  if (rdma_init_qp_attr(a.id.get(), &attr, &mask) != 0) return cm_error("rdma_init_qp_attr(RTR)");
  TAGWIRE_RETURN_IF_ERROR(a.qp->modify(attr, mask, "ibv_modify_qp(RTR, rdma_cm route)"));
  attr = {};
  mask = 0;
  attr.qp_state = IBV_QPS_RTS;
  if (rdma_init_qp_attr(a.id.get(), &attr, &mask) != 0) return cm_error("rdma_init_qp_attr(RTS)");
  return a.qp->modify(attr, mask, "ibv_modify_qp(RTS, rdma_cm route)");
}

Status CmConnector::accept(rdma_cm_event& event) {
  Hello hello{};
  const Hello refusal{kHelloMagic, rank_, {}};
  rdma_cm_id* id = event.id;
  auto reject = [&](const char* why) {
    TW_DEBUG("verbs", "rdma_cm: rejected a request from rank " << hello.rank << ": " << why);
    rdma_reject(id, &refusal, sizeof(refusal));
    // The request's id is ours to destroy, once its event is acknowledged.
    auto a = std::make_unique<Attempt>();
    a->peer = hello.rank;
    a->active = false;
    a->dropped = true;
    a->id.reset(id);
    attempts_.push_back(std::move(a));
    return Status::ok();
  };
  if (!read_hello(event.param.conn.private_data, event.param.conn.private_data_len, &hello)) {
    return reject("not a Tagwire connection request");
  }
  const auto p = static_cast<std::size_t>(hello.rank);
  if (hello.rank < 0 || hello.rank == rank_) return reject("a bad rank");
  if (p < connected_.size() && connected_[p]) return reject("already connected");
  if (Attempt* live = live_attempt(hello.rank)) {
    if (!live->active) return reject("a duplicate request");
    if (rank_ < hello.rank) return reject("our own attempt wins (lower rank)");
    live->dropped = true;  // theirs wins: ours is rejected by them, and dropped here
  }
  CmCard card;
  auto qp = make_qp_(hello.rank, &card);
  if (!qp) {
    TW_WARN("verbs", qp.status().to_string());
    return reject("no QP");
  }
  auto a = std::make_unique<Attempt>();
  a->peer = hello.rank;
  a->active = false;
  a->id.reset(id);
  a->qp = std::move(qp).value();
  a->mine = card;
  a->theirs = hello.card;
  Status s = to_rts(*a);
  if (s.is_ok()) {
    const Hello mine{kHelloMagic, rank_, card};
    rdma_conn_param param = connection_parameters(*a->qp, mine);
    if (rdma_accept(id, &param) != 0) s = cm_error("rdma_accept");
  }
  if (!s.is_ok()) {
    (void)a->id.release();  // reject() takes the id over
    (void)reject("setting up the QP failed");
    return s;
  }
  attempts_.push_back(std::move(a));
  return Status::ok();
}

void CmConnector::poll(std::vector<Connected>* connected, std::vector<Failed>* failed) {
  for (;;) {
    rdma_cm_event* event = nullptr;
    if (rdma_get_cm_event(channel_.get(), &event) != 0) return;  // EAGAIN: nothing pending
    Status s = handle(*event, connected, failed);
    if (!s.is_ok()) TW_WARN("verbs", "rdma_cm: " << s.to_string());
    rdma_ack_cm_event(event);
    // Destroying an id waits for its events to be acknowledged: only now.
    std::erase_if(attempts_, [](const auto& a) { return a->dropped && a->id != nullptr; });
  }
}

Status CmConnector::handle(rdma_cm_event& event, std::vector<Connected>* connected,
                           std::vector<Failed>* failed) {
  if (event.event == RDMA_CM_EVENT_CONNECT_REQUEST) return accept(event);
  Attempt* a = find(event.id);
  if (a == nullptr) return Status::ok();  // a made connection's DISCONNECTED and the like
  if (a->dropped) return Status::ok();    // destroyed after the acknowledgement
  auto made = [&]() {
    const auto p = static_cast<std::size_t>(a->peer);
    if (connected_.size() <= p) connected_.resize(p + 1, false);
    connected_[p] = true;
    connected->push_back({a->peer, std::move(a->qp), !a->active, a->theirs});
    finished_.push_back(std::move(a->id));
    a->dropped = true;
    a->id.reset();
    erase(nullptr);
  };
  auto give_up_or_retry = [&](const std::string& what) {
    if (!a->active) {  // the peer asks again, or we will
      a->dropped = true;
      return Status::ok();
    }
    if (a->tries < kMaxTries) {
      TW_INFO("verbs", "rdma_cm: " << what << " connecting to rank " << a->peer << ", retrying");
      a->qp.reset();
      // The failed id goes only after its event is acknowledged: a fresh
      // attempt replaces this one.
      auto again = std::make_unique<Attempt>();
      again->peer = a->peer;
      again->at = a->at;
      again->tries = a->tries;
      a->dropped = true;
      Status s = start(*again);
      if (!s.is_ok()) {
        failed->push_back({again->peer, s});
        return Status::ok();
      }
      attempts_.push_back(std::move(again));
      return Status::ok();
    }
    a->dropped = true;
    failed->push_back(
        {a->peer, Status(ErrorCode::kPeerFailed, "rdma_cm: " + what + " connecting to rank " +
                                                     std::to_string(a->peer) + " after " +
                                                     std::to_string(a->tries) + " tries")});
    return Status::ok();
  };
  switch (event.event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      if (rdma_resolve_route(event.id, kResolveMs) != 0) return cm_error("rdma_resolve_route");
      return Status::ok();
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
      auto qp = make_qp_(a->peer, &a->mine);
      if (!qp) return give_up_or_retry(qp.status().to_string());
      a->qp = std::move(qp).value();
      const Hello mine{kHelloMagic, rank_, a->mine};
      rdma_conn_param param = connection_parameters(*a->qp, mine);
      if (rdma_connect(event.id, &param) != 0) return cm_error("rdma_connect");
      return Status::ok();
    }
    case RDMA_CM_EVENT_CONNECT_RESPONSE: {
      Hello hello{};
      if (!read_hello(event.param.conn.private_data, event.param.conn.private_data_len, &hello) ||
          hello.rank != a->peer) {
        return give_up_or_retry("an accept without the peer's hello");
      }
      a->theirs = hello.card;
      Status s = to_rts(*a);
      if (s.is_ok() && rdma_establish(event.id) != 0) s = cm_error("rdma_establish");
      if (!s.is_ok()) return give_up_or_retry(s.to_string());
      made();
      return Status::ok();
    }
    case RDMA_CM_EVENT_ESTABLISHED:
      if (!a->active) made();
      return Status::ok();
    case RDMA_CM_EVENT_REJECTED: {
      Hello hello{};
      if (read_hello(event.param.conn.private_data, event.param.conn.private_data_len, &hello)) {
        // The peer's own attempt wins the tie: its request comes (or came).
        a->dropped = true;
        return Status::ok();
      }
      return give_up_or_retry("rejected (status " + std::to_string(event.status) + ")");
    }
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      return give_up_or_retry(std::string(rdma_event_str(event.event)) + " (status " +
                              std::to_string(event.status) + ")");
    default:
      return Status::ok();
  }
}

}  // namespace tagwire::verbs
