#include "shm/shm_transport.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/full_fence.h"
#include "common/host_identity.h"
#include "common/log.h"
#include "common/shared_segment.h"
#include "shm/spsc_ring.h"
#include "shm/wake_fifo.h"

namespace tagwire::shm {

using transport::Completion;
using transport::Issued;
using transport::PeerId;

namespace {

constexpr std::uint64_t kAddressMagic = 0x31304d4853575454ull;  // "TTWSHM01"
constexpr std::uint64_t kSegmentMagic = 0x47455357545f5754ull;
// How often progress() looks whether a peer it cannot send to still
// lives (kill(pid, 0)), in calls with a backlog waiting.
constexpr unsigned kLivenessTicks = 4096;

// What a rank publishes through the bootstrap.
struct WireAddress {
  std::uint64_t magic = kAddressMagic;
  std::int32_t rank = 0;
  std::int32_t pid = 0;
  std::int32_t size = 0;
  std::uint32_t reserved = 0;
  std::uint64_t ring_bytes = 0;
  std::uint64_t segment_bytes = 0;
  char name[48] = {};   // the segment's shm name; name + ".wake" in /dev/shm is the FIFO
  char host[128] = {};  // host_identity()
};

// The first cache lines of every segment.
struct alignas(kCell) SegmentHeader {
  std::uint64_t magic = kSegmentMagic;
  std::int32_t rank = 0;
  std::int32_t size = 0;
  std::uint64_t ring_bytes = 0;
};
// The receiver sleeps (its helper thread is in poll()): a sender of a
// message that must wake it clears this and writes to the FIFO.
struct alignas(kCell) ArmedWord {
  std::atomic<std::uint32_t> armed{0};
};

// A large read this process makes, shared with the peer that owns the bytes
// (see ShmTransportImpl::shared_read). One per process: reads are
// synchronous, and the engine lock lets one run at a time.
struct alignas(kCell) TransferSlot {
  // generation << 32 | the next chunk nobody has claimed yet. Both sides
  // claim a chunk by compare-and-swap on the whole word, so a helper that
  // answers an old request (another generation) claims nothing.
  std::atomic<std::uint64_t> claim{0};
  std::atomic<std::uint32_t> helped{0};  // chunks the helper has copied, this generation
  std::atomic<std::uint32_t> failed{0};  // the helper could not copy one
};

struct Layout {
  std::size_t transfer = 0;  // offset of the TransferSlot
  std::size_t controls = 0;  // offset of RingControl[size]
  std::size_t rings = 0;     // offset of the rings, one per sender
  std::size_t ring_bytes = 0;
  std::size_t total = 0;

  Layout(int size, std::size_t ring) : ring_bytes(ring) {
    transfer = sizeof(SegmentHeader) + sizeof(ArmedWord);
    controls = transfer + sizeof(TransferSlot);
    rings = (controls + static_cast<std::size_t>(size) * sizeof(RingControl) + 4095) / 4096 * 4096;
    total = rings + static_cast<std::size_t>(size) * ring;
  }
};

// What a reader asks of the owner of the bytes, as a ring record with no
// header (every engine message has one): copy unclaimed chunks of `length`
// bytes at `source` (the owner's, under a key it gave) to `destination`
// (the reader's) while there are any.
struct HelpRequest {
  std::uint32_t generation = 0;
  std::uint32_t chunks = 0;
  std::uint64_t chunk_bytes = 0;
  std::uint64_t length = 0;
  std::uint64_t source = 0;
  std::uint64_t destination = 0;
};

// Reads this large are split with the owner of the bytes: one
// process_vm_readv copies about 10 GB/s here, and two cores copying halves
// at once is how UCX's shared memory beat a single copy at 1-4 MiB
// (docs/shared-memory.md).
constexpr std::size_t kSharedReadChunk = std::size_t{256} << 10;
constexpr std::size_t kSharedReadFrom = 2 * kSharedReadChunk;

// A packed remote key.
enum class KeyKind : std::uint32_t { kProcessMemory = 1, kSharedWords = 2 };
struct PackedKey {
  KeyKind kind = KeyKind::kProcessMemory;
  std::int32_t pid = 0;
  std::uint64_t address = 0;
  std::uint64_t length = 0;
  std::uint32_t words_id = 0;  // kSharedWords: which of the owner's segments
  std::int32_t owner = 0;      // the owner's rank
};

Result<PackedKey> unpack_key(std::span<const std::uint8_t> bytes) {
  PackedKey key;
  if (bytes.size() != sizeof(key)) {
    return Status(ErrorCode::kProtocol, "a remote key of " + std::to_string(bytes.size()) +
                                            " bytes is not a shared-memory key");
  }
  std::memcpy(&key, bytes.data(), sizeof(key));
  return key;
}

// Whether the process `pid` has exited (kill(pid, 0) finds nobody).
bool process_exited(std::int32_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

// What every operation with a peer whose process is gone ends with.
Status exited(PeerId peer) {
  return {ErrorCode::kPeerFailed, "rank " + std::to_string(peer) + " has exited"};
}

Status range_check(const PackedKey& key, std::uint64_t address, std::size_t bytes) {
  if (address < key.address || bytes > key.length || address - key.address > key.length - bytes) {
    return {ErrorCode::kInvalidArgument, "a remote access outside the memory its key names"};
  }
  return Status::ok();
}

class ShmRegistration final : public transport::Registration {
 public:
  ShmRegistration(PackedKey key, transport::TransportCounters* counters, SharedSegment segment = {})
      : key_(key), segment_(std::move(segment)), counters_(counters) {
    std::memcpy(packed_, &key_, sizeof(key_));
    ++counters_->registrations;
    counters_->registered_bytes += key_.length;
  }
  ~ShmRegistration() override {
    --counters_->registrations;
    counters_->registered_bytes -= key_.length;
  }
  std::span<const std::uint8_t> packed_key() const override { return {packed_, sizeof(packed_)}; }
  std::uint64_t address() const override { return key_.address; }
  std::size_t length() const override { return key_.length; }
  void unlink() { segment_.unlink(); }

 private:
  PackedKey key_;
  SharedSegment segment_;
  std::uint8_t packed_[sizeof(PackedKey)];
  transport::TransportCounters* counters_;
};

// A message waiting for room in a peer's ring, in order. It owns its
// bytes: the engine may drop what a payload points into while the message
// waits (a cancelled rendezvous send frees the registration whose packed
// key is the RTS's payload; ASan caught the read after free). It still
// completes only once it is in the ring, so a sender that floods a slow
// receiver waits for it.
struct Backlogged {
  std::vector<std::uint8_t> header;
  std::vector<std::uint8_t> payload;
  Completion done;
  bool wake = false;
};

class ShmTransportImpl final : public transport::Transport {
 public:
  ShmTransportImpl(const ShmOptions& options, std::string name, SharedSegment segment,
                   WakeFifo fifo, std::size_t ring_bytes)
      : options_(options),
        name_(std::move(name)),
        layout_(options.size, ring_bytes),
        segment_(std::move(segment)),
        fifo_(std::move(fifo)),
        armed_(reinterpret_cast<ArmedWord*>(segment_.data() + sizeof(SegmentHeader))) {
    auto* header = new (segment_.data()) SegmentHeader;
    header->rank = options.rank;
    header->size = options.size;
    header->ring_bytes = ring_bytes;
    new (armed_) ArmedWord;
    new (transfer_slot(segment_.data())) TransferSlot;
    consumers_.reserve(static_cast<std::size_t>(options.size));
    for (int s = 0; s < options.size; ++s) {
      consumers_.emplace_back(ring(segment_.data(), s), layout_.ring_bytes,
                              control(segment_.data(), s));
    }
    waiting_help_.resize(static_cast<std::size_t>(options.size));
    me_.magic = kAddressMagic;
    me_.rank = options.rank;
    me_.pid = ::getpid();
    me_.size = options.size;
    me_.ring_bytes = ring_bytes;
    me_.segment_bytes = layout_.total;
    std::snprintf(me_.name, sizeof(me_.name), "%s", name_.c_str());
    std::snprintf(me_.host, sizeof(me_.host), "%s", host_identity().c_str());
  }

  ~ShmTransportImpl() override {
    // Completions of messages that never left must not run later: drop them.
    for (auto& peer : peers_) peer.backlog.clear();
  }

  std::string_view name() const override { return "shm"; }
  bool connects_on_first_use() const override { return true; }

  std::vector<std::uint8_t> address() const override {
    std::vector<std::uint8_t> bytes(sizeof(me_));
    std::memcpy(bytes.data(), &me_, sizeof(me_));
    return bytes;
  }

  Status set_peer_addresses(std::vector<std::vector<std::uint8_t>> addresses) override {
    if (addresses.size() != static_cast<std::size_t>(options_.size)) {
      return {ErrorCode::kInvalidArgument, "shared memory: " + std::to_string(addresses.size()) +
                                               " addresses for a job of " +
                                               std::to_string(options_.size)};
    }
    peers_.clear();
    peers_.resize(addresses.size());
    for (std::size_t r = 0; r < addresses.size(); ++r) {
      WireAddress a;
      if (addresses[r].size() != sizeof(a)) {
        return {ErrorCode::kConfig, "rank " + std::to_string(r) +
                                        " has no shared-memory address (TAGWIRE_TRANSPORT "
                                        "differs between ranks)"};
      }
      std::memcpy(&a, addresses[r].data(), sizeof(a));
      a.name[sizeof(a.name) - 1] = '\0';
      a.host[sizeof(a.host) - 1] = '\0';
      if (a.magic != kAddressMagic || a.rank != static_cast<std::int32_t>(r) ||
          a.size != options_.size || a.ring_bytes != layout_.ring_bytes) {
        return {ErrorCode::kConfig, "rank " + std::to_string(r) +
                                        "'s shared-memory address does not match this job's "
                                        "(TAGWIRE_EAGER_THRESHOLD or the build differs)"};
      }
      if (std::strcmp(a.host, me_.host) != 0) {
        return {ErrorCode::kConfig, "TAGWIRE_TRANSPORT=shm: rank " + std::to_string(r) +
                                        " is on another host (or another /dev/shm or PID "
                                        "namespace); use ucx or verbs"};
      }
      peers_[r].address = a;
    }
    return Status::ok();
  }

  void set_receiver(transport::Receiver* receiver) override { receiver_ = receiver; }

  std::size_t max_header() const override { return kMaxRecordHeader; }

  Result<Issued> send(PeerId peer, std::span<const std::uint8_t> header,
                      std::span<const std::uint8_t> payload, Completion done,
                      transport::Delivery delivery) override {
    if (!record_allowed(header, payload)) {
      if (header.size() > kMaxRecordHeader || header.empty()) {
        // (A header-less record is the transport's own: a HelpRequest.)
        return Status(ErrorCode::kInvalidArgument,
                      "message header empty or larger than the transport allows");
      }
      return Status(ErrorCode::kInvalidArgument,
                    "message of " + std::to_string(payload.size()) +
                        " B larger than the shared-memory rings carry");
    }
    Peer* found = ready_peer(peer);
    if (found == nullptr) {
      auto p = attach(peer);
      if (!p) return p.status();
      found = *p;
    }
    Peer& to = *found;
    ++counters_.messages_sent;
    const bool wake = delivery == transport::Delivery::kWake || options_.wake_on_every_message;
    if (to.backlog.empty() && to.producer.push(header, payload)) {
      pushed(to);
      if (wake) wake_peer(to);
      return Issued::kDone;
    }
    if (to.backlog.empty()) ++peers_with_backlog_;
    to.backlog.push_back(
        {{header.begin(), header.end()}, {payload.begin(), payload.end()}, done, wake});
    ++counters_.credit_waits;
    return Issued::kPending;
  }

  // A record that fits the ring now, behind no backlog, to a peer
  // attached and alive: pushed (its bytes are in the ring, nothing kept).
  // Anything else, including a first send that would attach, goes through
  // send(), which says why.
  Result<bool> try_send(PeerId peer, std::span<const std::uint8_t> header,
                        std::span<const std::uint8_t> payload) override {
    if (options_.wake_on_every_message || !record_allowed(header, payload)) return false;
    Peer* to = ready_peer(peer);
    if (to == nullptr || !to->backlog.empty() || !to->producer.push(header, payload)) {
      return false;
    }
    pushed(*to);
    ++counters_.messages_sent;
    return true;
  }

  Result<std::unique_ptr<transport::Registration>> register_memory(
      void* address, std::size_t length, transport::RemoteAccess) override {
    PackedKey key;
    key.kind = KeyKind::kProcessMemory;
    key.pid = me_.pid;
    key.address = reinterpret_cast<std::uint64_t>(address);
    key.length = length;
    key.owner = options_.rank;
    return std::unique_ptr<transport::Registration>(new ShmRegistration(key, &counters_));
  }

  Result<std::unique_ptr<transport::Registration>> allocate_atomic_words(
      std::size_t count) override {
    return allocate_shared(count * sizeof(std::uint64_t));
  }

  // A window's memory in a shared segment too: peers map it (attach_words)
  // and read and write it with a memcpy instead of a system call.
  std::uint8_t* map_remote(PeerId peer, std::span<const std::uint8_t> remote_key,
                           std::uint64_t remote_address, std::size_t length) override {
    auto key = checked_key(peer, remote_key, remote_address, length);
    if (!key || key->kind != KeyKind::kSharedWords) return nullptr;
    auto there = mapped(peer, *key, remote_address);
    return there ? *there : nullptr;
  }

  // Where /dev/shm cannot hold it, the heap (and process_vm_readv) as for
  // any window.
  Result<std::unique_ptr<transport::Registration>> allocate_window_memory(
      std::size_t bytes) override {
    auto shared = allocate_shared(bytes);
    if (shared) return shared;
    TW_WARN("shm", shared.status().to_string() << "; this window's memory comes from the heap");
    return Transport::allocate_window_memory(bytes);
  }

  Result<Issued> read(PeerId peer, std::span<std::uint8_t> local, std::uint64_t remote_address,
                      std::span<const std::uint8_t> remote_key, Completion) override {
    auto key = checked_key(peer, remote_key, remote_address, local.size());
    if (!key) return key.status();
    if (key->kind == KeyKind::kSharedWords) {
      auto there = mapped(peer, *key, remote_address);
      if (!there) return there.status();
      std::memcpy(local.data(), *there, local.size());
    } else if (local.size() >= kSharedReadFrom && peer != options_.rank) {
      TAGWIRE_RETURN_IF_ERROR(shared_read(peer, key->pid, local, remote_address));
    } else {
      TAGWIRE_RETURN_IF_ERROR(cross_memory(key->pid, peer, local.data(), remote_address,
                                           local.size(), /*write=*/false));
    }
    counters_.bytes_read += local.size();
    return Issued::kDone;
  }

  Result<Issued> write(PeerId peer, std::span<const std::uint8_t> local,
                       std::uint64_t remote_address, std::span<const std::uint8_t> remote_key,
                       Completion) override {
    auto key = checked_key(peer, remote_key, remote_address, local.size());
    if (!key) return key.status();
    if (key->kind == KeyKind::kSharedWords) {
      auto there = mapped(peer, *key, remote_address);
      if (!there) return there.status();
      std::memcpy(*there, local.data(), local.size());
    } else {
      TAGWIRE_RETURN_IF_ERROR(cross_memory(key->pid, peer, const_cast<std::uint8_t*>(local.data()),
                                           remote_address, local.size(), /*write=*/true));
    }
    counters_.bytes_written += local.size();
    return Issued::kDone;
  }

  // Every read and write is complete at its target when it returns.
  Result<Issued> flush(Completion) override { return Issued::kDone; }

  Result<Issued> compare_and_swap(PeerId peer, std::uint64_t remote_address,
                                  std::span<const std::uint8_t> remote_key, std::uint64_t expected,
                                  std::uint64_t desired, std::uint64_t* old_value,
                                  Completion) override {
    if (remote_address % 8 != 0) {
      return Status(ErrorCode::kInvalidArgument, "compare-and-swap target is not 8-byte aligned");
    }
    auto key = checked_key(peer, remote_key, remote_address, sizeof(std::uint64_t));
    if (!key) return key.status();
    if (key->kind != KeyKind::kSharedWords) {
      return Status(ErrorCode::kUnsupported,
                    "shared memory: compare-and-swap needs words from allocate_atomic_words");
    }
    auto there = mapped(peer, *key, remote_address);
    if (!there) return there.status();
    auto* word = reinterpret_cast<std::uint64_t*>(*there);
    std::atomic_ref<std::uint64_t> target(*word);
    std::uint64_t seen = expected;
    target.compare_exchange_strong(seen, desired, std::memory_order_acq_rel);
    *old_value = seen;
    return Issued::kDone;
  }

  Result<std::uint64_t> local_compare_and_swap(const transport::Registration&, std::uint64_t* word,
                                               std::uint64_t expected,
                                               std::uint64_t desired) override {
    // The word is in a shared segment (allocate_atomic_words): peers CAS
    // the same physical word with the same instruction.
    std::atomic_ref<std::uint64_t> target(*word);
    std::uint64_t seen = expected;
    target.compare_exchange_strong(seen, desired, std::memory_order_acq_rel);
    return seen;
  }

  unsigned progress() override {
    if (in_progress_) return 0;  // a receiver's callback that progresses
    in_progress_ = true;
    if (helps_waiting_ != 0) run_helps();
    unsigned n = 0;
    RingRecord record;
    for (auto& consumer : consumers_) {
      const auto from = static_cast<std::size_t>(&consumer - consumers_.data());
      // A bounded batch per ring per call: one sender cannot starve the rest.
      unsigned k = 0;
      for (; k < kBatch && consumer.peek(&record); ++k) {
        ++n;
        if (record.header.empty()) {
          take_help_request(static_cast<PeerId>(from), record.payload);
        } else {
          ++counters_.messages_received;
          if (receiver_ != nullptr) receiver_->on_message(record.header, record.payload);
        }
        consumer.release();
      }
      if (k != 0 && from < peers_.size()) peers_[from].heard_since_push = true;
    }
    if (peers_with_backlog_ != 0) n += drain_backlogs();
    in_progress_ = false;
    return n;
  }

  Result<bool> arm() override {
    fifo_.drain();
    armed_->armed.store(1, std::memory_order_seq_cst);
    if (has_work()) {
      armed_->armed.store(0, std::memory_order_relaxed);
      return false;
    }
    return true;
  }

  int event_fd() const override { return fifo_.fd(); }

  Status disconnect_all() override {
    // Called after a job-wide barrier: nobody attaches any more. What still
    // waits for room in a peer's ring goes first (the peer serves its rings
    // until its own teardown barrier), then every peer's segment is let go.
    segment_.unlink();
    fifo_.unlink();
    Status result;
    const auto deadline = std::chrono::steady_clock::now() + kDrainLimit;
    while (peers_with_backlog_ != 0 && std::chrono::steady_clock::now() < deadline) progress();
    if (peers_with_backlog_ != 0) {
      result = {ErrorCode::kPeerFailed, "shared memory: messages to a peer that stopped reading"};
    }
    for (auto& p : peers_) {
      p.backlog.clear();
      p.producer = RingProducer();
      p.armed = nullptr;
      p.wake = WakeTarget();
      p.words.clear();
      p.segment = SharedSegment();
    }
    peers_with_backlog_ = 0;
    return result;
  }

  transport::TransportCounters counters() const override {
    transport::TransportCounters c = counters_;
    c.open_connections = static_cast<std::uint64_t>(std::count_if(
        peers_.begin(), peers_.end(), [](const Peer& p) { return p.segment.mapped(); }));
    return c;
  }

 private:
  static constexpr unsigned kBatch = 32;
  static constexpr auto kDrainLimit = std::chrono::seconds(10);

  struct Peer {
    WireAddress address;
    SharedSegment segment;  // theirs, attached on first send
    RingProducer producer;  // my ring inside it
    ArmedWord* armed = nullptr;
    WakeTarget wake;
    std::deque<Backlogged> backlog;
    std::map<std::uint32_t, SharedSegment> words;  // their atomic words, attached on first CAS
    bool dead = false;
    // Whether a record from this peer arrived since the last push to it
    // (pushed() says why).
    bool heard_since_push = true;
  };

  // After a push to `to`. A stream (nothing heard from `to` since the
  // previous push: a window of sends, a backlog draining) asks for the
  // next cell ahead; an exchange (`to` spoke since, so it has caught up
  // and polls that very cell) leaves it be (RingProducer::prefetch_next).
  static void pushed(Peer& to) {
    if (!to.heard_since_push) to.producer.prefetch_next();
    to.heard_since_push = false;
  }

  // Whether the rings carry a record of this header and payload (send()
  // says which limit a refused one breaks).
  bool record_allowed(std::span<const std::uint8_t> header,
                      std::span<const std::uint8_t> payload) const {
    return !header.empty() && header.size() <= kMaxRecordHeader &&
           payload.size() <= kMaxRecordPayload &&
           record_bytes(header.size(), payload.size()) <= layout_.ring_bytes / 2;
  }

  // A peer already attached and alive (every send but a peer's first),
  // found in a few compares, without a Result; else null.
  Peer* ready_peer(PeerId peer) {
    if (static_cast<std::size_t>(peer) >= peers_.size()) return nullptr;
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    return p.dead || !p.producer.attached() ? nullptr : &p;
  }

  static std::string words_name(const std::string& base, std::uint32_t id) {
    return base + "-w" + std::to_string(id);
  }
  static std::string fifo_path(const char* name) {
    return std::string("/dev/shm") + name + ".wake";
  }

  std::uint8_t* ring(std::uint8_t* base, int sender) const {
    return base + layout_.rings + static_cast<std::size_t>(sender) * layout_.ring_bytes;
  }
  RingControl* control(std::uint8_t* base, int sender) const {
    return reinterpret_cast<RingControl*>(base + layout_.controls) + sender;
  }
  TransferSlot* transfer_slot(std::uint8_t* base) const {
    return reinterpret_cast<TransferSlot*>(base + layout_.transfer);
  }

  // A large read, split with the peer that owns the bytes: a help request
  // goes into the peer's ring, then both claim chunks from the slot in
  // this process's segment until none is left, the peer writing its
  // chunks here with process_vm_writev. The read returns once every chunk
  // is in: the peer copies a chunk it claimed at once (inside its
  // progress()), so the wait is at most one chunk's copy. A peer that is
  // not polling never claims, and the reader copies everything itself.
  Status shared_read(PeerId peer, std::int32_t pid, std::span<std::uint8_t> local,
                     std::uint64_t remote) {
    auto p = attach(peer);
    if (!p) return p.status();
    TransferSlot* slot = transfer_slot(segment_.data());
    if (++generation_ == 0) ++generation_;
    const std::uint64_t chunk = kSharedReadChunk;
    const auto chunks = static_cast<std::uint32_t>((local.size() + chunk - 1) / chunk);
    slot->helped.store(0, std::memory_order_relaxed);
    slot->failed.store(0, std::memory_order_relaxed);
    slot->claim.store(std::uint64_t{generation_} << 32, std::memory_order_release);
    HelpRequest h;
    h.generation = generation_;
    h.chunks = chunks;
    h.chunk_bytes = chunk;
    h.length = local.size();
    h.source = remote;
    h.destination = reinterpret_cast<std::uint64_t>(local.data());
    Peer& owner = **p;
    if (owner.backlog.empty() &&
        owner.producer.push({}, {reinterpret_cast<const std::uint8_t*>(&h), sizeof(h)})) {
      wake_peer(owner);  // a sleeping owner's agent can help too
    }
    std::uint32_t mine = 0;
    std::uint64_t mine_bytes = 0;
    Status result;
    for (std::uint32_t next, taken; claim_chunks(slot, generation_, chunks, mine, &next, &taken);) {
      mine += taken;
      const std::uint64_t offset = std::uint64_t{next} * chunk;
      const std::uint64_t n = std::min<std::uint64_t>(taken * chunk, local.size() - offset);
      mine_bytes += n;
      // After a failure the rest are still claimed (and skipped), so that
      // the count of the peer's chunks below stays exact.
      if (!result.is_ok()) continue;
      result = cross_memory(pid, peer, local.data() + offset, remote + offset, n, false);
    }
    const std::uint32_t theirs = chunks - mine;
    for (unsigned spins = 1; slot->helped.load(std::memory_order_acquire) < theirs; ++spins) {
      if (spins % 1024 == 0) {
        if (process_exited(pid)) {
          return exited(peer);
        }
        sched_yield();  // its process may be off its core, mid-chunk
      }
    }
    counters_.bytes_helped_by_peers += local.size() - mine_bytes;
    if (slot->failed.load(std::memory_order_relaxed) != 0 && result.is_ok()) {
      result = {ErrorCode::kTransport,
                "rank " + std::to_string(peer) + " could not copy its part of a large read"};
    }
    return result;
  }

  // Claims the next chunk of generation `generation`, if any is left,
  // `taken` (1) of them from `next`. The reader (`mine`: the chunks it
  // claimed so far) takes every chunk left at once when it has claimed a
  // quarter of them (at least one) and the owner none: the owner is not
  // polling (busy in a read of its own, as in a 2-rank all-to-all, or
  // computing, or off its core). One process_vm_readv per chunk cost 3 us
  // of a 1 MiB read's 60 for each (57 us in one call, 66 in four,
  // 2026-12-02); an owner that starts polling during that call finds
  // nothing to claim, and the read is one copy as it would be without the
  // request. (A quarter, not one chunk: a polling owner that a busy
  // machine keeps off its core for a few microseconds still gets a share
  // of a read of many chunks.)
  static bool claim_chunks(TransferSlot* slot, std::uint32_t generation, std::uint32_t chunks,
                           std::uint32_t mine, std::uint32_t* next, std::uint32_t* taken) {
    std::uint64_t word = slot->claim.load(std::memory_order_acquire);
    for (;;) {
      if (static_cast<std::uint32_t>(word >> 32) != generation) return false;
      const auto first = static_cast<std::uint32_t>(word);
      if (first >= chunks) return false;
      const bool alone = mine >= std::max(1u, chunks / 4) && first == mine;
      const std::uint32_t n = alone ? chunks - first : 1;
      if (slot->claim.compare_exchange_weak(word, word + n, std::memory_order_acq_rel,
                                            std::memory_order_acquire)) {
        *next = first;
        *taken = n;
        return true;
      }
    }
  }

  // A help request is kept until the next progress() rather than served
  // where it is read: the same batch may hold a message that makes the
  // engine start a read of its own once progress() returns (a rendezvous
  // request, whose read the engine defers), and a rank that copied the
  // peer's chunks first started its own read only after them. In a 2-rank
  // all-to-all of 1 MiB the two reads ran one after the other, each on two
  // cores, instead of side by side on one core each (118 us against Open
  // MPI's 80, 2026-12-02). A rank that polls on, as a sender waiting for
  // its FIN does, serves it a poll later; by then a reader that was busy
  // with a read of its own has claimed its own chunks, and the request
  // claims nothing. One per reader: reads are synchronous, so a newer
  // request means the older one's read is over.
  void take_help_request(PeerId reader, std::span<const std::uint8_t> bytes) {
    HelpRequest h;
    if (bytes.size() != sizeof(h)) {
      TW_WARN("shm", "a transport record of " << bytes.size() << " bytes from rank " << reader
                                              << " is not a help request; dropped");
      return;
    }
    std::memcpy(&h, bytes.data(), sizeof(h));
    if (h.chunk_bytes == 0 || h.length == 0) return;
    HelpRequest& waiting = waiting_help_[static_cast<std::size_t>(reader)];
    if (waiting.chunks == 0) ++helps_waiting_;
    waiting = h;
  }

  void run_helps() {
    for (std::size_t reader = 0; reader < waiting_help_.size() && helps_waiting_ != 0; ++reader) {
      if (waiting_help_[reader].chunks == 0) continue;
      const HelpRequest h = waiting_help_[reader];
      waiting_help_[reader].chunks = 0;
      --helps_waiting_;
      help(static_cast<PeerId>(reader), h);
    }
  }

  // The owner's side of shared_read: copies chunks while any is unclaimed.
  // A request that arrives late (its read is over, or another began)
  // claims nothing.
  void help(PeerId reader, const HelpRequest& h) {
    auto p = attach(reader);
    if (!p) return;
    Peer& to = **p;
    TransferSlot* slot = transfer_slot(to.segment.data());
    // (One chunk at a time: `mine` 0, the helper's.)
    for (std::uint32_t next, one; claim_chunks(slot, h.generation, h.chunks, 0, &next, &one);) {
      const std::uint64_t offset = std::uint64_t{next} * h.chunk_bytes;
      const std::uint64_t n = std::min<std::uint64_t>(h.chunk_bytes, h.length - offset);
      Status s =
          cross_memory(to.address.pid, reader, reinterpret_cast<std::uint8_t*>(h.source + offset),
                       h.destination + offset, n, /*write=*/true);
      if (!s.is_ok()) {
        slot->failed.store(1, std::memory_order_relaxed);
        TW_WARN("shm", "helping rank " << reader << "'s read: " << s.to_string());
      } else {
        counters_.bytes_helped += n;
      }
      slot->helped.fetch_add(1, std::memory_order_release);
    }
  }

  Result<Peer*> peer_at(PeerId peer) {
    if (peer < 0 || static_cast<std::size_t>(peer) >= peers_.size()) {
      return Status(ErrorCode::kInvalidRank, "no such peer " + std::to_string(peer));
    }
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    if (p.dead) {
      return exited(peer);
    }
    return &p;
  }

  // The peer's segment, mapped on first use (a "connection").
  Result<Peer*> attach(PeerId peer) {
    auto found = peer_at(peer);
    if (!found) return found;
    Peer& p = **found;
    if (p.producer.attached()) return &p;
    auto segment = SharedSegment::attach(p.address.name, p.address.segment_bytes);
    if (!segment) {
      // A peer that died before our first message unlinked nothing, but
      // the launcher (or its own cleanup) may have: its segment is gone
      // because it is, and that is a dead peer, not a transport error.
      if (process_exited(p.address.pid)) {
        // (The engine hears of it from the launcher or the caller's error;
        // telling it from here, inside a send it is starting, would fail
        // that very request twice.)
        p.dead = true;
        return exited(peer);
      }
      return segment.status().with_context("reaching rank " + std::to_string(peer));
    }
    p.segment = std::move(segment).value();
    const auto* header = reinterpret_cast<const SegmentHeader*>(p.segment.data());
    if (header->magic != kSegmentMagic || header->rank != peer) {
      return Status(ErrorCode::kProtocol,
                    "rank " + std::to_string(peer) + "'s shared segment is not its own");
    }
    p.producer = RingProducer(ring(p.segment.data(), options_.rank), layout_.ring_bytes,
                              control(p.segment.data(), options_.rank));
    p.armed = reinterpret_cast<ArmedWord*>(p.segment.data() + sizeof(SegmentHeader));
    p.wake = WakeTarget(fifo_path(p.address.name));
    ++counters_.connections;
    TW_DEBUG("shm", "attached to rank " << peer);
    return &p;
  }

  Result<SharedSegment*> attach_words(PeerId peer, const PackedKey& key) {
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    auto it = p.words.find(key.words_id);
    if (it != p.words.end()) return &it->second;
    auto segment = SharedSegment::attach(words_name(p.address.name, key.words_id), key.length);
    if (!segment) return segment.status().with_context("rank " + std::to_string(peer) + "'s words");
    return &p.words.emplace(key.words_id, std::move(segment).value()).first->second;
  }

  // Where `remote_address` of a peer's shared segment (kSharedWords) is in
  // this process: its own address for this rank, else in the mapping.
  Result<std::uint8_t*> mapped(PeerId peer, const PackedKey& key, std::uint64_t remote_address) {
    if (peer == options_.rank) return reinterpret_cast<std::uint8_t*>(remote_address);
    auto segment = attach_words(peer, key);
    if (!segment) return segment.status();
    return segment.value()->data() + (remote_address - key.address);
  }

  // A zeroed shared segment of `bytes`, registered: peers map it by name.
  Result<std::unique_ptr<transport::Registration>> allocate_shared(std::size_t bytes) {
    const std::uint32_t id = next_words_id_++;
    bytes = std::max<std::size_t>(bytes, 8);
    auto segment = SharedSegment::create(words_name(name_, id), bytes, /*reserve=*/true);
    if (!segment) return segment.status();
    PackedKey key;
    key.kind = KeyKind::kSharedWords;
    key.pid = me_.pid;
    key.address = reinterpret_cast<std::uint64_t>(segment->data());
    key.length = bytes;
    key.words_id = id;
    key.owner = options_.rank;
    auto reg = std::make_unique<ShmRegistration>(key, &counters_, std::move(segment).value());
    return std::unique_ptr<transport::Registration>(std::move(reg));
  }

  Result<PackedKey> checked_key(PeerId peer, std::span<const std::uint8_t> bytes,
                                std::uint64_t address, std::size_t length) {
    auto p = peer_at(peer);
    if (!p) return p.status();
    auto key = unpack_key(bytes);
    if (!key) return key;
    if (key->pid != (*p)->address.pid || key->owner != peer) {
      return Status(ErrorCode::kProtocol,
                    "a remote key that is not rank " + std::to_string(peer) + "'s");
    }
    TAGWIRE_RETURN_IF_ERROR(range_check(*key, address, length));
    return key;
  }

  // process_vm_readv / writev, to the end (they may stop early at a page).
  Status cross_memory(std::int32_t pid, PeerId peer, std::uint8_t* local, std::uint64_t remote,
                      std::size_t bytes, bool write) {
    std::size_t done = 0;
    while (done < bytes) {
      iovec l{local + done, bytes - done};
      iovec r{reinterpret_cast<void*>(remote + done), bytes - done};
      const ssize_t n = write ? ::process_vm_writev(pid, &l, 1, &r, 1, 0)
                              : ::process_vm_readv(pid, &l, 1, &r, 1, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int e = n < 0 ? errno : EFAULT;
        if (e == ESRCH) {
          return exited(peer);
        }
        return {
            ErrorCode::kTransport,
            std::string(write ? "process_vm_writev" : "process_vm_readv") + " from rank " +
                std::to_string(peer) + ": " + std::strerror(e) +
                (e == EPERM ? " (cross-memory attach needs the same user and ptrace rights)" : "")};
      }
      done += static_cast<std::size_t>(n);
    }
    return Status::ok();
  }

  void wake_peer(Peer& to) {
    // Dekker with arm(): our record is published before we look at the
    // flag; the receiver sets the flag before it looks at the rings.
    full_fence(to.armed->armed);
    if (to.armed->armed.load(std::memory_order_relaxed) != 0 &&
        to.armed->armed.exchange(0, std::memory_order_relaxed) != 0) {
      ++counters_.wake_writes;
      to.wake.notify();
    }
  }

  unsigned drain_backlogs() {
    unsigned n = 0;
    const bool look = ++liveness_ticks_ % kLivenessTicks == 0;
    for (std::size_t r = 0; r < peers_.size(); ++r) {
      Peer& p = peers_[r];
      if (p.backlog.empty()) continue;
      while (!p.backlog.empty() &&
             p.producer.push(p.backlog.front().header, p.backlog.front().payload)) {
        pushed(p);
        Backlogged sent = std::move(p.backlog.front());
        p.backlog.pop_front();
        if (p.backlog.empty()) --peers_with_backlog_;
        if (sent.wake) wake_peer(p);
        ++n;
        sent.done(Status::ok());
      }
      if (!p.backlog.empty() && look && process_exited(p.address.pid)) {
        peer_exited(static_cast<PeerId>(r));
      }
    }
    return n;
  }

  // A receiver that stopped reading because its process is gone: what
  // waited for it fails, and the engine hears of it.
  void peer_exited(PeerId peer) {
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    p.dead = true;
    std::deque<Backlogged> lost;
    lost.swap(p.backlog);
    --peers_with_backlog_;
    const Status why = exited(peer);
    for (auto& m : lost) m.done(why);
    if (receiver_ != nullptr) receiver_->on_peer_unreachable(peer, why);
  }

  bool has_work() {
    // A help request read but not yet served: the poll that serves it is
    // the next one (take_help_request), so a helper thread must not sleep.
    if (helps_waiting_ != 0) return true;
    for (const auto& consumer : consumers_) {
      if (consumer.pending()) return true;
    }
    for (auto& p : peers_) {
      if (!p.backlog.empty() &&
          p.producer.has_room(p.backlog.front().header.size(), p.backlog.front().payload.size())) {
        return true;
      }
    }
    return false;
  }

  ShmOptions options_;
  std::string name_;
  Layout layout_;
  SharedSegment segment_;
  WakeFifo fifo_;
  ArmedWord* armed_;
  WireAddress me_;
  std::vector<RingConsumer> consumers_;
  std::vector<Peer> peers_;
  transport::Receiver* receiver_ = nullptr;
  transport::TransportCounters counters_;
  unsigned peers_with_backlog_ = 0;
  // Help requests read but not yet served (take_help_request), one per
  // reader (chunks 0: none), and how many there are.
  std::vector<HelpRequest> waiting_help_;
  unsigned helps_waiting_ = 0;
  unsigned liveness_ticks_ = 0;
  std::uint32_t next_words_id_ = 0;
  std::uint32_t generation_ = 0;  // of this process's shared reads
  bool in_progress_ = false;
};

}  // namespace

Result<std::unique_ptr<transport::Transport>> create_shm_transport(const ShmOptions& options) {
  if (options.size < 1 || options.rank < 0 || options.rank >= options.size) {
    return Status(ErrorCode::kInvalidArgument, "shared memory: rank outside the job");
  }
  // Under Yama's ptrace_scope 1 a peer may read this process's memory
  // (process_vm_readv) only if it says so; elsewhere this does nothing.
  (void)::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  const std::size_t ring_bytes = ring_bytes_for(kMaxRecordHeader, options.max_payload);
  std::random_device random;
  const std::uint64_t nonce = (std::uint64_t{random()} << 32) | random();
  char name[48];
  std::snprintf(name, sizeof(name), "/tagwire-%d-%016llx", static_cast<int>(::getpid()),
                static_cast<unsigned long long>(nonce));
  const Layout layout(options.size, ring_bytes);
  auto segment = SharedSegment::create(name, layout.total);
  if (!segment) return segment.status();
  auto fifo = WakeFifo::create(std::string("/dev/shm") + name + ".wake");
  if (!fifo) return fifo.status();
  return std::unique_ptr<transport::Transport>(new ShmTransportImpl(
      options, name, std::move(segment).value(), std::move(fifo).value(), ring_bytes));
}

namespace {

Result<std::unique_ptr<transport::Transport>> create_from_setup(
    const transport::TransportSetup& setup) {
  ShmOptions options;
  options.rank = setup.rank;
  options.size = setup.size;
  options.max_payload = std::max(setup.eager_threshold, setup.max_remote_key);
  options.wake_on_every_message = setup.wake_on_every_message;
  return create_shm_transport(options);
}

}  // namespace

const transport::TransportEntry kTransportEntry{
    "shm",
    "shared memory between ranks on this host: per-sender rings, process_vm_readv",
    {.one_host_only = true,
     .preference = 2,
     // osu_p2p on this 2-core machine, in the same run as Open MPI's vader:
     // eager through a 32 KiB ring wins up to 8 KiB (bw 4.5 / 5.6 GB/s at 4 /
     // 8 KiB, vader 1.4 / 2.5); above, one process_vm_readv is level with
     // vader (16 / 32 / 64 KiB: 3.8 / 5.3 / 7.4 GB/s against 4.0 / 6.0 /
     // 7.3), where a 32 KiB threshold's eager copies through a 128 KiB ring
     // fell to 1.6.
     .eager_threshold = 8192,
     .cpu_atomics = true,
     .maps_peer_memory = true,
     .may_match_in_nic = false,
     .wake_events = true},
    create_from_setup,
    {}};  // no settings of its own

}  // namespace tagwire::shm
