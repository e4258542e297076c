#include "ucx/ucx_transport.h"

#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "ucx/message_rma.h"
#include "ucx/ucx_devices.h"
#include "ucx/ucx_handles.h"
#include "ucx/ucx_settings.h"
#include "ucx/ucx_status.h"

namespace tagwire::ucx {

using transport::Completion;
using transport::Issued;
using transport::PeerId;

namespace {

// While it lives (and is `active`), UCX's transport selection does not log
// its errors. The
// first endpoint probes whether UCX takes the peer error mode; over shared
// memory it does not, and UCX logged that refusal as an ERROR on stdout
// ("no active messages transport ... no peer failure handler"), one line
// per rank in every job over UCX sm, which read as a failure and broke
// the output of programs that print results (bench/compare's --crowd).
// UCX calls the handler pushed last first; what it does not drop goes on
// to UCX's own.
class QuietTransportSelection {
 public:
  explicit QuietTransportSelection(bool active) : active_(active) {
    if (active_) ucs_log_push_handler(&drop_selection_errors);
  }
  ~QuietTransportSelection() {
    if (active_) ucs_log_pop_handler();
  }
  QuietTransportSelection(const QuietTransportSelection&) = delete;
  QuietTransportSelection& operator=(const QuietTransportSelection&) = delete;

 private:
  static ucs_log_func_rc_t drop_selection_errors(const char* file, unsigned /*line*/,
                                                 const char* /*function*/, ucs_log_level_t level,
                                                 const ucs_log_component_config_t* /*config*/,
                                                 const char* /*format*/, va_list /*args*/) {
    const bool selection = file != nullptr && std::string_view(file).ends_with("select.c");
    return selection && level <= UCS_LOG_LEVEL_ERROR ? UCS_LOG_FUNC_RC_STOP
                                                     : UCS_LOG_FUNC_RC_CONTINUE;
  }
  bool active_;
};

constexpr unsigned kAmId = 17;  // our messages' id (MessageRma takes 18 and 19)
constexpr std::size_t kMaxHeader = 128;

// State of one operation handed to UCX, alive until its callback runs.
// The header is copied here so callers need not keep theirs.
struct Operation {
  Completion done;
  std::uint8_t header[kMaxHeader];
  RkeyPtr rkey;                 // remote key unpacked for a read or CAS
  std::uint64_t cas_value = 0;  // CAS: the value to swap in
  // CAS: where UCX puts the old value (copied to the caller's on
  // completion): an answer that comes after the operation was given up
  // (peer_failed) lands here, never in the caller's memory.
  std::uint64_t cas_reply = 0;
  std::uint64_t* cas_out = nullptr;
  int parts_left = 0;       // flush: its parts still running
  Status error;             // flush: the first part's failure
  PeerId peer = -1;         // the rank a read, write, CAS or send goes to
  bool busy = false;        // handed to UCX, its callback still to come
  bool flush_part = false;  // a part of a flush() (start_flush_part)
  // Completed already with the peer's death (peer_failed): UCX's own
  // callback, whenever it comes, only frees it.
  bool given_up = false;
  class UcxTransportImpl* owner = nullptr;
};

class UcxRegistration final : public transport::Registration {
 public:
  UcxRegistration(std::unique_ptr<MemoryMap> map, void* address, std::size_t length,
                  transport::TransportCounters* counters, transport::RemoteAccess access,
                  std::shared_ptr<RemoteRegions> reachable)
      : map_(std::move(map)),
        address_(address),
        length_(length),
        counters_(counters),
        reachable_(std::move(reachable)) {
    ++counters_->registrations;
    counters_->registered_bytes += length_;
    reachable_->add(this->address(), length_, access);
  }
  ~UcxRegistration() override {
    reachable_->remove(address(), length_);
    --counters_->registrations;
    counters_->registered_bytes -= length_;
  }
  std::span<const std::uint8_t> packed_key() const override {
    return {map_->rkey(), map_->rkey_length()};
  }
  std::uint64_t address() const override { return reinterpret_cast<std::uint64_t>(address_); }
  std::size_t length() const override { return length_; }

 private:
  std::unique_ptr<MemoryMap> map_;
  void* address_;
  std::size_t length_;
  transport::TransportCounters* counters_;
  std::shared_ptr<RemoteRegions> reachable_;  // what MessageRma serves
};

// UCX objects left to the process's exit (~UcxTransportImpl says when and
// why), listed from a global so that they stay reachable: held on
// purpose, which a leak checker must not report as lost. With them go the
// Operations of requests the worker still holds (a read from a peer that
// died): their callbacks could still run, had anyone progressed it.
struct KeptForExit {
  ucp_context_h context;
  ucp_worker_h worker;
  std::vector<std::unique_ptr<Operation>> operations;
  std::unique_ptr<MessageRma> rma;
  KeptForExit* next;
};
KeptForExit* g_kept_for_exit = nullptr;

class UcxTransportImpl final : public transport::Transport {
 public:
  UcxTransportImpl(ContextPtr context, WorkerPtr worker, WorkerAddress address, int event_fd,
                   bool connect_at_start)
      : context_(std::move(context)),
        worker_(std::move(worker)),
        address_(std::move(address)),
        event_fd_(event_fd),
        connect_at_start_(connect_at_start),
        rma_(std::make_unique<MessageRma>(worker_.get(), &counters_)) {}

  ~UcxTransportImpl() override {
    // From here UCX may still complete operations (a forced close cancels
    // what was in flight): their callbacks tell nobody, for
    // the engine's requests are gone.
    closing_ = true;
    rma_->close();
    if (teardown_unsafe()) {
      // UCX 1.13 cannot take itself apart after a peer died, each way of
      // trying asserts in the soft-RoCE VM (peer_kill over rc/ud_verbs,
      // every run): destroying the worker purges the dead peer's endpoint
      // and meets a wireup request it does not expect ("got REQ message",
      // ucp_request.c:684), or a close left unfinished ("req->flags &
      // UCP_REQUEST_FLAG_RELEASED", ucp_ep.c:382); closing that endpoint by
      // force first asserts the same way; and ucp_cleanup finds memory of
      // an operation the dead peer never finished still registered
      // (rcache.c:409). The process is leaving (this is MPI_Finalize), so
      // the worker and the context are left to its exit; MemoryMaps made
      // from the context stay valid with it.
      TW_INFO("ucx", (unfinished_close_ ? "a close did not finish" : "a peer died")
                         << ": the UCX worker is left to the process's exit");
      address_ = WorkerAddress{};  // the worker is still there to take it
      g_kept_for_exit = new KeptForExit{context_.release(), worker_.release(),
                                        std::move(operations_), std::move(rma_), g_kept_for_exit};
      return;
    }
    // Endpoints must go before the worker. disconnect_all closed every one
    // already; these are left only when it did not run (a failed start).
    for (auto& peer : peers_) {
      if (peer.ep == nullptr) continue;
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
      ucs_status_ptr_t closing = ucp_ep_close_nbx(peer.ep, &param);
      peer.ep = nullptr;
      (void)wait_request(closing);
    }
    // The worker goes here, not after this body: its last callbacks must
    // find this object whole. Its address is released first, with it.
    address_ = WorkerAddress{};
    worker_.reset();
    // An operation UCX never finished (a read from a peer that died) still
    // holds its remote key, which the worker freed with itself ("not
    // returned to mpool ucp_rkeys"): destroying it now would touch freed
    // memory.
    for (auto& op : operations_) (void)op->rkey.release();
  }

  std::string_view name() const override { return "ucx"; }
  bool connects_on_first_use() const override { return !connect_at_start_; }
  bool connects_all_at_start() const override { return connect_at_start_; }

  // Every endpoint, made and then flushed: UCX flushes an endpoint only
  // once its wireup made its lanes ready, so when the flushes are done no
  // connection request or reply of ours is still pending. Why in MPI_Init:
  // UCX 1.13 aborts the process when it purges an endpoint that still
  // holds a pending wireup request or reply ("got REP message" in
  // ucp_request_send_state_ff), or when a TCP connection to a peer that
  // died is refused mid-connect (tcp_ep.c:478); both met a survivor that
  // first connected to a rank as it died (tests/mpi/peer_kill.c over TCP,
  // 2 runs in 450 on 2026-12-03). Made at start-up, a connection a death
  // touches is one already up, which UCX fails cleanly.
  Result<Issued> connect_all(Completion done) override {
    if (!connect_at_start_) return Issued::kDone;
    for (const Peer& p : peers_) {
      auto ep = endpoint(p.rank);
      if (!ep) return ep.status();
    }
    Operation* op = new_operation(done, -1);
    op->parts_left = 1;  // this call's own: no part may finish the whole early
    op->error = Status::ok();
    flush_live_endpoints(op);
    --op->parts_left;
    return settle_whole(op);
  }

  std::vector<std::uint8_t> address() const override {
    return {address_.data(), address_.data() + address_.size()};
  }

  Status set_peer_addresses(std::vector<std::vector<std::uint8_t>> addresses) override {
    peers_.clear();
    peers_.resize(addresses.size());
    for (std::size_t i = 0; i < addresses.size(); ++i) {
      if (addresses[i].empty()) {
        return {ErrorCode::kInvalidArgument, "empty UCX address for rank " + std::to_string(i)};
      }
      peers_[i].address = std::move(addresses[i]);
      peers_[i].rank = static_cast<PeerId>(i);
    }
    return Status::ok();
  }

  void set_receiver(transport::Receiver* receiver) override { receiver_ = receiver; }

  std::size_t max_header() const override { return kMaxHeader; }

  Result<Issued> send(PeerId peer, std::span<const std::uint8_t> header,
                      std::span<const std::uint8_t> payload, Completion done,
                      transport::Delivery) override {  // every AM arrival raises the event
    if (header.size() > kMaxHeader) {
      return Status(ErrorCode::kInvalidArgument, "message header larger than the transport allows");
    }
    auto ep = endpoint(peer);
    if (!ep) return ep.status();
    Operation* op = new_operation(done, peer);
    std::memcpy(op->header, header.data(), header.size());
    ucp_request_param_t param = callback_param(op);
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_AM_SEND_FLAG_EAGER;
    ++counters_.messages_sent;
    ucs_status_ptr_t request = ucp_am_send_nbx(*ep, kAmId, op->header, header.size(),
                                               payload.data(), payload.size(), &param);
    return finish_issue(request, op, "ucp_am_send_nbx");
  }

  Result<std::unique_ptr<transport::Registration>> register_memory(
      void* address, std::size_t length, transport::RemoteAccess access) override {
    ucp_mem_map_params_t params{};
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                        UCP_MEM_MAP_PARAM_FIELD_PROT;
    params.address = address;
    params.length = length == 0 ? 1 : length;  // UCX refuses empty maps
    // The least rights the use needs: a rendezvous source is only read;
    // UCP counts remote atomics as remote writes.
    params.prot =
        UCP_MEM_MAP_PROT_LOCAL_READ | UCP_MEM_MAP_PROT_LOCAL_WRITE | UCP_MEM_MAP_PROT_REMOTE_READ;
    if (access != transport::RemoteAccess::kRead) {
      params.prot |= UCP_MEM_MAP_PROT_REMOTE_WRITE;
    }
    ucp_mem_h memh = nullptr;
    ucs_status_t s = ucp_mem_map(context_.get(), &params, &memh);
    if (s != UCS_OK) return ucx_error("ucp_mem_map", s);
    void* rkey_buffer = nullptr;
    std::size_t rkey_length = 0;
    s = ucp_rkey_pack(context_.get(), memh, &rkey_buffer, &rkey_length);
    auto map = std::make_unique<MemoryMap>(context_.get(), memh,
                                           s == UCS_OK ? rkey_buffer : nullptr, rkey_length);
    if (s != UCS_OK) return ucx_error("ucp_rkey_pack", s);
    return std::unique_ptr<transport::Registration>(
        new UcxRegistration(std::move(map), address, length, &counters_, access, rma_->regions()));
  }

  Result<Issued> read(PeerId peer, std::span<std::uint8_t> local, std::uint64_t remote_address,
                      std::span<const std::uint8_t> remote_key, Completion done) override {
    auto reached = endpoint(peer);
    if (!reached) return reached.status();
    if (peers_[static_cast<std::size_t>(peer)].rma_by_message) {
      counters_.bytes_read += local.size();
      return rma_->read(*reached, peer, local, remote_address, done);
    }
    auto remote = begin_remote(*reached, peer, remote_key, done);
    if (!remote) return remote.status();
    ucp_ep_h ep = *reached;
    Operation* op = *remote;
    ucp_request_param_t param = callback_param(op);
    counters_.bytes_read += local.size();
    ucs_status_ptr_t request =
        ucp_get_nbx(ep, local.data(), local.size(), remote_address, op->rkey.get(), &param);
    return finish_issue(request, op, "ucp_get_nbx");
  }

  Result<Issued> write(PeerId peer, std::span<const std::uint8_t> local,
                       std::uint64_t remote_address, std::span<const std::uint8_t> remote_key,
                       Completion done) override {
    auto reached = endpoint(peer);
    if (!reached) return reached.status();
    if (peers_[static_cast<std::size_t>(peer)].rma_by_message) {
      counters_.bytes_written += local.size();
      return rma_->write(*reached, peer, local, remote_address, done);
    }
    auto remote = begin_remote(*reached, peer, remote_key, done);
    if (!remote) return remote.status();
    ucp_ep_h ep = *reached;
    Operation* op = *remote;
    ucp_request_param_t param = callback_param(op);
    counters_.bytes_written += local.size();
    ucs_status_ptr_t request =
        ucp_put_nbx(ep, local.data(), local.size(), remote_address, op->rkey.get(), &param);
    return finish_issue(request, op, "ucp_put_nbx");
  }

  Result<Issued> flush(Completion done) override {
    // Two parts: UCX's worker flush completes its puts remotely (peers
    // with RDMA lanes), and MessageRma's writes complete when their
    // targets answer (peers over TCP). A job may have both (shared memory
    // on the node, TCP between nodes).
    Operation* op = new_operation(done, -1);
    op->parts_left = 1;  // MessageRma's, below
    op->error = Status::ok();
    if (!any_dead()) {
      start_flush_part(op, -1);
    } else {
      flush_live_endpoints(op);
    }
    if (rma_->flush_writes({&UcxTransportImpl::flush_part_done, op}) == Issued::kDone) {
      --op->parts_left;
    }
    return settle_whole(op);
  }

  Result<Issued> compare_and_swap(PeerId peer, std::uint64_t remote_address,
                                  std::span<const std::uint8_t> remote_key, std::uint64_t expected,
                                  std::uint64_t desired, std::uint64_t* old_value,
                                  Completion done) override {
    if (remote_address % 8 != 0) {
      return Status(ErrorCode::kInvalidArgument, "compare-and-swap target is not 8-byte aligned");
    }
    auto reached = endpoint(peer);
    if (!reached) return reached.status();
    if (peers_[static_cast<std::size_t>(peer)].rma_by_message) {
      return rma_->compare_and_swap(*reached, peer, remote_address, expected, desired, old_value,
                                    done);
    }
    auto remote = begin_remote(*reached, peer, remote_key, done);
    if (!remote) return remote.status();
    ucp_ep_h ep = *reached;
    Operation* op = *remote;
    // UCP's CSWAP (ucp.h, "Atomic Operations Semantic"): Result = Y; if
    // (X == Y) Y = Z, with X the buffer (the comparand), Z the reply buffer
    // on entry (the new value) and Result the reply buffer on completion.
    // (It was the other way round here until one-sided cancel used it: a
    // failed swap then read as a successful one.)
    op->cas_value = expected;
    op->cas_reply = desired;
    op->cas_out = old_value;
    ucp_request_param_t param = callback_param(op);
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    param.datatype = ucp_dt_make_contig(8);
    param.reply_buffer = &op->cas_reply;
    ucs_status_ptr_t request = ucp_atomic_op_nbx(ep, UCP_ATOMIC_OP_CSWAP, &op->cas_value, 1,
                                                 remote_address, op->rkey.get(), &param);
    if (request == nullptr) *old_value = op->cas_reply;  // done at once
    return finish_issue(request, op, "ucp_atomic_op_nbx");
  }

  Result<std::uint64_t> local_compare_and_swap(const transport::Registration&, std::uint64_t* word,
                                               std::uint64_t expected,
                                               std::uint64_t desired) override {
    // The context runs UCX's atomics in CPU mode (create_ucx_transport), so
    // a peer's CSWAP on this word is atomic with the CPU's.
    std::atomic_ref<std::uint64_t> target(*word);
    std::uint64_t seen = expected;
    target.compare_exchange_strong(seen, desired);
    return seen;
  }

  // One call per poll: polling again until empty put an empty poll after
  // every arrival on the critical path (+65 ns over shm, +0.37 us over TCP).
  unsigned progress() override { return ucp_worker_progress(worker_.get()); }

  Result<bool> arm() override {
    if (event_fd_ < 0) return false;
    ucs_status_t s = ucp_worker_arm(worker_.get());
    if (s == UCS_ERR_BUSY) return false;  // events already pending
    if (s != UCS_OK) return ucx_error("ucp_worker_arm", s);
    return true;
  }

  int event_fd() const override { return event_fd_; }

  Status disconnect_all() override {
    // Start every close (flush first), then progress until all finish: a
    // close may need the peer to progress too, which it does in its own
    // disconnect_all or in the engine's progressing barrier after it.
    std::vector<ucs_status_ptr_t> closing;
    for (auto& peer : peers_) {
      // A dead peer's flush would wait the full 30 s: its endpoint is
      // never closed (peer_failed says why).
      if (peer.ep == nullptr || peer.dead) continue;
      ucp_request_param_t param{};
      closing.push_back(ucp_ep_close_nbx(peer.ep, &param));
      peer.ep = nullptr;
    }
    // After a death, a close to a live rank sometimes never finished over
    // rc/ud_verbs (soft-RoCE VM: half the peer_kill runs waited out the
    // 30 s), and by then UD's own 30 s peer timeout fails the dead rank's
    // endpoint inside UCX, which can assert on a wireup message it finds
    // there (ucp_request.c:684). Every message of ours is delivered by now
    // (the engine's barrier came first): give up on the close sooner and
    // leave the worker to the process's exit (the destructor).
    return wait_requests(closing, any_dead() ? kCloseLimitAfterDeath : kCloseLimit);
  }

  // A dead peer's endpoint is never closed, neither here nor at the end:
  // closing it by force (so that UCX cancels what it holds) made UCX 1.13
  // assert ("got REQ message", ucp_request.c:684) when the close purged a
  // wireup message still pending over ud_verbs (the soft-RoCE VM, 2 runs
  // of 2), and did not cure the shared-memory hang it was meant for
  // (docs/using-tagwire.md, "A rank that dies"). In the peer error mode UCX
  // fails it itself when its own timeouts say so. The engine never waits
  // for its operations (it abandons their requests). No new endpoint is
  // made to it (UCX 1.13 over TCP asserted on connecting to a peer that
  // had died).
  //
  // Its operations UCX still holds are completed here, with the death:
  // UCX would end them only when its own timeouts fail the endpoint (over
  // rc_verbs about 50 s in the soft-RoCE VM, while a survivor's
  // MPI_Win_flush or MPI_Compare_and_swap waited), and the engine's
  // blocking window calls wait for them. UCX's callback then only frees
  // the Operation. A CAS's late answer lands in the Operation; a read's
  // data could still land in its buffer if a reply was already on the
  // wire when the peer died (its QP or process is gone, so nothing later
  // can come).
  void peer_failed(PeerId peer) override {
    if (peer < 0 || static_cast<std::size_t>(peer) >= peers_.size()) return;
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    if (p.dead) return;
    p.dead = true;
    rma_->peer_failed(peer);
    // Flushes of the worker under way wait for the dead endpoint too:
    // each becomes flushes of the live endpoints.
    std::vector<Operation*> held;
    for (auto& op : operations_) {
      if (op->busy && !op->given_up && op->peer == peer) held.push_back(op.get());
      if (op->busy && !op->given_up && op->flush_part && op->peer < 0) held.push_back(op.get());
    }
    const Status died(ErrorCode::kPeerFailed, "rank " + std::to_string(peer) + " died");
    for (Operation* op : held) {
      op->given_up = true;
      if (op->flush_part) {
        // Its flush() goes on without it: the live endpoints' flushes
        // first (counted in), then this part ends.
        if (op->peer < 0) flush_live_endpoints(static_cast<Operation*>(op->done.ctx));
        op->done(Status::ok());
      } else {
        op->done(died);  // may issue operations: `held` was collected first
      }
    }
  }

  transport::TransportCounters counters() const override {
    transport::TransportCounters c = counters_;
    c.open_connections = static_cast<std::uint64_t>(
        std::count_if(peers_.begin(), peers_.end(), [](const Peer& p) { return p.ep != nullptr; }));
    return c;
  }

 private:
  struct Peer {
    std::vector<std::uint8_t> address;
    ucp_ep_h ep = nullptr;
    bool dead = false;  // peer_failed(): never flushed
    PeerId rank = -1;   // for UCX's error callback
    // Reads, writes and CAS go by MessageRma: UCX would emulate them (TCP),
    // and UCX 1.13 aborts a process that answers an emulated operation of
    // an origin that died.
    bool rma_by_message = false;
  };

  // The endpoint to `peer`, created on first use.
  Result<ucp_ep_h> endpoint(PeerId peer) {
    if (peer < 0 || static_cast<std::size_t>(peer) >= peers_.size()) {
      return Status(ErrorCode::kInvalidRank, "no such peer " + std::to_string(peer));
    }
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    // UCX would hold an operation to a dead peer until its own timeouts.
    if (p.dead) return Status(ErrorCode::kPeerFailed, "rank " + std::to_string(peer) + " died");
    if (p.ep != nullptr) return p.ep;
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address = reinterpret_cast<const ucp_address_t*>(p.address.data());
    // UCX's peer error mode where the transports allow it (TCP, verbs):
    // a peer that dies fails the endpoint and cancels its operations,
    // instead of UCX 1.13 aborting this process when it answers a request
    // the dead peer left (ucp_get_req_handler). Its shared-memory
    // transports refuse the mode ("Destination is unreachable"): learnt
    // from the first endpoint, and later ones are made without it.
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = &UcxTransportImpl::on_endpoint_error;
    params.err_handler.arg = &p;
    ucs_status_t s = UCS_ERR_UNREACHABLE;
    if (peer_mode_ != PeerMode::kRefused) {
      // The first endpoint's probe: a refusal is not an error.
      QuietTransportSelection quiet(peer_mode_ == PeerMode::kUnknown);
      s = ucp_ep_create(worker_.get(), &params, &p.ep);
      if (s == UCS_OK) peer_mode_ = PeerMode::kWorks;
    }
    if (s == UCS_ERR_UNREACHABLE && peer_mode_ != PeerMode::kWorks) {
      params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
      s = ucp_ep_create(worker_.get(), &params, &p.ep);
      if (s == UCS_OK) peer_mode_ = PeerMode::kRefused;
    }
    if (s != UCS_OK) {
      p.ep = nullptr;
      if (s == UCS_ERR_UNREACHABLE) return unreachable(peer);
      return ucx_error("ucp_ep_create to rank " + std::to_string(peer), s);
    }
    ++counters_.connections;
    p.rma_by_message = rma_is_emulated(p.ep);
    TW_DEBUG("ucx",
             "connected to rank " << peer << (p.rma_by_message ? " (one-sided by message)" : ""));
    return p.ep;
  }

  // ucp_ep_create's "Destination is unreachable". Where the peer error
  // mode works (TCP, verbs) UCX connects at once, so other ranks being
  // reachable means this one is gone (it died before this rank first
  // connected to it). Otherwise no transport UCX may use here reaches it
  // (what UCX_TLS / UCX_NET_DEVICES leave), which no retry changes.
  Status unreachable(PeerId peer) const {
    const char* tls = std::getenv("UCX_TLS");
    const char* devices = std::getenv("UCX_NET_DEVICES");
    const std::string settings = std::string(" (UCX_TLS=") + (tls != nullptr ? tls : "all") +
                                 ", UCX_NET_DEVICES=" + (devices != nullptr ? devices : "all") +
                                 ")";
    const std::string who = "rank " + std::to_string(peer);
    switch (peer_mode_) {
      case PeerMode::kWorks:
        return {ErrorCode::kPeerFailed,
                who + " is unreachable: UCX could not connect to it (it reaches other ranks)"};
      case PeerMode::kUnknown:
        return {ErrorCode::kPeerFailed,
                who +
                    " is unreachable: UCX could not connect to it; either it died, or no "
                    "transport UCX may use reaches it" +
                    settings};
      case PeerMode::kRefused:
        break;
    }
    return {ErrorCode::kConfig, "UCX has no transport that reaches " + who + settings +
                                    ": ucp_ep_create failed: Destination is unreachable"};
  }

  // UCX failed an endpoint (peer error mode): its operations complete with
  // the error. The engine is not told from here: a death learnt from UCX
  // before the launcher's notice left that notice unread until finalize,
  // where it answered the bootstrap barrier early, and tagwire-run then
  // missed the rank's GOODBYE ("exited without MPI_Finalize": the peer-death
  // test over TCP, 1 run in 15, 0 in 40 without this report). The
  // launcher's notice (and a failed send's own error) tell the engine.
  static void on_endpoint_error(void* arg, ucp_ep_h ep, ucs_status_t status) {
    const auto* p = static_cast<const Peer*>(arg);
    TW_DEBUG("ucx", "UCX failed the endpoint to rank " << p->rank << " (" << static_cast<void*>(ep)
                                                       << "): " << ucs_status_string(status));
  }

  // Parameters that route an operation's completion to on_send_done.
  static ucp_request_param_t callback_param(Operation* op) {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = &UcxTransportImpl::on_send_done;
    param.user_data = op;
    return param;
  }

  // A new Operation holding the remote key unpacked for `ep`, for a
  // one-sided operation through UCX (read, write, CAS).
  Result<Operation*> begin_remote(ucp_ep_h ep, PeerId peer,
                                  std::span<const std::uint8_t> remote_key, Completion done) {
    ucp_rkey_h rkey = nullptr;
    ucs_status_t s = ucp_ep_rkey_unpack(ep, remote_key.data(), &rkey);
    if (s != UCS_OK) return ucx_error("ucp_ep_rkey_unpack", s);
    Operation* op = new_operation(done, peer);
    op->rkey.reset(rkey);
    return op;
  }

  // `peer`: the rank it involves (-1: none, a flush).
  Operation* new_operation(Completion done, PeerId peer) {
    Operation* op;
    if (free_ops_.empty()) {
      op = operations_.emplace_back(std::make_unique<Operation>()).get();
    } else {
      op = free_ops_.back();
      free_ops_.pop_back();
    }
    op->done = done;
    op->owner = this;
    op->peer = peer;
    op->busy = true;
    return op;
  }

  void release_operation(Operation* op) {
    op->rkey.reset();
    op->cas_out = nullptr;
    op->busy = false;
    op->given_up = false;
    op->flush_part = false;
    free_ops_.push_back(op);
  }

  Result<Issued> finish_issue(ucs_status_ptr_t request, Operation* op, const char* call) {
    if (request == nullptr) {
      release_operation(op);
      return Issued::kDone;
    }
    if (UCS_PTR_IS_ERR(request)) {
      release_operation(op);
      return ucx_error(call, UCS_PTR_STATUS(request));
    }
    return Issued::kPending;
  }

  // The start of UCX's callbacks for an Operation of ours: frees UCX's
  // request; null when nobody is to be told (the transport is closing, and
  // operations_ frees it with itself; or peer_failed told its caller, and
  // it goes back to the free list here).
  static Operation* returned(void* request, void* user_data) {
    auto* op = static_cast<Operation*>(user_data);
    ucp_request_free(request);
    if (op->owner->closing_) return nullptr;
    if (op->given_up) {
      op->owner->release_operation(op);
      return nullptr;
    }
    return op;
  }

  static void on_send_done(void* request, ucs_status_t status, void* user_data) {
    Operation* op = returned(request, user_data);
    if (op == nullptr) return;
    UcxTransportImpl* owner = op->owner;
    if (op->cas_out != nullptr && status == UCS_OK) *op->cas_out = op->cas_reply;
    Completion done = op->done;
    owner->release_operation(op);
    // A copy (no allocation): the callback may meet another failure.
    done(status == UCS_OK ? Status::ok() : Status(owner->operation_error(status)));
  }

  // One part of `whole` (a flush()): UCX's flush of the worker (`peer`
  // -1) or of the endpoint to `peer`, an Operation of its own so that
  // peer_failed can give it up.
  void start_flush_part(Operation* whole, PeerId peer) {
    Operation* part = new_operation({&UcxTransportImpl::flush_part_done, whole}, peer);
    part->flush_part = true;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = &UcxTransportImpl::on_flush_part_done;
    param.user_data = part;
    const char* call = peer < 0 ? "ucp_worker_flush_nbx" : "ucp_ep_flush_nbx";
    ucs_status_ptr_t request =
        peer < 0 ? ucp_worker_flush_nbx(worker_.get(), &param)
                 : ucp_ep_flush_nbx(peers_[static_cast<std::size_t>(peer)].ep, &param);
    if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
      ++whole->parts_left;
      return;
    }
    if (UCS_PTR_IS_ERR(request) && !any_dead() && whole->error.is_ok()) {
      whole->error = ucx_error(call, UCS_PTR_STATUS(request));
    }
    release_operation(part);
  }

  // After a death, the worker's flush would wait for the dead peer's
  // endpoint, which UCX fails only when its own timeouts say so (over
  // rc_verbs about 50 s in the soft-RoCE VM: every survivor's
  // MPI_Win_flush stalled that long). The live peers' endpoints one by
  // one instead; the dead one's operations were given up (peer_failed).
  void flush_live_endpoints(Operation* whole) {
    for (const Peer& p : peers_) {
      if (p.ep != nullptr && !p.dead) start_flush_part(whole, p.rank);
    }
  }

  static void on_flush_part_done(void* request, ucs_status_t status, void* user_data) {
    Operation* part = returned(request, user_data);
    if (part == nullptr) return;
    UcxTransportImpl* owner = part->owner;
    // With a peer dead, UCX fails the flush of the whole worker for its
    // endpoint alone; the dead peer's operations fail on their own, and a
    // flush must not fail live targets' accesses.
    const bool fine = status == UCS_OK || owner->any_dead();
    const Completion done = part->done;
    owner->release_operation(part);
    done(fine ? Status::ok() : ucx_error("UCX flush", status));
  }

  // A whole of parts (flush, connect_all) once every part is issued:
  // pending while a part is, else its outcome now, without a completion.
  Result<Issued> settle_whole(Operation* op) {
    if (op->parts_left > 0) return Issued::kPending;
    Status error = op->error;
    release_operation(op);
    if (!error.is_ok()) return error;
    return Issued::kDone;
  }

  static void flush_part_done(void* ctx, const Status& status) {
    auto* op = static_cast<Operation*>(ctx);
    if (!status.is_ok() && op->error.is_ok()) op->error = status;
    if (--op->parts_left > 0) return;
    UcxTransportImpl* owner = op->owner;
    const Completion done = op->done;
    const Status error = op->error;
    owner->release_operation(op);
    done(error);
  }

  static ucs_status_t on_am(void* arg, const void* header, std::size_t header_length, void* data,
                            std::size_t length, const ucp_am_recv_param_t* param) {
    auto* self = static_cast<UcxTransportImpl*>(arg);
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
      // We always send eagerly; a rendezvous AM is not ours to take.
      TW_ERROR("ucx", "dropping a rendezvous active message of " << length << " bytes");
      return UCS_OK;
    }
    ++self->counters_.messages_received;
    if (self->receiver_ != nullptr) {
      self->receiver_->on_message({static_cast<const std::uint8_t*>(header), header_length},
                                  {static_cast<const std::uint8_t*>(data), length});
    }
    return UCS_OK;  // data consumed during the call
  }

  static constexpr std::chrono::seconds kCloseLimit{30};
  static constexpr std::chrono::seconds kCloseLimitAfterDeath{2};

  // Progresses until requests of ours (closes) finish, or `limit` passes.
  Status wait_requests(std::vector<ucs_status_ptr_t>& requests,
                       std::chrono::seconds limit = kCloseLimit) {
    Status result;
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + limit;
    for (auto& request : requests) {
      if (request == nullptr) continue;
      if (UCS_PTR_IS_ERR(request)) {
        if (result.is_ok()) result = ucx_error("ucp request", UCS_PTR_STATUS(request));
        continue;
      }
      ucs_status_t s;
      do {
        ucp_worker_progress(worker_.get());
        s = ucp_request_check_status(request);
      } while (s == UCS_INPROGRESS && std::chrono::steady_clock::now() < deadline);
      if (s == UCS_INPROGRESS) {
        // Never free a live request, nor destroy the worker under it
        // (teardown_unsafe).
        unfinished_close_ = true;
        if (result.is_ok()) {
          result = {ErrorCode::kPeerFailed,
                    "UCX close did not finish in " + std::to_string(limit.count()) + " s"};
        }
        continue;
      }
      ucp_request_free(request);
      if (s != UCS_OK && result.is_ok()) result = ucx_error("ucp request", s);
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    if (took > std::chrono::seconds(1)) {
      TW_INFO("ucx", "closing " << requests.size() << " connection(s) took " << took.count() << " s"
                                << (unfinished_close_ ? " (some unfinished)" : ""));
    }
    return result;
  }

  Status wait_request(ucs_status_ptr_t request) {
    std::vector<ucs_status_ptr_t> one{request};
    return wait_requests(one);
  }

 public:
  Status install_handler() {
    ucp_am_handler_param_t param{};
    param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                       UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    param.id = kAmId;
    param.flags = UCP_AM_FLAG_WHOLE_MSG;
    param.cb = &UcxTransportImpl::on_am;
    param.arg = this;
    ucs_status_t s = ucp_worker_set_am_recv_handler(worker_.get(), &param);
    if (s != UCS_OK) return ucx_error("ucp_worker_set_am_recv_handler", s);
    return rma_->install_handlers();
  }

 private:
  ContextPtr context_;
  WorkerPtr worker_;
  WorkerAddress address_;
  int event_fd_;
  bool connect_at_start_;            // TAGWIRE_UCX_CONNECT, resolved for the job's size
  std::unique_ptr<MessageRma> rma_;  // for peers whose RMA UCX would emulate
  std::vector<Peer> peers_;
  transport::Receiver* receiver_ = nullptr;
  // Whether UCX's transports here take the peer error mode (endpoint()).
  enum class PeerMode { kUnknown, kWorks, kRefused } peer_mode_ = PeerMode::kUnknown;
  // The error an operation ended with. A failed endpoint fails every
  // operation queued on it in one go (20,000 eager sends to a rank that
  // died): one Status per kind of failure, shared by all of them.
  const Status& operation_error(ucs_status_t status) {
    if (last_error_code_ != status || last_error_.is_ok()) {
      last_error_ = ucx_error("UCX operation", status);
      last_error_code_ = status;
    }
    return last_error_;
  }

  // Every Operation made, in flight or free: in flight, only UCX's request
  // (memory a leak checker does not scan) points to it.
  std::vector<std::unique_ptr<Operation>> operations_;
  std::vector<Operation*> free_ops_;
  Status last_error_;  // operation_error()'s
  ucs_status_t last_error_code_ = UCS_OK;
  bool closing_ = false;           // in the destructor: completions tell nobody
  bool unfinished_close_ = false;  // a close wait_requests gave up on

  // Whether taking UCX apart would trip its own assertions (the
  // destructor says which): with a close unfinished, or after a peer died
  // where endpoints are in the peer error mode (verbs, TCP). Over shared
  // memory (no peer error mode) UCX takes itself apart after a death as
  // usual, and so it still does there.
  bool teardown_unsafe() const {
    return unfinished_close_ || (peer_mode_ == PeerMode::kWorks && any_dead());
  }
  bool any_dead() const {
    return std::any_of(peers_.begin(), peers_.end(), [](const Peer& p) { return p.dead; });
  }
  transport::TransportCounters counters_;
};

// Whether a UCX_TLS value lets UCX open its TCP transport.
bool tls_may_include_tcp(const char* tls) {
  if (tls == nullptr) return true;  // all transports
  std::string_view v(tls);
  const bool has_tcp = v.find("tcp") != std::string_view::npos;
  if (v.starts_with('^')) return !has_tcp;  // an exclusion list
  return has_tcp || v.find("all") != std::string_view::npos;
}

}  // namespace

Result<std::unique_ptr<transport::Transport>> create_ucx_transport(const UcxOptions& options) {
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  // Over TCP reads and writes go in pieces that fit one TX_SEG_SIZE
  // segment (MessageRma); with UCX's emulated get the default 8 KiB held
  // 1 MiB messages to 1.1 GB/s on loopback, where 64 KiB gave 3.8 (the
  // peers' own rendezvous: 4.0 to 4.5). The environment is the only way
  // in: ucp_config_modify does not reach a transport's settings in UCX
  // 1.13. A value the user set wins
  // (no overwrite); this runs in MPI_Init, before the application's threads.
  // Only where TCP may load: UCX warns about a variable nothing read.
  if (tls_may_include_tcp(std::getenv("UCX_TLS"))) ::setenv("UCX_TCP_TX_SEG_SIZE", "64k", 0);
  // A device name UCX lacks fails here, not at the first message.
  if (const char* devices = std::getenv("UCX_NET_DEVICES");
      devices != nullptr && std::string_view(devices) != "all") {
    auto known = ucx_device_names();
    if (!known) return known.status();
    TAGWIRE_RETURN_IF_ERROR(check_net_devices(devices, *known));
  }
  ucp_config_t* config = nullptr;
  ucs_status_t s = ucp_config_read(nullptr, nullptr, &config);
  if (s != UCS_OK) return ucx_error("ucp_config_read", s);
  // Remote atomics must be atomic with the CPU's: the receiver claims a
  // slot descriptor with a CPU compare-and-swap while a sender may CSWAP it
  // from afar (one-sided send cancel). "guess" would pick device atomics on
  // a NIC that only guarantees atomicity among its own operations (rxe,
  // IBV_ATOMIC_HCA); in CPU mode UCX emulates atomics there instead.
  s = ucp_config_modify(config, "ATOMIC_MODE", "cpu");
  if (s != UCS_OK) {
    ucp_config_release(config);
    return ucx_error("ucp_config_modify(ATOMIC_MODE=cpu)", s);
  }
  ucp_context_h raw_context = nullptr;
  s = ucp_init(&params, config, &raw_context);
  ucp_config_release(config);
  if (s != UCS_OK) return ucx_error("ucp_init", s);
  ContextPtr context(raw_context);

  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode =
      options.shared_with_progress_thread ? UCS_THREAD_MODE_SERIALIZED : UCS_THREAD_MODE_SINGLE;
  ucp_worker_h raw_worker = nullptr;
  s = ucp_worker_create(context.get(), &worker_params, &raw_worker);
  if (s != UCS_OK) return ucx_error("ucp_worker_create", s);
  WorkerPtr worker(raw_worker);

  ucp_address_t* raw_address = nullptr;
  std::size_t address_length = 0;
  s = ucp_worker_get_address(worker.get(), &raw_address, &address_length);
  if (s != UCS_OK) return ucx_error("ucp_worker_get_address", s);
  WorkerAddress address(worker.get(), raw_address, address_length);

  int event_fd = -1;
  if (ucp_worker_get_efd(worker.get(), &event_fd) != UCS_OK) event_fd = -1;

  auto impl =
      std::make_unique<UcxTransportImpl>(std::move(context), std::move(worker), std::move(address),
                                         event_fd, options.connect_at_start);
  TAGWIRE_RETURN_IF_ERROR(impl->install_handler());
  return std::unique_ptr<transport::Transport>(std::move(impl));
}

namespace {

Result<std::unique_ptr<transport::Transport>> create_from_setup(
    const transport::TransportSetup& setup) {
  auto settings = setup.settings != nullptr ? UcxSettings::read(*setup.settings)
                                            : Result<UcxSettings>(UcxSettings{});
  if (!settings) return settings.status();
  UcxOptions options;
  // A helper thread (the progress thread or the cancel agent) shares the worker.
  options.shared_with_progress_thread = setup.helper_thread;
  options.connect_at_start = setup.size > 1 && settings->connects_at_start(setup.size);
  return create_ucx_transport(options);
}

}  // namespace

const transport::TransportEntry kTransportEntry{
    "ucx",
    "UCX active messages (UCX_TLS picks shared memory, TCP, InfiniBand, ...)",
    {.one_host_only = false,
     .preference = 1,
     // Measured with osu_p2p on this 2-core machine: at 16 KiB and 32 KiB
     // an eager copy beats the rendezvous's extra round trip over shared
     // memory (1.25 / 1.9 us against 3.6 / 4.2) and far more over TCP (13.5
     // / 14.5 against 42 / 45); at 64 KiB they are even.
     .eager_threshold = 32768,
     .cpu_atomics = true,  // the context runs UCX's atomics in CPU mode
     .may_match_in_nic = false,
     // Not promised: UCX 1.13's shared-memory lanes raise no event for an
     // active message (and refuse to arm with cma); over TCP they do. The
     // cancel agent therefore also looks every millisecond.
     .wake_events = false},
    create_from_setup,
    UcxSettings::table()};

}  // namespace tagwire::ucx
