#include "verbs/verbs_transport.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "common/coarse_clock.h"
#include "common/log.h"
#include "verbs/cm_connector.h"
#include "verbs/device.h"
#include "verbs/eager_ring.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/verbs_address.h"
#include "verbs/verbs_endpoint.h"
#include "verbs/verbs_interface.h"
#include "verbs/verbs_nic_matching.h"
#include "verbs/verbs_status.h"
#include "verbs/work_request.h"

namespace tagwire::verbs {

namespace {

constexpr std::size_t kMaxHeader = 64;
constexpr std::uint32_t kMaxRdma = 64;                        // RDMA READs and WRITEs in flight
constexpr std::size_t kLengthPrefix = sizeof(std::uint32_t);  // self messages: header length

// The transport: one VerbsInterface, one VerbsEndpoint per rank of the job
// (self's never connects: messages to self go through a queue in memory),
// the rdma_cm connector, the NIC's tag matching when on, and the table of
// READs, WRITEs and CASes in flight.
class VerbsTransport final : public transport::Transport {
 public:
  VerbsTransport(Device device, const VerbsOptions& options)
      : iface_(std::move(device)), options_(options), layout_(ring_layout(options)) {}

  // `match_in_nic`: the NIC matches tags (the device's TM-SRQ, or a test's).
  Status start(bool match_in_nic) {
    TAGWIRE_RETURN_IF_ERROR(iface_.find_gid());
    nic_matching_wanted_ = match_in_nic;
    TAGWIRE_RETURN_IF_ERROR(choose_connection_mode());
    const auto peers = static_cast<std::size_t>(options_.size);
    // Under rdma_cm a ring is made when its connection is (make_cm_qp) and
    // its address travels in the connection's private data: a rank pays
    // for the peers it talks to, not for the job. The QP exchange
    // publishes one block of rings for every peer at start-up.
    VerbsInterface::Shape shape;
    shape.peers = peers;
    shape.layout = layout_;
    shape.ring_block = cm_ipv4_ == 0;
    shape.registration_cache = options_.registration_cache;
    endpoints_.reserve(peers);
    for (std::size_t p = 0; p < peers; ++p) endpoints_.emplace_back(&iface_, p, layout_);
    shape.receives_per_peer = endpoints_.front().wake_receives();
    TAGWIRE_RETURN_IF_ERROR(iface_.open(shape));
    for (auto& ep : endpoints_) ep.use_ring(iface_.ring_of(ep.peer()));  // null under rdma_cm
    TW_INFO("verbs", "eager rings: " << layout_.slots << " slots of " << layout_.slot_size
                                     << " bytes per peer"
                                     << (cm_ipv4_ != 0 ? ", each made with its connection"
                                                       : ", all at start-up"));
    if (cm_ipv4_ != 0) {
      // QPs on first use: listen, publish where, connect when needed.
      auto c = CmConnector::listen(cm_ipv4_, options_.rank, [this](int peer, CmCard* card) {
        return make_cm_qp(peer, card);
      });
      if (!c) return c.status().with_context("rdma_cm listener on " + device().caps().name);
      connector_ = std::move(c).value();
      return Status::ok();
    }
    for (auto& ep : endpoints_) {
      if (ep.peer() == me()) continue;  // self never touches the NIC
      auto qp = iface_.make_qp();
      if (!qp) return qp.status().with_context("QP for rank " + std::to_string(ep.peer()));
      ep.attach(std::move(qp).value());
    }
    if (match_in_nic) TAGWIRE_RETURN_IF_ERROR(start_nic_matching());
    return Status::ok();
  }

  transport::NicMatching* nic_matching() override { return nic_matching_.get(); }

  bool connects_on_first_use() const override { return connector_ != nullptr; }

  std::string_view name() const override { return "verbs"; }
  std::string_view device_name() const override { return iface_.device().caps().name; }

  std::vector<std::uint8_t> address() const override {
    VerbsAddress a;
    QpAddress any{};
    for (const auto& ep : endpoints_) {
      if (ep.qp_if_any() != nullptr) {
        any = ep.qp_if_any()->address(iface_.gid_index());
        break;
      }
    }
    // A job of one rank has no ring QP, but with tag matching its channel to
    // itself needs the port's GID and LID too.
    if (any.qpn == 0 && nic_matching_) any = nic_matching_->address(options_.rank).send;
    a.gid = any.gid;
    a.lid = any.lid;
    a.wake_on_every_message = options_.wake_on_every_message;
    // Under rdma_cm no rings yet: each comes with its connection.
    a.ring_address = iface_.ring_block_address();
    a.ring_rkey = iface_.ring_block_rkey();
    a.credit_address = iface_.credit_words_address();
    a.credit_rkey = iface_.credit_words_rkey();
    a.ring_slots = layout_.slots;
    a.slot_size = layout_.slot_size;
    if (connector_) {
      a.connect_by_cm = true;
      a.cm = connector_->endpoint();
    }
    for (const auto& ep : endpoints_) {
      const RcQueuePair* qp = ep.qp_if_any();
      a.ring_qps.push_back(qp != nullptr ? VerbsAddress::QpNumber{qp->qpn(), qp->psn()}
                                         : VerbsAddress::QpNumber{});
    }
    if (nic_matching_) {
      a.nic_matching = true;
      for (std::size_t p = 0; p < endpoints_.size(); ++p) {
        const ChannelAddress c = nic_matching_->address(static_cast<int>(p));
        a.tagged_qps.push_back({{c.send.qpn, c.send.psn}, {c.tagged.qpn, c.tagged.psn}});
      }
    }
    return pack_address(a);
  }

  Status set_peer_addresses(std::vector<std::vector<std::uint8_t>> addresses) override {
    if (addresses.size() != endpoints_.size()) {
      return {ErrorCode::kProtocol, "address exchange: " + std::to_string(addresses.size()) +
                                        " addresses for a job of " +
                                        std::to_string(endpoints_.size())};
    }
    std::vector<VerbsAddress> peers;
    for (std::size_t p = 0; p < addresses.size(); ++p) {
      auto a = unpack_address(addresses[p], endpoints_.size(), p);
      if (!a) return a.status();
      TAGWIRE_RETURN_IF_ERROR(check_agreement(p, *a));
      peers.push_back(std::move(a).value());
    }
    for (std::size_t p = 0; p < peers.size(); ++p) {
      if (p == me()) continue;
      const VerbsAddress& a = peers[p];
      PeerRing remote;
      if (!connector_) {  // under rdma_cm the ring comes with the connection
        remote.ring_address = a.ring_address + me() * layout_.ring_bytes();
        remote.ring_rkey = a.ring_rkey;
      }
      remote.credit_address = a.credit_address + me() * 8;
      remote.credit_rkey = a.credit_rkey;
      remote.wake_all = a.wake_on_every_message;
      remote.cm = a.cm;
      VerbsEndpoint& ep = endpoints_[p];
      ep.learn(remote);
      if (connector_) continue;  // connected on first use
      // Receives first: a peer's first WRITE with immediate may come as
      // soon as both sides are connected.
      TAGWIRE_RETURN_IF_ERROR(ep.post_wake_receives(ep.qp()));
      TAGWIRE_RETURN_IF_ERROR(ep.qp()
                                  .connect(a.ring_qp(me()), iface_.gid_index())
                                  .with_context("connecting to rank " + std::to_string(p)));
      ++tally().connections;
    }
    // Each rank's tag-matching QPs for this one, self included.
    for (std::size_t p = 0; nic_matching_ && p < peers.size(); ++p) {
      TAGWIRE_RETURN_IF_ERROR(nic_matching_->connect(static_cast<int>(p), peers[p].channel(me()))
                                  .with_context("tag-matching QPs to rank " + std::to_string(p)));
    }
    return Status::ok();
  }

  void set_receiver(transport::Receiver* receiver) override { receiver_ = receiver; }
  std::size_t max_header() const override { return kMaxHeader; }

  Result<transport::Issued> send(transport::PeerId peer, std::span<const std::uint8_t> header,
                                 std::span<const std::uint8_t> payload, transport::Completion sent,
                                 transport::Delivery delivery) override {
    TAGWIRE_RETURN_IF_ERROR(check_peer(peer));
    if (header.size() > kMaxHeader || payload.size() > options_.max_payload) [[unlikely]]
      return too_large(header.size(), payload.size());
    // With the NIC matching, everything to a rank (self too) shares the one
    // channel its tagged messages take (NicMatching::send_untagged): a
    // message on the ring could overtake the tagged one it names.
    if (nic_matching_ && nic_matching_->in_use()) [[unlikely]]
      return not_on_ring();
    ++tally().messages_sent;
    if (peer == options_.rank) {
      self_queue_.emplace_back(frame(header, payload));
      return transport::Issued::kDone;
    }
    const auto p = static_cast<std::size_t>(peer);
    VerbsEndpoint& to = endpoints_[p];
    if (!to.failed().is_ok()) return to.failed();
    if (!to.connected()) TAGWIRE_RETURN_IF_ERROR(start_connection(p));
    if (to.has_backlog() || !to.connected() || !to.window_open()) {
      // Not connected yet, or no free slot at the receiver: the message
      // waits here, in order, until both are there (progress() sends it).
      if (!to.has_backlog()) ++backlogged_peers_;
      to.queue(header, payload, delivery);
      if (to.connected()) ++tally().credit_waits;
      return transport::Issued::kDone;
    }
    if (gathers(to, payload.size())) return write_gathered(to, p, header, payload, sent, delivery);
    TAGWIRE_RETURN_IF_ERROR(write_message(to, header, payload, delivery));
    // The bytes are ours now: the caller's buffers are free at once.
    return transport::Issued::kDone;
  }

  // send() when it would go at once: a connected peer with credit, no
  // backlog and a free staging slot. Everything else (self, a first
  // message that connects, a full window, the NIC's channel) says false
  // and goes through send(), which waits or says why. The engine's
  // blocking eager send then needs no request for the message.
  Result<bool> try_send(transport::PeerId peer, std::span<const std::uint8_t> header,
                        std::span<const std::uint8_t> payload) override {
    if (peer < 0 || peer >= options_.size || peer == options_.rank || header.size() > kMaxHeader ||
        payload.size() > options_.max_payload || (nic_matching_ && nic_matching_->in_use())) {
      return false;
    }
    VerbsEndpoint& to = endpoints_[static_cast<std::size_t>(peer)];
    if (!to.connected() || to.has_backlog() || !to.failed().is_ok() || !to.window_open()) {
      return false;
    }
    if (to.fits_inline(header.size() + payload.size())) {
      ++tally().messages_sent;
      TAGWIRE_RETURN_IF_ERROR(to.write_inline(header, payload, transport::Delivery::kPolled));
      return true;
    }
    // A payload the WRITE would gather completes later: send() takes it.
    if (gathers(to, payload.size())) return false;
    const std::optional<std::uint32_t> slot = iface_.take_staging();
    if (!slot) return false;
    ++tally().messages_sent;
    TAGWIRE_RETURN_IF_ERROR(to.write_message(*slot, header, payload, transport::Delivery::kPolled));
    return true;
  }

  Result<std::unique_ptr<transport::Registration>> register_memory(
      void* address, std::size_t length, transport::RemoteAccess access) override {
    return iface_.register_memory(address, length, access);
  }

  Result<transport::Issued> read(transport::PeerId peer, std::span<std::uint8_t> local,
                                 std::uint64_t remote_address,
                                 std::span<const std::uint8_t> remote_key,
                                 transport::Completion done) override {
    tally().bytes_read += local.size();
    return rdma(WrKind::kRead, peer, local, remote_address, remote_key, done);
  }

  Result<transport::Issued> write(transport::PeerId peer, std::span<const std::uint8_t> local,
                                  std::uint64_t remote_address,
                                  std::span<const std::uint8_t> remote_key,
                                  transport::Completion done) override {
    tally().bytes_written += local.size();
    // An RDMA WRITE only reads `local`: the cast lets one path post both.
    return rdma(WrKind::kWrite, peer, {const_cast<std::uint8_t*>(local.data()), local.size()},
                remote_address, remote_key, done);
  }

  Result<transport::Issued> flush(transport::Completion done) override {
    // An RC WRITE or READ completes once the target has acknowledged it:
    // every one issued so far finished means all are at their targets.
    // Completed from progress (finish_flushes), not waited for here: it
    // used to poll the CQ in place for up to 60 s, where the engine could
    // not hear of a death that would end the wait (peer_failed).
    if (rdma_in_flight_ == 0) return transport::Issued::kDone;
    flushes_.push_back({next_op_, done});
    return transport::Issued::kPending;
  }

  Result<transport::Issued> compare_and_swap(transport::PeerId peer, std::uint64_t remote_address,
                                             std::span<const std::uint8_t> remote_key,
                                             std::uint64_t expected, std::uint64_t desired,
                                             std::uint64_t* old_value,
                                             transport::Completion done) override {
    return atomic(peer, remote_address, remote_key, AtomicOp::compare_and_swap(expected, desired),
                  old_value, done);
  }

  Result<transport::Issued> fetch_add(transport::PeerId peer, std::uint64_t remote_address,
                                      std::span<const std::uint8_t> remote_key, std::uint64_t add,
                                      std::uint64_t* old_value,
                                      transport::Completion done) override {
    return atomic(peer, remote_address, remote_key, AtomicOp::add(add), old_value, done);
  }

  bool offers_word_atomics() const override { return iface_.has_atomics(); }

  // One of the NIC's atomics on a peer's word. On our own word it is the
  // NIC's too, through the loopback QP, unless the device's atomics are
  // the CPU's (IBV_ATOMIC_GLOB): under IBV_ATOMIC_HCA a CPU atomic there
  // would not be atomic with a peer's.
  Result<transport::Issued> atomic(transport::PeerId peer, std::uint64_t remote_address,
                                   std::span<const std::uint8_t> remote_key, const AtomicOp& a,
                                   std::uint64_t* old_value, transport::Completion done) {
    TAGWIRE_RETURN_IF_ERROR(check_peer(peer));
    std::uint32_t rkey = 0;
    TAGWIRE_RETURN_IF_ERROR(unpack_rkey(remote_key, &rkey));
    if (peer == options_.rank) {
      auto old = iface_.local_atomic(rkey, reinterpret_cast<std::uint64_t*>(remote_address), a);
      if (!old) return old.status();
      *old_value = *old;
      return transport::Issued::kDone;
    }
    const auto p = static_cast<std::size_t>(peer);
    TAGWIRE_RETURN_IF_ERROR(ensure_connected(p));
    while (!iface_.atomic_free()) poll_completions();
    const std::uint32_t slot = iface_.take_atomic();
    const std::uint64_t op = next_op_++;
    Status s = endpoints_[p].qp().post_atomic(
        wr_id(WrKind::kAtomic, op), LocalBuffer{iface_.atomic_word(slot), 8, iface_.atomic_lkey()},
        remote_address, rkey, a);
    if (!s.is_ok()) {
      iface_.give_atomic(slot);
      return s;
    }
    pending_.emplace(op, Pending{done, nullptr, nullptr, old_value, slot, p});
    return transport::Issued::kPending;
  }

  Result<std::uint64_t> local_compare_and_swap(const transport::Registration& memory,
                                               std::uint64_t* word, std::uint64_t expected,
                                               std::uint64_t desired) override {
    std::uint32_t rkey = 0;
    TAGWIRE_RETURN_IF_ERROR(unpack_rkey(memory.packed_key(), &rkey));
    return iface_.local_atomic(rkey, word, AtomicOp::compare_and_swap(expected, desired));
  }

  unsigned progress() override {
    // Events are only raised after arm(); reading the channel otherwise
    // would be a system call on every poll.
    if (armed_) {
      iface_.drain_events();
      armed_ = false;
    }
    unsigned n = deliver_self();
    // rdma_cm events cost a system call to look for (a write that fails
    // with EAGAIN when there is none): every time while connections are
    // being made, else once in kCmLookInterval, the clock (a coarse one,
    // no system call) read once in 1024 polls. A peer's request waits that
    // long for an application that polls; arm() looks too, for a helper
    // thread about to sleep. One look in 1024 polls, without the clock,
    // was one system call every two or three messages of a ping-pong in
    // the soft-RoCE VM once the poll was cheap (docs/measurements.md).
    if (connector_ && (connector_->busy() || cm_look_due())) n += poll_connections();
    // The rings first: that is where messages arrive. The CQ holds what no
    // caller waits on at once (one eager WRITE in 16 signaled, which frees
    // staging slots; errors; a peer's wake-up, whose receive must be
    // reposted before the peer's next WRITE with immediate needs it), but
    // for a READ, WRITE or CAS in flight. So it is looked at when one is in
    // flight, after a wake-up arrived on a ring (its receive comes back as
    // fast as its message is consumed), and else every kCqPollEvery polls
    // (a staging slot that runs out looks itself). Polling it on every
    // turn was a third of an empty poll's instructions; after every
    // arrival, 150 instructions on each hop of a ping-pong's critical path
    // (ibv_poll_cq and rxe's spin lock, bench/instructions in the VM).
    // A credit WRITE with immediate (a peer that asked for events) is
    // reaped by the periodic look: a peer sends one per 16 of our messages
    // it consumed, far fewer than the receives posted for it.
    unsigned woke = 0;
    for (auto& ep : endpoints_) n += ep.poll_ring(receiver_, &woke);
    if (woke > 0 || !pending_.empty() || (++cq_tick_ & (kCqPollEvery - 1)) == 0) {
      n += poll_completions();
    }
    if (backlogged_peers_ > 0) n += send_backlogs();
    n += poll_nic_matching();
    return n;
  }

  Result<bool> arm() override {
    if (!self_queue_.empty()) return false;
    // SEND completions raise no event, and a message waiting for a staging
    // slot needs them: no sleep until the peers have everything.
    if (nic_matching_ && nic_matching_->sending()) return false;
    if (int rc = ibv_req_notify_cq(iface_.cq(), 0); rc != 0) {
      return verbs_error("ibv_req_notify_cq", rc);
    }
    // With tag matching every message arrives on the tag-matching CQ, which
    // shares the channel: a cancel request there wakes the agent at once.
    if (nic_matching_) TAGWIRE_RETURN_IF_ERROR(nic_matching_->request_event());
    armed_ = true;
    // A completion that landed before the request would raise no event;
    // neither does an eager WRITE without immediate, so the rings are
    // looked at too.
    if (poll_completions() != 0) return false;
    if (connector_ && poll_connections() != 0) return false;
    if (poll_nic_matching() != 0) return false;
    return std::none_of(endpoints_.begin(), endpoints_.end(),
                        [](VerbsEndpoint& ep) { return ep.ring_has_message(); });
  }
  int event_fd() const override { return iface_.channel()->fd; }

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
    while (nic_matching_ && nic_matching_->sending() && std::chrono::steady_clock::now() < until) {
      progress();
    }
    for (auto& ep : endpoints_) {
      if (!ep.connected()) continue;
      if (!ep.failed().is_ok()) {  // a dead peer's QP is in the error state (peer_failed)
        ep.mark_closed();
        continue;
      }
      Status s = ep.post_credit(kClosingMark);
      if (!s.is_ok()) {
        TW_WARN("verbs", s.to_string());
        ep.mark_closed();  // nothing to wait for on a broken QP
      }
    }
    auto open_peers = [this] {
      return std::count_if(endpoints_.begin(), endpoints_.end(),
                           [](const VerbsEndpoint& ep) { return ep.still_open(); });
    };
    while ((open_peers() > 0 || !pending_.empty()) && std::chrono::steady_clock::now() < until) {
      poll_completions();
    }
    if (open_peers() > 0 || !pending_.empty()) {
      TW_WARN("verbs", "closing with work outstanding after 10 s: "
                           << open_peers() << " peers neither acknowledged nor closed, "
                           << pending_.size() << " READ/WRITE/CAS pending");
    }
    for (auto& ep : endpoints_) ep.detach();
    nic_matching_.reset();
    connector_.reset();  // its ids after the QPs: peers see a disconnect
    if (RegistrationCache* cache = iface_.cache(); cache != nullptr) {
      const RegistrationCacheStats r = cache->stats();
      TW_INFO("verbs", "registration cache: " << r.hits << " hits, " << r.misses << " misses, "
                                              << r.invalidated << " invalidated, " << r.evicted
                                              << " evicted, " << r.entries << " entries left");
    }
    return Status::ok();
  }

  transport::TransportCounters counters() const override {
    transport::TransportCounters c = iface_.counters();
    if (RegistrationCache* cache = iface_.cache(); cache != nullptr) {
      const RegistrationCacheStats r = cache->stats();
      c.rcache_hits = r.hits;
      c.rcache_misses = r.misses;
      c.rcache_invalidated = r.invalidated;
    }
    c.open_connections = static_cast<std::uint64_t>(
        std::count_if(endpoints_.begin(), endpoints_.end(),
                      [](const VerbsEndpoint& ep) { return ep.connected(); }));
    // Messages on the tag-matching channel are the facet's to count.
    if (nic_matching_) {
      c.messages_sent +=
          nic_matching_->counters().tagged_sent + nic_matching_->counters().untagged_sent;
    }
    return c;
  }

  ~VerbsTransport() override {
    endpoints_.clear();  // their QPs before the CQ, the MRs and the PD they use
    nic_matching_.reset();
    connector_.reset();
    pending_.clear();  // its registrations before the interface's cache
  }

 private:
  struct Pending {
    transport::Completion done;
    MrPtr local;                       // a READ's destination or WRITE's source, uncached
    RegistrationCache::Entry* cached;  // the same from the cache
    std::uint64_t* old_value;
    std::uint32_t atomic_slot;
    std::size_t peer;
    std::uint32_t held = 0;  // a gathered eager WRITE's on_write_completion mark
  };

  // A flush() waiting for the operations numbered below `mark` (READs
  // and WRITEs; an atomic among them is waited for too).
  struct FlushWaiter {
    std::uint64_t mark;
    transport::Completion done;
  };

  const Device& device() const { return iface_.device(); }
  std::size_t me() const { return static_cast<std::size_t>(options_.rank); }
  transport::TransportCounters& tally() { return iface_.counters(); }

  // Whether an eager payload of `bytes` goes gathered from the caller's
  // buffer (write_gathered) rather than copied.
  bool gathers(const VerbsEndpoint& to, std::size_t bytes) const {
    return options_.gather_from != 0 && bytes >= options_.gather_from &&
           iface_.cache() != nullptr && to.can_gather();
  }

  // An eager message whose WRITE gathers the payload from the caller's
  // buffer: a copy of several kilobytes saved at the sender (the receiver
  // still copies it out of its ring), for a registration-cache lookup
  // and a completion. The send completes when the WRITE does (handle()).
  Result<transport::Issued> write_gathered(VerbsEndpoint& to, std::size_t p,
                                           std::span<const std::uint8_t> header,
                                           std::span<const std::uint8_t> payload,
                                           transport::Completion sent,
                                           transport::Delivery delivery) {
    auto slot = take_staging_slot();
    if (!slot) return slot.status();
    RegistrationCache* cache = iface_.cache();
    auto entry = cache->acquire(payload.data(), payload.size());
    if (!entry) {
      iface_.give_staging(*slot);
      return entry.status().with_context("registering an eager payload");
    }
    const std::uint64_t op = next_op_++;
    Pending pending{sent, nullptr, *entry, nullptr, 0, p};
    Status s = to.write_gathered(*slot, header, payload, RegistrationCache::lkey(*entry),
                                 wr_id(WrKind::kGathered, op), delivery, &pending.held);
    if (!s.is_ok()) {
      cache->release(*entry);
      return s;
    }
    pending_.emplace(op, std::move(pending));
    ++tally().gathered_sends;
    return transport::Issued::kPending;
  }

  // RDMA READ into `local`, or RDMA WRITE from it: registered for the
  // operation (through the cache when on), completed by handle().
  Result<transport::Issued> rdma(WrKind kind, transport::PeerId peer, std::span<std::uint8_t> local,
                                 std::uint64_t remote_address,
                                 std::span<const std::uint8_t> remote_key,
                                 transport::Completion done) {
    TAGWIRE_RETURN_IF_ERROR(check_peer(peer));
    std::uint32_t rkey = 0;
    TAGWIRE_RETURN_IF_ERROR(unpack_rkey(remote_key, &rkey));
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
    const auto p = static_cast<std::size_t>(peer);
    TAGWIRE_RETURN_IF_ERROR(ensure_connected(p));
    while (rdma_in_flight_ >= kMaxRdma) poll_completions();
    const char* what = kind == WrKind::kRead ? "registering an RDMA READ destination"
                                             : "registering an RDMA WRITE source";
    Pending pending{done, nullptr, nullptr, nullptr, 0, p};
    std::uint32_t lkey = 0;
    RegistrationCache* cache = iface_.cache();
    if (cache != nullptr) {
      auto entry = cache->acquire(local.data(), local.size());
      if (!entry) return entry.status().with_context(what);
      pending.cached = *entry;
      lkey = RegistrationCache::lkey(*entry);
    } else {
      auto mr =
          verbs::register_memory(device(), local.data(), local.size(), IBV_ACCESS_LOCAL_WRITE);
      if (!mr) return mr.status().with_context(what);
      pending.local = std::move(mr).value();
      lkey = pending.local->lkey;
    }
    const std::uint64_t op = next_op_++;
    const LocalBuffer buffer{local.data(), static_cast<std::uint32_t>(local.size()), lkey};
    RcQueuePair& qp = endpoints_[p].qp();
    Status s = kind == WrKind::kRead
                   ? qp.post_read(wr_id(kind, op), buffer, remote_address, rkey)
                   : qp.post_write(wr_id(kind, op), buffer, remote_address, rkey, true);
    if (!s.is_ok()) {
      if (pending.cached != nullptr) cache->release(pending.cached);
      return s;
    }
    pending_.emplace(op, std::move(pending));
    ++rdma_in_flight_;
    return transport::Issued::kPending;
  }

  // Inline, with the message built out of line: a call on every send was
  // 26 instructions of an 8-byte message's (bench/instructions in the VM).
  [[gnu::always_inline]] Status check_peer(transport::PeerId peer) const {
    if (static_cast<unsigned>(peer) >= static_cast<unsigned>(options_.size)) [[unlikely]]
      return no_such_peer(peer);
    return Status::ok();
  }
  [[gnu::cold, gnu::noinline]] static Status no_such_peer(transport::PeerId peer) {
    return {ErrorCode::kInvalidRank, "verbs transport: no rank " + std::to_string(peer)};
  }
  // send()'s refusals, out of line: built inside it, their strings cost the
  // fast path registers.
  [[gnu::cold, gnu::noinline]] static Status too_large(std::size_t header, std::size_t payload) {
    return {ErrorCode::kInvalidArgument, "message of " + std::to_string(header) + " + " +
                                             std::to_string(payload) +
                                             " bytes exceeds the verbs slot"};
  }
  [[gnu::cold, gnu::noinline]] static Status not_on_ring() {
    return {ErrorCode::kInvalidArgument,
            "verbs transport: the NIC matches tags, so messages go through the "
            "tag-matching channel (NicMatching::send_untagged), not the eager ring"};
  }

  // Every rank must have made the same choices: a ring of the same shape,
  // tags matched in the same place, connections made the same way.
  Status check_agreement(std::size_t p, const VerbsAddress& a) const {
    if (a.ring_slots != layout_.slots || a.slot_size != layout_.slot_size) {
      return {ErrorCode::kConfig,
              "rank " + std::to_string(p) + "'s eager ring has " + std::to_string(a.ring_slots) +
                  " slots of " + std::to_string(a.slot_size) + " bytes, this rank's " +
                  std::to_string(layout_.slots) + " of " + std::to_string(layout_.slot_size) +
                  ": every rank needs the same TAGWIRE_EAGER_THRESHOLD and "
                  "TAGWIRE_VERBS_RING_BUDGET"};
    }
    if (a.nic_matching != (nic_matching_ != nullptr)) {
      return {ErrorCode::kConfig,
              "rank " + std::to_string(p) + " matches tags " +
                  (a.nic_matching ? "in the NIC" : "in software") +
                  ", this rank the other way: every rank needs the same TAGWIRE_TM and device "
                  "kind"};
    }
    if (a.connect_by_cm != (connector_ != nullptr)) {
      return {ErrorCode::kConfig, "rank " + std::to_string(p) + " connects " +
                                      (a.connect_by_cm ? "through rdma_cm" : "by QP exchange") +
                                      ", this rank the other way: every rank needs the same "
                                      "TAGWIRE_VERBS_CONNECT and device kind"};
    }
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
      iface_.deliver(receiver_, {m.data() + kLengthPrefix, hlen},
                     {m.data() + kLengthPrefix + hlen, m.size() - kLengthPrefix - hlen});
    }
    return n;
  }

  // Completes the flushes whose operations have all completed (pending_
  // is ordered by number: its first is the oldest still running).
  void finish_flushes() {
    while (!flushes_.empty() &&
           (pending_.empty() || pending_.begin()->first >= flushes_.front().mark)) {
      const transport::Completion done = flushes_.front().done;
      flushes_.pop_front();
      done(Status::ok());
    }
  }

  // The peer's QP goes to the error state: the NIC then completes every
  // work request on it at once (flushed, with the death as their error)
  // and touches none of their buffers afterwards, where a READ or atomic
  // to a dead peer would otherwise wait out RC's retries (tens of seconds
  // on soft-RoCE) with the window call that issued it. Nothing more is
  // sent to it, and disconnect_all does not wait for its closing mark (it
  // waited its full 10 s for the dead peer at every survivor's finalize).
  void peer_failed(transport::PeerId peer) override {
    if (peer < 0 || peer >= options_.size || peer == options_.rank) return;
    VerbsEndpoint& ep = endpoints_[static_cast<std::size_t>(peer)];
    if (ep.failed().code() == ErrorCode::kPeerFailed) return;
    ep.fail(Status(ErrorCode::kPeerFailed, "rank " + std::to_string(peer) + " died"));
    if (ep.has_backlog()) {
      ep.drop_backlog();
      --backlogged_peers_;
    }
    if (!ep.connected()) return;
    ep.mark_closed();
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    Status s = ep.qp().modify(attr, IBV_QP_STATE, "ibv_modify_qp(ERR) of a dead peer's QP");
    if (!s.is_ok()) TW_WARN("verbs", s.to_string());
  }

  // ---- eager ring, sender side

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

  Result<std::uint32_t> take_staging_slot() {
    // The usual case first, with no clock read: in the soft-RoCE VM a read
    // is a system call (HPET), and taken for every message it was one
    // system call per send beside the doorbell (docs/measurements.md).
    if (auto slot = iface_.take_staging()) return *slot;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      // Unsignaled WRITEs on quiet QPs hold slots until something signaled
      // follows them: flush those QPs.
      for (auto& ep : endpoints_) {
        if (ep.connected() && ep.needs_flush()) TAGWIRE_RETURN_IF_ERROR(ep.post_flush());
      }
      poll_completions();
      if (auto slot = iface_.take_staging()) return *slot;
      if (std::chrono::steady_clock::now() > until) {
        return Status(ErrorCode::kPeerFailed, "no staging slot came back within 60 s");
      }
    }
  }

  // One eager message into the peer's ring; the window has room. A small
  // one goes inline, gathered from where it is; a larger one is staged.
  Status write_message(VerbsEndpoint& to, std::span<const std::uint8_t> header,
                       std::span<const std::uint8_t> payload, transport::Delivery delivery) {
    if (to.fits_inline(header.size() + payload.size())) {
      return to.write_inline(header, payload, delivery);
    }
    auto slot = take_staging_slot();
    if (!slot) return slot.status();
    return to.write_message(*slot, header, payload, delivery);
  }

  unsigned send_backlogs() {
    unsigned n = 0;
    for (auto& to : endpoints_) {
      if (!to.connected()) continue;
      while (to.has_backlog() && to.window_open()) {
        VerbsEndpoint::Backlogged b = to.next_backlogged();
        if (!to.has_backlog()) --backlogged_peers_;
        std::span<const std::uint8_t> all(b.bytes);
        Status s =
            write_message(to, all.first(b.header_length), all.subspan(b.header_length), b.delivery);
        if (!s.is_ok()) TW_ERROR("verbs", s.to_string());
        ++n;
      }
    }
    return n;
  }

  // ---- connections

  // For CmConnector: a QP for `peer` with its receives posted, and our
  // ring for its messages (made on the first attempt) on the card.
  Result<std::unique_ptr<RcQueuePair>> make_cm_qp(int peer, CmCard* card) {
    if (peer < 0 || peer >= options_.size || peer == options_.rank) {
      return Status(ErrorCode::kProtocol,
                    "rdma_cm: a connection request from rank " + std::to_string(peer) +
                        ", not a peer in this job of " + std::to_string(options_.size));
    }
    VerbsEndpoint& ep = endpoints_[static_cast<std::size_t>(peer)];
    TAGWIRE_RETURN_IF_ERROR(ep.make_own_ring(card));
    auto qp = iface_.make_qp();
    if (!qp) return qp.status();
    TAGWIRE_RETURN_IF_ERROR(ep.post_wake_receives(**qp));
    return qp;
  }

  // The NIC's tag matching: its TM-SRQ (or a test's) and two QPs per peer.
  Status start_nic_matching() {
    VerbsNicMatchingOptions o;
    o.entries = options_.tm_entries;
    // An entry takes any EAGER or RTS: an RTS's payload is the engine's
    // remote key, which it bounds at 4 KiB (engine.cc, kMaxRemoteKey), and
    // the engine keeps matching in software if an entry holds less.
    o.message_bytes =
        static_cast<std::uint32_t>(kMaxHeader + std::max<std::size_t>(options_.max_payload, 4096));
    o.events = iface_.channel();
    std::unique_ptr<TmSrq> srq;
    if (options_.tm_srq_for_tests) {
      auto made = options_.tm_srq_for_tests(device(), o.unexpected_buffers, o.events);
      if (!made) return made.status().with_context("the test's tag-matching SRQ");
      srq = std::move(made).value();
    }
    auto t =
        VerbsNicMatching::create(device(), iface_.gid_index(), options_.size, o, std::move(srq));
    if (!t) return t.status().with_context("tag matching on " + device().caps().name);
    nic_matching_ = std::move(t).value();
    TW_INFO("verbs", "tag matching in the NIC: " << nic_matching_->capacity()
                                                 << " receives at most, messages up to "
                                                 << o.message_bytes << " B as SENDs");
    return Status::ok();
  }

  // Decides between rdma_cm and the QP exchange (TAGWIRE_VERBS_CONNECT).
  Status choose_connection_mode() {
    const bool ethernet = device().caps().ethernet;
    if (options_.connect == VerbsConnectChoice::kExchange) return Status::ok();
    if (nic_matching_wanted_) {
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
                      "TAGWIRE_VERBS_CONNECT=cm: device " + device().caps().name +
                          " is InfiniBand, and this transport's rdma_cm path needs a RoCE "
                          "IPv4 address; use TAGWIRE_VERBS_CONNECT=exchange");
      }
      return Status::ok();
    }
    ibv_gid gid{};
    if (ibv_query_gid(device().context(), device().caps().port, iface_.gid_index(), &gid) != 0) {
      return verbs_error("ibv_query_gid", errno);
    }
    std::memcpy(&cm_ipv4_, gid.raw + 12, 4);  // ::ffff:a.b.c.d, network order
    return Status::ok();
  }

  Status start_connection(std::size_t p) {
    if (!connector_) {
      return Status(ErrorCode::kInternal, "no QP for rank " + std::to_string(p));
    }
    return connector_->connect(static_cast<int>(p), endpoints_[p].remote().cm)
        .with_context("connecting to rank " + std::to_string(p));
  }

  unsigned poll_connections() {
    std::vector<CmConnector::Connected> made;
    std::vector<CmConnector::Failed> failed;
    connector_->poll(&made, &failed);
    for (auto& c : made) {
      const auto p = static_cast<std::size_t>(c.peer);
      // Its ring for our messages: known before anything is written there.
      endpoints_[p].learn_ring(c.card.address, c.card.key);
      endpoints_[p].attach(std::move(c.qp));
      ++tally().connections;
      if (c.accepted) ++tally().connections_accepted;
      TW_DEBUG("verbs", "connected to rank " << p << " through rdma_cm");
    }
    for (auto& f : failed) {
      const auto p = static_cast<std::size_t>(f.peer);
      VerbsEndpoint& to = endpoints_[p];
      if (to.connected()) continue;  // the peer's own attempt made it
      TW_ERROR("verbs", f.why.to_string());
      to.fail(f.why);
      Status why = f.why;
      if (to.has_backlog()) {
        // Their sends completed when they were copied: the loss must reach
        // the engine, which fails what waits on this peer from now on.
        why = why.with_context(std::to_string(to.backlog_size()) +
                               " messages that waited for the connection are lost");
        TW_ERROR("verbs", to.backlog_size() << " messages to rank " << p << " are lost");
        to.drop_backlog();
        --backlogged_peers_;
      }
      if (receiver_ != nullptr) receiver_->on_peer_unreachable(static_cast<int>(p), why);
    }
    return static_cast<unsigned>(made.size() + failed.size());
  }

  // A READ or CAS needs the QP now (in practice it exists: the peer sent
  // us the RTS or we sent it the message).
  Status ensure_connected(std::size_t p) {
    VerbsEndpoint& ep = endpoints_[p];
    if (ep.connected()) return Status::ok();
    TAGWIRE_RETURN_IF_ERROR(start_connection(p));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ep.connected()) {
      if (!ep.failed().is_ok()) return ep.failed();
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
  unsigned poll_nic_matching() {
    return nic_matching_ && receiver_ != nullptr ? nic_matching_->progress(*receiver_) : 0;
  }

  unsigned poll_completions() {
    unsigned handled = 0;
    ibv_wc wc[16];
    for (;;) {
      const int got = ibv_poll_cq(iface_.cq(), 16, wc);
      if (got <= 0) break;
      for (int i = 0; i < got; ++i) handle(wc[i]);
      handled += static_cast<unsigned>(got);
    }
    return handled;
  }

  void handle(const ibv_wc& wc) {
    const std::uint64_t index = index_of(wc.wr_id);
    const std::size_t p = peer_of(index);
    const WrKind kind = kind_of(wc.wr_id);
    switch (kind) {
      case WrKind::kRecv:
        if (wc.status != IBV_WC_SUCCESS) {
          if (wc.status != IBV_WC_WR_FLUSH_ERR) {
            TW_WARN("verbs", completion_error("receive", wc).to_string());
          }
          return;
        }
        // A wake-up: the message is in the ring, polled next.
        if (p < endpoints_.size() && endpoints_[p].connected()) {
          Status s = endpoints_[p].post_wake_receive(endpoints_[p].qp());
          if (!s.is_ok()) TW_WARN("verbs", s.to_string());
        }
        return;
      case WrKind::kRing:
      case WrKind::kCredit:
      case WrKind::kClose:
        if (p < endpoints_.size()) {
          endpoints_[p].on_write_completion(kind, static_cast<std::uint32_t>(index));
        }
        if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_WR_FLUSH_ERR) {
          TW_ERROR("verbs",
                   completion_error(kind == WrKind::kRing ? "eager WRITE" : "credit WRITE", wc)
                       .to_string());
        }
        return;
      case WrKind::kRead:
      case WrKind::kWrite:
      case WrKind::kGathered:
      case WrKind::kAtomic: {
        auto it = pending_.find(index);
        if (it == pending_.end()) return;
        Pending pend = std::move(it->second);
        pending_.erase(it);
        const char* what = kind == WrKind::kRead       ? "RDMA READ"
                           : kind == WrKind::kWrite    ? "RDMA WRITE"
                           : kind == WrKind::kGathered ? "eager WRITE"
                                                       : "atomic";
        Status s = wc.status == IBV_WC_SUCCESS ? Status::ok() : completion_error(what, wc);
        // Flushed from a dead peer's QP (peer_failed): the death is the error.
        if (!s.is_ok() && !endpoints_[pend.peer].failed().is_ok()) {
          s = endpoints_[pend.peer].failed();
        }
        if (kind == WrKind::kGathered) {
          // Its staging slot, and those of the unsignaled WRITEs before it.
          endpoints_[pend.peer].on_write_completion(WrKind::kRing, pend.held);
        } else if (kind != WrKind::kAtomic) {
          --rdma_in_flight_;
        } else {
          if (pend.old_value != nullptr) *pend.old_value = *iface_.atomic_word(pend.atomic_slot);
          iface_.give_atomic(pend.atomic_slot);
        }
        pend.local.reset();
        if (pend.cached != nullptr) iface_.cache()->release(pend.cached);
        pend.done(s);
        finish_flushes();
        return;
      }
    }
  }

  // The interface first: it outlives everything that uses its CQ and memory.
  VerbsInterface iface_;
  VerbsOptions options_;
  RingLayout layout_;
  std::vector<VerbsEndpoint> endpoints_;  // by rank; self's never connects
  std::uint32_t cm_ipv4_ = 0;             // rdma_cm: our address; 0: QP exchange
  std::unique_ptr<CmConnector> connector_;
  unsigned cm_tick_ = 0;
  static constexpr auto kCmLookInterval = std::chrono::milliseconds(5);
  std::chrono::steady_clock::time_point last_cm_look_{};
  bool cm_look_due() {
    if ((++cm_tick_ & 1023) != 0) return false;
    const auto now = coarse_now();
    if (now - last_cm_look_ < kCmLookInterval) return false;
    last_cm_look_ = now;
    return true;
  }
  static constexpr unsigned kCqPollEvery = 8;  // a power of two
  unsigned cq_tick_ = 0;
  std::size_t backlogged_peers_ = 0;  // peers with messages waiting for credit
  // By number, so that the oldest still running is the first (flushes).
  std::map<std::uint64_t, Pending> pending_;
  std::uint64_t next_op_ = 1;
  std::uint32_t rdma_in_flight_ = 0;  // READs and WRITEs in pending_
  std::deque<FlushWaiter> flushes_;   // in the order they were asked
  bool armed_ = false;                // a CQ event may be due on the channel
  std::deque<std::vector<std::uint8_t>> self_queue_;
  transport::Receiver* receiver_ = nullptr;
  bool nic_matching_wanted_ = false;
  std::unique_ptr<VerbsNicMatching> nic_matching_;  // null: tags matched in software
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
  auto hardware = use_nic_matching(caps, options.nic_matching);
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
                << (options.nic_matching == NicMatchingChoice::kOff ? " (TAGWIRE_TM=off)"
                                                                    : " reports no IBV_TM_CAP_RC"));
  }
  auto t = std::make_unique<VerbsTransport>(std::move(device).value(), options);
  TAGWIRE_RETURN_IF_ERROR(t->start(*hardware || emulated));
  TW_INFO("verbs", "device " << options.device << " ready for " << options.size << " ranks");
  return std::unique_ptr<transport::Transport>(std::move(t));
}

namespace {

// Reads its own settings (VerbsSettings: TAGWIRE_DEVICE, TAGWIRE_TM,
// TAGWIRE_VERBS_CONNECT, TAGWIRE_RCACHE, TAGWIRE_VERBS_RING_BUDGET,
// TAGWIRE_VERBS_GATHER_FROM).
Result<std::unique_ptr<transport::Transport>> create_from_setup(
    const transport::TransportSetup& setup) {
  auto settings = setup.settings != nullptr ? VerbsSettings::read(*setup.settings)
                                            : Result<VerbsSettings>(VerbsSettings{});
  if (!settings) return settings.status();
  VerbsOptions options;
  options.device = settings->device;
  options.rank = setup.rank;
  options.size = setup.size;
  options.max_payload = setup.eager_threshold;
  options.nic_matching = settings->nic_matching;
  options.connect = settings->connect;
  options.registration_cache = settings->registration_cache;
  options.ring_budget = settings->ring_budget;
  options.gather_from = settings->gather_from;
  options.wake_on_every_message = setup.wake_on_every_message;
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
     // Each ring slot is this size. 16 KiB, not 8: at 16 KiB an eager
     // WRITE gathered from the caller's buffer beats rendezvous by a READ
     // on rxe (docs/measurements.md, 2026-12-04: 280 against 324 us).
     .eager_threshold = 16384,
     .cpu_atomics = false,  // the NIC's atomics need not be coherent with the CPU's
     .may_match_in_nic = true,
     .wake_events = true},
    create_from_setup,
    VerbsSettings::table()};

}  // namespace tagwire::verbs
