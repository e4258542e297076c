// VerbsInterface: the half of the verbs transport that exists once, whatever
// the number of peers (as UCX's rc_iface is to its rc_ep).
//
// It holds the device and its port's GID, the completion channel and the one
// CQ every ring QP shares, the memory the NIC uses for all peers alike
// (staging slots for non-inline WRITEs, CAS result words, the credit words
// peers write here and the counts this rank writes to them, and under the QP
// exchange one block of eager rings for every sender), the registration of
// user buffers with its cache, and the claim of a slot descriptor through
// the NIC. What belongs to one peer (its QP, ring, credits, backlog) is a
// VerbsEndpoint's (verbs/verbs_endpoint.h); VerbsTransport ties them
// together behind transport::Transport.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/status.h"
#include "transport/transport.h"
#include "verbs/device.h"
#include "verbs/eager_ring.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/registration_cache.h"
#include "verbs/verbs_handles.h"

namespace tagwire::verbs {

// Memory from aligned_alloc, page-rounded and zero-filled, freed with free().
struct FreeDeleter {
  void operator()(std::uint8_t* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<std::uint8_t[], FreeDeleter>;
AlignedBytes aligned_zeroed(std::size_t length);

class VerbsInterface {
 public:
  static constexpr std::uint32_t kSendSlots = 64;    // registered staging slots, all peers
  static constexpr std::uint32_t kAtomicSlots = 64;  // registered CAS result words
  // Eager WRITEs and credit WRITEs occupy send queue entries until a
  // signaled one after them completes.
  static constexpr std::uint32_t kSendQueueDepth = 256;
  // What a peer's inline WRITE may carry: an 8-byte message's whole frame.
  static constexpr std::uint32_t kWantInline = 256;

  struct Shape {
    std::size_t peers = 1;  // the job, self included
    RingLayout layout;
    // One block of rings for every sender, registered now (the QP
    // exchange publishes it); otherwise each endpoint makes its own ring
    // with its connection (rdma_cm).
    bool ring_block = true;
    bool registration_cache = true;
    std::uint32_t receives_per_peer = 0;  // zero-length wake-up receives, for the CQ's size
  };

  explicit VerbsInterface(Device device) : device_(std::move(device)) {}
  ~VerbsInterface();
  VerbsInterface(const VerbsInterface&) = delete;
  VerbsInterface& operator=(const VerbsInterface&) = delete;

  // Finds the port's RoCE v2 IPv4 GID (or the first usable one).
  Status find_gid();
  // The channel, the CQ, the shared memory and its registrations.
  Status open(const Shape& shape);

  const Device& device() const { return device_; }
  int gid_index() const { return gid_index_; }
  ibv_comp_channel* channel() const { return channel_.get(); }
  ibv_cq* cq() const { return cq_.get(); }
  // Acknowledges every event on the channel, each on the CQ that raised it
  // (the ring CQ's or the tag-matching SRQ's): an unacknowledged event makes
  // destroying its CQ wait for ever.
  void drain_events();
  // An RC QP on the shared CQ, with the largest inline the device grants up
  // to kWantInline (some devices refuse any inline at all).
  Result<std::unique_ptr<RcQueuePair>> make_qp();

  // Staging slots: a non-inline WRITE's image, held until a signaled WRITE
  // after it completes.
  std::size_t free_staging() const { return free_send_.size(); }
  std::optional<std::uint32_t> take_staging();
  void give_staging(std::uint32_t slot) { free_send_.push_back(slot); }
  std::span<std::uint8_t> staging_slot(std::uint32_t slot) {
    return {staging_.get() + std::size_t{slot} * layout_.slot_size, layout_.slot_size};
  }
  std::uint32_t staging_lkey() const { return staging_mr_->lkey; }

  // CAS result words.
  bool atomic_free() const { return !free_atomic_.empty(); }
  std::uint32_t take_atomic();
  void give_atomic(std::uint32_t slot) { free_atomic_.push_back(slot); }
  std::uint64_t* atomic_word(std::uint32_t slot) { return &atomic_pool_[slot]; }
  std::uint32_t atomic_lkey() const { return atomic_mr_->lkey; }

  // The block of rings (QP exchange only; null under rdma_cm).
  std::uint8_t* ring_of(std::size_t sender) {
    return rings_ ? rings_.get() + sender * layout_.ring_bytes() : nullptr;
  }
  std::uint64_t ring_block_address() const { return reinterpret_cast<std::uint64_t>(rings_.get()); }
  std::uint32_t ring_block_rkey() const { return ring_mr_ ? ring_mr_->rkey : 0; }

  // The word peer `p` writes its consumed count of our messages into.
  std::uint64_t credit_word(std::size_t p) const;
  std::uint64_t credit_words_address() const {
    return reinterpret_cast<std::uint64_t>(credit_words_.get());
  }
  std::uint32_t credit_words_rkey() const { return credit_mr_->rkey; }
  // Our count of `p`'s messages, the source of a credit WRITE to it.
  std::uint8_t* credit_out(std::size_t p) { return credit_out_.get() + p * 8; }
  std::uint32_t credit_out_lkey() const { return credit_out_mr_->lkey; }

  // Null with TAGWIRE_RCACHE=off, or when the memory hooks had no room.
  RegistrationCache* cache() const { return cache_.get(); }
  Result<std::unique_ptr<transport::Registration>> register_memory(void* address,
                                                                   std::size_t length,
                                                                   transport::RemoteAccess access);
  // An atomic on this process's own word (transport::Transport::
  // local_compare_and_swap, and fetch_add / compare_and_swap to this rank):
  // a CPU atomic where the device's atomics are coherent with the CPU's
  // (IBV_ATOMIC_GLOB), else the NIC's own atomic on a QP connected to
  // itself. `rkey` is the word's registration's. Returns the old value.
  Result<std::uint64_t> local_atomic(std::uint32_t rkey, std::uint64_t* word,
                                     const AtomicOp& atomic);
  // Whether the device has atomics at all (IBV_ATOMIC_HCA or _GLOB).
  bool has_atomics() const;

  // One message arrived (ring or self queue): counted, then handed to
  // `receiver` if there is one.
  void deliver(transport::Receiver* receiver, std::span<const std::uint8_t> header,
               std::span<const std::uint8_t> payload) {
    ++counters_.messages_received;
    if (receiver != nullptr) receiver->on_message(header, payload);
  }

  transport::TransportCounters& counters() { return counters_; }
  const transport::TransportCounters& counters() const { return counters_; }

 private:
  Status start_cache();
  Status open_loopback();

  Device device_;
  RingLayout layout_;
  int gid_index_ = 0;
  CompChannelPtr channel_;
  CqPtr cq_;
  AlignedBytes rings_, credit_words_, credit_out_, staging_;
  std::vector<std::uint64_t> atomic_pool_;
  MrPtr ring_mr_, credit_mr_, credit_out_mr_, staging_mr_, atomic_mr_;
  std::vector<std::uint32_t> free_send_, free_atomic_;
  std::unique_ptr<RegistrationCache> cache_;
  // Slot claims under IBV_ATOMIC_HCA (local_compare_and_swap).
  CqPtr loopback_cq_;
  std::unique_ptr<RcQueuePair> loopback_;
  std::vector<std::uint64_t> loopback_result_;
  MrPtr loopback_mr_;
  transport::TransportCounters counters_;
};

// A registration of the engine's: its own MR, or an entry of the
// registration cache held until it is destroyed.
class VerbsRegistration final : public transport::Registration {
 public:
  VerbsRegistration(MrPtr mr, void* address, std::size_t length,
                    transport::TransportCounters* counters);
  VerbsRegistration(RegistrationCache* cache, RegistrationCache::Entry* entry, void* address,
                    std::size_t length, transport::TransportCounters* counters);
  ~VerbsRegistration() override;
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

// A verbs remote key as the engine carries it: the 4 bytes of an rkey.
Status unpack_rkey(std::span<const std::uint8_t> key, std::uint32_t* rkey);

}  // namespace tagwire::verbs
