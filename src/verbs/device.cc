#include "verbs/device.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/topology.h"
#include "verbs/verbs_status.h"

namespace tagwire::verbs {

namespace {

Status read_caps(ibv_context* context, std::uint8_t port, DeviceCaps* caps) {
  ibv_device_attr_ex attr{};
  if (int rc = ibv_query_device_ex(context, nullptr, &attr); rc != 0) {
    return verbs_error("ibv_query_device_ex", rc);
  }
  ibv_port_attr port_attr{};
  if (int rc = ibv_query_port(context, port, &port_attr); rc != 0) {
    return verbs_error("ibv_query_port", rc);
  }
  caps->port = port;
  caps->port_active = port_attr.state == IBV_PORT_ACTIVE;
  caps->ethernet = port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
  caps->active_mtu = port_attr.active_mtu;
  caps->atomic_cap = attr.orig_attr.atomic_cap;
  caps->tm_rc = (attr.tm_caps.flags & IBV_TM_CAP_RC) != 0;
  caps->tm_max_tags = attr.tm_caps.max_num_tags;
  caps->tm_max_rndv_header = attr.tm_caps.max_rndv_hdr_size;
  caps->max_qp_wr = static_cast<std::uint32_t>(attr.orig_attr.max_qp_wr);
  caps->max_sge = static_cast<std::uint32_t>(attr.orig_attr.max_sge);
  return Status::ok();
}

}  // namespace

std::size_t nearest_device(const std::vector<std::vector<int>>& local_pus,
                           const std::vector<int>& running_on) {
  std::size_t best = 0, best_overlap = 0;
  for (std::size_t i = 0; i < local_pus.size(); ++i) {
    std::size_t overlap = 0;
    for (int pu : running_on) {
      if (std::find(local_pus[i].begin(), local_pus[i].end(), pu) != local_pus[i].end()) ++overlap;
    }
    if (overlap > best_overlap) {
      best = i;
      best_overlap = overlap;
    }
  }
  return best;
}

Result<Device> Device::open(const std::string& name) {
  int count = 0;
  DeviceListPtr list(ibv_get_device_list(&count));
  if (!list && errno == ENOSYS) {
    return Status(ErrorCode::kUnsupported,
                  (name.empty() ? std::string() : "TAGWIRE_DEVICE=" + name + ": ") +
                      "this kernel has no RDMA support (ibv_get_device_list: ENOSYS)");
  }
  if (!list) return verbs_error("ibv_get_device_list", errno);
  if (count == 0) {
    return Status(ErrorCode::kUnsupported,
                  (name.empty() ? std::string() : "TAGWIRE_DEVICE=" + name + ": ") +
                      "no RDMA device on this machine (ibv_get_device_list found none)");
  }
  std::vector<std::string> seen;
  std::vector<Device> usable;  // named, or active
  for (int i = 0; i < count; ++i) {
    ibv_device* dev = list.get()[i];
    const std::string dev_name = ibv_get_device_name(dev);
    seen.push_back(dev_name);
    if (!name.empty() && dev_name != name) continue;
    Device d;
    d.context_.reset(ibv_open_device(dev));
    if (!d.context_) return verbs_error("ibv_open_device(" + dev_name + ")", errno);
    d.caps_.name = dev_name;
    TAGWIRE_RETURN_IF_ERROR(read_caps(d.context_.get(), 1, &d.caps_));
    if (name.empty() && !d.caps_.port_active) continue;  // look for a usable one
    usable.push_back(std::move(d));
    if (!name.empty()) break;
  }
  if (usable.empty()) {
    std::string all;
    for (const auto& s : seen) all += (all.empty() ? "" : ", ") + s;
    return Status(name.empty() ? ErrorCode::kUnsupported : ErrorCode::kConfig,
                  name.empty()
                      ? "no RDMA device has an active port (devices: " + all + ")"
                      : "TAGWIRE_DEVICE=" + name + " is not a device here (devices: " + all + ")");
  }
  std::size_t chosen = 0;
  if (usable.size() > 1) {
    // Several active devices: the one nearest where this process runs.
    // hwloc's I/O discovery is slow, so only here.
    if (auto topology = Topology::load(true); topology) {
      std::vector<std::vector<int>> local;
      for (const Device& d : usable) {
        auto pus = topology->pus_near_device(d.caps_.name);
        local.push_back(pus ? std::move(pus).value() : std::vector<int>{});
      }
      chosen = nearest_device(local, topology->allowed_pus());
      TW_INFO("verbs",
              "nearest of " << usable.size() << " active devices: " << usable[chosen].caps_.name);
    }
  }
  Device d = std::move(usable[chosen]);
  d.pd_.reset(ibv_alloc_pd(d.context_.get()));
  if (!d.pd_) return verbs_error("ibv_alloc_pd", errno);
  return d;
}

Result<int> Device::roce_v2_ipv4_gid_index() const {
  if (!caps_.ethernet) return 0;
  ibv_port_attr port_attr{};
  if (int rc = ibv_query_port(context_.get(), caps_.port, &port_attr); rc != 0) {
    return verbs_error("ibv_query_port", rc);
  }
  for (int i = 0; i < port_attr.gid_tbl_len; ++i) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(context_.get(), caps_.port, static_cast<std::uint32_t>(i), &entry, 0) !=
        0) {
      continue;  // empty slots answer with an error
    }
    // An IPv4-mapped address: ::ffff:a.b.c.d
    static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (entry.gid_type == IBV_GID_TYPE_ROCE_V2 &&
        std::memcmp(entry.gid.raw, kMapped, sizeof(kMapped)) == 0) {
      return i;
    }
  }
  return Status(ErrorCode::kConfig, "device " + caps_.name +
                                        " has no RoCEv2 GID for an IPv4 address (give its "
                                        "netdev an address)");
}

Result<bool> use_nic_matching(const DeviceCaps& caps, NicMatchingChoice choice) {
  switch (choice) {
    case NicMatchingChoice::kOff:
      return false;
    case NicMatchingChoice::kAuto:
      return caps.tm_rc;
    case NicMatchingChoice::kOn:
      if (!caps.tm_rc) {
        return Status(ErrorCode::kConfig,
                      "TAGWIRE_TM=on, but device " + caps.name +
                          " has no tag matching (tm_caps.flags lacks IBV_TM_CAP_RC); use "
                          "TAGWIRE_TM=auto to fall back to the software matcher");
      }
      return true;
  }
  return Status(ErrorCode::kInternal, "unknown tag matching choice");
}

bool one_sided_cancel_possible(const DeviceCaps& caps) {
  return caps.atomic_cap == IBV_ATOMIC_GLOB;
}

}  // namespace tagwire::verbs
