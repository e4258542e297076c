#include "transport/registry.h"

namespace tagwire::transport {

std::string transport_names(TransportList built) {
  std::string names;
  for (const TransportEntry* entry : built) {
    if (!names.empty()) names += ' ';
    names += entry->name;
  }
  return names;
}

Result<const TransportEntry*> choose_transport(TransportList built, std::string_view wanted,
                                               bool one_host) {
  if (wanted != "auto") {
    for (const TransportEntry* entry : built) {
      if (entry->name == wanted) return entry;
    }
    return Status(ErrorCode::kUnsupported, "TAGWIRE_TRANSPORT=" + std::string(wanted) +
                                               ": this build has no such transport (it has: " +
                                               transport_names(built) + ")");
  }
  const TransportEntry* best = nullptr;
  for (const TransportEntry* entry : built) {
    const Capabilities& caps = entry->capabilities;
    if (caps.preference <= 0 || (caps.one_host_only && !one_host)) continue;
    if (best == nullptr || caps.preference > best->capabilities.preference) best = entry;
  }
  if (best == nullptr) {
    return Status(ErrorCode::kUnsupported, std::string("no transport of this build (") +
                                               transport_names(built) + ") reaches " +
                                               (one_host ? "this job" : "ranks on other hosts") +
                                               " by itself: name one with TAGWIRE_TRANSPORT");
  }
  return best;
}

}  // namespace tagwire::transport
