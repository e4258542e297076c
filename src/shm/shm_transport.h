// ShmTransport: ranks on one host, through shared memory.
//
// Each rank owns a segment holding one SpscRing per sender (itself
// included): a message is one record written by the sender into the
// receiver's ring and read in place by the receiver, header and payload in
// the same cells. Large messages go by rendezvous: the receiver reads the
// sender's buffer with one process_vm_readv (cross-memory attach, a single
// copy). Words that peers compare-and-swap (one-sided send cancel's slot
// descriptors) live in a shared segment of their own, so the sender's
// remote CAS is a CPU atomic on the receiver's word: no message, no wait
// for the receiver. A receiver whose helper thread sleeps is woken through
// a FIFO (wake_fifo.h). docs/shared-memory.md has the design and its
// measurements.
#pragma once

#include <cstddef>
#include <memory>

#include "transport/registry.h"
#include "transport/transport.h"

namespace tagwire::shm {

struct ShmOptions {
  int rank = 0;
  int size = 1;
  // Largest payload send() must carry (the eager threshold, or a packed
  // key): the rings are sized for it.
  std::size_t max_payload = 0;
  // Wake a sleeping receiver for every message, not only kWake ones (a
  // progress thread must see everything at once).
  bool wake_on_every_message = false;
};

Result<std::unique_ptr<transport::Transport>> create_shm_transport(const ShmOptions& options);

// Its registration (transport/registry.h): ranks on this host only, chosen
// first when the whole job is here.
extern const transport::TransportEntry kTransportEntry;

}  // namespace tagwire::shm
