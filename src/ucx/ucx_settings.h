// The UCX transport's own settings. Its registry entry declares them
// (kTransportEntry.settings), so the engine refuses them while another
// transport is chosen.
#pragma once

#include "common/settings.h"

namespace tagwire::ucx {

// When endpoints connect (TAGWIRE_UCX_CONNECT): all of them in MPI_Init,
// or each on first use. kAuto: in MPI_Init for jobs of up to
// kEagerConnectRanks ranks (63 endpoints a rank), on first use above.
enum class UcxConnectChoice { kAuto, kEager, kLazy };

inline constexpr int kEagerConnectRanks = 64;

struct UcxSettings {
  UcxConnectChoice connect = UcxConnectChoice::kAuto;

  // Whether a job of `size` ranks connects everyone in MPI_Init.
  bool connects_at_start(int size) const {
    return connect == UcxConnectChoice::kEager ||
           (connect == UcxConnectChoice::kAuto && size <= kEagerConnectRanks);
  }

  static SettingTable table();
  static Result<UcxSettings> read(const Settings& settings);
};

}  // namespace tagwire::ucx
