// Whether two processes can share memory directly: the same kernel boot,
// the same /dev/shm, the same PID namespace (CMA names the peer by PID).
#pragma once

#include <string>

namespace tagwire::shm {

// Equal for exactly the processes this transport can join.
std::string host_identity();

}  // namespace tagwire::shm
