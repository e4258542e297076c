// Which host this process runs on, in the sense that matters for sharing
// memory: the same kernel boot, the same /dev/shm, the same PID namespace
// (cross-memory attach names a peer by PID). The engine compares it across
// the job to know whether every rank is here; the shared-memory transport
// refuses a peer whose identity differs.
#pragma once

#include <string>

namespace tagwire {

// Equal for exactly the processes that can share memory with this one.
std::string host_identity();

}  // namespace tagwire
