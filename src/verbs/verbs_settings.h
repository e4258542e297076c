// The verbs transport's own settings: which device, the NIC's matching,
// how QPs connect, the registration cache, what the eager rings may take.
// Its registry entry declares them (kTransportEntry.settings), so a process
// knows them only in a build with verbs, and the engine refuses them while
// another transport is chosen.
#pragma once

#include <cstddef>
#include <string>

#include "common/settings.h"

namespace tagwire::verbs {

enum class NicMatchingChoice { kAuto, kOn, kOff };
// How RC QPs connect: through rdma_cm on first use (lazily, routed by the
// IP stack; what RoCE users expect), or all at start-up from QP numbers
// published through the bootstrap. kAuto: rdma_cm where the device has an
// IPv4 RoCE address, the exchange otherwise.
enum class VerbsConnectChoice { kAuto, kCm, kExchange };

struct VerbsSettings {
  std::string device;  // TAGWIRE_DEVICE ("mlx5_0", "rxe0"); empty: the nearest one
  NicMatchingChoice nic_matching = NicMatchingChoice::kAuto;  // TAGWIRE_TM
  VerbsConnectChoice connect = VerbsConnectChoice::kAuto;     // TAGWIRE_VERBS_CONNECT
  // Keep user buffers registered between operations, forgetting a
  // registration when its memory is unmapped (TAGWIRE_RCACHE).
  bool registration_cache = true;
  // What the eager rings of all peers may take together
  // (TAGWIRE_VERBS_RING_BUDGET); each ring has 64 slots down to 4, as many
  // as the budget allows for the job's peers.
  std::size_t ring_budget = std::size_t{256} << 20;
  // TAGWIRE_VERBS_GATHER_FROM (VerbsOptions::gather_from).
  std::size_t gather_from = 12288;

  bool operator==(const VerbsSettings&) const = default;

  static SettingTable table();
  static Result<VerbsSettings> read(const Settings& settings);
};

}  // namespace tagwire::verbs
