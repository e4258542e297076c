// The engine's transport over rdma-core verbs: one RC queue pair per peer.
//
// Messages (eager data and control alike) are RDMA WRITEs into a ring of
// slots the receiver keeps for each sender (verbs/eager_ring.h), polled in
// memory; credits come back in the ack field of the receiver's own
// messages or by a WRITE into a credit word at the sender, and a message
// without credit waits in a per-peer backlog, in order. WRITEs are
// signaled one in kSignalEvery (and inline when they fit), so a message
// costs the sender one post and the receiver one memory read. A WRITE
// raises no completion at the receiver, so a message its cancel agent must
// see at once (Delivery::kWake) is a WRITE with immediate, which consumes a
// zero-length receive and raises the completion channel's event.
// Rendezvous data moves by RDMA READ (registered for the read), and
// compare-and-swap is the NIC's atomic.
//
// Connections: on RoCE, through rdma_cm on first use (verbs/cm_connector.h;
// a message to a peer not yet connected waits in the backlog meanwhile);
// otherwise, or with TAGWIRE_VERBS_CONNECT=exchange, one QP per peer at
// start-up, its number published in the address.
//
// Tag matching in the NIC (TAGWIRE_TM, where the device reports
// IBV_TM_CAP_RC): the transport offers the engine its NicMatching facet
// (verbs/verbs_nic_matching.h), and every message then travels as a SEND
// with a TMH on a second pair of QPs per peer instead of the eager ring;
// the QPs are made at start-up (QP exchange).
//
// User buffers (rendezvous sources, READ destinations) are registered
// through a cache that memory hooks keep honest (registration_cache.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "transport/registry.h"
#include "transport/transport.h"
#include "verbs/tm_srq.h"
#include "verbs/verbs_settings.h"

namespace tagwire::verbs {

struct VerbsOptions {
  std::string device;              // empty: the first device with an active port
  int rank = 0;                    // this process in the job
  int size = 1;                    // the job
  std::size_t max_payload = 8192;  // the largest payload send() carries (eager threshold)
  // Eager ring slots per sender (its credits); 0: as many as
  // `ring_budget` allows for the job (RingLayout::slots_for_job).
  std::uint32_t ring_slots = 0;
  std::size_t ring_budget = std::size_t{256} << 20;
  // A progress thread sleeps on the event fd: peers then raise the event
  // (WRITE with immediate) for every message, not only for cancel requests.
  bool wake_on_every_message = false;
  // Keep user buffers registered between operations (TAGWIRE_RCACHE;
  // verbs/registration_cache.h, invalidated through verbs/memory_hooks.h).
  bool registration_cache = true;
  // Eager payloads of this many bytes or more are gathered by the WRITE
  // from the caller's buffer (registered through the cache) instead of
  // copied into a staging slot; the send then completes with the WRITE.
  // 0: never. Without the cache, always copied (TAGWIRE_VERBS_GATHER_FROM).
  // 12 KiB: on rxe the gathered WRITE wins at 12 and 16 KiB and ties or
  // loses at 8 KiB and below, where a copy costs less than the completion
  // and the cache lookup (docs/measurements.md, 2026-12-04).
  std::size_t gather_from = 12288;
  NicMatchingChoice nic_matching = NicMatchingChoice::kAuto;  // TAGWIRE_TM
  VerbsConnectChoice connect = VerbsConnectChoice::kAuto;     // TAGWIRE_VERBS_CONNECT
  // Receives the NIC may hold at once when it matches tags (capped by the
  // device's tm_caps.max_num_tags).
  std::uint32_t tm_entries = 256;
  // Tests only: an SRQ that plays a tag-matching NIC by rdma-core's
  // contract over a plain SRQ (tests/verbs/contract_tm_srq.h), so that the
  // whole offload path runs on a device without tag matching (rxe0). Set,
  // the transport offers the engine tag matching whatever the device says.
  // `events`: the channel its CQ must raise events on (create_verbs_tm_srq).
  std::function<Result<std::unique_ptr<TmSrq>>(const Device&, std::uint32_t buffers,
                                               ibv_comp_channel* events)>
      tm_srq_for_tests;
};

Result<std::unique_ptr<transport::Transport>> create_verbs_transport(const VerbsOptions& options);

// Its registration (transport/registry.h): RDMA devices, taken only when
// named (TAGWIRE_TRANSPORT=verbs).
extern const transport::TransportEntry kTransportEntry;

}  // namespace tagwire::verbs
