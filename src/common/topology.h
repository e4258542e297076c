// Machine topology through hwloc: which processing units (PUs) exist, which
// are near an RDMA device, and where to put a helper thread.
//
// The progress thread (and the cancel agent inside it) wakes on completion
// events from the NIC; it runs best on a PU close to that NIC and away from
// the application thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

struct hwloc_topology;

namespace tagwire {

class Topology {
 public:
  // Loads the topology of this machine; with_io: RDMA devices and their
  // PCI parents too (needed by pus_near_device / rdma_devices; slower).
  static Result<Topology> load(bool with_io = true);

  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  // OS indices of the PUs this process may run on.
  std::vector<int> allowed_pus() const;

  // OS indices of the allowed PUs local to the named RDMA device
  // ("mlx5_0", "rxe0"). A device hwloc cannot place (a software device such
  // as rxe) is local to the whole machine. kNotFound if no such device.
  Result<std::vector<int>> pus_near_device(std::string_view device) const;

  // Names of the RDMA (OpenFabrics) devices hwloc sees.
  std::vector<std::string> rdma_devices() const;

  // A PU for a helper thread: near `device` when it is given and known,
  // other than `avoid_pu` when there is a choice.
  int pick_helper_pu(std::string_view device, int avoid_pu) const;

  // Binds the calling thread to one PU.
  Status bind_current_thread(int pu) const;

 private:
  struct Deleter {
    void operator()(hwloc_topology* topology) const;
  };
  explicit Topology(hwloc_topology* topology) : topology_(topology) {}

  std::unique_ptr<hwloc_topology, Deleter> topology_;
};

}  // namespace tagwire
