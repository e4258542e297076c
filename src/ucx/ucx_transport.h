// UcxTransport: the transport over UCP.
//
// Messages are UCP active messages on one endpoint per peer, always sent
// with UCP_AM_SEND_FLAG_EAGER so that every message (eager data, RTS, FIN,
// control) takes the same ordered path and arrives whole in the callback.
// UCX's own tag matching is never used: our matcher decides. Reads, writes
// and CAS are ucp_get_nbx, ucp_put_nbx and ucp_atomic_op_nbx where the
// endpoint has RDMA lanes (shared memory, verbs), and MessageRma's
// messages where UCX would emulate them (TCP). UCX picks the lanes as
// usual and UCX_TLS is respected.
#pragma once

#include <memory>
#include <vector>

#include "transport/registry.h"
#include "transport/transport.h"

namespace tagwire::ucx {

struct UcxOptions {
  // The worker is shared with a progress thread (calls are serialised by
  // the engine's lock): UCS_THREAD_MODE_SERIALIZED instead of SINGLE.
  bool shared_with_progress_thread = false;
  // Every endpoint is made in MPI_Init (connect_all), not on first use
  // (UcxSettings::connects_at_start).
  bool connect_at_start = false;
};

// Creates the UCP context and worker. Fails with a clear Status if UCX
// cannot start (no usable transport).
Result<std::unique_ptr<transport::Transport>> create_ucx_transport(const UcxOptions& options);

// Its registration (transport/registry.h): every host UCX reaches; chosen
// when the job spans hosts.
extern const transport::TransportEntry kTransportEntry;

}  // namespace tagwire::ucx
