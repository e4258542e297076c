// The engine's transport over rdma-core verbs: one RC queue pair per peer.
//
// This first version carries messages two-sided: header and payload are
// copied into a registered send slot and SENT; every peer's QP has receive
// buffers posted, reposted as soon as a message has been handed to the
// engine, and a receiver without a free buffer is waited for by the NIC's
// RNR retry. Rendezvous data moves by RDMA READ into the receive buffer
// (registered for the read), and compare-and-swap is the NIC's atomic. The
// completion channel's fd is what the cancel agent sleeps on.
//
// Not yet (DESIGN §3, issue 4): eager RDMA WRITE into a receiver-side ring
// with credits, lazy connections and rdma_cm, a registration cache,
// selective signalling. QPs for all peers are made at start-up, their
// numbers published in the address.
#pragma once

#include <memory>
#include <string>

#include "common/config.h"
#include "common/status.h"
#include "transport/transport.h"

namespace tagwire::verbs {

struct VerbsOptions {
  std::string device;                // empty: the first device with an active port
  int rank = 0;                      // this process in the job
  int size = 1;                      // the job
  std::size_t max_payload = 8192;    // the largest payload send() carries (eager threshold)
  std::uint32_t receive_depth = 64;  // receive buffers per peer
  TagMatchingChoice tag_matching = TagMatchingChoice::kAuto;  // TAGWIRE_TM
};

Result<std::unique_ptr<transport::Transport>> create_verbs_transport(const VerbsOptions& options);

}  // namespace tagwire::verbs
