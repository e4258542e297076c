// MPI point-to-point: sends, receives, probes, persistent and buffered
// requests, completion and cancel, all over the engine.
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "mpi_api/generalized_requests.h"
#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;
using engine::SendMode;

namespace {

// Where the engine reads or writes `count` elements of `datatype` at `buf`:
// in place when the layout is one run, else a pack buffer (`staging`).
struct WireBuffer {
  void* data = nullptr;
  std::size_t bytes = 0;
  std::unique_ptr<Staging> staging;
};

// The bytes of `count` elements of a predefined type but the pairs (nearly
// every message: one size and a multiply), or nothing for every other case,
// which wire_buffer() works out and reports. Always inlined: with a call
// site in each of the nonblocking entry points GCC stopped inlining it,
// and as a call it was ~26 instructions per message at each end.
[[gnu::always_inline]] inline std::optional<std::size_t> predefined_bytes(int count,
                                                                          MPI_Datatype datatype) {
  // No overflow check: no int count of a predefined type reaches
  // kMaxMessageBytes (a static_assert in state.cc), and a division per
  // message was the dearest instruction of MPI_Isend.
  if (datatype > MPI_DATATYPE_NULL && datatype < MPI_FLOAT_INT && count >= 0) {
    return static_cast<std::size_t>(count) * kPredefinedTypeSizes[datatype];
  }
  return std::nullopt;
}

Result<WireBuffer> wire_buffer(const void* buf, int count, MPI_Datatype datatype, bool receive) {
  if (auto bytes = predefined_bytes(count, datatype)) {
    WireBuffer w;
    w.bytes = *bytes;
    w.data = const_cast<void*>(buf);
    return w;
  }
  auto bytes = bytes_of(count, datatype);
  if (!bytes) return bytes.status();
  const TypeLayout* layout = *layout_of(datatype);
  WireBuffer w;
  w.bytes = *bytes;
  if (layout->contiguous()) {
    w.data = const_cast<char*>(static_cast<const char*>(buf)) + layout->lower_bound();
    if (*bytes == 0) w.data = const_cast<void*>(buf);
    return w;
  }
  w.staging = std::make_unique<Staging>();
  w.staging->packed.resize(*bytes);
  w.staging->user_buffer = const_cast<void*>(buf);
  w.staging->count = static_cast<std::size_t>(count);
  w.staging->layout = std::make_shared<TypeLayout>(*layout);  // outlives a Type_free
  w.staging->receive = receive;
  w.data = w.staging->packed.data();
  return w;
}

// After `staging` changed (its mutex held): the count completion reads
// without the mutex.
void recount_staged() {
  state().staged.store(state().staging.size(), std::memory_order_relaxed);
}

// Hands out the handle of a new request, keeping its pack buffer with it.
MPI_Request add_request(engine::Request* r, WireBuffer& w) {
  MPI_Request h = E().hand_out(r);
  if (w.staging) {
    ThreadGuard guard(state().staging_mutex);
    state().staging[h] = std::move(*w.staging);
    recount_staged();
  }
  return h;
}

// Before a send starts (and every restart of a persistent one): pack.
void pack_for_send(MPI_Request h) {
  if (state().staged.load(std::memory_order_relaxed) == 0) return;
  ThreadGuard guard(state().staging_mutex);
  auto it = state().staging.find(h);
  if (it == state().staging.end() || it->second.receive) return;
  Staging& s = it->second;
  s.layout->pack(s.user_buffer, s.count, s.packed.data());
}

// A send or receive of a predefined type, started in place (nothing staged:
// no WireBuffer to make and drop) and its handle handed out.
[[gnu::always_inline]] inline int isend_in_place(const char* function, MPI_Comm comm,
                                                 engine::Communicator* c, const void* buf,
                                                 std::size_t bytes, int dest, int tag,
                                                 SendMode mode, MPI_Request* request) {
  auto r = E().isend(buf, bytes, dest, tag, c, mode);
  if (!r) [[unlikely]]
    return report(comm, function, r.status());
  *request = E().hand_out(*r);
  return MPI_SUCCESS;
}
[[gnu::always_inline]] inline int irecv_in_place(const char* function, MPI_Comm comm,
                                                 engine::Communicator* c, void* buf,
                                                 std::size_t bytes, int source, int tag,
                                                 MPI_Request* request) {
  auto r = E().irecv(buf, bytes, source, tag, c);
  if (!r) [[unlikely]]
    return report(comm, function, r.status());
  *request = E().hand_out(*r);
  return MPI_SUCCESS;
}

// Starts (or, with persistent, only creates) a send and hands out a handle.
// Out of line: what post_send does not take inline (another communicator
// than the world's, a derived type, a persistent request, an error).
[[gnu::noinline]] int post_send_general(const char* function, const void* buf, int count,
                                        MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                        SendMode mode, bool persistent, MPI_Request* request) {
  engine::Communicator* c = world_comm_of(comm);
  if (c == nullptr) {
    auto found = comm_of(comm);
    if (!found) return report(comm, function, found.status());
    c = *found;
  }
  if (auto bytes = predefined_bytes(count, datatype); bytes && !persistent) {
    return isend_in_place(function, comm, c, buf, *bytes, dest, tag, mode, request);
  }
  auto w = wire_buffer(buf, count, datatype, false);
  if (!w) return report(comm, function, w.status());
  if (w->staging && !persistent) {
    w->staging->layout->pack(buf, w->staging->count, w->staging->packed.data());
  }
  auto r = persistent ? E().send_init(w->data, w->bytes, dest, tag, c, mode)
                      : E().isend(w->data, w->bytes, dest, tag, c, mode);
  if (!r) return report(comm, function, r.status());
  *request = add_request(*r, *w);
  return MPI_SUCCESS;
}

[[gnu::noinline]] int post_recv_general(const char* function, void* buf, int count,
                                        MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                        bool persistent, MPI_Request* request) {
  engine::Communicator* c = world_comm_of(comm);
  if (c == nullptr) {
    auto found = comm_of(comm);
    if (!found) return report(comm, function, found.status());
    c = *found;
  }
  if (auto bytes = predefined_bytes(count, datatype); bytes && !persistent) {
    return irecv_in_place(function, comm, c, buf, *bytes, source, tag, request);
  }
  auto w = wire_buffer(buf, count, datatype, true);
  if (!w) return report(comm, function, w.status());
  auto r = persistent ? E().recv_init(w->data, w->bytes, source, tag, c)
                      : E().irecv(w->data, w->bytes, source, tag, c);
  if (!r) return report(comm, function, r.status());
  *request = add_request(*r, *w);
  return MPI_SUCCESS;
}

// The nonblocking calls' common case, inlined into each MPI_ entry point:
// a predefined type on a known communicator goes straight to the engine
// (as calls of ten arguments, these were about 20 instructions a message
// at each end of an 8-byte window). Everything else, errors included, is
// the general function's.
[[gnu::always_inline]] inline int post_send(const char* function, const void* buf, int count,
                                            MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                            SendMode mode, bool persistent, MPI_Request* request) {
  if (engine::Communicator* c = world_comm_of(comm); c != nullptr && !persistent) {
    if (auto bytes = predefined_bytes(count, datatype)) {
      return isend_in_place(function, comm, c, buf, *bytes, dest, tag, mode, request);
    }
  }
  return post_send_general(function, buf, count, datatype, dest, tag, comm, mode, persistent,
                           request);
}

[[gnu::always_inline]] inline int post_recv(const char* function, void* buf, int count,
                                            MPI_Datatype datatype, int source, int tag,
                                            MPI_Comm comm, bool persistent, MPI_Request* request) {
  if (engine::Communicator* c = world_comm_of(comm); c != nullptr && !persistent) {
    if (auto bytes = predefined_bytes(count, datatype)) {
      return irecv_in_place(function, comm, c, buf, *bytes, source, tag, request);
    }
  }
  return post_recv_general(function, buf, count, datatype, source, tag, comm, persistent, request);
}

// The common case of request_of, in a few compares and no Result: the
// live request behind a handle, or null (MPI_REQUEST_NULL or not valid).
engine::Request* find_request(MPI_Request handle) {
  const State& st = state();
  return st.initialized && !st.finalized ? st.engine->by_handle(handle) : nullptr;
}

// The engine request behind a handle; null for MPI_REQUEST_NULL.
Result<engine::Request*> request_of(MPI_Request handle) {
  // Every completion looks its handle up.
  if (engine::Request* r = find_request(handle)) return r;
  TAGWIRE_RETURN_IF_ERROR(check_initialized());
  if (handle == MPI_REQUEST_NULL) return static_cast<engine::Request*>(nullptr);
  return Status(ErrorCode::kInvalidRequest,
                "request handle " + std::to_string(handle) + " is not valid (freed?)");
}

// After the engine completed `*handle`: a staged receive is unpacked (as
// far as the message went), a generalized request's status is its
// query_fn's, and a non-persistent request is gone (the engine has
// released it, so `persistent` is read before completion).
void retire(MPI_Request* handle, bool persistent, engine::MessageStatus& st) {
  if (any_generalized()) finish_generalized(*handle, &st);
  if (state().staged.load(std::memory_order_relaxed) != 0) {
    ThreadGuard guard(state().staging_mutex);
    auto it = state().staging.find(*handle);
    if (it != state().staging.end()) {
      Staging& s = it->second;
      if (s.receive && !st.cancelled) {
        s.layout->unpack(s.packed.data(), st.count, s.count, s.user_buffer);
        // Every byte is delivered where the type puts it; bytes that stop
        // inside an element say the sender's type signature was not this
        // one (MPI-3.1 §3.3.1), which a receive in place cannot see.
        if (st.error.is_ok() && s.layout->ends_inside_element(st.count))
          st.error = Status(ErrorCode::kInvalidType,
                            "the message's " + std::to_string(st.count) +
                                " bytes end inside an element of the receive datatype: the "
                                "send and receive type signatures do not match");
      }
      if (!persistent) {
        state().staging.erase(it);
        recount_staged();
      }
    }
  }
  // (The engine released a one-shot request as it finished it, and with it
  // the handle.)
  if (!persistent) *handle = MPI_REQUEST_NULL;
}

// Waits (or tests) the request behind `*handle`, already looked up as `r`,
// and fills the MPI status; reports nothing, so that callers completing
// many requests can decide how to.
Status complete_request(MPI_Request* handle, engine::Request* r, bool block, int* flag,
                        MPI_Status* status) {
  engine::MessageStatus st;
  bool done = true;
  const bool persistent = r != nullptr && r->persistent;
  if (block) {
    TAGWIRE_RETURN_IF_ERROR(E().wait(r, &st));
  } else {
    auto t = E().test(r, &st);
    if (!t) return t.status();
    done = *t;
  }
  if (flag != nullptr) *flag = done ? 1 : 0;
  if (!done) return Status::ok();
  retire(handle, persistent, st);
  to_mpi_status(st, status);
  return std::move(st.error);
}

// complete_request for a handle not yet looked up.
Status complete_status(MPI_Request* handle, bool block, int* flag, MPI_Status* status) {
  auto r = request_of(*handle);
  if (!r) return r.status();
  return complete_request(handle, *r, block, flag, status);
}

// complete_status, reported through MPI_COMM_WORLD's error handler.
int complete_one(const char* function, MPI_Request* handle, bool block, int* flag,
                 MPI_Status* status) {
  Status s = complete_status(handle, block, flag, status);
  return s.is_ok() ? MPI_SUCCESS : report(MPI_COMM_WORLD, function, s);
}

bool active(MPI_Request handle) {
  auto r = request_of(handle);
  return r && *r != nullptr && (!(*r)->persistent || (*r)->active());
}

void set_empty(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  status->tagwire_cancelled = 0;
  status->tagwire_count = 0;
}

// Numbers each list of requests handed to the engine at once, for
// Request::listed_in.
std::uint64_t next_list() {
  static std::atomic<std::uint64_t> lists{0};
  return lists.fetch_add(1, std::memory_order_relaxed) + 1;
}

// A list call some of whose requests failed: MPI_ERR_IN_STATUS, each
// failed request's class in its status. Reported once, so it aborts under
// MPI_ERRORS_ARE_FATAL.
int in_status_error(const char* function) {
  report(MPI_COMM_WORLD, function,
         {ErrorCode::kInvalidArgument, "one or more requests failed (see the statuses)"});
  return MPI_ERR_IN_STATUS;
}

// MPI_Waitall's common call, as a window test makes it: every handle valid
// and named once, nothing to unpack. Each status goes from the engine
// straight into the caller's MPI_Status: no engine status is built,
// moved and dropped per request (those were a tenth of the receiver's
// instructions per 8-byte message). False, having changed nothing, when
// the list needs the general path.
bool waitall_plain(int count, MPI_Request requests[], MPI_Status statuses[], int* rc) {
  constexpr int kMax = 64;
  if (count < 0 || count > kMax || state().staged.load(std::memory_order_relaxed) != 0 ||
      any_generalized()) {
    return false;
  }
  engine::Request* resolved[kMax];
  bool persistent[kMax];
  const std::uint64_t list = next_list();
  for (int i = 0; i < count; ++i) {
    engine::Request* req = find_request(requests[i]);
    if (req == nullptr && requests[i] != MPI_REQUEST_NULL) return false;  // reported there
    if (req != nullptr) {
      if (req->listed_in == list) return false;  // named twice
      req->listed_in = list;
      persistent[i] = req->persistent;
    }
    resolved[i] = req;
  }
  bool failed = false;
  (void)E().wait_all_with({resolved, static_cast<std::size_t>(count)},
                          [&](std::size_t i, const engine::MessageStatus& st) {
                            if (statuses != MPI_STATUSES_IGNORE) {
                              to_mpi_status(st, &statuses[i]);  // sets MPI_ERROR for a failure
                              if (st.error.is_ok()) statuses[i].MPI_ERROR = MPI_SUCCESS;
                            }
                            if (!st.error.is_ok()) failed = true;
                          });
  for (int i = 0; i < count; ++i) {
    if (resolved[i] != nullptr && !persistent[i]) requests[i] = MPI_REQUEST_NULL;
  }
  // As the general path: each failed request's class is in its status.
  *rc = failed ? in_status_error("MPI_Waitall") : MPI_SUCCESS;
  return true;
}

// MPI_Testsome's work, for MPI_Waitsome too (`function`: which one). Every
// request that completed is counted and handed back, failed ones included:
// a failure is MPI_ERR_IN_STATUS with each completed request's class in
// its status (MPI-3.1 §3.7.5), not the first failure's own code returned
// with the rest of the list left unreported and *outcount half made.
int test_some(const char* function, int incount, MPI_Request requests[], int* outcount,
              int indices[], MPI_Status statuses[]) {
  bool any_active = false;
  bool failed = false;
  int completed = 0;
  for (int i = 0; i < incount; ++i) {
    if (!active(requests[i])) continue;
    any_active = true;
    int done = 0;
    MPI_Status local;
    MPI_Status* out = statuses == MPI_STATUSES_IGNORE ? &local : &statuses[completed];
    Status s = complete_status(&requests[i], false, &done, out);
    if (!done) {
      if (s.is_ok()) continue;
      *outcount = completed;  // the test itself failed: nothing more completes
      return report(MPI_COMM_WORLD, function, s);
    }
    indices[completed++] = i;
    out->MPI_ERROR = s.is_ok() ? MPI_SUCCESS : error_class(s);
    failed = failed || !s.is_ok();
  }
  *outcount = any_active ? completed : MPI_UNDEFINED;
  return failed ? in_status_error(function) : MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return post_send(__func__, buf, count, type, dest, tag, comm, SendMode::kStandard, false,
                   request);
}
int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return post_send(__func__, buf, count, type, dest, tag, comm, SendMode::kSynchronous, false,
                   request);
}
int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return post_send(__func__, buf, count, type, dest, tag, comm, SendMode::kReady, false, request);
}
int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return post_send(__func__, buf, count, type, dest, tag, comm, SendMode::kBuffered, false,
                   request);
}
int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return post_send(__func__, buf, count, type, dest, tag, comm, SendMode::kStandard, true, request);
}
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return post_send(__func__, buf, count, type, dest, tag, comm, SendMode::kSynchronous, true,
                   request);
}
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return post_send(__func__, buf, count, type, dest, tag, comm, SendMode::kReady, true, request);
}
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return post_send(__func__, buf, count, type, dest, tag, comm, SendMode::kBuffered, true, request);
}
int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return post_recv(__func__, buf, count, type, source, tag, comm, false, request);
}
int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return post_recv(__func__, buf, count, type, source, tag, comm, true, request);
}

// Blocking calls: the nonblocking call, then a wait on the same handle.
// On MPI_COMM_WORLD with a predefined type (an 8-byte ping-pong's every
// call) the engine does the whole call: nothing else can name its
// request, so it is never handed out, looked up or retired (those were
// about a tenth of a blocking call's instructions), and an eager send that
// the transport takes at once needs no request at all (Engine::send).
#define TW_BLOCKING_SEND(name, mode)                                                          \
  int name(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) { \
    engine::Communicator* c = world_comm_of(comm);                                            \
    if (auto bytes = predefined_bytes(count, type); c != nullptr && bytes) {                  \
      Status s = E().send(buf, *bytes, dest, tag, c, mode);                                   \
      return s.is_ok() ? MPI_SUCCESS : report(comm, __func__, s);                             \
    }                                                                                         \
    MPI_Request request = MPI_REQUEST_NULL;                                                   \
    int rc = post_send(__func__, buf, count, type, dest, tag, comm, mode, false, &request);   \
    if (rc != MPI_SUCCESS) return rc;                                                         \
    return complete_one(__func__, &request, true, nullptr, MPI_STATUS_IGNORE);                \
  }
TW_BLOCKING_SEND(MPI_Send, SendMode::kStandard)
TW_BLOCKING_SEND(MPI_Ssend, SendMode::kSynchronous)
TW_BLOCKING_SEND(MPI_Rsend, SendMode::kReady)
TW_BLOCKING_SEND(MPI_Bsend, SendMode::kBuffered)
#undef TW_BLOCKING_SEND

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  engine::Communicator* c = world_comm_of(comm);
  if (auto bytes = predefined_bytes(count, type); c != nullptr && bytes) {
    // The engine's blocking receive: without a request while nothing else
    // is posted (src/engine/unnamed_receive.h).
    engine::MessageStatus st;
    Status s = E().receive(buf, *bytes, source, tag, c, &st);
    if (!s.is_ok()) return report(comm, __func__, s);
    to_mpi_status(st, status);
    return st.error.is_ok() ? MPI_SUCCESS : report(comm, __func__, st.error);
  }
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = post_recv(__func__, buf, count, type, source, tag, comm, false, &request);
  if (rc != MPI_SUCCESS) return rc;
  return complete_one(__func__, &request, true, nullptr, status);
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  // On MPI_COMM_WORLD with predefined types, an eager send goes without a
  // request and the receive as MPI_Recv's: two persistent requests made,
  // started, waited for and freed were a third of an 8-byte exchange.
  engine::Communicator* c = world_comm_of(comm);
  if (auto out = predefined_bytes(sendcount, sendtype), in = predefined_bytes(recvcount, recvtype);
      c != nullptr && out && in) {
    engine::MessageStatus st;
    if (Status s; E().sendrecv_unnamed(sendbuf, *out, dest, sendtag, recvbuf, *in, source, recvtag,
                                       c, &st, &s)) {
      if (!s.is_ok()) return report(comm, __func__, s);
      to_mpi_status(st, status);
      return st.error.is_ok() ? MPI_SUCCESS : report(comm, __func__, st.error);
    }
  }
  // Both halves are checked (as persistent requests) before either starts:
  // a bad send argument must not leave a receive posted behind the error,
  // where it would take a later message.
  MPI_Request recv = MPI_REQUEST_NULL, send = MPI_REQUEST_NULL;
  int rc = MPI_Recv_init(recvbuf, recvcount, recvtype, source, recvtag, comm, &recv);
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Send_init(sendbuf, sendcount, sendtype, dest, sendtag, comm, &send);
  if (rc == MPI_SUCCESS) rc = MPI_Start(&recv);
  if (rc == MPI_SUCCESS) {
    rc = MPI_Start(&send);
    if (rc != MPI_SUCCESS) {
      // The receive is posted: withdraw it; if a message already matched
      // it, it completes here and the message is not lost to a later call.
      MPI_Cancel(&recv);
      complete_one(__func__, &recv, true, nullptr, status);
    }
  }
  if (rc == MPI_SUCCESS) rc = complete_one(__func__, &send, true, nullptr, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS) rc = complete_one(__func__, &recv, true, nullptr, status);
  if (send != MPI_REQUEST_NULL) MPI_Request_free(&send);
  MPI_Request_free(&recv);
  return rc;
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status* status) {
  auto bytes = bytes_of(count, type);
  TW_MPI_TRY(comm, bytes.status());
  // The outgoing data, packed, so that the receive can overwrite buf.
  std::vector<std::uint8_t> copy(*bytes);
  (*layout_of(type))->pack(buf, static_cast<std::size_t>(count), copy.data());
  return MPI_Sendrecv(copy.data(), static_cast<int>(*bytes), MPI_BYTE, dest, sendtag, buf, count,
                      type, source, recvtag, comm, status);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  engine::MessageStatus st;
  auto found = E().iprobe(source, tag, *c, &st);
  TW_MPI_TRY(comm, found.status());
  *flag = *found ? 1 : 0;
  if (*found) to_mpi_status(st, status);
  return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  engine::MessageStatus st;
  TW_MPI_TRY(comm, E().probe(source, tag, *c, &st));
  to_mpi_status(st, status);
  return MPI_SUCCESS;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                MPI_Status* status) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  engine::MessageStatus st;
  auto m = E().improbe(source, tag, *c, &st);
  TW_MPI_TRY(comm, m.status());
  *flag = *m ? 1 : 0;
  if (!*m) return MPI_SUCCESS;
  to_mpi_status(st, status);
  *message = (*m)->comm == nullptr
                 ? MPI_MESSAGE_NO_PROC
                 : state().messages.add(std::shared_ptr<engine::Message>(std::move(m).value()));
  return MPI_SUCCESS;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  engine::MessageStatus st;
  auto m = E().mprobe(source, tag, *c, &st);
  TW_MPI_TRY(comm, m.status());
  to_mpi_status(st, status);
  *message = (*m)->comm == nullptr
                 ? MPI_MESSAGE_NO_PROC
                 : state().messages.add(std::shared_ptr<engine::Message>(std::move(m).value()));
  return MPI_SUCCESS;
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
               MPI_Request* request) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  auto w = wire_buffer(buf, count, type, true);
  TW_MPI_TRY(MPI_COMM_WORLD, w.status());
  std::unique_ptr<engine::Message> m;
  if (*message == MPI_MESSAGE_NO_PROC) {
    m = std::make_unique<engine::Message>();  // completes as a PROC_NULL receive
  } else {
    auto* held = state().messages.find(*message);
    if (held == nullptr) {
      return report(
          MPI_COMM_WORLD, __func__,
          {ErrorCode::kInvalidRequest, "message handle is not valid (already received?)"});
    }
    m = std::make_unique<engine::Message>(std::move(**held));
    state().messages.remove(*message);
  }
  auto r = E().imrecv(w->data, w->bytes, std::move(m));
  TW_MPI_TRY(MPI_COMM_WORLD, r.status());
  *request = add_request(*r, *w);
  *message = MPI_MESSAGE_NULL;
  return MPI_SUCCESS;
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Imrecv(buf, count, type, message, &request);
  if (rc != MPI_SUCCESS) return rc;
  return complete_one(__func__, &request, true, nullptr, status);
}

int MPI_Start(MPI_Request* request) {
  auto r = request_of(*request);
  TW_MPI_TRY(MPI_COMM_WORLD, r.status());
  if (*r != nullptr && !(*r)->active()) pack_for_send(*request);
  TW_MPI_TRY(MPI_COMM_WORLD, E().start(*r));
  return MPI_SUCCESS;
}

int MPI_Startall(int count, MPI_Request requests[]) {
  for (int i = 0; i < count; ++i) {
    int rc = MPI_Start(&requests[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int MPI_Buffer_attach(void* buffer, int size) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (size < 0) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "negative buffer size " + std::to_string(size)});
  }
  TW_MPI_TRY(MPI_COMM_WORLD, E().buffer_attach(buffer, static_cast<std::size_t>(size)));
  return MPI_SUCCESS;
}

int MPI_Buffer_detach(void* buffer_addr, int* size) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  auto detached = E().buffer_detach();
  TW_MPI_TRY(MPI_COMM_WORLD, detached.status());
  *static_cast<void**>(buffer_addr) = detached->first;
  *size = static_cast<int>(detached->second);
  return MPI_SUCCESS;
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  return complete_one(__func__, request, true, nullptr, status);
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return complete_one(__func__, request, false, flag, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (int rc; waitall_plain(count, requests, statuses, &rc)) return rc;
  // A bad handle is an argument error, found before anything completes.
  // Each handle is looked up once, and the engine finishes the whole list
  // under one lock (a window of 64 eager sends is the common call: a
  // lookup, a lock and a wait per request were a third of the sender's
  // instructions per 8-byte message).
  constexpr int kOnStack = 64;
  struct Entry {
    bool persistent = false;
    bool repeated = false;  // the handle appears earlier in the list
  };
  engine::Request* on_stack[kOnStack];
  Entry entries_on_stack[kOnStack];
  engine::MessageStatus statuses_on_stack[kOnStack];
  std::vector<engine::Request*> on_heap;
  std::vector<Entry> entries_on_heap;
  std::vector<engine::MessageStatus> statuses_on_heap;
  engine::Request** resolved = on_stack;
  Entry* entries = entries_on_stack;
  engine::MessageStatus* outcomes = statuses_on_stack;
  if (count > kOnStack) {
    on_heap.resize(static_cast<std::size_t>(count));
    entries_on_heap.resize(static_cast<std::size_t>(count));
    statuses_on_heap.resize(static_cast<std::size_t>(count));
    resolved = on_heap.data();
    entries = entries_on_heap.data();
    outcomes = statuses_on_heap.data();
  }
  const std::uint64_t list = next_list();
  for (int i = 0; i < count; ++i) {
    engine::Request* req = find_request(requests[i]);
    if (req == nullptr) {
      auto r = request_of(requests[i]);
      TW_MPI_TRY(MPI_COMM_WORLD, r.status());
      req = *r;
    }
    entries[i] = Entry{};
    if (req != nullptr) {
      // A handle given twice is finished once; the repeat goes the checked
      // way afterwards, which says what it is by then (freed, or inactive).
      entries[i].repeated = req->listed_in == list;
      req->listed_in = list;
      entries[i].persistent = req->persistent;
    }
    resolved[i] = entries[i].repeated ? nullptr : req;
  }
  const auto n = static_cast<std::size_t>(count);
  (void)E().wait_all({resolved, n}, {outcomes, n});  // each request's error is in its status
  bool failed = false;
  for (int i = 0; i < count; ++i) {
    MPI_Status local;
    MPI_Status* out = statuses == MPI_STATUSES_IGNORE ? &local : &statuses[i];
    Status s;
    if (entries[i].repeated) {
      s = complete_status(&requests[i], true, nullptr, out);
    } else {
      retire(&requests[i], entries[i].persistent, outcomes[i]);
      to_mpi_status(outcomes[i], out);
      s = std::move(outcomes[i].error);
    }
    // Collect every request's outcome first, then report once.
    out->MPI_ERROR = s.is_ok() ? MPI_SUCCESS : error_class(s);  // also where no status was filled
    failed = failed || !s.is_ok();
  }
  return failed ? in_status_error(__func__) : MPI_SUCCESS;
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  // All or nothing: complete them only if every one is complete.
  for (int i = 0; i < count; ++i) {
    auto r = request_of(requests[i]);
    TW_MPI_TRY(MPI_COMM_WORLD, r.status());
    if (*r == nullptr || !active(requests[i])) continue;
    engine::MessageStatus st;
    auto done = E().peek_status(*r, &st);
    TW_MPI_TRY(MPI_COMM_WORLD, done.status());
    if (!*done) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return MPI_Waitall(count, requests, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  std::vector<engine::Request*> rs(static_cast<std::size_t>(count));
  std::vector<bool> persistent(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    auto r = request_of(requests[i]);
    TW_MPI_TRY(MPI_COMM_WORLD, r.status());
    rs[static_cast<std::size_t>(i)] = *r;
    persistent[static_cast<std::size_t>(i)] = *r != nullptr && (*r)->persistent;
  }
  engine::MessageStatus st;
  auto which = E().wait_any(rs, &st);
  TW_MPI_TRY(MPI_COMM_WORLD, which.status());
  if (*which < 0) {
    *index = MPI_UNDEFINED;
    set_empty(status);
    return MPI_SUCCESS;
  }
  *index = *which;
  retire(&requests[*which], persistent[static_cast<std::size_t>(*which)], st);
  to_mpi_status(st, status);
  return st.error.is_ok() ? MPI_SUCCESS : report(MPI_COMM_WORLD, __func__, st.error);
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    if (!active(requests[i])) continue;
    any_active = true;
    int done = 0;
    int rc = complete_one(__func__, &requests[i], false, &done, status);
    if (rc != MPI_SUCCESS) return rc;
    if (done) {
      *index = i;
      *flag = 1;
      return MPI_SUCCESS;
    }
  }
  *index = MPI_UNDEFINED;
  *flag = any_active ? 0 : 1;
  if (!any_active) set_empty(status);
  return MPI_SUCCESS;
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  return test_some(__func__, incount, requests, outcount, indices, statuses);
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  for (;;) {
    int rc = test_some(__func__, incount, requests, outcount, indices, statuses);
    if (rc != MPI_SUCCESS || *outcount != 0) return rc;
    state().engine->progress();
  }
}

int MPI_Request_free(MPI_Request* request) {
  auto r = request_of(*request);
  TW_MPI_TRY(MPI_COMM_WORLD, r.status());
  if (*r == nullptr) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidRequest, "free of MPI_REQUEST_NULL"});
  }
  const bool in_flight = (*r)->active() && !(*r)->complete();
  std::optional<Status> generalized;  // its free_fn's answer, if it ran
  if (any_generalized()) generalized = free_generalized(*request);
  TW_MPI_TRY(MPI_COMM_WORLD, E().request_free(*r));
  if (generalized && !generalized->is_ok()) {
    *request = MPI_REQUEST_NULL;
    return report(MPI_COMM_WORLD, __func__, *generalized);
  }
  ThreadGuard guard(state().staging_mutex);
  if (auto it = state().staging.find(*request); it != state().staging.end()) {
    // The engine may still read or write the pack buffer: keep it until
    // MPI_Finalize.
    if (in_flight) state().orphaned_staging.push_back(std::move(it->second));
    state().staging.erase(it);
    recount_staged();
  }
  *request = MPI_REQUEST_NULL;  // the engine's request_free ended the handle
  return MPI_SUCCESS;
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  auto r = request_of(request);
  TW_MPI_TRY(MPI_COMM_WORLD, r.status());
  engine::MessageStatus st;
  auto done = E().peek_status(*r, &st);
  TW_MPI_TRY(MPI_COMM_WORLD, done.status());
  *flag = *done ? 1 : 0;
  if (*done && any_generalized()) (void)query_generalized(request, &st);
  if (*done) to_mpi_status(st, status);
  return MPI_SUCCESS;
}

int MPI_Cancel(MPI_Request* request) {
  auto r = request_of(*request);
  TW_MPI_TRY(MPI_COMM_WORLD, r.status());
  if (*r == nullptr) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidRequest, "cancel of MPI_REQUEST_NULL"});
  }
  if (any_generalized()) {
    if (auto answer = cancel_generalized(*request)) {
      TW_MPI_TRY(MPI_COMM_WORLD, *answer);
      return MPI_SUCCESS;
    }
  }
  TW_MPI_TRY(MPI_COMM_WORLD, E().cancel(*r));
  return MPI_SUCCESS;
}

int MPI_Test_cancelled(const MPI_Status* status, int* flag) {
  *flag = status->tagwire_cancelled;
  return MPI_SUCCESS;
}

}  // extern "C"
