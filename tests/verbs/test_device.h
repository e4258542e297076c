// The RDMA device the verbs tests run on: TAGWIRE_DEVICE, or the one
// Device::open picks. Without one (this machine's kernel has no RDMA) the
// tests skip and say where they do run.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "verbs/device.h"

namespace tagwire::verbs::testing {

// The device, or null with `why_not` set to the skip message.
inline std::unique_ptr<Device> open_test_device(std::string* why_not) {
  const char* name = std::getenv("TAGWIRE_DEVICE");
  auto d = Device::open(name != nullptr ? name : "");
  if (!d) {
    *why_not = "no usable RDMA device here (" + d.status().to_string() +
               "); these tests run in the soft-RoCE VM: bash ci/rxe-vm -- bash ci/rxe-tests";
    return nullptr;
  }
  return std::make_unique<Device>(std::move(d).value());
}

}  // namespace tagwire::verbs::testing
