// An opened RDMA device and what it can do, read once at start-up.
//
// Device selection: by name (TAGWIRE_DEVICE), else among the devices with
// an active port the one nearest the CPUs this process runs on (hwloc: the
// device whose local PUs cover most of them; the first on a tie, and
// without asking hwloc when there is only one). The capabilities that steer protocol choices are
// kept in DeviceCaps, a plain struct, so that the decisions made from them (tag matching offload,
// one-sided cancel arbitration) are testable on any machine without a device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "verbs/verbs_handles.h"
#include "verbs/verbs_settings.h"

namespace tagwire::verbs {

struct DeviceCaps {
  std::string name;
  std::uint8_t port = 1;
  bool port_active = false;
  bool ethernet = false;  // RoCE: addressed by GID
  ibv_mtu active_mtu = IBV_MTU_1024;
  ibv_atomic_cap atomic_cap = IBV_ATOMIC_NONE;
  // Tag matching (ibv_query_device_ex -> tm_caps).
  bool tm_rc = false;  // IBV_TM_CAP_RC
  std::uint32_t tm_max_tags = 0;
  std::uint32_t tm_max_rndv_header = 0;
  std::uint32_t max_qp_wr = 0;
  std::uint32_t max_sge = 0;
};

class Device {
 public:
  // Opens `name`, or the first device with an active port when empty.
  static Result<Device> open(const std::string& name);

  ibv_context* context() const { return context_.get(); }
  ibv_pd* pd() const { return pd_.get(); }
  const DeviceCaps& caps() const { return caps_; }
  // The GID index of the port's RoCEv2 GID for an IPv4 address (RoCE), or
  // 0 on InfiniBand; an error when a RoCE port has none (no address yet).
  Result<int> roce_v2_ipv4_gid_index() const;

 private:
  ContextPtr context_;
  PdPtr pd_;
  DeviceCaps caps_;
};

// The nearest-device rule, apart from hwloc so that it is testable: for
// each active device, the PUs local to it; `running_on`, the PUs this
// process may run on. Returns the index of the device whose local PUs hold
// most of `running_on` (the first on a tie).
std::size_t nearest_device(const std::vector<std::vector<int>>& local_pus,
                           const std::vector<int>& running_on);

// Whether to match in the NIC: TAGWIRE_TM=auto uses the hardware where the
// device reports IBV_TM_CAP_RC, =off never, =on insists and fails clearly on
// a device without it.
Result<bool> use_nic_matching(const DeviceCaps& caps, NicMatchingChoice choice);

// Whether NIC and CPU atomics are atomic with each other (IBV_ATOMIC_GLOB):
// then the receiver claims a slot descriptor with a CPU compare-and-swap
// while senders CAS it by RDMA (one-sided send cancel); otherwise
// (IBV_ATOMIC_HCA) the receiver's claims go through its NIC as well.
bool one_sided_cancel_possible(const DeviceCaps& caps);

}  // namespace tagwire::verbs
