// Request: one point-to-point operation as the engine tracks it, and the
// table that names requests on the wire.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "common/status.h"
#include "engine/slot_word.h"
#include "engine/wire.h"
#include "matching/envelope.h"
#include "transport/transport.h"

namespace tagwire::engine {

class Communicator;

enum class SendMode : std::uint8_t { kStandard, kSynchronous, kReady, kBuffered };

inline constexpr int kProcNull = -2;  // MPI_PROC_NULL

// What a completed operation reports (MPI_Status, in bytes).
struct MessageStatus {
  int source = kProcNull;
  int tag = -1;
  std::size_t count = 0;
  Status error;
  bool cancelled = false;

  // As a new one. Field by field, the error only when it holds one: an
  // assignment of MessageStatus{} became an out-of-line call of 25
  // instructions on every send's start once the inliner ran short.
  // (Request::reset clears its status with this too.)
  void clear() {
    source = kProcNull;
    tag = -1;
    count = 0;
    if (!error.is_ok()) [[unlikely]]
      drop_error();
    cancelled = false;
  }
  // Out of line: inline, releasing the message made its callers save and
  // restore registers on every path.
  [[gnu::cold, gnu::noinline]] void drop_error() { error = Status(); }
};

// The status of a null or inactive request (MPI's empty status).
inline MessageStatus empty_status() {
  MessageStatus s;
  s.source = matching::kAnySource;
  s.tag = matching::kAnyTag;
  return s;
}

// The status of an operation with MPI_PROC_NULL.
inline MessageStatus proc_null_status() {
  MessageStatus s;
  s.source = kProcNull;
  s.tag = matching::kAnyTag;
  return s;
}

// A received message that no receive has taken yet: its data (eager) or
// where to read it from (RTS). Owned by the engine's unexpected store, or
// by a Message handle after mprobe.
struct PendingMessage {
  MessageType type = MessageType::kEager;
  int origin = 0;  // world rank
  int source = 0;  // communicator rank
  int tag = 0;
  bool synchronous = false;
  std::uint64_t sender_request_id = 0;
  std::uint64_t length = 0;
  std::uint64_t remote_address = 0;  // RTS
  std::vector<std::uint8_t> data;    // eager payload, or RTS remote key
  // One-sided cancel: the message's slot at this receiver, plus one (0:
  // none), and the descriptor word it expects there (wire.h).
  std::uint8_t slot = 0;
  std::uint32_t slot_expected = 0;
};

// kSchedule: a nonblocking collective (schedule.h); its sends and
// receives are requests of their own, and it completes after the last.
// kGeneralized: MPI_Grequest_start's, an operation the application does
// itself and ends by MPI_Grequest_complete (generalized_request.cc).
enum class RequestKind : std::uint8_t { kSend, kReceive, kSchedule, kGeneralized };

// Where a request's operation is. Start: kInactive -> kRunning (a PROC_NULL
// one straight to kComplete). Completion (Engine::maybe_complete) moves
// kRunning -> kComplete once nothing is outstanding: no transport operation
// (local_pending) and nothing awaited. Then a one-shot request is released
// by test / wait; a persistent one goes back to kInactive. One edge goes
// back: kComplete -> kRunning, when MPI_Cancel asks about a send that had
// completed locally (eager, buffered) but was not yet waited for; it
// completes again by the answer (src/cancel).
enum class RequestPhase : std::uint8_t { kInactive, kRunning, kComplete };

// What a running operation waits for from elsewhere, besides its own
// transport operations: a set, because a synchronous send being cancelled
// awaits both the receiver's ack and the cancel's answer.
enum Awaiting : std::uint8_t {
  kRemoteAnswer = 1,  // send: FIN (rendezvous) or SYNC_ACK (synchronous eager)
  kCancelAnswer = 2,  // send: CANCEL_REPLY, or the outcome of our own CAS
  kNicDel = 4,        // receive withdrawn while the NIC holds it: the DEL's answer
  kUserComplete = 8,  // generalized request: MPI_Grequest_complete
  kPeerVerdict = 16,  // a transport error held until the launcher's word on the peer
};

// A request's plain fields: what its operation is and where it stands,
// apart from the members that own something. Request::reset sets each
// back when the pool recycles the request (a static_assert on this
// struct's size catches a field added without its reset).
struct RequestFields {
  RequestKind kind = RequestKind::kSend;
  SendMode mode = SendMode::kStandard;
  std::uint8_t awaiting = 0;  // Awaiting bits
  // Attributes, not state: set when the request is made or handed over.
  bool persistent = false;
  bool user_freed = false;  // Request_free before completion: release when done
  // Its MPI handle is the application's (Engine::hand_out): only such a
  // request is found by handle, never an engine-internal one.
  bool handed_out = false;
  bool collective = false;  // on the communicator's collective context (engine-internal)
  // Its peer died with transport operations of it still in flight (a read
  // from it, sends queued towards it), which a transport may never give
  // back (UCX does not complete operations to a dead peer). The request
  // completed without them (Engine::on_peer_failed): their late
  // completions only count local_pending down, and once released it is
  // kept, not reused, until the engine ends (Engine::abandoned_).
  bool abandoned = false;
  // An outcome known before completion: the receiver answered FIN or
  // SYNC_ACK, so the message was received and a cancel is not even asked.
  bool remote_matched = false;
  // A collective step that a member's death fails only when that member is
  // its own partner (the engine's barrier: Engine::exchange); every other
  // collective step fails with any member (depends_on, ULFM's rule).
  bool partner_only = false;
  // A collective step of an intercommunicator's collective whose peer is in
  // the remote group (Schedule's remote steps); every other collective step
  // names a member of the caller's own group.
  bool remote_group = false;
  // Communicator::peer_group's argument for `peer`: true where it names a
  // member of the caller's own group.
  bool peer_in_own_group() const { return collective && !remote_group; }
  // Arguments (kept for persistent restarts).
  void* buffer = nullptr;
  std::size_t bytes = 0;
  int peer = 0;  // destination or source, communicator rank (or ANY / PROC_NULL)
  int tag = 0;
  Communicator* comm = nullptr;
  // Progress of the current operation.
  int local_pending = 0;  // transport operations not yet completed
  // When the operation started, in the engine's coarse clock (Engine::
  // clock_ms_): the age a pending-operations report gives.
  std::uint32_t started_ms = 0;
  std::uint64_t id = 0;                    // name on the wire (RequestTable)
  matching::ReceiveHandle receive_handle;  // posted receive
  // Buffered send: the internal send from the attached buffer (on the
  // internal request), and the internal send's wire id (on the user's
  // request, so that cancelling the user's request names the message).
  std::uint8_t* bsend_copy = nullptr;
  std::uint64_t bsend_wire_id = 0;
  // One-sided cancel: the slot descriptor the message in flight claimed at
  // its receiver (a buffered send's user request carries its internal
  // send's), so that MPI_Cancel can CAS it.
  std::optional<SlotTicket> slot;
  class Engine* engine = nullptr;
  // Scratch for a caller that takes a list of requests (MPI_Waitall): the
  // number of the list that last named this request, so that a request
  // named twice in one list is found without comparing every pair.
  std::uint64_t listed_in = 0;
};

struct Request : RequestFields {
  std::atomic<RequestPhase> phase_{RequestPhase::kInactive};  // phase(), set_phase()
  MessageStatus status;
  // Send: the header in flight. Left unset (58 bytes a recycled request
  // would zero for nothing): start_send builds it in place.
  EncodedHeader header;
  std::unique_ptr<transport::Registration> registration;  // rendezvous source
  // A receive withdrawn from matching (cancel, a dead sender) whose copy
  // the NIC still holds awaits kNicDel: the NIC's answer to the DEL
  // decides. Should the DEL win, it completes with `withdraw_reason` (ok:
  // cancelled).
  Status withdraw_reason;
  // Receive side of a rendezvous: where to read from, then whom to FIN.
  std::unique_ptr<PendingMessage> rendezvous;
  // RequestPool's list of spare requests.
  Request* next_spare = nullptr;

  // As a newly made request (but for next_spare and the header). Field by
  // field: assigning a default RequestFields compiled to `rep stos`, whose
  // start-up alone was a tenth of a sender's time per 8-byte message.
  void reset() {
    static_assert(sizeof(RequestFields) == 136, "a field added to RequestFields: reset it here");
    kind = RequestKind::kSend;
    mode = SendMode::kStandard;
    awaiting = 0;
    persistent = false;
    user_freed = false;
    handed_out = false;
    collective = false;
    abandoned = false;
    remote_matched = false;
    partner_only = false;
    remote_group = false;
    buffer = nullptr;
    bytes = 0;
    peer = 0;
    tag = 0;
    comm = nullptr;
    local_pending = 0;
    started_ms = 0;
    id = 0;
    receive_handle = matching::ReceiveHandle{};
    bsend_copy = nullptr;
    bsend_wire_id = 0;
    slot.reset();
    engine = nullptr;
    listed_in = 0;
    set_phase(RequestPhase::kInactive);
    status.clear();
    // The other owning members hold something only off the fast path: one
    // test of the three there, and their release out of line (inline, its
    // calls made every release_request save and restore six registers).
    if (registration || !withdraw_reason.is_ok() || rendezvous) [[unlikely]]
      drop_owned();
  }
  [[gnu::cold, gnu::noinline]] void drop_owned() {
    registration.reset();
    withdraw_reason = Status();
    rendezvous.reset();
  }

  // The phase is read by the MPI layer outside the engine's lock (MPI_Start,
  // MPI_Request_free ask whether an operation is under way) while a
  // progress thread may complete the request under it: relaxed atomic
  // loads and stores, plain moves on x86.
  RequestPhase phase() const { return phase_.load(std::memory_order_relaxed); }
  void set_phase(RequestPhase p) { phase_.store(p, std::memory_order_relaxed); }
  bool active() const { return phase() != RequestPhase::kInactive; }
  bool complete() const { return phase() == RequestPhase::kComplete; }
  bool awaits(Awaiting what) const { return (awaiting & what) != 0; }
  void await(Awaiting what) { awaiting = static_cast<std::uint8_t>(awaiting | what); }
  void stop_awaiting(Awaiting what) { awaiting = static_cast<std::uint8_t>(awaiting & ~what); }
};

// MPI's null or inactive request (a null handle, or a persistent request
// not started): waits and tests on it return at once, with an empty status.
inline bool null_or_inactive(const Request* r) {
  return r == nullptr || (r->persistent && !r->active());
}

// Names requests on the wire with ids that a stale or forged id cannot
// misread: slot in the low 32 bits, the slot's generation in the high 32.
// The slot alone is also the request's MPI handle (Engine::handle_of), so
// that the MPI layer keeps no table of its own: looking a handle up and
// retiring it were a tenth of a message's instructions at each end.
//
// Everything but at_slot() runs under the engine's lock. at_slot() is the
// MPI layer's lookup and runs on any application thread without it, so
// entries live in fixed chunks that never move (as the MPI layer's handle
// tables do), the count of issued slots is atomic, and so is each entry's
// pointer. Using a handle while another thread frees it is the
// application's error, as MPI says.
class RequestTable {
 public:
  RequestTable() : chunks_(std::make_unique<std::unique_ptr<Entry[]>[]>(kMaxChunks)) {}

  // Ids are unique among live requests. Always inlined: once per request
  // made, and as a call it was +15 instructions per message at each end.
  [[gnu::always_inline]] std::uint64_t add(Request* r) {
    std::uint32_t slot;
    if (free_head_ == kNoSlot) {
      slot = issued_.load(std::memory_order_relaxed);
      if (slot % kChunk == 0) {
        if (slot / kChunk >= kMaxChunks) throw std::bad_alloc();  // 16 M live requests
        chunks_[slot / kChunk] = std::make_unique<Entry[]>(kChunk);
      }
      issued_.store(slot + 1, std::memory_order_release);
    } else {
      slot = free_head_;
      free_head_ = entry(slot).next_free;
      --free_count_;
    }
    Entry& e = entry(slot);
    e.request.store(r, std::memory_order_release);
    ++e.generation;
    return (std::uint64_t{e.generation} << 32) | slot;
  }
  // A fresh id in the same slot (a persistent send's next operation goes
  // out under a new wire id; its MPI handle, the slot, stays).
  std::uint64_t rename(std::uint64_t id) {
    Entry& e = entry(static_cast<std::uint32_t>(id));
    ++e.generation;
    return (std::uint64_t{e.generation} << 32) | static_cast<std::uint32_t>(id);
  }
  Request* find(std::uint64_t id) const {
    auto slot = static_cast<std::uint32_t>(id);
    if (slot >= issued_.load(std::memory_order_relaxed)) return nullptr;
    const Entry& e = entry(slot);
    return e.generation == (id >> 32) ? e.request.load(std::memory_order_relaxed) : nullptr;
  }
  // The request in `slot` whatever its generation, or null; any thread.
  Request* at_slot(std::uint32_t slot) const {
    if (slot >= issued_.load(std::memory_order_acquire)) return nullptr;
    return entry(slot).request.load(std::memory_order_acquire);
  }
  void remove(std::uint64_t id) {
    auto slot = static_cast<std::uint32_t>(id);
    if (slot >= issued_.load(std::memory_order_relaxed)) return;
    Entry& e = entry(slot);
    if (e.generation != (id >> 32)) return;
    e.request.store(nullptr, std::memory_order_relaxed);
    e.next_free = free_head_;
    free_head_ = slot;
    ++free_count_;
  }
  std::size_t live() const { return issued_.load(std::memory_order_relaxed) - free_count_; }
  // Calls fn(Request*) for each live request; fn may complete (and so
  // release) the request it is given, but no other.
  template <typename Fn>
  void for_each(Fn&& fn) {
    const std::uint32_t issued = issued_.load(std::memory_order_relaxed);
    for (std::uint32_t slot = 0; slot < issued; ++slot) {
      if (Request* r = entry(slot).request.load(std::memory_order_relaxed)) fn(r);
    }
  }

 private:
  // Free slots are a list through the entries themselves (next_free
  // fills what was padding): a vector of free slots cost a bounds check
  // and, as a call that may grow it, the register saves of every
  // release_request.
  struct Entry {
    std::atomic<Request*> request{nullptr};
    std::uint32_t generation = 0;
    std::uint32_t next_free = 0;
  };
  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
  static constexpr std::uint32_t kChunk = 4096;
  static constexpr std::uint32_t kMaxChunks = 4096;
  Entry& entry(std::uint32_t slot) const { return chunks_[slot / kChunk][slot % kChunk]; }

  std::unique_ptr<std::unique_ptr<Entry[]>[]> chunks_;
  std::atomic<std::uint32_t> issued_{0};  // slots ever used: 0 .. issued_ - 1
  std::uint32_t free_head_ = kNoSlot;     // most recently freed slot first
  std::size_t free_count_ = 0;
};

// Keeps released requests for reuse. A blocking ping-pong makes and drops
// two requests per iteration, and new + delete were a tenth of its
// instructions. Under AddressSanitizer every request is a fresh allocation,
// so that a use after release is still caught.
class RequestPool {
 public:
  RequestPool() = default;
  RequestPool(const RequestPool&) = delete;
  RequestPool& operator=(const RequestPool&) = delete;
  ~RequestPool() {
    while (Request* r = spare_) {
      spare_ = r->next_spare;
      delete r;
    }
  }

  // The spares are a list through the requests themselves: a vector of
  // owners cost a bounds check and a pointer move at each end.
  Request* take() {
    Request* r = spare_;
    if (r == nullptr) return new Request;
    spare_ = r->next_spare;
    r->next_spare = nullptr;
    --kept_;
    return r;
  }
  void give(Request* r) {
    if (!kReuse || kept_ >= kKeep) [[unlikely]] {
      delete r;
      return;
    }
    r->reset();
    r->next_spare = spare_;
    spare_ = r;
    ++kept_;
  }

 private:
#if defined(__SANITIZE_ADDRESS__)
  static constexpr bool kReuse = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  static constexpr bool kReuse = false;
#else
  static constexpr bool kReuse = true;
#endif
#else
  static constexpr bool kReuse = true;
#endif
  static constexpr std::size_t kKeep = 1024;  // a window of 64 needs 64
  Request* spare_ = nullptr;
  std::size_t kept_ = 0;
};

}  // namespace tagwire::engine
