// The rendezvous protocol, for messages above the eager threshold: the
// sender offers its buffer (an RTS carrying the buffer's address and
// remote key) and waits for the FIN; the matched receiver reads the bytes
// straight into its buffer and answers FIN, even after a failed read, so
// that no sender waits forever. Synchronous or not, the FIN is its answer.
//
// docs/architecture.md §3 walks one rendezvous through these functions.
#pragma once

#include <span>

#include "engine/protocol_site.h"

namespace tagwire::engine {

class RendezvousProtocol {
 public:
  explicit RendezvousProtocol(ProtocolSite& site) : site_(site) {}

  // Sender: makes `h` an RTS for r's buffer, registered for this message
  // (or MPI_Alloc_mem's registration), `*payload` its remote key; r then
  // awaits the FIN.
  Status offer(Request* r, Header* h, std::span<const std::uint8_t>* payload);
  // Sender: the FIN (the receiver has read the buffer).
  static void on_fin(Request* r) { r->registration.reset(); }

  // Receiver: r matched `message` (an RTS); its read runs after the
  // current callback (read()).
  void accept(Request* r, PendingMessage&& message);
  // Receiver: reads into r's buffer; read_done() follows.
  void read(Request* r, transport::Completion done);
  // Receiver: the read finished (or failed): FIN, and r may complete.
  void read_done(Request* r, const Status& s);

 private:
  ProtocolSite& site_;
};

}  // namespace tagwire::engine
