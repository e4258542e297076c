#include "verbs/verbs_interface.h"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "common/log.h"
#include "verbs/memory_hooks.h"
#include "verbs/verbs_status.h"
#include "verbs/work_request.h"

namespace tagwire::verbs {

namespace {

// The cache's budget of registered bytes kept beyond those in use.
constexpr std::size_t kCacheBytes = std::size_t{1} << 30;

// A cache entry's MR.
class CachedMr final : public CachedRegion {
 public:
  explicit CachedMr(MrPtr mr) : mr_(std::move(mr)) {}
  std::uint32_t lkey() const override { return mr_->lkey; }
  std::uint32_t rkey() const override { return mr_->rkey; }

 private:
  MrPtr mr_;
};

}  // namespace

AlignedBytes aligned_zeroed(std::size_t length) {
  const std::size_t rounded = (std::max<std::size_t>(length, 1) + 4095) / 4096 * 4096;
  AlignedBytes b(static_cast<std::uint8_t*>(std::aligned_alloc(4096, rounded)));
  if (b) std::memset(b.get(), 0, rounded);
  return b;
}

VerbsInterface::~VerbsInterface() {
  if (cache_) remove_unmap_listener(cache_.get());  // no hook may reach it any more
  cache_.reset();
  loopback_.reset();  // before its CQ
  loopback_cq_.reset();
  cq_.reset();
  channel_.reset();
}

Status VerbsInterface::find_gid() {
  auto gid = device_.roce_v2_ipv4_gid_index();
  if (!gid) return gid.status();
  gid_index_ = *gid;
  return Status::ok();
}

Status VerbsInterface::open(const Shape& shape) {
  layout_ = shape.layout;
  channel_.reset(ibv_create_comp_channel(device_.context()));
  if (!channel_) return verbs_error("ibv_create_comp_channel", errno);
  const int flags = fcntl(channel_->fd, F_GETFL);
  if (fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return verbs_error("fcntl(O_NONBLOCK) on the completion channel", errno);
  }
  const std::size_t peers = shape.peers;
  const int cq_size = static_cast<int>((shape.receives_per_peer + kSendQueueDepth) * peers + 16);
  cq_.reset(ibv_create_cq(device_.context(), cq_size, nullptr, channel_.get(), 0));
  if (!cq_) return verbs_error("ibv_create_cq", errno);

  // Rings (one per sender) and credit words (one per receiver) are written
  // by peers; staging slots, CAS results and outgoing credit counts only by
  // this NIC.
  const std::size_t ring_bytes = shape.ring_block ? layout_.ring_bytes() * peers : 0;
  if (shape.ring_block) rings_ = aligned_zeroed(ring_bytes);
  credit_words_ = aligned_zeroed(peers * 8);
  credit_out_ = aligned_zeroed(peers * 8);
  staging_ = aligned_zeroed(std::size_t{layout_.slot_size} * kSendSlots);
  atomic_pool_.assign(kAtomicSlots, 0);
  if ((shape.ring_block && !rings_) || !credit_words_ || !credit_out_ || !staging_) {
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
    if (r.length == 0) continue;  // rings made with their connections
    auto mr = verbs::register_memory(device_, r.address, r.length, r.access);
    if (!mr) return mr.status().with_context(r.what);
    *r.mr = std::move(mr).value();
    counters_.registered_bytes += r.length;
  }
  for (std::uint32_t i = 0; i < kSendSlots; ++i) free_send_.push_back(i);
  for (std::uint32_t i = 0; i < kAtomicSlots; ++i) free_atomic_.push_back(i);
  if (shape.registration_cache) TAGWIRE_RETURN_IF_ERROR(start_cache());
  return Status::ok();
}

void VerbsInterface::drain_events() {
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  while (ibv_get_cq_event(channel_.get(), &cq, &ctx) == 0) {  // non-blocking fd
    ibv_ack_cq_events(cq, 1);
  }
}

Result<std::unique_ptr<RcQueuePair>> VerbsInterface::make_qp() {
  auto qp = RcQueuePair::create(device_, cq_.get(), cq_.get(), kSendQueueDepth, kWantInline);
  if (!qp) qp = RcQueuePair::create(device_, cq_.get(), cq_.get(), kSendQueueDepth, 0);
  if (!qp) return qp.status();
  return std::make_unique<RcQueuePair>(std::move(qp).value());
}

std::optional<std::uint32_t> VerbsInterface::take_staging() {
  if (free_send_.empty()) return std::nullopt;
  const std::uint32_t slot = free_send_.back();
  free_send_.pop_back();
  return slot;
}

std::uint32_t VerbsInterface::take_atomic() {
  const std::uint32_t slot = free_atomic_.back();
  free_atomic_.pop_back();
  return slot;
}

std::uint64_t VerbsInterface::credit_word(std::size_t p) const {
  std::atomic_ref<std::uint64_t> word(
      *reinterpret_cast<std::uint64_t*>(credit_words_.get() + p * 8));
  return word.load(std::memory_order_acquire);
}

Result<std::unique_ptr<transport::Registration>> VerbsInterface::register_memory(
    void* address, std::size_t length, transport::RemoteAccess access) {
  int flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
  if (access == transport::RemoteAccess::kReadAndAtomic) {
    flags |= IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_WRITE;
  } else if (access == transport::RemoteAccess::kReadAndWrite) {
    // Window memory: RDMA READ and WRITE, and the NIC's atomics for
    // 8-byte accumulates (Transport::offers_word_atomics).
    flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
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

bool VerbsInterface::has_atomics() const {
  return device_.caps().atomic_cap != IBV_ATOMIC_NONE;
}

Result<std::uint64_t> VerbsInterface::local_atomic(std::uint32_t rkey, std::uint64_t* word,
                                                   const AtomicOp& atomic) {
  if (one_sided_cancel_possible(device_.caps())) {
    // IBV_ATOMIC_GLOB: the NIC's atomics are atomic with the CPU's.
    std::atomic_ref<std::uint64_t> target(*word);
    if (atomic.fetch_add) return target.fetch_add(atomic.compare_add);
    std::uint64_t seen = atomic.compare_add;
    target.compare_exchange_strong(seen, atomic.swap);
    return seen;
  }
  // IBV_ATOMIC_HCA (rxe, most NICs): only the NIC's own atomics are atomic
  // with a peer's, so this process's own goes through the NIC too, on a QP
  // connected to itself, polled here (it never enters the shared CQ).
  if (!loopback_) TAGWIRE_RETURN_IF_ERROR(open_loopback());
  TAGWIRE_RETURN_IF_ERROR(loopback_->post_atomic(
      wr_id(WrKind::kAtomic, 0), LocalBuffer{&loopback_result_[0], 8, loopback_mr_->lkey},
      reinterpret_cast<std::uint64_t>(word), rkey, atomic));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  ibv_wc wc{};
  for (;;) {
    const int got = ibv_poll_cq(loopback_cq_.get(), 1, &wc);
    if (got < 0) return verbs_error("ibv_poll_cq (loopback)", -got);
    if (got == 1) break;
    if (std::chrono::steady_clock::now() > until) {
      return Status(ErrorCode::kInternal, "loopback atomic: no completion in 10 s");
    }
  }
  if (wc.status != IBV_WC_SUCCESS) return completion_error("loopback atomic", wc);
  return loopback_result_[0];
}

// The QP that claims slot descriptors through this NIC: its own CQ,
// connected to itself.
Status VerbsInterface::open_loopback() {
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

Status VerbsInterface::start_cache() {
  // Whatever glibc's malloc frees must stay mapped, or the hooks would miss
  // it (memory_hooks.h).
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

VerbsRegistration::VerbsRegistration(MrPtr mr, void* address, std::size_t length,
                                     transport::TransportCounters* counters)
    : mr_(std::move(mr)),
      rkey_(mr_->rkey),
      address_(address),
      length_(length),
      counters_(counters) {
  ++counters_->registrations;
  counters_->registered_bytes += length_;
}

VerbsRegistration::VerbsRegistration(RegistrationCache* cache, RegistrationCache::Entry* entry,
                                     void* address, std::size_t length,
                                     transport::TransportCounters* counters)
    : rkey_(RegistrationCache::rkey(entry)),
      address_(address),
      length_(length),
      counters_(counters),
      cache_(cache),
      entry_(entry) {
  ++counters_->registrations;
  counters_->registered_bytes += length_;
}

VerbsRegistration::~VerbsRegistration() {
  if (entry_ != nullptr) cache_->release(entry_);
  --counters_->registrations;
  counters_->registered_bytes -= length_;
}

Status unpack_rkey(std::span<const std::uint8_t> key, std::uint32_t* rkey) {
  if (key.size() != sizeof(*rkey)) {
    return {ErrorCode::kProtocol,
            "a verbs remote key is 4 bytes, not " + std::to_string(key.size())};
  }
  std::memcpy(rkey, key.data(), sizeof(*rkey));
  return Status::ok();
}

}  // namespace tagwire::verbs
