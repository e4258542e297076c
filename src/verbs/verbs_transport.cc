#include "verbs/verbs_transport.h"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/log.h"
#include "verbs/cm_connector.h"
#include "verbs/device.h"
#include "verbs/eager_ring.h"
#include "verbs/memory_hooks.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/registration_cache.h"
#include "verbs/verbs_status.h"
#include "verbs/verbs_tag_offload.h"

namespace tagwire::verbs {

namespace {

constexpr std::size_t kMaxHeader = 64;
constexpr std::uint32_t kSendSlots = 64;    // registered staging slots, all peers
constexpr std::uint32_t kAtomicSlots = 64;  // registered CAS result words
constexpr std::uint32_t kMaxRdma = 64;      // RDMA READs and WRITEs in flight
// A ring WRITE or credit WRITE asks for a completion once in this many (or
// when staging slots run low): the rest complete with it, by RC order.
constexpr std::uint32_t kSignalEvery = 16;
// Eager WRITEs and credit WRITEs occupy send queue entries until a
// signaled one after them completes.
constexpr std::uint32_t kSendQueueDepth = 256;
// What a peer's inline WRITE may carry: an 8-byte message's whole frame.
constexpr std::uint32_t kWantInline = 256;
constexpr std::size_t kLengthPrefix = sizeof(std::uint32_t);  // self messages: header length

// Work request ids: kind in the top byte, an index below. Ring and credit
// WRITEs and receives carry the peer in bits 32..55 and, below, how many
// staging slots that peer had held when the WRITE was posted.
enum class WrKind : std::uint64_t {
  kRecv = 1,
  kRead = 3,
  kCas = 4,
  kWrite = 5,
  kRing = 6,    // an eager message into the peer's ring
  kCredit = 7,  // our consumed count into the peer's credit word (or a flush)
  kClose = 8,   // the closing mark into the peer's credit word
};
std::uint64_t wr_id(WrKind kind, std::uint64_t index) {
  return (static_cast<std::uint64_t>(kind) << 56) | index;
}
WrKind kind_of(std::uint64_t id) {
  return static_cast<WrKind>(id >> 56);
}
std::uint64_t index_of(std::uint64_t id) {
  return id & ((std::uint64_t{1} << 56) - 1);
}
std::uint64_t peer_index(std::size_t peer, std::uint64_t held) {
  return (static_cast<std::uint64_t>(peer) << 32) | (held & 0xffffffffu);
}

// Published through the bootstrap: how to reach each of this rank's QPs,
// and where peers write eager messages and returned credits.
struct WireAddress {
  std::uint32_t magic;
  std::uint32_t count;  // QPs, one per peer (self included, unused)
  ibv_gid gid;
  std::uint16_t lid;
  std::uint16_t flags;           // kWakeOnEveryMessage
  std::uint64_t ring_address;    // rings, one per sender rank, ring_bytes each
  std::uint64_t credit_address;  // credit words, one per receiver rank, 8 bytes each
  std::uint32_t ring_rkey;
  std::uint32_t credit_rkey;
  std::uint32_t ring_slots;
  std::uint32_t slot_size;
  std::uint32_t cm_ipv4;  // rdma_cm: where this rank listens (network order)
  std::uint16_t cm_port;
  std::uint16_t reserved;
  // followed by `count` x {qpn, psn} (zeros under rdma_cm: QPs come later),
  // and with kTagOffload by `count` x {send qpn, psn, tagged qpn, psn}
};
constexpr std::uint32_t kAddressMagic = 0x54575643;  // "TWVC"
constexpr std::uint16_t kWakeOnEveryMessage = 1;     // a progress thread sleeps on events
constexpr std::uint16_t kConnectByCm = 2;            // QPs through rdma_cm, on first use
constexpr std::uint16_t kTagOffload = 4;             // messages through the NIC's tag matching
// In a credit word, above the consumed count: the writer is closing.
constexpr std::uint64_t kClosingMark = std::uint64_t{1} << 63;

// A registration of the engine's: its own MR, or an entry of the
// registration cache held until it is destroyed.
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
  VerbsRegistration(RegistrationCache* cache, RegistrationCache::Entry* entry, void* address,
                    std::size_t length, transport::TransportCounters* counters)
      : rkey_(RegistrationCache::rkey(entry)),
        address_(address),
        length_(length),
        counters_(counters),
        cache_(cache),
        entry_(entry) {
    ++counters_->registrations;
    counters_->registered_bytes += length_;
  }
  ~VerbsRegistration() override {
    if (entry_ != nullptr) cache_->release(entry_);
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
  RegistrationCache* cache_ = nullptr;
  RegistrationCache::Entry* entry_ = nullptr;
};

// A cache entry's MR.
class CachedMr final : public CachedRegion {
 public:
  explicit CachedMr(MrPtr mr) : mr_(std::move(mr)) {}
  std::uint32_t lkey() const override { return mr_->lkey; }
  std::uint32_t rkey() const override { return mr_->rkey; }

 private:
  MrPtr mr_;
};

// The cache's budget of registered bytes kept beyond those in use.
constexpr std::size_t kCacheBytes = std::size_t{1} << 30;

// Memory from aligned_alloc, zero-filled, freed with free().
struct FreeDeleter {
  void operator()(std::uint8_t* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<std::uint8_t[], FreeDeleter>;
AlignedBytes aligned_zeroed(std::size_t length) {
  const std::size_t rounded = (std::max<std::size_t>(length, 1) + 4095) / 4096 * 4096;
  AlignedBytes b(static_cast<std::uint8_t*>(std::aligned_alloc(4096, rounded)));
  if (b) std::memset(b.get(), 0, rounded);
  return b;
}

class VerbsTransport final : public transport::Transport {
 public:
  VerbsTransport(Device device, const VerbsOptions& options)
      : device_(std::move(device)), options_(options), layout_(ring_layout(options)) {}

  // `tag_offload`: the NIC matches tags (the device's TM-SRQ, or a test's).
  Status start(bool tag_offload) {
    auto gid = device_.roce_v2_ipv4_gid_index();
    if (!gid) return gid.status();
    gid_index_ = *gid;
    tag_offload_wanted_ = tag_offload;
    TAGWIRE_RETURN_IF_ERROR(choose_connection_mode());
    channel_.reset(ibv_create_comp_channel(device_.context()));
    if (!channel_) return verbs_error("ibv_create_comp_channel", errno);
    const int flags = fcntl(channel_->fd, F_GETFL);
    if (fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
      return verbs_error("fcntl(O_NONBLOCK) on the completion channel", errno);
    }
    const auto peers = static_cast<std::size_t>(options_.size);
    const int cq_size = static_cast<int>((wake_receives() + kSendQueueDepth) * peers + 16);
    cq_.reset(ibv_create_cq(device_.context(), cq_size, nullptr, channel_.get(), 0));
    if (!cq_) return verbs_error("ibv_create_cq", errno);

    // Rings (one per sender) and credit words (one per receiver) are
    // written by peers; staging slots, CAS results and outgoing credit
    // counts only by this NIC.
    // Under rdma_cm a ring is made when its connection is (make_cm_qp) and
    // its address travels in the connection's private data: a rank pays
    // for the peers it talks to, not for the job. The QP exchange
    // publishes one block of rings for every peer at start-up.
    const bool lazy_rings = cm_ipv4_ != 0;
    const std::size_t ring_bytes = lazy_rings ? 0 : layout_.ring_bytes() * peers;
    if (lazy_rings) {
      lazy_rings_.resize(peers);
      lazy_ring_mrs_.resize(peers);
    } else {
      rings_ = aligned_zeroed(ring_bytes);
    }
    credit_words_ = aligned_zeroed(peers * 8);
    credit_out_ = aligned_zeroed(peers * 8);
    staging_ = aligned_zeroed(std::size_t{layout_.slot_size} * kSendSlots);
    atomic_pool_.assign(kAtomicSlots, 0);
    if ((!lazy_rings && !rings_) || !credit_words_ || !credit_out_ || !staging_) {
      return Status(ErrorCode::kOutOfResources, "verbs transport: out of memory for its rings");
    }
    constexpr int kLocal = IBV_ACCESS_LOCAL_WRITE;
    constexpr int kPeerWrites = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    struct Region {
      MrPtr* mr;
      void* address;
      std::size_t length;
      int access;
      const char* what;
    };
    const Region regions[] = {
        {&ring_mr_, rings_.get(), ring_bytes, kPeerWrites, "eager rings"},
        {&credit_mr_, credit_words_.get(), peers * 8, kPeerWrites, "credit words"},
        {&credit_out_mr_, credit_out_.get(), peers * 8, kLocal, "outgoing credit counts"},
        {&staging_mr_, staging_.get(), std::size_t{layout_.slot_size} * kSendSlots, kLocal,
         "staging slots"},
        {&atomic_mr_, atomic_pool_.data(), atomic_pool_.size() * 8, kLocal, "atomic results"},
    };
    for (const Region& r : regions) {
      if (r.length == 0) continue;  // lazy rings
      auto mr = verbs::register_memory(device_, r.address, r.length, r.access);
      if (!mr) return mr.status().with_context(r.what);
      *r.mr = std::move(mr).value();
      counters_.registered_bytes += r.length;
    }
    for (std::uint32_t i = 0; i < kSendSlots; ++i) free_send_.push_back(i);
    for (std::uint32_t i = 0; i < kAtomicSlots; ++i) free_atomic_.push_back(i);
    if (options_.registration_cache) TAGWIRE_RETURN_IF_ERROR(start_cache());
    TW_INFO("verbs", "eager rings: " << layout_.slots << " slots of " << layout_.slot_size
                                     << " bytes per peer"
                                     << (cm_ipv4_ != 0 ? ", each made with its connection"
                                                       : ", all at start-up"));

    peers_.reserve(peers);
    for (std::size_t p = 0; p < peers; ++p) peers_.emplace_back(layout_.slots);
    qps_.resize(peers);
    if (cm_ipv4_ != 0) {
      // QPs on first use: listen, publish where, connect when needed.
      auto c = CmConnector::listen(cm_ipv4_, options_.rank, [this](int peer, CmCard* card) {
        return make_cm_qp(peer, card);
      });
      if (!c) return c.status().with_context("rdma_cm listener on " + device_.caps().name);
      connector_ = std::move(c).value();
      return Status::ok();
    }
    for (std::size_t p = 0; p < peers; ++p) {
      if (p == static_cast<std::size_t>(options_.rank)) continue;  // self never touches the NIC
      auto qp = make_qp();
      if (!qp) return qp.status().with_context("QP for rank " + std::to_string(p));
      qps_[p] = std::move(qp).value();
    }
    if (tag_offload) TAGWIRE_RETURN_IF_ERROR(start_tag_offload());
    return Status::ok();
  }

  transport::TagOffload* tag_offload() override { return tag_offload_.get(); }

  bool connects_on_first_use() const override { return connector_ != nullptr; }

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
    // A job of one rank has no ring QP, but with tag matching its channel to
    // itself needs the port's GID and LID too.
    if (any.qpn == 0 && tag_offload_) any = tag_offload_->address(options_.rank).send;
    head.gid = any.gid;
    head.lid = any.lid;
    head.flags = options_.wake_on_every_message ? kWakeOnEveryMessage : 0;
    // Under rdma_cm no rings yet: each comes with its connection.
    head.ring_address = reinterpret_cast<std::uint64_t>(rings_.get());
    head.credit_address = reinterpret_cast<std::uint64_t>(credit_words_.get());
    head.ring_rkey = ring_mr_ ? ring_mr_->rkey : 0;
    head.credit_rkey = credit_mr_->rkey;
    head.ring_slots = layout_.slots;
    head.slot_size = layout_.slot_size;
    if (connector_) {
      head.flags |= kConnectByCm;
      head.cm_ipv4 = connector_->endpoint().ipv4;
      head.cm_port = connector_->endpoint().port;
    }
    if (tag_offload_) head.flags |= kTagOffload;
    std::vector<std::uint8_t> out(sizeof(head) + qps_.size() * (tag_offload_ ? 24 : 8));
    std::memcpy(out.data(), &head, sizeof(head));
    for (std::size_t p = 0; p < qps_.size(); ++p) {
      std::uint32_t pair[2] = {0, 0};
      if (qps_[p]) {  // the port's GID and LID were read once, above
        pair[0] = qps_[p]->qpn();
        pair[1] = qps_[p]->psn();
      }
      std::memcpy(out.data() + sizeof(head) + p * 8, pair, 8);
    }
    for (std::size_t p = 0; tag_offload_ && p < qps_.size(); ++p) {
      const ChannelAddress c = tag_offload_->address(static_cast<int>(p));
      const std::uint32_t four[4] = {c.send.qpn, c.send.psn, c.tagged.qpn, c.tagged.psn};
      std::memcpy(out.data() + sizeof(head) + qps_.size() * 8 + p * 16, four, 16);
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
      if (p == me) continue;
      const auto& a = addresses[p];
      WireAddress head{};
      if (a.size() < sizeof(head)) return {ErrorCode::kProtocol, "short verbs address"};
      std::memcpy(&head, a.data(), sizeof(head));
      const bool offloads = (head.flags & kTagOffload) != 0;
      if (head.magic != kAddressMagic || head.count != qps_.size() ||
          a.size() != sizeof(head) + head.count * (offloads ? 24 : 8)) {
        return {ErrorCode::kProtocol,
                "rank " + std::to_string(p) + " published no verbs address for this job"};
      }
      if (head.ring_slots != layout_.slots || head.slot_size != layout_.slot_size) {
        return {ErrorCode::kConfig, "rank " + std::to_string(p) + "'s eager ring has " +
                                        std::to_string(head.ring_slots) + " slots of " +
                                        std::to_string(head.slot_size) + " bytes, this rank's " +
                                        std::to_string(layout_.slots) + " of " +
                                        std::to_string(layout_.slot_size) +
                                        ": every rank needs the same TAGWIRE_EAGER_THRESHOLD and "
                                        "TAGWIRE_VERBS_RING_BUDGET"};
      }
      if (offloads != (tag_offload_ != nullptr)) {
        return {ErrorCode::kConfig,
                "rank " + std::to_string(p) + " matches tags " +
                    (offloads ? "in the NIC" : "in software") +
                    ", this rank the other way: every rank needs the same TAGWIRE_TM and device "
                    "kind"};
      }
      if (((head.flags & kConnectByCm) != 0) != (connector_ != nullptr)) {
        return {ErrorCode::kConfig,
                "rank " + std::to_string(p) + " connects " +
                    ((head.flags & kConnectByCm) != 0 ? "through rdma_cm" : "by QP exchange") +
                    ", this rank the other way: every rank needs the same "
                    "TAGWIRE_VERBS_CONNECT and device kind"};
      }
      Peer& peer = peers_[p];
      if (!connector_) {
        peer.ring_address = head.ring_address + me * layout_.ring_bytes();
        peer.ring_rkey = head.ring_rkey;
      }
      peer.credit_address = head.credit_address + me * 8;
      peer.credit_rkey = head.credit_rkey;
      peer.wake_all = (head.flags & kWakeOnEveryMessage) != 0;
      peer.cm = CmEndpoint{head.cm_ipv4, head.cm_port};
      if (connector_) continue;  // connected on first use
      std::uint32_t pair[2];
      std::memcpy(pair, a.data() + sizeof(head) + me * 8, 8);
      QpAddress remote;
      remote.qpn = pair[0];
      remote.psn = pair[1];
      remote.gid = head.gid;
      remote.lid = head.lid;
      // Receives first: a peer's first WRITE with immediate may come as
      // soon as both sides are connected.
      TAGWIRE_RETURN_IF_ERROR(post_wake_receives(*qps_[p], p));
      TAGWIRE_RETURN_IF_ERROR(qps_[p]
                                  ->connect(remote, gid_index_)
                                  .with_context("connecting to rank " + std::to_string(p)));
      ++counters_.connections;
    }
    if (tag_offload_) TAGWIRE_RETURN_IF_ERROR(connect_tag_offload(addresses));
    return Status::ok();
  }

  void set_receiver(transport::Receiver* receiver) override { receiver_ = receiver; }
  std::size_t max_header() const override { return kMaxHeader; }

  Result<transport::Issued> send(transport::PeerId peer, std::span<const std::uint8_t> header,
                                 std::span<const std::uint8_t> payload, transport::Completion,
                                 transport::Delivery delivery) override {
    TAGWIRE_RETURN_IF_ERROR(check_peer(peer));
    if (header.size() > kMaxHeader || payload.size() > options_.max_payload) {
      return Status(ErrorCode::kInvalidArgument, "message of " + std::to_string(header.size()) +
                                                     " + " + std::to_string(payload.size()) +
                                                     " bytes exceeds the verbs slot");
    }
    ++counters_.messages_sent;
    // With the NIC matching, everything to a rank (self too) shares the one
    // channel its tagged messages take, so order holds across both kinds.
    if (tag_offload_ && tag_offload_->in_use()) {
      return tag_offload_->send_untagged(peer, header, payload);
    }
    if (peer == options_.rank) {
      self_queue_.emplace_back(frame(header, payload));
      return transport::Issued::kDone;
    }
    const auto p = static_cast<std::size_t>(peer);
    Peer& to = peers_[p];
    if (!to.failed.is_ok()) return to.failed;
    if (!qps_[p]) TAGWIRE_RETURN_IF_ERROR(start_connection(p));
    if (!to.backlog.empty() || !qps_[p] || !window_open(p)) {
      // Not connected yet, or no free slot at the receiver: the message
      // waits here, in order, until both are there (progress() sends it).
      Backlogged b;
      b.bytes.assign(header.begin(), header.end());
      b.bytes.insert(b.bytes.end(), payload.begin(), payload.end());
      b.header_length = header.size();
      b.delivery = delivery;
      if (to.backlog.empty()) ++backlogged_peers_;
      to.backlog.push_back(std::move(b));
      if (qps_[p]) ++counters_.credit_waits;
      return transport::Issued::kDone;
    }
    TAGWIRE_RETURN_IF_ERROR(write_message(p, header, payload, delivery));
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
    if (cache_ && access == transport::RemoteAccess::kRead) {
      // A rendezvous send's buffer: the cache's (read-only to peers).
      auto entry = cache_->acquire(address, length);
      if (!entry) return entry.status();
      return std::unique_ptr<transport::Registration>(
          new VerbsRegistration(cache_.get(), *entry, address, length, &counters_));
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
    TAGWIRE_RETURN_IF_ERROR(ensure_connected(static_cast<std::size_t>(peer)));
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
    pending_.emplace(op, Pending{done, nullptr, nullptr, old_value, slot});
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
    // rdma_cm events cost a system call to look for: every time while
    // connections are being made, else one poll in 1024 (a peer's request
    // waits that long for an application that polls; arm() looks too,
    // for a helper thread about to sleep).
    if (connector_ && (connector_->busy() || (++cm_tick_ & 1023) == 0)) n += poll_connections();
    n += poll_completions();
    n += poll_rings();
    if (backlogged_peers_ > 0) n += send_backlogs();
    n += poll_tag_offload();
    return n;
  }

  Result<bool> arm() override {
    if (!self_queue_.empty()) return false;
    // SEND completions raise no event, and a message waiting for a staging
    // slot needs them: no sleep until the peers have everything.
    if (tag_offload_ && tag_offload_->sending()) return false;
    if (int rc = ibv_req_notify_cq(cq_.get(), 0); rc != 0)
      return verbs_error("ibv_req_notify_cq", rc);
    // With tag matching every message arrives on the tag-matching CQ, which
    // shares the channel: a cancel request there wakes the agent at once.
    if (tag_offload_) TAGWIRE_RETURN_IF_ERROR(tag_offload_->request_event());
    armed_ = true;
    // A completion that landed before the request would raise no event;
    // neither does an eager WRITE without immediate, so the rings are
    // looked at too.
    if (poll_completions() != 0) return false;
    if (connector_ && poll_connections() != 0) return false;
    if (poll_tag_offload() != 0) return false;
    return !rings_have_messages();
  }
  int event_fd() const override { return channel_->fd; }

  Status disconnect_all() override {
    // Every message must reach a peer that may still need it, and no rank
    // may wait for a peer that already closed (it would wait for ever: a
    // WRITE to a destroyed QP is never acknowledged). So each rank sends
    // every peer a closing mark in its credit word, signaled, behind all
    // its other WRITEs, and closes a connection once either its mark has
    // been acknowledged (so everything before it arrived) or the peer's
    // mark has arrived (the peer is past the job-wide barrier and needs
    // nothing more from us). One of the two always happens.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (backlogged_peers_ > 0 && std::chrono::steady_clock::now() < until) progress();
    // Every SEND acknowledged means it is in the peer's SRQ buffers, which
    // outlive our QPs: then ours can go.
    while (tag_offload_ && tag_offload_->sending() && std::chrono::steady_clock::now() < until) {
      progress();
    }
    for (std::size_t p = 0; p < peers_.size(); ++p) {
      if (!qps_[p]) continue;
      Status s = post_credit(p, kClosingMark);
      if (!s.is_ok()) {
        TW_WARN("verbs", s.to_string());
        peers_[p].closed = true;  // nothing to wait for on a broken QP
      }
    }
    auto open_peers = [this] {
      std::size_t n = 0;
      for (std::size_t p = 0; p < peers_.size(); ++p) {
        if (qps_[p] && !peers_[p].closed && (credit_word(p) & kClosingMark) == 0) ++n;
      }
      return n;
    };
    while ((open_peers() > 0 || !pending_.empty()) && std::chrono::steady_clock::now() < until) {
      poll_completions();
    }
    if (open_peers() > 0 || !pending_.empty()) {
      TW_WARN("verbs", "closing with work outstanding after 10 s: "
                           << open_peers() << " peers neither acknowledged nor closed, "
                           << pending_.size() << " READ/WRITE/CAS pending");
    }
    qps_.clear();
    tag_offload_.reset();
    connector_.reset();  // its ids after the QPs: peers see a disconnect
    if (cache_) {
      const RegistrationCacheStats r = cache_->stats();
      TW_INFO("verbs", "registration cache: " << r.hits << " hits, " << r.misses << " misses, "
                                              << r.invalidated << " invalidated, " << r.evicted
                                              << " evicted, " << r.entries << " entries left");
    }
    return Status::ok();
  }

  transport::TransportCounters counters() const override {
    transport::TransportCounters c = counters_;
    if (cache_) {
      const RegistrationCacheStats r = cache_->stats();
      c.rcache_hits = r.hits;
      c.rcache_misses = r.misses;
      c.rcache_invalidated = r.invalidated;
    }
    c.open_connections = static_cast<std::uint64_t>(
        std::count_if(qps_.begin(), qps_.end(), [](const auto& qp) { return qp != nullptr; }));
    // Tagged messages go straight to the facet (send() counted the rest).
    if (tag_offload_) c.messages_sent += tag_offload_->counters().tagged_sent;
    return c;
  }

  ~VerbsTransport() override {
    qps_.clear();  // before the CQ, the MRs and the PD they use
    tag_offload_.reset();
    connector_.reset();
    if (cache_) {
      remove_unmap_listener(cache_.get());  // no hook may reach it any more
      pending_.clear();
      cache_.reset();
    }
    loopback_.reset();
    loopback_cq_.reset();
    pending_.clear();
    cq_.reset();
    channel_.reset();
  }

 private:
  struct Pending {
    transport::Completion done;
    MrPtr local;                       // a READ's destination or WRITE's source, uncached
    RegistrationCache::Entry* cached;  // the same from the cache
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
    TAGWIRE_RETURN_IF_ERROR(ensure_connected(static_cast<std::size_t>(peer)));
    while (rdma_in_flight_ >= kMaxRdma) poll_completions();
    const char* what = kind == WrKind::kRead ? "registering an RDMA READ destination"
                                             : "registering an RDMA WRITE source";
    Pending pending{done, nullptr, nullptr, nullptr, 0};
    std::uint32_t lkey = 0;
    if (cache_) {
      auto entry = cache_->acquire(local.data(), local.size());
      if (!entry) return entry.status().with_context(what);
      pending.cached = *entry;
      lkey = RegistrationCache::lkey(*entry);
    } else {
      auto mr = verbs::register_memory(device_, local.data(), local.size(), IBV_ACCESS_LOCAL_WRITE);
      if (!mr) return mr.status().with_context(what);
      pending.local = std::move(mr).value();
      lkey = pending.local->lkey;
    }
    const std::uint64_t op = next_op_++;
    const LocalBuffer buffer{local.data(), static_cast<std::uint32_t>(local.size()), lkey};
    RcQueuePair& qp = *qps_[static_cast<std::size_t>(peer)];
    Status s = kind == WrKind::kRead
                   ? qp.post_read(wr_id(kind, op), buffer, remote_address, rkey)
                   : qp.post_write(wr_id(kind, op), buffer, remote_address, rkey, true);
    if (!s.is_ok()) {
      if (pending.cached != nullptr) cache_->release(pending.cached);
      return s;
    }
    pending_.emplace(op, std::move(pending));
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

  // Messages to self: length-prefixed frames in a queue.
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

  void deliver(std::span<const std::uint8_t> header, std::span<const std::uint8_t> payload) {
    ++counters_.messages_received;
    if (receiver_ != nullptr) receiver_->on_message(header, payload);
  }

  unsigned deliver_self() {
    // Checked first: an empty std::deque still allocates its map, and this
    // runs on every poll (perf in the VM showed malloc/free at ~8 %).
    if (self_queue_.empty()) return 0;
    unsigned n = 0;
    // Messages a callback sends to self wait for the next turn, in order.
    std::deque<std::vector<std::uint8_t>> batch;
    batch.swap(self_queue_);
    for (auto& m : batch) {
      ++n;
      std::uint32_t hlen = 0;
      std::memcpy(&hlen, m.data(), kLengthPrefix);
      deliver({m.data() + kLengthPrefix, hlen},
              {m.data() + kLengthPrefix + hlen, m.size() - kLengthPrefix - hlen});
    }
    return n;
  }

  // ---- eager ring, sender side

  struct Backlogged {
    std::vector<std::uint8_t> bytes;  // header, then payload
    std::size_t header_length = 0;
    transport::Delivery delivery = transport::Delivery::kPolled;
  };

  struct Peer {
    explicit Peer(std::uint32_t slots) : window(slots), back(std::max(1u, slots / 4)) {}
    // Sending to the peer: its ring for us, our credit word there.
    CreditWindow window;
    std::uint64_t ring_address = 0;
    std::uint32_t ring_rkey = 0;
    std::uint64_t credit_address = 0;
    std::uint32_t credit_rkey = 0;
    bool wake_all = false;  // the peer sleeps on events for every message
    CmEndpoint cm;          // where the peer listens (rdma_cm)
    Status failed;          // connecting gave up: every send to it fails so
    std::deque<Backlogged> backlog;
    std::uint32_t unsignaled = 0;
    std::uint32_t flushes = 0;  // signaled credit WRITEs and flushes in flight
    bool closed = false;        // our closing mark was acknowledged
    // Staging slots of unsignaled WRITEs, freed when a later signaled one
    // on this QP completes (RC completes a QP's work in order).
    std::deque<std::uint32_t> held;
    std::uint64_t held_pushed = 0, held_released = 0;
    // Receiving from the peer.
    std::uint64_t next_serial = 1;
    CreditReturn back;
  };

  std::uint32_t wake_receives() const { return layout_.slots + 16; }

  // Every rank computes the same from the same job size and settings (and
  // set_peer_addresses checks that it did).
  static RingLayout ring_layout(const VerbsOptions& o) {
    RingLayout l = RingLayout::for_messages(kMaxHeader, o.max_payload, 1);
    l.slots = o.ring_slots != 0
                  ? o.ring_slots
                  : RingLayout::slots_for_job(static_cast<std::size_t>(std::max(o.size - 1, 1)),
                                              l.slot_size, o.ring_budget);
    return l;
  }

  std::span<std::uint8_t> staging_slot(std::uint32_t slot) {
    return {staging_.get() + std::size_t{slot} * layout_.slot_size, layout_.slot_size};
  }
  std::span<std::uint8_t> ring_slot(std::size_t sender, std::uint64_t serial) {
    std::uint8_t* ring =
        rings_ ? rings_.get() + sender * layout_.ring_bytes() : lazy_rings_[sender].get();
    return {ring + layout_.slot_offset(serial), layout_.slot_size};
  }

  // Whether the peer has a free slot for our next message, reading the
  // credit word it writes if the acks we have do not say so.
  bool window_open(std::size_t p) {
    Peer& to = peers_[p];
    if (to.window.can_send()) return true;
    to.window.on_ack(static_cast<std::uint32_t>(credit_word(p)));
    return to.window.can_send();
  }

  // Whether the next WRITE to `p` asks for a completion: one in
  // kSignalEvery, or every one while staging slots run low.
  bool signal_next(Peer& to, bool holds_slot) {
    if (++to.unsignaled >= kSignalEvery || (holds_slot && free_send_.size() < kSendSlots / 4)) {
      to.unsignaled = 0;
      return true;
    }
    return false;
  }

  Result<std::uint32_t> take_staging_slot() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (free_send_.empty()) {
      // Unsignaled WRITEs on quiet QPs hold slots until something signaled
      // follows them: flush those QPs.
      for (std::size_t p = 0; p < peers_.size(); ++p) {
        if (qps_[p] && !peers_[p].held.empty() && peers_[p].flushes == 0) {
          TAGWIRE_RETURN_IF_ERROR(post_flush(p));
        }
      }
      poll_completions();
      if (std::chrono::steady_clock::now() > until) {
        return Status(ErrorCode::kPeerFailed, "no staging slot came back within 60 s");
      }
    }
    const std::uint32_t slot = free_send_.back();
    free_send_.pop_back();
    return slot;
  }

  // One eager message into the peer's ring; the window has room.
  Status write_message(std::size_t p, std::span<const std::uint8_t> header,
                       std::span<const std::uint8_t> payload, transport::Delivery delivery) {
    auto slot = take_staging_slot();
    if (!slot) return slot.status();
    Peer& to = peers_[p];
    RcQueuePair& qp = *qps_[p];
    const std::uint64_t serial = to.window.take();
    // Our consumed count of the peer's messages rides along for free.
    const std::uint32_t ack = to.back.tell();
    std::span<std::uint8_t> image = staging_slot(*slot);
    const StagedWrite w = stage_message(image, serial, ack, header, payload);
    WriteOptions o;
    o.inline_data = w.length <= qp.max_inline();
    o.with_immediate = delivery == transport::Delivery::kWake || to.wake_all;
    o.signaled = signal_next(to, !o.inline_data);
    if (!o.inline_data) {
      to.held.push_back(*slot);
      ++to.held_pushed;
    }
    Status s =
        qp.post_write(wr_id(WrKind::kRing, peer_index(p, to.held_pushed)),
                      LocalBuffer{image.data() + w.offset, static_cast<std::uint32_t>(w.length),
                                  staging_mr_->lkey},
                      to.ring_address + layout_.slot_offset(serial) + w.offset, to.ring_rkey, o);
    // Inline data was copied by the post: the slot is free again.
    if (o.inline_data) free_send_.push_back(*slot);
    if (!s.is_ok()) return s.with_context("eager WRITE to rank " + std::to_string(p));
    if (o.with_immediate) ++counters_.wake_writes;
    return Status::ok();
  }

  unsigned send_backlogs() {
    unsigned n = 0;
    for (std::size_t p = 0; p < peers_.size(); ++p) {
      Peer& to = peers_[p];
      if (!qps_[p]) continue;
      while (!to.backlog.empty() && window_open(p)) {
        Backlogged b = std::move(to.backlog.front());
        to.backlog.pop_front();
        if (to.backlog.empty()) --backlogged_peers_;
        std::span<const std::uint8_t> all(b.bytes);
        Status s =
            write_message(p, all.first(b.header_length), all.subspan(b.header_length), b.delivery);
        if (!s.is_ok()) TW_ERROR("verbs", s.to_string());
        ++n;
      }
    }
    return n;
  }

  // A signaled zero-length WRITE: completes after everything posted before
  // it on the QP, and so frees the staging slots they hold.
  Status post_flush(std::size_t p) {
    Peer& to = peers_[p];
    WriteOptions o;
    o.signaled = true;
    to.unsignaled = 0;
    Status s = write_credit_word(p, 0, WrKind::kCredit, o);
    if (s.is_ok()) ++to.flushes;
    return s;
  }

  // A WRITE of `length` bytes (0 or 8) of our credit_out_ word for `p`
  // into its credit word: a count, a closing mark, or nothing (a flush).
  Status write_credit_word(std::size_t p, std::uint32_t length, WrKind kind,
                           const WriteOptions& o) {
    Peer& to = peers_[p];
    return qps_[p]->post_write(wr_id(kind, peer_index(p, to.held_pushed)),
                               LocalBuffer{credit_out_.get() + p * 8, length, credit_out_mr_->lkey},
                               to.credit_address, to.credit_rkey, o);
  }

  // ---- eager ring, receiver side

  std::uint64_t credit_word(std::size_t p) const {
    std::atomic_ref<std::uint64_t> word(
        *reinterpret_cast<std::uint64_t*>(credit_words_.get() + p * 8));
    return word.load(std::memory_order_acquire);
  }

  // Our consumed count of `p`'s messages into its credit word; with
  // kClosingMark, signaled, as the last WRITE before closing.
  Status post_credit(std::size_t p, std::uint64_t mark) {
    Peer& from = peers_[p];
    auto* out = reinterpret_cast<std::uint64_t*>(credit_out_.get() + p * 8);
    // If the device reads this after a later count overwrote it, the peer
    // just learns more: counts only grow.
    *out = from.back.tell() | mark;
    WriteOptions o;
    o.inline_data = true;
    o.with_immediate = from.wake_all;
    o.signaled = mark != 0 || signal_next(from, false);
    Status s = write_credit_word(p, 8, mark != 0 ? WrKind::kClose : WrKind::kCredit, o);
    if (!s.is_ok()) return s.with_context("credit WRITE to rank " + std::to_string(p));
    if (o.signaled && mark == 0) ++from.flushes;
    return Status::ok();
  }

  void return_credit(std::size_t p) {
    Status s = post_credit(p, 0);
    if (!s.is_ok()) {
      TW_WARN("verbs", s.to_string());
      return;
    }
    ++counters_.credit_writes;
  }

  // Up to this many messages per peer per poll, so that one busy sender
  // cannot starve the others.
  static constexpr unsigned kRingBatch = 16;

  unsigned poll_rings() {
    unsigned n = 0;
    for (std::size_t p = 0; p < peers_.size(); ++p) {
      if (!qps_[p]) continue;
      Peer& from = peers_[p];
      for (unsigned k = 0; k < kRingBatch; ++k) {
        ArrivedMessage m;
        const Arrival a = peek_next(p, &m);
        if (a == Arrival::kEmpty) break;
        if (a == Arrival::kReady) {
          from.window.on_ack(m.ack);
          deliver(m.header, m.payload);
        } else {
          TW_WARN("verbs", "malformed eager message " << from.next_serial << " from rank " << p
                                                      << " dropped");
        }
        release_slot(ring_slot(p, from.next_serial));
        ++from.next_serial;
        from.back.consumed_one();
        if (from.back.write_due()) return_credit(p);
        ++n;
      }
    }
    return n;
  }

  // What lies in the slot of `p`'s next message.
  Arrival peek_next(std::size_t p, ArrivedMessage* m) {
    const std::uint64_t serial = peers_[p].next_serial;
    return peek_message(ring_slot(p, serial), serial, m);
  }

  bool rings_have_messages() {
    for (std::size_t p = 0; p < peers_.size(); ++p) {
      ArrivedMessage m;
      if (qps_[p] && peek_next(p, &m) != Arrival::kEmpty) return true;
    }
    return false;
  }

  // Zero-length receives: a WRITE with immediate consumes one and raises
  // the completion event (the data itself is in the ring).
  Status post_wake_receive(RcQueuePair& qp, std::size_t p) {
    return qp.post_recv(wr_id(WrKind::kRecv, peer_index(p, 0)),
                        LocalBuffer{credit_out_.get(), 0, credit_out_mr_->lkey});
  }
  Status post_wake_receives(RcQueuePair& qp, std::size_t p) {
    for (std::uint32_t k = 0; k < wake_receives(); ++k) {
      TAGWIRE_RETURN_IF_ERROR(post_wake_receive(qp, p));
    }
    return Status::ok();
  }

  // ---- registration cache

  Status start_cache() {
    // Whatever glibc's malloc frees must stay mapped, or the hooks would
    // miss it (memory_hooks.h).
    keep_malloc_memory_mapped();
    cache_ = std::make_unique<RegistrationCache>(
        [this](std::uintptr_t start, std::size_t length) -> Result<std::unique_ptr<CachedRegion>> {
          // READ destinations and rendezvous sources alike.
          auto mr = verbs::register_memory(device_, reinterpret_cast<void*>(start), length,
                                           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
          if (!mr) return mr.status();
          return std::unique_ptr<CachedRegion>(new CachedMr(std::move(mr).value()));
        },
        kCacheBytes);
    if (!add_unmap_listener(
            [](void* ctx, std::uintptr_t start, std::size_t length) {
              static_cast<RegistrationCache*>(ctx)->invalidate(start, length);
            },
            cache_.get())) {
      cache_.reset();
      TW_WARN("verbs", "registration cache off: too many transports in this process");
    }
    return Status::ok();
  }

  // ---- connections

  // The largest inline the device grants, up to what an 8-byte message
  // needs; some devices refuse any inline at all.
  Result<std::unique_ptr<RcQueuePair>> make_qp() {
    auto qp = RcQueuePair::create(device_, cq_.get(), cq_.get(), kSendQueueDepth, kWantInline);
    if (!qp) qp = RcQueuePair::create(device_, cq_.get(), cq_.get(), kSendQueueDepth, 0);
    if (!qp) return qp.status();
    return std::make_unique<RcQueuePair>(std::move(qp).value());
  }

  // For CmConnector: a QP for `peer` with its receives posted, and our
  // ring for its messages (made on the first attempt) on the card.
  Result<std::unique_ptr<RcQueuePair>> make_cm_qp(int peer, CmCard* card) {
    if (peer < 0 || peer >= options_.size || peer == options_.rank) {
      return Status(ErrorCode::kProtocol,
                    "rdma_cm: a connection request from rank " + std::to_string(peer) +
                        ", not a peer in this job of " + std::to_string(options_.size));
    }
    const auto p = static_cast<std::size_t>(peer);
    if (!lazy_rings_[p]) {
      AlignedBytes ring = aligned_zeroed(layout_.ring_bytes());
      if (!ring) {
        return Status(ErrorCode::kOutOfResources,
                      "verbs transport: out of memory for the ring of rank " + std::to_string(p));
      }
      auto mr = verbs::register_memory(device_, ring.get(), layout_.ring_bytes(),
                                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
      if (!mr) return mr.status().with_context("eager ring of rank " + std::to_string(p));
      lazy_rings_[p] = std::move(ring);
      lazy_ring_mrs_[p] = std::move(mr).value();
      counters_.registered_bytes += layout_.ring_bytes();
    }
    card->address = reinterpret_cast<std::uint64_t>(lazy_rings_[p].get());
    card->key = lazy_ring_mrs_[p]->rkey;
    auto qp = make_qp();
    if (!qp) return qp.status();
    TAGWIRE_RETURN_IF_ERROR(post_wake_receives(**qp, static_cast<std::size_t>(peer)));
    return qp;
  }

  // The NIC's tag matching: its TM-SRQ (or a test's) and two QPs per peer.
  Status start_tag_offload() {
    VerbsTagOffloadOptions o;
    o.entries = options_.tm_entries;
    // An entry takes any EAGER or RTS: an RTS's payload is the engine's
    // remote key, which it bounds at 4 KiB (engine.cc, kMaxRemoteKey), and
    // the engine keeps matching in software if an entry holds less.
    o.message_bytes =
        static_cast<std::uint32_t>(kMaxHeader + std::max<std::size_t>(options_.max_payload, 4096));
    o.events = channel_.get();
    std::unique_ptr<TmSrq> srq;
    if (options_.tm_srq_for_tests) {
      auto made = options_.tm_srq_for_tests(device_, o.unexpected_buffers, o.events);
      if (!made) return made.status().with_context("the test's tag-matching SRQ");
      srq = std::move(made).value();
    }
    auto t = VerbsTagOffload::create(device_, gid_index_, options_.size, o, std::move(srq));
    if (!t) return t.status().with_context("tag matching on " + device_.caps().name);
    tag_offload_ = std::move(t).value();
    TW_INFO("verbs", "tag matching in the NIC: " << tag_offload_->capacity()
                                                 << " receives at most, messages up to "
                                                 << o.message_bytes << " B as SENDs");
    return Status::ok();
  }

  // Each rank's tag-matching QPs for this one, self included.
  Status connect_tag_offload(const std::vector<std::vector<std::uint8_t>>& addresses) {
    const auto me = static_cast<std::size_t>(options_.rank);
    for (std::size_t p = 0; p < addresses.size(); ++p) {
      const auto& a = addresses[p];
      WireAddress head{};
      std::memcpy(&head, a.data(), sizeof(head));  // checked above, or our own
      if (a.size() != sizeof(head) + head.count * 24) {
        return {ErrorCode::kProtocol, "rank " + std::to_string(p) + ": no tag-matching QPs"};
      }
      std::uint32_t four[4];
      std::memcpy(four, a.data() + sizeof(head) + head.count * 8 + me * 16, 16);
      ChannelAddress remote;
      remote.send = QpAddress{four[0], four[1], head.lid, head.gid};
      remote.tagged = QpAddress{four[2], four[3], head.lid, head.gid};
      TAGWIRE_RETURN_IF_ERROR(tag_offload_->connect(static_cast<int>(p), remote)
                                  .with_context("tag-matching QPs to rank " + std::to_string(p)));
    }
    return Status::ok();
  }

  // Decides between rdma_cm and the QP exchange (TAGWIRE_VERBS_CONNECT).
  Status choose_connection_mode() {
    const bool ethernet = device_.caps().ethernet;
    if (options_.connect == VerbsConnectChoice::kExchange) return Status::ok();
    if (tag_offload_wanted_) {
      // The two tag-matching QPs per peer are made at start-up and go in
      // the exchanged address; rdma_cm's private data does not carry them.
      if (options_.connect == VerbsConnectChoice::kCm) {
        return Status(ErrorCode::kConfig,
                      "TAGWIRE_VERBS_CONNECT=cm: with tag matching in the NIC the QPs are "
                      "exchanged at start-up; use TAGWIRE_VERBS_CONNECT=auto or exchange, or "
                      "TAGWIRE_TM=off");
      }
      return Status::ok();
    }
    if (!ethernet) {
      if (options_.connect == VerbsConnectChoice::kCm) {
        return Status(ErrorCode::kConfig,
                      "TAGWIRE_VERBS_CONNECT=cm: device " + device_.caps().name +
                          " is InfiniBand, and this transport's rdma_cm path needs a RoCE "
                          "IPv4 address; use TAGWIRE_VERBS_CONNECT=exchange");
      }
      return Status::ok();
    }
    ibv_gid gid{};
    if (ibv_query_gid(device_.context(), device_.caps().port, gid_index_, &gid) != 0) {
      return verbs_error("ibv_query_gid", errno);
    }
    std::memcpy(&cm_ipv4_, gid.raw + 12, 4);  // ::ffff:a.b.c.d, network order
    return Status::ok();
  }

  Status start_connection(std::size_t p) {
    if (!connector_) {
      return Status(ErrorCode::kInternal, "no QP for rank " + std::to_string(p));
    }
    return connector_->connect(static_cast<int>(p), peers_[p].cm)
        .with_context("connecting to rank " + std::to_string(p));
  }

  unsigned poll_connections() {
    std::vector<CmConnector::Connected> made;
    std::vector<CmConnector::Failed> failed;
    connector_->poll(&made, &failed);
    for (auto& c : made) {
      const auto p = static_cast<std::size_t>(c.peer);
      // Its ring for our messages: known before anything is written there.
      peers_[p].ring_address = c.card.address;
      peers_[p].ring_rkey = c.card.key;
      qps_[p] = std::move(c.qp);
      ++counters_.connections;
      if (c.accepted) ++counters_.connections_accepted;
      TW_DEBUG("verbs", "connected to rank " << p << " through rdma_cm");
    }
    for (auto& f : failed) {
      const auto p = static_cast<std::size_t>(f.peer);
      if (qps_[p]) continue;  // the peer's own attempt made it
      TW_ERROR("verbs", f.why.to_string());
      Peer& to = peers_[p];
      to.failed = f.why;
      Status why = f.why;
      if (!to.backlog.empty()) {
        // Their sends completed when they were copied: the loss must reach
        // the engine, which fails what waits on this peer from now on.
        why = why.with_context(std::to_string(to.backlog.size()) +
                               " messages that waited for the connection are lost");
        TW_ERROR("verbs", to.backlog.size() << " messages to rank " << p << " are lost");
        to.backlog.clear();
        --backlogged_peers_;
      }
      if (receiver_ != nullptr) receiver_->on_peer_unreachable(static_cast<int>(p), why);
    }
    return static_cast<unsigned>(made.size() + failed.size());
  }

  // A READ or CAS needs the QP now (in practice it exists: the peer sent
  // us the RTS or we sent it the message).
  Status ensure_connected(std::size_t p) {
    if (qps_[p]) return Status::ok();
    TAGWIRE_RETURN_IF_ERROR(start_connection(p));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!qps_[p]) {
      if (!peers_[p].failed.is_ok()) return peers_[p].failed;
      poll_connections();
      poll_completions();
      if (std::chrono::steady_clock::now() > until) {
        return Status(ErrorCode::kPeerFailed,
                      "no connection to rank " + std::to_string(p) + " within 30 s");
      }
    }
    return Status::ok();
  }

  // The tag-matching channel's SENDs and the TM CQ's completions, where
  // the NIC matches tags and a receiver is there to take its messages.
  unsigned poll_tag_offload() {
    return tag_offload_ && receiver_ != nullptr ? tag_offload_->progress(*receiver_) : 0;
  }

  // Events come from two CQs (the transport's and, with tag matching, the
  // TM-SRQ's); each is acknowledged on the CQ that raised it, or destroying
  // that CQ would wait for ever.
  void drain_channel() {
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    while (ibv_get_cq_event(channel_.get(), &cq, &ctx) == 0) {  // non-blocking fd
      ibv_ack_cq_events(cq, 1);
    }
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

  // A signaled ring or credit WRITE completed: so did every WRITE before
  // it on the QP, and their staging slots are free.
  void release_held(std::size_t p, std::uint32_t held_when_posted) {
    Peer& to = peers_[p];
    while (static_cast<std::uint32_t>(to.held_released) != held_when_posted && !to.held.empty()) {
      free_send_.push_back(to.held.front());
      to.held.pop_front();
      ++to.held_released;
    }
  }

  void handle(const ibv_wc& wc) {
    const std::uint64_t index = index_of(wc.wr_id);
    const auto p = static_cast<std::size_t>(index >> 32);
    switch (kind_of(wc.wr_id)) {
      case WrKind::kRecv:
        if (wc.status != IBV_WC_SUCCESS) {
          if (wc.status != IBV_WC_WR_FLUSH_ERR) {
            TW_WARN("verbs", completion_error("receive", wc).to_string());
          }
          return;
        }
        // A wake-up: the message is in the ring, polled next.
        if (p < qps_.size() && qps_[p]) {
          Status s = post_wake_receive(*qps_[p], p);
          if (!s.is_ok()) TW_WARN("verbs", s.to_string());
        }
        return;
      case WrKind::kRing:
      case WrKind::kCredit:
      case WrKind::kClose:
        if (p < peers_.size()) {
          release_held(p, static_cast<std::uint32_t>(index));
          if (kind_of(wc.wr_id) == WrKind::kClose) peers_[p].closed = true;
          if (kind_of(wc.wr_id) == WrKind::kCredit && peers_[p].flushes > 0) {
            --peers_[p].flushes;
          }
        }
        if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_WR_FLUSH_ERR) {
          TW_ERROR("verbs",
                   completion_error(
                       kind_of(wc.wr_id) == WrKind::kRing ? "eager WRITE" : "credit WRITE", wc)
                       .to_string());
        }
        return;
      case WrKind::kRead:
      case WrKind::kWrite:
      case WrKind::kCas: {
        auto it = pending_.find(index);
        if (it == pending_.end()) return;
        Pending pend = std::move(it->second);
        pending_.erase(it);
        const WrKind kind = kind_of(wc.wr_id);
        const char* what = kind == WrKind::kRead    ? "RDMA READ"
                           : kind == WrKind::kWrite ? "RDMA WRITE"
                                                    : "compare-and-swap";
        Status s = wc.status == IBV_WC_SUCCESS ? Status::ok() : completion_error(what, wc);
        if (kind != WrKind::kCas) {
          --rdma_in_flight_;
        } else {
          if (pend.old_value != nullptr) *pend.old_value = atomic_pool_[pend.atomic_slot];
          free_atomic_.push_back(pend.atomic_slot);
        }
        pend.local.reset();
        if (pend.cached != nullptr) cache_->release(pend.cached);
        pend.done(s);
        return;
      }
    }
  }

  Device device_;
  VerbsOptions options_;
  RingLayout layout_;
  int gid_index_ = 0;
  CompChannelPtr channel_;
  CqPtr cq_;
  std::vector<std::unique_ptr<RcQueuePair>> qps_;  // by peer; none for self
  std::uint32_t cm_ipv4_ = 0;                      // rdma_cm: our address; 0: QP exchange
  std::unique_ptr<CmConnector> connector_;
  std::unique_ptr<RegistrationCache> cache_;  // null: TAGWIRE_RCACHE=off
  unsigned cm_tick_ = 0;
  std::vector<Peer> peers_;  // by peer
  AlignedBytes rings_, credit_words_, credit_out_, staging_;
  // Under rdma_cm, a ring per peer, made with its connection.
  std::vector<AlignedBytes> lazy_rings_;
  std::vector<MrPtr> lazy_ring_mrs_;
  std::vector<std::uint64_t> atomic_pool_;
  MrPtr ring_mr_, credit_mr_, credit_out_mr_, staging_mr_, atomic_mr_;
  std::vector<std::uint32_t> free_send_, free_atomic_;
  std::size_t backlogged_peers_ = 0;  // peers with messages waiting for credit
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
  bool tag_offload_wanted_ = false;
  std::unique_ptr<VerbsTagOffload> tag_offload_;  // null: tags matched in software
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
  // The tag-matching probe (TAGWIRE_TM): the NIC matches where the device
  // reports IBV_TM_CAP_RC (or a test's SRQ plays such a NIC).
  const DeviceCaps& caps = device->caps();
  auto hardware = use_hardware_tag_matching(caps, options.tag_matching);
  if (!hardware) return hardware.status();
  const bool emulated = static_cast<bool>(options.tm_srq_for_tests);
  if (*hardware) {
    TW_INFO("verbs", "tag matching in the NIC: device " << caps.name << " (IBV_TM_CAP_RC, "
                                                        << caps.tm_max_tags << " tags)");
  } else if (emulated) {
    TW_INFO("verbs", "tag matching by a test's SRQ that plays the NIC on " << caps.name);
  } else {
    TW_INFO("verbs",
            "tag matching in software: device "
                << caps.name
                << (options.tag_matching == TagMatchingChoice::kOff ? " (TAGWIRE_TM=off)"
                                                                    : " reports no IBV_TM_CAP_RC"));
  }
  auto t = std::make_unique<VerbsTransport>(std::move(device).value(), options);
  TAGWIRE_RETURN_IF_ERROR(t->start(*hardware || emulated));
  TW_INFO("verbs", "device " << options.device << " ready for " << options.size << " ranks");
  return std::unique_ptr<transport::Transport>(std::move(t));
}

namespace {

// Reads its own settings: TAGWIRE_DEVICE, TAGWIRE_TM, TAGWIRE_VERBS_CONNECT,
// TAGWIRE_RCACHE and TAGWIRE_VERBS_RING_BUDGET.
Result<std::unique_ptr<transport::Transport>> create_from_setup(
    const transport::TransportSetup& setup) {
  const Config& config = *setup.config;
  VerbsOptions options;
  options.device = config.device;
  options.rank = setup.rank;
  options.size = setup.size;
  options.max_payload = config.eager_threshold;
  options.tag_matching = config.tag_matching;
  options.connect = config.verbs_connect;
  options.registration_cache = config.registration_cache;
  options.ring_budget = config.verbs_ring_budget;
  options.wake_on_every_message = config.progress_thread;
  return create_verbs_transport(options);
}

}  // namespace

const transport::TransportEntry kTransportEntry{
    "verbs",
    "RDMA over rdma-core verbs: RC queue pairs, eager RDMA WRITE rings, rendezvous by READ",
    {.one_host_only = false,
     // Not chosen by itself: which device, and whether it beats UCX's own
     // verbs lanes on it, is for the user to say.
     .preference = 0,
     .eager_threshold = 0,  // Config's: each ring slot is this size
     .cpu_atomics = false,  // the NIC's atomics need not be coherent with the CPU's
     .may_offload_tags = true,
     .wake_events = true},
    create_from_setup};

}  // namespace tagwire::verbs
