// Generalized requests' callbacks, as the completion calls of
// point_to_point.cc meet them (generalized_requests.cc says when each runs).
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>

#include "common/status.h"
#include "engine/request.h"
#include "mpi_api/mpi.h"

namespace tagwire::mpi {

// How many generalized requests are out, readable without a lock: while
// it is 0, completion takes none of the paths below.
extern std::atomic<std::size_t> g_generalized_count;

inline bool any_generalized() {
  return g_generalized_count.load(std::memory_order_relaxed) != 0;
}

// A wait or test completed `handle`: its status is query_fn's, then
// free_fn runs and the handle is forgotten. Nothing for other requests.
void finish_generalized(MPI_Request handle, engine::MessageStatus* st);
// MPI_Request_get_status on a complete generalized request: query_fn's
// status. False for other requests.
bool query_generalized(MPI_Request handle, engine::MessageStatus* st);
// MPI_Cancel: cancel_fn's answer; nullopt for other requests.
std::optional<Status> cancel_generalized(MPI_Request handle);
// MPI_Request_free: free_fn now if complete, else at
// MPI_Grequest_complete; nullopt for other requests.
std::optional<Status> free_generalized(MPI_Request handle);

}  // namespace tagwire::mpi
