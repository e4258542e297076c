// Window: memory exposed to a communicator's ranks for one-sided access
// (MPI-4.1 §12), with fence synchronisation. Put is a remote write and Get
// a remote read straight into or out of the target's registered window
// (RDMA WRITE / READ on verbs, ucp_put / ucp_get on UCX); MPI_Win_fence
// completes them locally, flushes them to their targets and ends with a
// barrier, so that after it every rank sees every access of the epoch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "transport/transport.h"

namespace tagwire::engine {

class Communicator;
class Engine;

// Where a rank's window lies, as every other rank learns it at creation.
struct RemoteWindow {
  std::uint64_t base = 0;
  std::uint64_t size = 0;
  std::int32_t disp_unit = 1;
  std::vector<std::uint8_t> key;
};

struct Window {
  Engine* engine = nullptr;
  Communicator* comm = nullptr;
  void* base = nullptr;
  std::size_t size = 0;
  int disp_unit = 1;
  std::unique_ptr<transport::Registration> registration;  // none for an empty window
  std::vector<RemoteWindow> ranks;                        // by rank in `comm`
  bool epoch_open = false;                                // a fence has opened an access epoch
  int pending = 0;                                        // puts and gets not yet complete locally
  Status error;  // the first failure among them, reported by the fence
};

}  // namespace tagwire::engine
