// VerbsAddress: what a rank's verbs transport publishes through the
// bootstrap, and the bytes it travels as.
//
// One fixed head (magic, the job's size, the port's GID and LID, where peers
// write eager messages and returned credits, the ring's shape, the rdma_cm
// listener) followed by one {qpn, psn} per rank (zeros under rdma_cm: its QPs
// come with their connections) and, with tag matching in the NIC, one
// {send qpn, psn, tagged qpn, psn} per rank. Every rank of a job runs the
// same build, so the head is copied as it lies in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "verbs/channel_address.h"
#include "verbs/cm_connector.h"
#include "verbs/rc_queue_pair.h"

namespace tagwire::verbs {

struct VerbsAddress {
  ibv_gid gid{};  // the port's, for every QP below
  std::uint16_t lid = 0;
  bool wake_on_every_message = false;  // a progress thread sleeps on events
  bool connect_by_cm = false;          // QPs through rdma_cm, on first use
  bool nic_matching = false;           // messages through the NIC's tag matching
  std::uint64_t ring_address = 0;      // rings, one per sender rank (0 under rdma_cm)
  std::uint32_t ring_rkey = 0;
  std::uint64_t credit_address = 0;  // credit words, one per receiver rank, 8 bytes each
  std::uint32_t credit_rkey = 0;
  std::uint32_t ring_slots = 0;
  std::uint32_t slot_size = 0;
  CmEndpoint cm;  // rdma_cm: where this rank listens
  struct QpNumber {
    std::uint32_t qpn = 0;
    std::uint32_t psn = 0;
  };
  std::vector<QpNumber> ring_qps;  // by rank: this rank's QP for that rank's ring
  struct TaggedQps {
    QpNumber send, tagged;
  };
  std::vector<TaggedQps> tagged_qps;  // by rank, with nic_matching only

  // The QP address a peer connects to, for its ring QP or its tag-matching pair.
  QpAddress ring_qp(std::size_t rank) const;
  ChannelAddress channel(std::size_t rank) const;
};

std::vector<std::uint8_t> pack_address(const VerbsAddress& address);
// `job_size` ranks are expected; `rank` names the publisher in errors.
Result<VerbsAddress> unpack_address(std::span<const std::uint8_t> bytes, std::size_t job_size,
                                    std::size_t rank);

}  // namespace tagwire::verbs
