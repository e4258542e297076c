// Request: one point-to-point operation as the engine tracks it, and the
// table that names requests on the wire.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "common/status.h"
#include "engine/slot_descriptor.h"
#include "engine/wire.h"
#include "matching/envelope.h"
#include "transport/transport.h"

namespace tagwire::engine {

class Communicator;

enum class SendMode { kStandard, kSynchronous, kReady, kBuffered };

inline constexpr int kProcNull = -2;  // MPI_PROC_NULL

// What a completed operation reports (MPI_Status, in bytes).
struct MessageStatus {
  int source = kProcNull;
  int tag = -1;
  std::size_t count = 0;
  Status error;
  bool cancelled = false;
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

enum class RequestKind { kSend, kReceive };

struct Request {
  RequestKind kind = RequestKind::kSend;
  SendMode mode = SendMode::kStandard;
  bool persistent = false;
  bool active = false;  // an operation is under way (persistent: started)
  bool complete = false;
  bool user_freed = false;  // Request_free before completion: release when done
  // Arguments (kept for persistent restarts).
  void* buffer = nullptr;
  std::size_t bytes = 0;
  int peer = 0;  // destination or source, communicator rank (or ANY / PROC_NULL)
  int tag = 0;
  Communicator* comm = nullptr;
  bool collective = false;  // on the communicator's collective context (engine-internal)
  // Progress of the current operation.
  int local_pending = 0;         // transport operations not yet completed
  bool awaiting_remote = false;  // FIN or SYNC_ACK still due
  // Send cancel (docs/architecture.md §4): a CANCEL_REQUEST is out and its reply is due.
  bool cancel_pending = false;
  // The receiver answered FIN or SYNC_ACK: the message was received, so a
  // cancel cannot succeed and is not even asked.
  bool remote_matched = false;
  MessageStatus status;
  std::uint64_t id = 0;                                   // name on the wire (RequestTable)
  EncodedHeader header{};                                 // send: the header in flight
  std::unique_ptr<transport::Registration> registration;  // rendezvous source
  matching::ReceiveHandle receive_handle;                 // posted receive
  // A receive withdrawn from matching (cancel, a dead sender) whose copy
  // the NIC still holds: the NIC's answer to the DEL decides. Should the
  // DEL win, it completes with `withdraw_reason` (ok: cancelled).
  bool withdrawing = false;
  Status withdraw_reason;
  // Receive side of a rendezvous: where to read from, then whom to FIN.
  std::unique_ptr<PendingMessage> rendezvous;
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

// Names requests on the wire with ids that a stale or forged id cannot
// misread: slot in the low 32 bits, the slot's generation in the high 32.
class RequestTable {
 public:
  // Ids are unique among live requests; a persistent request takes a fresh
  // one for each operation (rename), so that a cancel names one message.
  std::uint64_t add(Request* r) {
    std::uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<std::uint32_t>(entries_.size());
      entries_.push_back({nullptr, 0});
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    Entry& e = entries_[slot];
    e.request = r;
    ++e.generation;
    return (std::uint64_t{e.generation} << 32) | slot;
  }
  Request* find(std::uint64_t id) const {
    auto slot = static_cast<std::uint32_t>(id);
    if (slot >= entries_.size()) return nullptr;
    const Entry& e = entries_[slot];
    return e.generation == (id >> 32) ? e.request : nullptr;
  }
  void remove(std::uint64_t id) {
    auto slot = static_cast<std::uint32_t>(id);
    if (slot >= entries_.size() || entries_[slot].generation != (id >> 32)) return;
    entries_[slot].request = nullptr;
    free_.push_back(slot);
  }
  std::size_t live() const { return entries_.size() - free_.size(); }
  // Calls fn(Request*) for each live request; fn may complete (and so
  // release) the request it is given, but no other.
  template <typename Fn>
  void for_each(Fn&& fn) {
    for (std::size_t slot = 0; slot < entries_.size(); ++slot) {
      if (entries_[slot].request != nullptr) fn(entries_[slot].request);
    }
  }

 private:
  struct Entry {
    Request* request;
    std::uint32_t generation;
  };
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_;
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

  Request* take() {
    if (spare_.empty()) return new Request;
    Request* r = spare_.back().release();
    spare_.pop_back();
    return r;
  }
  void give(Request* r) {
    if (!kReuse || spare_.size() >= kKeep) {
      delete r;
      return;
    }
    // Destroy and rebuild in place: cheaper than assigning a fresh Request
    // member by member.
    r->~Request();
    new (r) Request;
    spare_.emplace_back(r);
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
  std::vector<std::unique_ptr<Request>> spare_;
};

}  // namespace tagwire::engine
