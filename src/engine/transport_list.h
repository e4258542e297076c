// The transports this build compiled, in the order they were found. Meson
// writes the list (transport_list.cc.in) from the transports it built, so
// that nothing in the engine names a transport or tests for one with #ifdef.
#pragma once

#include "transport/registry.h"

namespace tagwire::engine {

transport::TransportList built_transports();

}  // namespace tagwire::engine
