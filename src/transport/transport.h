// Transport: the one small interface the engine drives, implemented by
// src/ucx (UCP) and src/verbs (rdma-core). Shaped after what RDMA needs:
//  - an address to publish through the bootstrap, connections made lazily;
//  - one ordered message channel per peer, carrying eager data and control
//    alike, so that a control message can never overtake data it names;
//  - memory registration with a packed remote key, remote read, and remote
//    64-bit compare-and-swap.
// Everything is non-blocking: an operation either finishes at once (kDone)
// or its Completion runs later, from progress(), exactly once.
//
// This header sits below both transports and the engine (docs/architecture.md §1): it
// includes nothing of theirs.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tagwire::transport {

using PeerId = std::int32_t;  // the peer's rank in the job (world rank)

// A one-shot callback: fn(ctx, status).
struct Completion {
  void (*fn)(void* ctx, const Status& status) = nullptr;
  void* ctx = nullptr;
  void operator()(const Status& s) const {
    if (fn != nullptr) fn(ctx, s);
  }
};

enum class Issued { kDone, kPending };

// Whether a message must wake a peer that sleeps on its event fd (arm()).
// Transports that raise an event for every arrival (UCX) ignore it; the
// verbs transport's eager RDMA WRITEs raise none unless asked, and a peer
// then finds them when it next polls (its agent looks every millisecond).
enum class Delivery {
  kPolled,  // found at the peer's next poll
  kWake,    // raises the peer's event: a send-cancel request, which its
            // cancel agent must answer while the application computes
};

// What a peer may do with registered memory: the least that the use needs.
// kReadAndWrite is a window's: reads, writes, and the atomics of
// fetch_add and compare_and_swap where the transport offers_word_atomics().
enum class RemoteAccess { kRead, kReadAndAtomic, kReadAndWrite };

// Receives every message that arrives on the ordered channels. Called from
// progress(); `header` and `payload` are valid only during the call.
class Receiver {
 public:
  virtual ~Receiver() = default;
  virtual void on_message(std::span<const std::uint8_t> header,
                          std::span<const std::uint8_t> payload) = 0;
  // The transport gave up reaching `peer` (verbs: rdma_cm found no way to
  // it): messages that waited for the connection are lost, and every later
  // operation towards it fails. Called from progress().
  virtual void on_peer_unreachable(PeerId peer, const Status& why) {
    (void)peer;
    (void)why;
  }
};

// Registered memory, deregistered when destroyed.
class Registration {
 public:
  virtual ~Registration() = default;
  // Bytes a peer needs to access this memory remotely.
  virtual std::span<const std::uint8_t> packed_key() const = 0;
  virtual std::uint64_t address() const = 0;
  virtual std::size_t length() const = 0;
};

struct TransportCounters {
  std::uint64_t connections = 0;           // endpoints created (lazily)
  std::uint64_t connections_accepted = 0;  // of which a peer asked for (verbs rdma_cm)
  std::uint64_t open_connections = 0;      // endpoints / QPs that exist now
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t registrations = 0;     // live
  std::uint64_t registered_bytes = 0;  // live, the transport's own pools included
  // Eager flow control (verbs): messages that waited for the receiver's
  // credit (not for a connection), explicit credit returns, messages sent
  // to raise an event.
  std::uint64_t credit_waits = 0;
  std::uint64_t credit_writes = 0;
  std::uint64_t wake_writes = 0;
  // Eager messages whose WRITE gathered the payload from the user's buffer
  // (verbs, TAGWIRE_VERBS_GATHER_FROM) instead of a staging copy.
  std::uint64_t gathered_sends = 0;
  // Registration cache (verbs): registrations reused, made, and dropped
  // because their memory was unmapped or remapped.
  std::uint64_t rcache_hits = 0;
  std::uint64_t rcache_misses = 0;
  std::uint64_t rcache_invalidated = 0;
  // Shared large reads (shm): bytes this process copied into a peer's
  // buffer for the peer's read, and bytes of its own reads a peer copied.
  std::uint64_t bytes_helped = 0;
  std::uint64_t bytes_helped_by_peers = 0;
};

class NicMatching;  // transport/nic_matching.h

class Transport {
 public:
  virtual ~Transport() = default;

  virtual std::string_view name() const = 0;

  // Whether connections are made on first use (else all at start-up).
  virtual bool connects_on_first_use() const = 0;

  // This process's address, to be published through the bootstrap.
  virtual std::vector<std::uint8_t> address() const = 0;

  // Every rank's address, indexed by PeerId. Nothing connects yet.
  virtual Status set_peer_addresses(std::vector<std::vector<std::uint8_t>> addresses) = 0;

  virtual void set_receiver(Receiver* receiver) = 0;

  // Largest header send() accepts.
  virtual std::size_t max_header() const = 0;

  // Sends header + payload as one message on the ordered channel to `peer`.
  // The header is copied; the payload must stay valid until completion.
  // A header that is empty or longer than max_header(), or a payload longer
  // than the transport was made for (TransportSetup), is refused with
  // kInvalidArgument and nothing is sent.
  virtual Result<Issued> send(PeerId peer, std::span<const std::uint8_t> header,
                              std::span<const std::uint8_t> payload, Completion done,
                              Delivery delivery) = 0;

  // The same send, made only if it completes at once: true when the
  // message is on its way and nothing of the caller's is kept (no
  // completion will come), false when nothing was sent (the caller then
  // sends it with send()). For a caller that keeps no request for the
  // message (a blocking eager send); a transport that cannot tell says
  // false.
  virtual Result<bool> try_send(PeerId /*peer*/, std::span<const std::uint8_t> /*header*/,
                                std::span<const std::uint8_t> /*payload*/) {
    return false;
  }

  virtual Result<std::unique_ptr<Registration>> register_memory(void* address, std::size_t length,
                                                                RemoteAccess access) = 0;

  // `count` zeroed 64-bit words that peers compare_and_swap (one-sided
  // send cancel's slot descriptors), registered for kReadAndAtomic; they
  // live at address() for as long as the registration. The default takes
  // them from the heap and registers them; a transport whose peers map
  // each other's memory (shm) puts them where a peer's CAS is a CPU atomic.
  virtual Result<std::unique_ptr<Registration>> allocate_atomic_words(std::size_t count);

  // `bytes` of zeroed memory for a window the library allocates
  // (MPI_Win_allocate), registered for kReadAndWrite at address(), for as
  // long as the registration. The default takes it from the heap; a
  // transport whose peers map each other's memory (shm) puts it where a
  // peer's read or write is a memcpy.
  virtual Result<std::unique_ptr<Registration>> allocate_window_memory(std::size_t bytes);

  // Where `length` bytes of `peer`'s memory at `remote_address` (under
  // `remote_key`) are in this process, for a transport whose peers map
  // each other's memory (shm's shared segments): loads, stores and CPU
  // atomics there are the peer's memory, and atomic with respect to the
  // transport's compare_and_swap. Null where only read(), write() and
  // compare_and_swap() reach it (the default).
  virtual std::uint8_t* map_remote(PeerId /*peer*/, std::span<const std::uint8_t> /*remote_key*/,
                                   std::uint64_t /*remote_address*/, std::size_t /*length*/) {
    return nullptr;
  }

  // Reads `local.size()` bytes at `remote_address` of `peer` into `local`.
  virtual Result<Issued> read(PeerId peer, std::span<std::uint8_t> local,
                              std::uint64_t remote_address,
                              std::span<const std::uint8_t> remote_key, Completion done) = 0;

  // Writes `local` to `remote_address` of `peer` (memory it registered
  // with kReadAndWrite). Completion means `local` may be reused; flush()
  // says when the data is at the target.
  virtual Result<Issued> write(PeerId peer, std::span<const std::uint8_t> local,
                               std::uint64_t remote_address,
                               std::span<const std::uint8_t> remote_key, Completion done) = 0;

  // Completes once every write and read issued before it has completed at
  // its target (MPI_Win_fence's remote completion).
  virtual Result<Issued> flush(Completion done) = 0;

  // Atomically: if *remote == expected then *remote = desired; the old value
  // lands in *old_value.
  virtual Result<Issued> compare_and_swap(PeerId peer, std::uint64_t remote_address,
                                          std::span<const std::uint8_t> remote_key,
                                          std::uint64_t expected, std::uint64_t desired,
                                          std::uint64_t* old_value, Completion done) = 0;

  // Atomically: *remote += add (modulo 2^64); the old value lands in
  // *old_value. Atomic with respect to compare_and_swap and fetch_add on
  // the same word from every rank, this one included (`peer` may be this
  // process), on window memory (kReadAndWrite) of a transport that
  // offers_word_atomics(); kUnsupported elsewhere (the default).
  virtual Result<Issued> fetch_add(PeerId peer, std::uint64_t remote_address,
                                   std::span<const std::uint8_t> remote_key, std::uint64_t add,
                                   std::uint64_t* old_value, Completion done);

  // Whether fetch_add and compare_and_swap reach window memory
  // (kReadAndWrite) of every rank, this one included, atomically with
  // respect to each other: a window may then update 8-byte words with them
  // alone (verbs, where the device has atomics). False by default.
  virtual bool offers_word_atomics() const { return false; }

  // Compare-and-swap on this process's own memory (`word` lies in `memory`,
  // registered with kReadAndAtomic), atomic with respect to peers'
  // compare_and_swap on the same word: a plain CPU atomic where the
  // transport's remote atomics are coherent with the CPU's, through the
  // NIC otherwise. Blocking; returns the old value.
  virtual Result<std::uint64_t> local_compare_and_swap(const Registration& memory,
                                                       std::uint64_t* word, std::uint64_t expected,
                                                       std::uint64_t desired) = 0;

  // Drives communication; returns how many events it handled.
  virtual unsigned progress() = 0;

  // Sleeping instead of spinning (the progress thread): arm() returns true
  // when nothing is pending and event_fd() will become readable on the
  // next event; false when progress() has work now. -1: no event support.
  virtual Result<bool> arm() = 0;
  virtual int event_fd() const = 0;

  // Whether this job's connections are all made in MPI_Init
  // (connect_all), rather than on first use; every rank must agree.
  virtual bool connects_all_at_start() const { return false; }

  // Connects to every peer now, where connects_all_at_start(): done runs
  // from progress() once every connection is up (or one failed). kDone:
  // nothing to wait for. The caller then keeps progressing until every
  // rank's connect_all finished (a peer's connection needs this rank's
  // answers too).
  virtual Result<Issued> connect_all(Completion done) {
    (void)done;
    return Issued::kDone;
  }

  // Flushes and closes every connection. Call after a job-wide barrier.
  virtual Status disconnect_all() = 0;

  // The engine learned that `peer` died (the launcher said so, or an
  // operation found it gone): nothing may wait for it any more, not even
  // disconnect_all's flush of its connection. Every operation with it
  // the transport still holds completes with kPeerFailed, here or in the
  // next progress() calls, not when the transport's own timeouts would
  // say so (the engine's window calls wait for them), and a flush()
  // waits only for live peers.
  virtual void peer_failed(PeerId peer) { (void)peer; }

  virtual TransportCounters counters() const = 0;

  // The NIC's tag matching, where the transport offers it and it is on
  // (TAGWIRE_TM); null otherwise, and the engine matches in software.
  virtual NicMatching* nic_matching() { return nullptr; }

  // The device it drives ("mlx5_0"), for placing a helper thread near it;
  // empty for a transport with no device of its own.
  virtual std::string_view device_name() const { return {}; }
};

}  // namespace tagwire::transport
