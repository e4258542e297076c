// The devices UCX has on this host, and UCX_NET_DEVICES checked against
// them at start-up.
//
// Why: UCX takes a device name it does not have without a word, and the job
// then fails at its first message ("no transport reaches rank N") under a
// rank that has not even said who it is. A name that is not there is a
// typo or the wrong node type: MPI_Init says so, with the names UCX has.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace tagwire::ucx {

// Every device name UCT reports here, once each (what `ucx_info -d` lists
// as "Device:": lo, eth0, mlx5_0:1, memory, ...).
Result<std::vector<std::string>> ucx_device_names();

// `value` (UCX_NET_DEVICES; null or "all": nothing to check) names only
// devices in `known`; else kConfig naming the missing ones and `known`.
Status check_net_devices(const char* value, const std::vector<std::string>& known);

}  // namespace tagwire::ucx
