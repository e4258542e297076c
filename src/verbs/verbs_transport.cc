#include "verbs/verbs_transport.h"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/log.h"
#include "verbs/device.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/verbs_status.h"

namespace tagwire::verbs {

namespace {

constexpr std::size_t kMaxHeader = 64;
constexpr std::uint32_t kSendSlots = 64;    // registered send buffers, all peers
constexpr std::uint32_t kAtomicSlots = 64;  // registered CAS result words
constexpr std::uint32_t kMaxRdma = 64;      // RDMA READs and WRITEs in flight
constexpr std::uint32_t kSendQueueDepth = kSendSlots + kMaxRdma + kAtomicSlots;
constexpr std::size_t kLengthPrefix = sizeof(std::uint32_t);  // header length, then header

// Work request ids: kind in the top byte, an index below.
enum class WrKind : std::uint64_t { kRecv = 1, kSend = 2, kRead = 3, kCas = 4, kWrite = 5 };
std::uint64_t wr_id(WrKind kind, std::uint64_t index) {
  return (static_cast<std::uint64_t>(kind) << 56) | index;
}
WrKind kind_of(std::uint64_t id) {
  return static_cast<WrKind>(id >> 56);
}
std::uint64_t index_of(std::uint64_t id) {
  return id & ((std::uint64_t{1} << 56) - 1);
}

// Published through the bootstrap: how to reach each of this rank's QPs.
struct WireAddress {
  std::uint32_t magic;
  std::uint32_t count;  // QPs, one per peer (self included, unused)
  ibv_gid gid;
  std::uint16_t lid;
  std::uint16_t reserved;
  // followed by `count` x {qpn, psn}
};
constexpr std::uint32_t kAddressMagic = 0x54575642;  // "TWVB"

class VerbsRegistration final : public transport::Registration {
 public:
  VerbsRegistration(MrPtr mr, void* address, std::size_t length,
                    transport::TransportCounters* counters)
      : mr_(std::move(mr)),
        rkey_(mr_->rkey),
        address_(address),
        length_(length),
        counters_(counters) {
    ++counters_->registrations;
    counters_->registered_bytes += length_;
  }
  ~VerbsRegistration() override {
    --counters_->registrations;
    counters_->registered_bytes -= length_;
  }
  std::span<const std::uint8_t> packed_key() const override {
    return {reinterpret_cast<const std::uint8_t*>(&rkey_), sizeof(rkey_)};
  }
  std::uint64_t address() const override { return reinterpret_cast<std::uint64_t>(address_); }
  std::size_t length() const override { return length_; }

 private:
  MrPtr mr_;
  std::uint32_t rkey_;
  void* address_;
  std::size_t length_;
  transport::TransportCounters* counters_;
};

class VerbsTransport final : public transport::Transport {
 public:
  VerbsTransport(Device device, const VerbsOptions& options)
      : device_(std::move(device)), options_(options) {}

  Status start() {
    auto gid = device_.roce_v2_ipv4_gid_index();
    if (!gid) return gid.status();
    gid_index_ = *gid;
    channel_.reset(ibv_create_comp_channel(device_.context()));
    if (!channel_) return verbs_error("ibv_create_comp_channel", errno);
    const int flags = fcntl(channel_->fd, F_GETFL);
    if (fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
      return verbs_error("fcntl(O_NONBLOCK) on the completion channel", errno);
    }
    const int peers = options_.size;
    const int cq_size =
        static_cast<int>(options_.receive_depth) * peers + static_cast<int>(kSendQueueDepth) + 16;
    cq_.reset(ibv_create_cq(device_.context(), cq_size, nullptr, channel_.get(), 0));
    if (!cq_) return verbs_error("ibv_create_cq", errno);

    slot_size_ = kLengthPrefix + kMaxHeader + options_.max_payload;
    recv_pool_.resize(slot_size_ * options_.receive_depth * static_cast<std::size_t>(peers));
    send_pool_.resize(slot_size_ * kSendSlots);
    atomic_pool_.assign(kAtomicSlots, 0);
    constexpr int kLocal = IBV_ACCESS_LOCAL_WRITE;
    auto rmr = verbs::register_memory(device_, recv_pool_.data(), recv_pool_.size(), kLocal);
    auto smr = verbs::register_memory(device_, send_pool_.data(), send_pool_.size(), kLocal);
    auto amr =
        verbs::register_memory(device_, atomic_pool_.data(), atomic_pool_.size() * 8, kLocal);
    if (!rmr) return rmr.status().with_context("receive buffers");
    if (!smr) return smr.status().with_context("send buffers");
    if (!amr) return amr.status().with_context("atomic results");
    recv_mr_ = std::move(rmr).value();
    send_mr_ = std::move(smr).value();
    atomic_mr_ = std::move(amr).value();
    counters_.registered_bytes += recv_pool_.size() + send_pool_.size() + atomic_pool_.size() * 8;
    for (std::uint32_t i = 0; i < kSendSlots; ++i) free_send_.push_back(i);
    for (std::uint32_t i = 0; i < kAtomicSlots; ++i) free_atomic_.push_back(i);

    qps_.resize(static_cast<std::size_t>(peers));
    for (int p = 0; p < peers; ++p) {
      if (p == options_.rank) continue;  // messages to self never touch the NIC
      const std::uint32_t depth = std::max(options_.receive_depth, kSendQueueDepth);
      auto qp = RcQueuePair::create(device_, cq_.get(), cq_.get(), depth, 64);
      if (!qp) return qp.status().with_context("QP for rank " + std::to_string(p));
      qps_[static_cast<std::size_t>(p)] = std::make_unique<RcQueuePair>(std::move(qp).value());
    }
    return Status::ok();
  }

  std::string_view name() const override { return "verbs"; }

  std::vector<std::uint8_t> address() const override {
    WireAddress head{};
    head.magic = kAddressMagic;
    head.count = static_cast<std::uint32_t>(qps_.size());
    QpAddress any{};
    for (const auto& qp : qps_) {
      if (qp) {
        any = qp->address(gid_index_);
        break;
      }
    }
    head.gid = any.gid;
    head.lid = any.lid;
    std::vector<std::uint8_t> out(sizeof(head) + qps_.size() * 8);
    std::memcpy(out.data(), &head, sizeof(head));
    for (std::size_t p = 0; p < qps_.size(); ++p) {
      std::uint32_t pair[2] = {0, 0};
      if (qps_[p]) {  // the port's GID and LID were read once, above
        pair[0] = qps_[p]->qpn();
        pair[1] = qps_[p]->psn();
      }
      std::memcpy(out.data() + sizeof(head) + p * 8, pair, 8);
    }
    return out;
  }

  Status set_peer_addresses(std::vector<std::vector<std::uint8_t>> addresses) override {
    if (addresses.size() != qps_.size()) {
      return {ErrorCode::kProtocol, "address exchange: " + std::to_string(addresses.size()) +
                                        " addresses for a job of " + std::to_string(qps_.size())};
    }
    const auto me = static_cast<std::size_t>(options_.rank);
    for (std::size_t p = 0; p < addresses.size(); ++p) {
      if (!qps_[p]) continue;
      const auto& a = addresses[p];
      WireAddress head{};
      if (a.size() < sizeof(head)) return {ErrorCode::kProtocol, "short verbs address"};
      std::memcpy(&head, a.data(), sizeof(head));
      if (head.magic != kAddressMagic || head.count != qps_.size() ||
          a.size() != sizeof(head) + head.count * 8) {
        return {ErrorCode::kProtocol,
                "rank " + std::to_string(p) + " published no verbs address for this job"};
      }
      std::uint32_t pair[2];
      std::memcpy(pair, a.data() + sizeof(head) + me * 8, 8);
      QpAddress remote;
      remote.qpn = pair[0];
      remote.psn = pair[1];
      remote.gid = head.gid;
      remote.lid = head.lid;
      TAGWIRE_RETURN_IF_ERROR(qps_[p]
                                  ->connect(remote, gid_index_)
                                  .with_context("connecting to rank " + std::to_string(p)));
      for (std::uint32_t k = 0; k < options_.receive_depth; ++k) {
        TAGWIRE_RETURN_IF_ERROR(post_receive(p, k));
      }
      ++counters_.connections;
    }
    return Status::ok();
  }

  void set_receiver(transport::Receiver* receiver) override { receiver_ = receiver; }
  std::size_t max_header() const override { return kMaxHeader; }

  Result<transport::Issued> send(transport::PeerId peer, std::span<const std::uint8_t> header,
                                 std::span<const std::uint8_t> payload,
                                 transport::Completion) override {
    TAGWIRE_RETURN_IF_ERROR(check_peer(peer));
    if (header.size() > kMaxHeader || payload.size() > options_.max_payload) {
      return Status(ErrorCode::kInvalidArgument, "message of " + std::to_string(header.size()) +
                                                     " + " + std::to_string(payload.size()) +
                                                     " bytes exceeds the verbs slot");
    }
    ++counters_.messages_sent;
    if (peer == options_.rank) {
      self_queue_.emplace_back(frame(header, payload));
      return transport::Issued::kDone;
    }
    // A free send slot; completions return them.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (free_send_.empty()) {
      poll_completions();
      if (std::chrono::steady_clock::now() > until) {
        return Status(ErrorCode::kPeerFailed, "no send slot came back within 60 s");
      }
    }
    const std::uint32_t slot = free_send_.back();
    free_send_.pop_back();
    std::uint8_t* buf = send_pool_.data() + slot * slot_size_;
    const std::size_t n = write_frame(buf, header, payload);
    Status s = qps_[static_cast<std::size_t>(peer)]->post_send(
        wr_id(WrKind::kSend, slot), LocalBuffer{buf, static_cast<std::uint32_t>(n), send_mr_->lkey},
        true, true);
    if (!s.is_ok()) {
      free_send_.push_back(slot);
      return s;
    }
    // The bytes are ours now: the caller's buffers are free at once.
    return transport::Issued::kDone;
  }

  Result<std::unique_ptr<transport::Registration>> register_memory(
      void* address, std::size_t length, transport::RemoteAccess access) override {
    int flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
    if (access == transport::RemoteAccess::kReadAndAtomic) {
      flags |= IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_WRITE;
    } else if (access == transport::RemoteAccess::kReadAndWrite) {
      flags |= IBV_ACCESS_REMOTE_WRITE;
    }
    auto mr = verbs::register_memory(device_, address, std::max<std::size_t>(length, 1), flags);
    if (!mr) return mr.status();
    return std::unique_ptr<transport::Registration>(
        new VerbsRegistration(std::move(mr).value(), address, length, &counters_));
  }

  Result<transport::Issued> read(transport::PeerId peer, std::span<std::uint8_t> local,
                                 std::uint64_t remote_address,
                                 std::span<const std::uint8_t> remote_key,
                                 transport::Completion done) override {
    counters_.bytes_read += local.size();
    return rdma(WrKind::kRead, peer, local, remote_address, remote_key, done);
  }

  Result<transport::Issued> write(transport::PeerId peer, std::span<const std::uint8_t> local,
                                  std::uint64_t remote_address,
                                  std::span<const std::uint8_t> remote_key,
                                  transport::Completion done) override {
    counters_.bytes_written += local.size();
    // An RDMA WRITE only reads `local`: the cast lets one path post both.
    return rdma(WrKind::kWrite, peer, {const_cast<std::uint8_t*>(local.data()), local.size()},
                remote_address, remote_key, done);
  }

  Result<transport::Issued> flush(transport::Completion) override {
    // An RC WRITE or READ completes once the target has acknowledged it:
    // every one issued so far finished means all are at their targets.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (rdma_in_flight_ > 0) {
      poll_completions();
      if (std::chrono::steady_clock::now() > until) {
        return Status(ErrorCode::kPeerFailed, "RDMA READ/WRITE not completed within 60 s");
      }
    }
    return transport::Issued::kDone;
  }

  Result<transport::Issued> compare_and_swap(transport::PeerId peer, std::uint64_t remote_address,
                                             std::span<const std::uint8_t> remote_key,
                                             std::uint64_t expected, std::uint64_t desired,
                                             std::uint64_t* old_value,
                                             transport::Completion done) override {
    TAGWIRE_RETURN_IF_ERROR(check_peer(peer));
    std::uint32_t rkey = 0;
    TAGWIRE_RETURN_IF_ERROR(unpack_key(remote_key, &rkey));
    if (peer == options_.rank) {
      std::atomic_ref<std::uint64_t> word(*reinterpret_cast<std::uint64_t*>(remote_address));
      std::uint64_t seen = expected;
      word.compare_exchange_strong(seen, desired);
      *old_value = seen;
      return transport::Issued::kDone;
    }
    while (free_atomic_.empty()) poll_completions();
    const std::uint32_t slot = free_atomic_.back();
    free_atomic_.pop_back();
    const std::uint64_t op = next_op_++;
    Status s = qps_[static_cast<std::size_t>(peer)]->post_compare_and_swap(
        wr_id(WrKind::kCas, op), LocalBuffer{&atomic_pool_[slot], 8, atomic_mr_->lkey},
        remote_address, rkey, expected, desired);
    if (!s.is_ok()) {
      free_atomic_.push_back(slot);
      return s;
    }
    pending_.emplace(op, Pending{done, nullptr, old_value, slot});
    return transport::Issued::kPending;
  }

  Result<std::uint64_t> local_compare_and_swap(const transport::Registration& memory,
                                               std::uint64_t* word, std::uint64_t expected,
                                               std::uint64_t desired) override {
    if (one_sided_cancel_possible(device_.caps())) {
      // IBV_ATOMIC_GLOB: the NIC's atomics are atomic with the CPU's.
      std::atomic_ref<std::uint64_t> target(*word);
      std::uint64_t seen = expected;
      target.compare_exchange_strong(seen, desired);
      return seen;
    }
    // IBV_ATOMIC_HCA (rxe, most NICs): only the NIC's own atomics are atomic
    // with a peer's RDMA CAS, so the claim goes through the NIC too, on a
    // QP connected to itself, polled here (it never enters the main CQ).
    if (!loopback_) TAGWIRE_RETURN_IF_ERROR(open_loopback());
    std::uint32_t rkey = 0;
    TAGWIRE_RETURN_IF_ERROR(unpack_key(memory.packed_key(), &rkey));
    TAGWIRE_RETURN_IF_ERROR(loopback_->post_compare_and_swap(
        wr_id(WrKind::kCas, 0), LocalBuffer{&loopback_result_[0], 8, loopback_mr_->lkey},
        reinterpret_cast<std::uint64_t>(word), rkey, expected, desired));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    ibv_wc wc{};
    for (;;) {
      const int got = ibv_poll_cq(loopback_cq_.get(), 1, &wc);
      if (got < 0) return verbs_error("ibv_poll_cq (loopback)", -got);
      if (got == 1) break;
      if (std::chrono::steady_clock::now() > until) {
        return Status(ErrorCode::kInternal, "loopback compare-and-swap: no completion in 10 s");
      }
    }
    if (wc.status != IBV_WC_SUCCESS) return completion_error("loopback compare-and-swap", wc);
    return loopback_result_[0];
  }

  unsigned progress() override {
    // Events are only raised after arm(); reading the channel otherwise
    // would be a system call on every poll.
    if (armed_) {
      drain_channel();
      armed_ = false;
    }
    unsigned n = deliver_self();
    n += poll_completions();
    return n;
  }

  Result<bool> arm() override {
    if (!self_queue_.empty()) return false;
    if (int rc = ibv_req_notify_cq(cq_.get(), 0); rc != 0)
      return verbs_error("ibv_req_notify_cq", rc);
    armed_ = true;
    // A completion that landed before the request would raise no event.
    return poll_completions() == 0;
  }
  int event_fd() const override { return channel_->fd; }

  Status disconnect_all() override {
    // Let every send reach its peer before the QPs go.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while ((free_send_.size() < kSendSlots || !pending_.empty()) &&
           std::chrono::steady_clock::now() < until) {
      poll_completions();
    }
    qps_.clear();
    return Status::ok();
  }

  transport::TransportCounters counters() const override {
    transport::TransportCounters c = counters_;
    c.open_connections = static_cast<std::uint64_t>(
        std::count_if(qps_.begin(), qps_.end(), [](const auto& qp) { return qp != nullptr; }));
    return c;
  }

  ~VerbsTransport() override {
    qps_.clear();  // before the CQ, the MRs and the PD they use
    loopback_.reset();
    loopback_cq_.reset();
    pending_.clear();
    cq_.reset();
    channel_.reset();
  }

 private:
  struct Pending {
    transport::Completion done;
    MrPtr local;  // a read's destination
    std::uint64_t* old_value;
    std::uint32_t atomic_slot;
  };

  // The QP that claims slot descriptors through this NIC (see
  // local_compare_and_swap): its own CQ, connected to itself.
  Status open_loopback() {
    loopback_result_.assign(1, 0);
    auto mr = verbs::register_memory(device_, loopback_result_.data(), 8, IBV_ACCESS_LOCAL_WRITE);
    if (!mr) return mr.status().with_context("loopback CAS result");
    loopback_mr_ = std::move(mr).value();
    loopback_cq_.reset(ibv_create_cq(device_.context(), 4, nullptr, nullptr, 0));
    if (!loopback_cq_) return verbs_error("ibv_create_cq (loopback)", errno);
    auto qp = RcQueuePair::create(device_, loopback_cq_.get(), loopback_cq_.get(), 4, 0);
    if (!qp) return qp.status().with_context("loopback QP");
    auto owned = std::make_unique<RcQueuePair>(std::move(qp).value());
    TAGWIRE_RETURN_IF_ERROR(
        owned->connect(owned->address(gid_index_), gid_index_).with_context("loopback QP"));
    loopback_ = std::move(owned);
    TW_INFO("verbs", "device has IBV_ATOMIC_HCA: slot claims go through a loopback QP");
    return Status::ok();
  }

  // RDMA READ into `local`, or RDMA WRITE from it: registered for the
  // operation (the registration cache is issue 4's), completed by handle().
  Result<transport::Issued> rdma(WrKind kind, transport::PeerId peer, std::span<std::uint8_t> local,
                                 std::uint64_t remote_address,
                                 std::span<const std::uint8_t> remote_key,
                                 transport::Completion done) {
    TAGWIRE_RETURN_IF_ERROR(check_peer(peer));
    std::uint32_t rkey = 0;
    TAGWIRE_RETURN_IF_ERROR(unpack_key(remote_key, &rkey));
    if (local.empty()) return transport::Issued::kDone;
    if (peer == options_.rank) {
      auto* remote = reinterpret_cast<std::uint8_t*>(remote_address);
      if (kind == WrKind::kRead) {
        std::memcpy(local.data(), remote, local.size());
      } else {
        std::memcpy(remote, local.data(), local.size());
      }
      return transport::Issued::kDone;
    }
    while (rdma_in_flight_ >= kMaxRdma) poll_completions();
    auto mr = verbs::register_memory(device_, local.data(), local.size(), IBV_ACCESS_LOCAL_WRITE);
    if (!mr) {
      return mr.status().with_context(kind == WrKind::kRead ? "registering an RDMA READ destination"
                                                            : "registering an RDMA WRITE source");
    }
    const std::uint64_t op = next_op_++;
    const LocalBuffer buffer{local.data(), static_cast<std::uint32_t>(local.size()), (*mr)->lkey};
    RcQueuePair& qp = *qps_[static_cast<std::size_t>(peer)];
    Status s = kind == WrKind::kRead
                   ? qp.post_read(wr_id(kind, op), buffer, remote_address, rkey)
                   : qp.post_write(wr_id(kind, op), buffer, remote_address, rkey, true);
    if (!s.is_ok()) return s;
    pending_.emplace(op, Pending{done, std::move(mr).value(), nullptr, 0});
    ++rdma_in_flight_;
    return transport::Issued::kPending;
  }

  Status check_peer(transport::PeerId peer) const {
    if (peer < 0 || peer >= options_.size) {
      return {ErrorCode::kInvalidRank, "verbs transport: no rank " + std::to_string(peer)};
    }
    return Status::ok();
  }

  static Status unpack_key(std::span<const std::uint8_t> key, std::uint32_t* rkey) {
    if (key.size() != sizeof(*rkey)) {
      return {ErrorCode::kProtocol,
              "a verbs remote key is 4 bytes, not " + std::to_string(key.size())};
    }
    std::memcpy(rkey, key.data(), sizeof(*rkey));
    return Status::ok();
  }

  std::size_t write_frame(std::uint8_t* out, std::span<const std::uint8_t> header,
                          std::span<const std::uint8_t> payload) const {
    const auto hlen = static_cast<std::uint32_t>(header.size());
    std::memcpy(out, &hlen, kLengthPrefix);
    if (!header.empty()) std::memcpy(out + kLengthPrefix, header.data(), header.size());
    if (!payload.empty())
      std::memcpy(out + kLengthPrefix + header.size(), payload.data(), payload.size());
    return kLengthPrefix + header.size() + payload.size();
  }

  std::vector<std::uint8_t> frame(std::span<const std::uint8_t> header,
                                  std::span<const std::uint8_t> payload) const {
    std::vector<std::uint8_t> v(kLengthPrefix + header.size() + payload.size());
    write_frame(v.data(), header, payload);
    return v;
  }

  // Hands one received frame to the engine; false if it is malformed.
  bool dispatch(const std::uint8_t* data, std::size_t length) {
    std::uint32_t hlen = 0;
    if (length < kLengthPrefix) return false;
    std::memcpy(&hlen, data, kLengthPrefix);
    if (hlen > length - kLengthPrefix || hlen > kMaxHeader) return false;
    ++counters_.messages_received;
    if (receiver_ != nullptr) {
      receiver_->on_message({data + kLengthPrefix, hlen},
                            {data + kLengthPrefix + hlen, length - kLengthPrefix - hlen});
    }
    return true;
  }

  Status post_receive(std::size_t peer, std::uint32_t k) {
    const std::size_t index = peer * options_.receive_depth + k;
    std::uint8_t* buf = recv_pool_.data() + index * slot_size_;
    return qps_[peer]->post_recv(
        wr_id(WrKind::kRecv, index),
        LocalBuffer{buf, static_cast<std::uint32_t>(slot_size_), recv_mr_->lkey});
  }

  unsigned deliver_self() {
    unsigned n = 0;
    // Messages a callback sends to self wait for the next turn, in order.
    std::deque<std::vector<std::uint8_t>> batch;
    batch.swap(self_queue_);
    for (auto& m : batch) {
      ++n;
      if (!dispatch(m.data(), m.size())) TW_WARN("verbs", "malformed message to self dropped");
    }
    return n;
  }

  void drain_channel() {
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    unsigned events = 0;
    while (ibv_get_cq_event(channel_.get(), &cq, &ctx) == 0) ++events;  // non-blocking fd
    if (events > 0) ibv_ack_cq_events(cq_.get(), events);
  }

  unsigned poll_completions() {
    unsigned handled = 0;
    ibv_wc wc[16];
    for (;;) {
      const int got = ibv_poll_cq(cq_.get(), 16, wc);
      if (got <= 0) break;
      for (int i = 0; i < got; ++i) handle(wc[i]);
      handled += static_cast<unsigned>(got);
    }
    return handled;
  }

  void handle(const ibv_wc& wc) {
    const std::uint64_t index = index_of(wc.wr_id);
    switch (kind_of(wc.wr_id)) {
      case WrKind::kRecv: {
        if (wc.status != IBV_WC_SUCCESS) {
          if (wc.status != IBV_WC_WR_FLUSH_ERR) {
            TW_WARN("verbs", completion_error("receive", wc).to_string());
          }
          return;
        }
        const std::size_t peer = index / options_.receive_depth;
        const auto k = static_cast<std::uint32_t>(index % options_.receive_depth);
        if (!dispatch(recv_pool_.data() + index * slot_size_, wc.byte_len)) {
          TW_WARN("verbs", "malformed message from rank " << peer << " dropped");
        }
        // The engine has copied what it keeps: the buffer can take the next.
        if (peer < qps_.size() && qps_[peer]) {
          Status s = post_receive(peer, k);
          if (!s.is_ok()) TW_WARN("verbs", s.to_string());
        }
        return;
      }
      case WrKind::kSend:
        free_send_.push_back(static_cast<std::uint32_t>(index));
        if (wc.status != IBV_WC_SUCCESS) {
          TW_ERROR("verbs", completion_error("SEND", wc).to_string());
        }
        return;
      case WrKind::kRead:
      case WrKind::kWrite:
      case WrKind::kCas: {
        auto it = pending_.find(index);
        if (it == pending_.end()) return;
        Pending p = std::move(it->second);
        pending_.erase(it);
        const WrKind kind = kind_of(wc.wr_id);
        const char* what = kind == WrKind::kRead    ? "RDMA READ"
                           : kind == WrKind::kWrite ? "RDMA WRITE"
                                                    : "compare-and-swap";
        Status s = wc.status == IBV_WC_SUCCESS ? Status::ok() : completion_error(what, wc);
        if (kind != WrKind::kCas) {
          --rdma_in_flight_;
        } else {
          if (p.old_value != nullptr) *p.old_value = atomic_pool_[p.atomic_slot];
          free_atomic_.push_back(p.atomic_slot);
        }
        p.local.reset();
        p.done(s);
        return;
      }
    }
  }

  Device device_;
  VerbsOptions options_;
  int gid_index_ = 0;
  CompChannelPtr channel_;
  CqPtr cq_;
  std::vector<std::unique_ptr<RcQueuePair>> qps_;  // by peer; none for self
  std::size_t slot_size_ = 0;
  std::vector<std::uint8_t> recv_pool_, send_pool_;
  std::vector<std::uint64_t> atomic_pool_;
  MrPtr recv_mr_, send_mr_, atomic_mr_;
  std::vector<std::uint32_t> free_send_, free_atomic_;
  std::unordered_map<std::uint64_t, Pending> pending_;
  std::uint64_t next_op_ = 1;
  std::uint32_t rdma_in_flight_ = 0;
  bool armed_ = false;  // a CQ event may be due on the channel
  std::deque<std::vector<std::uint8_t>> self_queue_;
  // Slot claims under IBV_ATOMIC_HCA (local_compare_and_swap).
  CqPtr loopback_cq_;
  std::unique_ptr<RcQueuePair> loopback_;
  std::vector<std::uint64_t> loopback_result_;
  MrPtr loopback_mr_;
  transport::Receiver* receiver_ = nullptr;
  transport::TransportCounters counters_;
};

}  // namespace

Result<std::unique_ptr<transport::Transport>> create_verbs_transport(const VerbsOptions& options) {
  // Receive buffers are eager-threshold sized, depth x peers of them.
  if (options.max_payload > (std::size_t{64} << 10)) {
    return Status(ErrorCode::kConfig,
                  "TAGWIRE_EAGER_THRESHOLD=" + std::to_string(options.max_payload) +
                      ": the verbs transport takes at most 64K (its receive buffers are that "
                      "size, per peer)");
  }
  auto device = Device::open(options.device);
  if (!device) return device.status();
  // The tag-matching probe (TAGWIRE_TM): the offload itself is built and
  // tested as far as TagMatchingReceiver (verbs/tag_matching_receiver.h);
  // this transport does not carry the engine's messages through it yet, so
  // a device that has it still matches in software, and says so.
  const DeviceCaps& caps = device->caps();
  auto hardware = use_hardware_tag_matching(caps, options.tag_matching);
  if (!hardware) return hardware.status();
  if (*hardware) {
    if (options.tag_matching == TagMatchingChoice::kOn) {
      return Status(ErrorCode::kUnsupported,
                    "TAGWIRE_TM=on: device " + caps.name +
                        " has tag matching, but the verbs transport does not yet carry the "
                        "engine's messages through it; use TAGWIRE_TM=auto");
    }
    TW_INFO("verbs",
            "device " << caps.name << " offers tag matching (IBV_TM_CAP_RC, " << caps.tm_max_tags
                      << " tags); matching in software: the transport does not use it yet");
  } else {
    TW_INFO("verbs",
            "tag matching in software: device "
                << caps.name
                << (options.tag_matching == TagMatchingChoice::kOff ? " (TAGWIRE_TM=off)"
                                                                    : " reports no IBV_TM_CAP_RC"));
  }
  auto t = std::make_unique<VerbsTransport>(std::move(device).value(), options);
  TAGWIRE_RETURN_IF_ERROR(t->start());
  TW_INFO("verbs", "device " << options.device << " ready for " << options.size << " ranks");
  return std::unique_ptr<transport::Transport>(std::move(t));
}

}  // namespace tagwire::verbs
