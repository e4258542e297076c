// Generalized requests (MPI-3.1 §12.2, MPI_Grequest_start): the operation
// is the application's own, done by its code or its threads; the engine
// only holds the request, so that MPI_Wait, MPI_Test and the list calls
// take it beside any other, until MPI_Grequest_complete says it is done.
// Its callbacks (query, free, cancel) are the MPI layer's to call.
#include "engine/engine.h"

namespace tagwire::engine {

Request* Engine::start_generalized() {
  EngineGuard lock(mutex_);
  Request* r = new_request(RequestKind::kGeneralized);
  r->comm = self_.get();
  r->peer = kProcNull;  // depends on no rank: a death fails it not
  r->set_phase(RequestPhase::kRunning);
  r->started_ms = clock_ms_.load(std::memory_order_relaxed);
  r->status = empty_status();
  r->await(kUserComplete);
  return r;
}

Status Engine::complete_generalized(Request* r) {
  EngineGuard lock(mutex_);
  if (r == nullptr || r->kind != RequestKind::kGeneralized || !r->awaits(kUserComplete)) {
    return {ErrorCode::kInvalidRequest,
            "MPI_Grequest_complete of a request that is not a generalized one still running"};
  }
  r->stop_awaiting(kUserComplete);
  maybe_complete(r);  // a request the application freed goes now
  return Status::ok();
}

}  // namespace tagwire::engine
