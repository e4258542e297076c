// The wire format of every engine message, and the one parser for it.
//
// Each message is a header plus a payload: eager data, or the packed remote
// key of an RTS. The header has two forms: the full 56 bytes, and for eager
// messages the compact form, its first 40 bytes (an eager message's length
// is its payload's, and it names no remote buffer). The compact form puts
// an 8-byte message, header, payload and the shared-memory ring's control
// word, in one 64-byte cache line. decode() checks everything a hostile or
// corrupted peer could get wrong (size, version, job token, type, flags,
// origin rank, lengths against the payload and the limits) before any
// field is used; nothing else in the engine reads raw bytes.
// All ranks of a job run on one architecture: fields are host-order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>

#include "common/status.h"

namespace tagwire::engine {

inline constexpr std::uint8_t kWireVersion = 1;

enum class MessageType : std::uint8_t {
  kEager = 1,          // header + data; matched at the receiver
  kRts = 2,            // request to send: header + packed rkey of the sender's buffer
  kFin = 3,            // receiver read the rendezvous data; sender may complete
  kSyncAck = 4,        // receiver matched a synchronous eager send
  kCancelRequest = 5,  // sender asks the receiver to cancel a send (cancel layer)
  kCancelReply = 6,    // receiver's answer: flags carry yes / no
  kAbort = 7,          // the origin called MPI_Abort: end with the code in request_id
};

enum HeaderFlags : std::uint8_t {
  kFlagSync = 1,       // EAGER/RTS: the sender waits for the match (Ssend)
  kFlagCancelled = 2,  // CANCEL_REPLY: yes, the message was cancelled;
                       // CANCEL_REQUEST: a notice that the sender's CAS
                       // cancelled it (one-sided): purge it, no reply
  kFlagLeft = 4,       // ABORT: the origin exited without MPI_Finalize
  kFlagAbortSeen = 8,  // ABORT: not an abort but the answer to one: the
                       // sender has it and ends now (engine.cc, abort_job)
};

struct Header {
  std::uint64_t job_token = 0;
  std::uint8_t version = kWireVersion;
  MessageType type = MessageType::kEager;
  std::uint8_t flags = 0;
  // One-sided cancel (slot_word.h). EAGER/RTS: the message's slot at
  // the receiver, plus one (0: none), and the word it expects there.
  // CANCEL_REQUEST with kFlagCancelled: the same, naming the cancelled one.
  std::uint8_t slot = 0;
  std::int32_t origin = 0;  // sender's world rank
  std::uint32_t context = 0;
  std::int32_t source = 0;  // sender's rank in the communicator
  std::int32_t tag = 0;
  std::uint32_t slot_expected = 0;
  // EAGER/RTS/CANCEL_REQUEST: the sender's request id. FIN/SYNC_ACK/
  // CANCEL_REPLY: the id of the sender request they answer.
  std::uint64_t request_id = 0;
  std::uint64_t length = 0;  // message bytes
  // RTS: the sender's buffer. CANCEL_REQUEST: the id of the request its
  // reply completes (reply_to below), which need not be the message's own
  // request_id (a buffered send's copy is cancelled for the user's request).
  std::uint64_t remote_address = 0;
};
static_assert(sizeof(Header) == 56, "the wire header is 56 bytes");

// A CANCEL_REQUEST's answer goes to this request: the field an RTS uses for
// its buffer, unused by every control message, named for this use here.
inline void set_reply_to(Header* h, std::uint64_t request_id) {
  h->remote_address = request_id;
}
inline std::uint64_t reply_to(const Header& h) {
  return h.remote_address;
}

// The compact eager form: the Header up to request_id (offsetof(length)).
inline constexpr std::size_t kCompactEagerBytes = 40;

// A header as it goes on the wire: full or compact.
class EncodedHeader {
 public:
  const std::uint8_t* data() const { return bytes_.data(); }
  std::uint8_t* data() { return bytes_.data(); }
  std::size_t size() const { return size_; }
  const std::uint8_t* begin() const { return bytes_.data(); }
  const std::uint8_t* end() const { return bytes_.data() + size_; }
  std::uint8_t& operator[](std::size_t i) { return bytes_[i]; }
  operator std::span<const std::uint8_t>() const { return {bytes_.data(), size_}; }

  // A header built where it goes on the wire from: a default Header made
  // in place, to be filled and then sealed. Built on the stack and copied
  // here, it was stored field by field and at once reloaded 16 bytes at a
  // time, which the CPU cannot forward from its store buffer: the load
  // waits for every store before it (docs/shared-memory.md).
  Header& emplace() { return *new (bytes_.data()) Header; }
  // Its size on the wire from its type (as encode_into), once filled.
  void seal() {
    size_ = static_cast<std::uint8_t>(bytes_[offsetof(Header, type)] ==
                                              static_cast<std::uint8_t>(MessageType::kEager)
                                          ? kCompactEagerBytes
                                          : sizeof(Header));
  }

 private:
  friend EncodedHeader encode(const Header& header);
  friend void encode_into(const Header& header, EncodedHeader* out);
  // Only the first size_ bytes are ever read; encode_into writes them.
  alignas(Header) std::array<std::uint8_t, sizeof(Header)> bytes_;
  std::uint8_t size_ = 0;
};

// Eager messages take the compact form, everything else the full one.
EncodedHeader encode(const Header& header);

// The same, written in place (a send's header in its request): inline,
// with no array zeroed and then copied.
inline void encode_into(const Header& header, EncodedHeader* out) {
  // Two fixed-size copies, each a few moves (one of variable size is a call).
  if (header.type == MessageType::kEager) {
    std::memcpy(out->bytes_.data(), &header, kCompactEagerBytes);
    out->size_ = kCompactEagerBytes;
  } else {
    std::memcpy(out->bytes_.data(), &header, sizeof(Header));
    out->size_ = sizeof(Header);
  }
}

struct DecodeLimits {
  std::uint64_t job_token = 0;
  std::int32_t world_size = 0;
  std::uint64_t max_eager = 0;     // largest eager payload
  std::size_t max_remote_key = 0;  // largest packed rkey
};

// Checks and decodes one message. An error means: drop it and count it.
Result<Header> decode(std::span<const std::uint8_t> header, std::span<const std::uint8_t> payload,
                      const DecodeLimits& limits);

// Nearly every message: a compact eager header without a slot. Fills `h`
// and says yes when every check of decode() would pass; anything else
// (false) goes through decode(), which names what is wrong. Inline and
// without a Result: building and returning one was half of decode's
// instructions per 8-byte message.
inline bool decode_compact_eager(std::span<const std::uint8_t> bytes, std::size_t payload_bytes,
                                 const DecodeLimits& limits, Header* h) {
  if (bytes.size() != kCompactEagerBytes) return false;
  // The compact form is the full one's first bytes (wire.cc's static_assert).
  std::memcpy(static_cast<void*>(h), bytes.data(), kCompactEagerBytes);
  h->length = payload_bytes;
  h->remote_address = 0;
  return h->type == MessageType::kEager && h->version == kWireVersion &&
         h->job_token == limits.job_token && (h->flags & ~kFlagSync) == 0 && h->slot == 0 &&
         h->slot_expected == 0 && h->origin >= 0 && h->origin < limits.world_size &&
         h->source >= 0 && h->tag >= 0 && payload_bytes <= limits.max_eager;
}

}  // namespace tagwire::engine
