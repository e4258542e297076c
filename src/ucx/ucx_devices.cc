#include "ucx/ucx_devices.h"

#include <uct/api/uct.h>

#include <algorithm>
#include <sstream>

#include "ucx/ucx_status.h"

namespace tagwire::ucx {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// The transport-layer resources of one memory domain, by device name.
void add_devices_of(uct_component_h component, const char* md_name,
                    std::vector<std::string>* names) {
  uct_md_config_t* config = nullptr;
  if (uct_md_config_read(component, nullptr, nullptr, &config) != UCS_OK) return;
  uct_md_h md = nullptr;
  const ucs_status_t opened = uct_md_open(component, md_name, config, &md);
  uct_config_release(config);
  if (opened != UCS_OK) return;  // a domain that cannot open offers no device
  uct_tl_resource_desc_t* resources = nullptr;
  unsigned count = 0;
  if (uct_md_query_tl_resources(md, &resources, &count) == UCS_OK) {
    for (unsigned i = 0; i < count; ++i) names->emplace_back(resources[i].dev_name);
    uct_release_tl_resource_list(resources);
  }
  uct_md_close(md);
}

}  // namespace

Result<std::vector<std::string>> ucx_device_names() {
  uct_component_h* components = nullptr;
  unsigned count = 0;
  ucs_status_t s = uct_query_components(&components, &count);
  if (s != UCS_OK) return ucx_error("uct_query_components", s);
  std::vector<std::string> names;
  for (unsigned c = 0; c < count; ++c) {
    uct_component_attr_t attr{};
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(components[c], &attr) != UCS_OK) continue;
    std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = mds.data();
    if (uct_component_query(components[c], &attr) != UCS_OK) continue;
    for (const auto& md : mds) add_devices_of(components[c], md.md_name, &names);
  }
  uct_release_component_list(components);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Status check_net_devices(const char* value, const std::vector<std::string>& known) {
  if (value == nullptr) return Status::ok();
  std::vector<std::string> missing;
  std::stringstream list(value);
  for (std::string name; std::getline(list, name, ',');) {
    if (name.empty() || name == "all") continue;
    if (std::find(known.begin(), known.end(), name) == known.end()) missing.push_back(name);
  }
  if (missing.empty()) return Status::ok();
  return {ErrorCode::kConfig,
          "UCX_NET_DEVICES=" + std::string(value) + " names " + joined(missing) +
              ", which UCX does not have on this host; it has: " + joined(known)};
}

}  // namespace tagwire::ucx
