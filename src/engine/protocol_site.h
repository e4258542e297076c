// What the engine lends its message protocols (rendezvous_protocol.h,
// buffered_send.h): a narrow face, as CancelSite is the cancel layer's.
// A protocol keeps its own state and reaches the rest of the engine only
// through this; the engine calls the protocol, and routes the transport's
// completions for the protocol's operations back to it.
//
// Everything here runs under the engine's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/status.h"
#include "engine/engine_counters.h"
#include "engine/request.h"
#include "engine/slot_word.h"
#include "engine/wire.h"
#include "transport/transport.h"

namespace tagwire::engine {

class ProtocolSite {
 public:
  virtual transport::Transport& protocol_transport() = 0;
  virtual EngineCounters& protocol_counters() = 0;
  // The registration of MPI_Alloc_mem memory holding [address,
  // address + bytes), or null.
  virtual const transport::Registration* protocol_pinned(const void* address,
                                                         std::size_t bytes) const = 0;
  // A control message (FIN), sent after the current callback returns.
  virtual void protocol_send_control(int world_peer, MessageType type,
                                     std::uint64_t request_id) = 0;
  // Calls the rendezvous protocol's read(r) after the current callback.
  virtual void protocol_defer_read(Request* r) = 0;
  // Keeps `s`, the transport's error on an operation with `world_peer`,
  // as r's error (the first one wins; held for the peer's verdict).
  virtual void protocol_fail(Request* r, int world_peer, const Status& s) = 0;
  // Completes r if nothing is outstanding any more.
  virtual void protocol_maybe_complete(Request* r) = 0;
  // A new engine-internal send request, not started.
  virtual Request* protocol_new_send() = 0;
  // Starts a send as isend would; `slot_out`: where to note the slot
  // descriptor its message took.
  virtual Status protocol_start_send(Request* r, std::optional<SlotTicket>* slot_out) = 0;
  virtual void protocol_release(Request* r) = 0;

 protected:
  ~ProtocolSite() = default;
};

}  // namespace tagwire::engine
