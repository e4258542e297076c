// Generalized requests (MPI-3.1 §12.2): MPI_Grequest_start hands out a
// request the engine holds running (engine/generalized_request.cc) until
// MPI_Grequest_complete; every completion call takes it like any other.
// Here are its three callbacks and when each runs:
// - query_fn fills the status when a wait or test completes it (and for
//   MPI_Request_get_status); its return value is the request's error;
// - free_fn runs once, after query_fn in the wait or test that ends the
//   request, or, for a request given to MPI_Request_free, at the later of
//   that free and MPI_Grequest_complete;
// - cancel_fn runs at MPI_Cancel, told whether the request is complete.
#include <mutex>
#include <unordered_map>

#include "mpi_api/generalized_requests.h"
#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

struct Generalized {
  MPI_Grequest_query_function* query = nullptr;
  MPI_Grequest_free_function* free = nullptr;
  MPI_Grequest_cancel_function* cancel = nullptr;
  void* extra_state = nullptr;
  engine::Request* request = nullptr;  // the engine's, until it completes
  bool completed = false;              // MPI_Grequest_complete was called
  bool freed = false;                  // MPI_Request_free was called first
};

// By handle. The callbacks run outside the mutex: they may call MPI.
struct Table {
  std::mutex mutex;
  std::unordered_map<MPI_Request, Generalized> requests;
  // With `mutex` held, after `requests` changed.
  void recount() { g_generalized_count.store(requests.size(), std::memory_order_relaxed); }
};

Table& table() {
  static Table t;
  return t;
}

std::optional<Generalized> find(MPI_Request handle) {
  std::lock_guard lock(table().mutex);
  auto it = table().requests.find(handle);
  if (it == table().requests.end()) return std::nullopt;
  return it->second;
}

// The request's entry, removed: the wait or test that ends it.
std::optional<Generalized> take(MPI_Request handle) {
  std::lock_guard lock(table().mutex);
  auto it = table().requests.find(handle);
  if (it == table().requests.end()) return std::nullopt;
  Generalized g = it->second;
  table().requests.erase(it);
  table().recount();
  return g;
}

// The Status behind an error class a callback returned: the code the MPI
// layer maps back to that class, else (MPI_ERR_OTHER, or a class of the
// program's own) kApplication, MPI_ERR_OTHER.
Status callback_error(int code, const char* which) {
  const std::string message =
      std::string("the generalized request's ") + which + " returned " + std::to_string(code);
  for (int c = static_cast<int>(ErrorCode::kInvalidArgument);
       c <= static_cast<int>(ErrorCode::kInternal); ++c) {
    const auto e = static_cast<ErrorCode>(c);
    const int cls = error_class(Status(e, ""));
    if (cls == code && cls != MPI_ERR_OTHER) return {e, message};
  }
  return {ErrorCode::kApplication, message};
}

// query_fn's status for the request: what it set, over an empty status.
engine::MessageStatus query(const Generalized& g) {
  MPI_Status s{};
  s.MPI_SOURCE = MPI_UNDEFINED;
  s.MPI_TAG = MPI_UNDEFINED;
  const int rc = g.query(g.extra_state, &s);
  engine::MessageStatus st;
  st.source = s.MPI_SOURCE;
  st.tag = s.MPI_TAG;
  st.count = s.tagwire_count;
  st.cancelled = s.tagwire_cancelled != 0;
  if (rc != MPI_SUCCESS) st.error = callback_error(rc, "query_fn");
  return st;
}

}  // namespace

namespace tagwire::mpi {

std::atomic<std::size_t> g_generalized_count{0};

void finish_generalized(MPI_Request handle, engine::MessageStatus* st) {
  auto g = take(handle);
  if (!g) return;
  *st = query(*g);
  const int rc = g->free(g->extra_state);
  if (rc != MPI_SUCCESS && st->error.is_ok()) st->error = callback_error(rc, "free_fn");
}

bool query_generalized(MPI_Request handle, engine::MessageStatus* st) {
  auto g = find(handle);
  if (!g) return false;
  *st = query(*g);
  return true;
}

std::optional<Status> cancel_generalized(MPI_Request handle) {
  auto g = find(handle);
  if (!g) return std::nullopt;
  const int rc = g->cancel(g->extra_state, g->completed ? 1 : 0);
  return rc == MPI_SUCCESS ? Status::ok() : callback_error(rc, "cancel_fn");
}

std::optional<Status> free_generalized(MPI_Request handle) {
  Generalized g;
  {
    std::lock_guard lock(table().mutex);
    auto it = table().requests.find(handle);
    if (it == table().requests.end()) return std::nullopt;
    if (!it->second.completed) {
      it->second.freed = true;  // MPI_Grequest_complete calls free_fn
      return Status::ok();
    }
    g = it->second;
    table().requests.erase(it);
    table().recount();
  }
  const int rc = g.free(g.extra_state);
  return rc == MPI_SUCCESS ? Status::ok() : callback_error(rc, "free_fn");
}

}  // namespace tagwire::mpi

extern "C" {

int MPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                       MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                       MPI_Request* request) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (query_fn == nullptr || free_fn == nullptr || cancel_fn == nullptr || request == nullptr) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "a callback or the request pointer is NULL"});
  }
  engine::Request* r = E().start_generalized();
  const MPI_Request handle = E().hand_out(r);
  {
    std::lock_guard lock(table().mutex);
    table().requests[handle] = Generalized{query_fn, free_fn, cancel_fn, extra_state, r};
    table().recount();
  }
  *request = handle;
  return MPI_SUCCESS;
}

int MPI_Grequest_complete(MPI_Request request) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  Generalized g;
  {
    std::lock_guard lock(table().mutex);
    auto it = table().requests.find(request);
    if (it == table().requests.end() || it->second.completed) {
      return report(MPI_COMM_WORLD, __func__,
                    {ErrorCode::kInvalidRequest,
                     "request " + std::to_string(request) +
                         " is not a generalized request waiting for MPI_Grequest_complete"});
    }
    it->second.completed = true;
    g = it->second;
    if (g.freed) {
      table().requests.erase(it);
      table().recount();
    }
  }
  if (g.freed) {
    // Freed by MPI_Request_free first: nobody waits for it, and the engine
    // lets it go as it completes.
    const int rc = g.free(g.extra_state);
    TW_MPI_TRY(MPI_COMM_WORLD, E().complete_generalized(g.request));
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : report(MPI_COMM_WORLD, __func__, callback_error(rc, "free_fn"));
  }
  TW_MPI_TRY(MPI_COMM_WORLD, E().complete_generalized(g.request));
  return MPI_SUCCESS;
}

int MPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  auto layout = layout_of(datatype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  if (status == MPI_STATUS_IGNORE || count < 0) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "a NULL status or a negative count"});
  }
  // `count` predefined elements of the type (what MPI_Get_elements gives
  // back), not `count` copies of it.
  status->tagwire_count = (*layout)->basic_bytes(static_cast<std::size_t>(count));
  return MPI_SUCCESS;
}

int MPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return MPI_Status_set_elements_x(status, datatype, count);
}

int MPI_Status_set_cancelled(MPI_Status* status, int flag) {
  if (status == MPI_STATUS_IGNORE) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "a NULL status"});
  }
  status->tagwire_cancelled = flag != 0 ? 1 : 0;
  return MPI_SUCCESS;
}

}  // extern "C"
