#include "common/topology.h"

#include <sched.h>

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tagwire {

namespace {

std::vector<int> pus_in(hwloc_topology_t topology, hwloc_const_cpuset_t set) {
  std::vector<int> out;
  hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topology);
  hwloc_bitmap_t both = hwloc_bitmap_alloc();
  hwloc_bitmap_and(both, set, allowed);
  // hwloc_bitmap_foreach_begin uses C casts; walk the set by hand instead.
  for (int index = hwloc_bitmap_first(both); index >= 0; index = hwloc_bitmap_next(both, index)) {
    out.push_back(index);
  }
  hwloc_bitmap_free(both);
  return out;
}

hwloc_obj_t find_openfabrics_device(hwloc_topology_t topology, std::string_view name) {
  for (hwloc_obj_t obj = hwloc_get_next_osdev(topology, nullptr); obj != nullptr;
       obj = hwloc_get_next_osdev(topology, obj)) {
    if (obj->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && obj->name != nullptr &&
        name == obj->name) {
      return obj;
    }
  }
  return nullptr;
}

}  // namespace

void Topology::Deleter::operator()(hwloc_topology* topology) const {
  hwloc_topology_destroy(topology);
}

Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

Result<Topology> Topology::load(bool with_io) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return Status(ErrorCode::kOutOfResources,
                  std::string("hwloc_topology_init failed: ") + std::strerror(errno));
  }
  Topology topology(raw);
  // I/O objects (the OpenFabrics OS devices and their PCI parents) only
  // when asked: their discovery reads sysfs and the PCI name database, which
  // under AddressSanitizer took longer than a test's whole run and kept the
  // cancel agent from starting.
  hwloc_topology_set_io_types_filter(
      raw, with_io ? HWLOC_TYPE_FILTER_KEEP_IMPORTANT : HWLOC_TYPE_FILTER_KEEP_NONE);
  // hwloc's x86 backend runs cpuid on each PU by binding the calling
  // thread to it in turn, and left an MPI_Init thread on the last PU it
  // visited: both ranks of a job ended on one core, a 25x collapse of the
  // message rate. The Linux backend reads the same from sysfs without
  // moving anyone; and whatever a backend does, the caller's placement is
  // put back.
  (void)hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
  cpu_set_t placement;
  const bool placed = ::sched_getaffinity(0, sizeof(placement), &placement) == 0;
  const int loaded = hwloc_topology_load(raw);
  if (placed) (void)::sched_setaffinity(0, sizeof(placement), &placement);
  if (loaded != 0) {
    return Status(ErrorCode::kInternal,
                  std::string("hwloc_topology_load failed: ") + std::strerror(errno));
  }
  return topology;
}

std::vector<int> Topology::allowed_pus() const {
  return pus_in(topology_.get(), hwloc_topology_get_allowed_cpuset(topology_.get()));
}

Result<std::vector<int>> Topology::pus_near_device(std::string_view device) const {
  hwloc_obj_t osdev = find_openfabrics_device(topology_.get(), device);
  if (osdev == nullptr) {
    return Status(ErrorCode::kNotFound,
                  "RDMA device '" + std::string(device) + "' is not in the hwloc topology");
  }
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology_.get(), osdev);
  if (ancestor == nullptr || ancestor->cpuset == nullptr) return allowed_pus();
  std::vector<int> near = pus_in(topology_.get(), ancestor->cpuset);
  if (near.empty()) return allowed_pus();
  return near;
}

std::vector<std::string> Topology::rdma_devices() const {
  std::vector<std::string> out;
  for (hwloc_obj_t obj = hwloc_get_next_osdev(topology_.get(), nullptr); obj != nullptr;
       obj = hwloc_get_next_osdev(topology_.get(), obj)) {
    if (obj->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && obj->name != nullptr) {
      out.emplace_back(obj->name);
    }
  }
  return out;
}

int Topology::pick_helper_pu(std::string_view device, int avoid_pu) const {
  std::vector<int> candidates;
  if (!device.empty()) {
    if (auto near = pus_near_device(device)) candidates = std::move(near).value();
  }
  if (candidates.empty()) candidates = allowed_pus();
  if (candidates.empty()) return 0;
  // Prefer the last PU that is not the caller's: the application usually
  // starts on the low-numbered ones.
  for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
    if (*it != avoid_pu) return *it;
  }
  return candidates.front();
}

Status Topology::bind_current_thread(int pu) const {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  hwloc_bitmap_only(set, static_cast<unsigned>(pu));
  int rc = hwloc_set_cpubind(topology_.get(), set, HWLOC_CPUBIND_THREAD);
  int saved_errno = errno;
  hwloc_bitmap_free(set);
  if (rc != 0) {
    return Status(ErrorCode::kInvalidArgument, "cannot bind thread to PU " + std::to_string(pu) +
                                                   ": " + std::strerror(saved_errno));
  }
  return Status::ok();
}

}  // namespace tagwire
