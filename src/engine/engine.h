// Engine: MPI point-to-point semantics over a Transport, with our Matcher
// deciding every match.
//
// Protocols (docs/architecture.md §3):
//  - eager (bytes <= eager threshold): header + data in one message; the
//    receiver copies into the user's buffer if a receive is posted, else
//    into an unexpected buffer;
//  - rendezvous: RTS with the sender's registered buffer; once matched the
//    receiver reads straight into the user's buffer and sends FIN; the
//    sender completes on FIN and drops its registration;
//  - synchronous: eager ones complete on SYNC_ACK (sent when matched),
//    rendezvous ones on FIN; ready sends are standard sends; buffered sends
//    copy into the attached buffer and complete at once.
//
// Send cancel (docs/architecture.md §4) is the cancel layer's (src/cancel/),
// which the engine reaches through engine/send_cancel.h: a SendCancel made
// at start-up by the factory its creator hands in. The engine keeps receive
// cancel and the helper thread whose cancel agent answers a peer's
// CANCEL_REQUEST while the application is away from the library.
//
// Threading: the engine is MPI_THREAD_FUNNELED. One thread calls the API;
// a helper thread runs beside it: the cancel agent (default), which serves
// the transport only while the application is outside the library, or a
// progress thread (TAGWIRE_PROGRESS_THREAD=1), which serves it all the
// time. One mutex serialises the helper and the application.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "common/cached_copy.h"
#include "engine/buffered_send.h"
#include "engine/communicator.h"
#include "engine/dead_peers.h"
#include "engine/engine_config.h"
#include "engine/engine_counters.h"
#include "engine/engine_lock.h"
#include "engine/held_errors.h"
#include "engine/idle_backoff.h"
#include "engine/matching_state.h"
#include "engine/protocol_site.h"
#include "engine/rendezvous_protocol.h"
#include "engine/request.h"
#include "engine/schedule.h"
#include "engine/send_cancel.h"
#include "engine/slot_word.h"
#include "engine/unnamed_receive.h"
#include "engine/window.h"
#include "engine/wire.h"
#include "matching/matcher.h"
#include "matching/nic_matcher.h"
#include "transport/nic_matching.h"
#include "transport/registry.h"
#include "transport/transport.h"

namespace tagwire {
class Topology;
}  // namespace tagwire

namespace tagwire::engine {

// The engine starts from a bootstrap (src/bootstrap) and names it as its own.
using bootstrap::Bootstrap;
using bootstrap::create_bootstrap;

inline constexpr int kAnySource = matching::kAnySource;
inline constexpr int kAnyTag = matching::kAnyTag;
inline constexpr int kUndefinedColor = -32766;  // MPI_UNDEFINED
inline constexpr int kTagUpperBound = (1 << 30) - 1;
// The tag of the engine's own collectives on a communicator's collective
// context (Comm_create_group's agreement uses tags above it).
inline constexpr int kCollectiveTag = 1;

// A message taken by mprobe: only mrecv can receive it.
struct Message {
  PendingMessage pending;
  Communicator* comm = nullptr;
};

class Engine final : public transport::Receiver,
                     private transport::NicMatchingSink,
                     private CancelSite,
                     private ProtocolSite {
 public:
  // Starts the engine: bootstrap, transport, address exchange.
  // `send_cancel` makes the send-cancel layer (src/cancel/: what
  // cancel::kSendCancelLayer gives, in every program; engine/send_cancel.h).
  // A setting of a built transport other than the one chosen is refused.
  static Result<std::unique_ptr<Engine>> create(const Config& config,
                                                std::unique_ptr<Bootstrap> bootstrap,
                                                const SendCancelLayer& send_cancel);
  // With a given transport (the wire fuzzer drives the engine over one
  // that goes nowhere). `one_host`: every rank of the job runs on this
  // host (how a waiting rank shares its core depends on it). `caps`: what
  // the transport's registry entry declares (transport/registry.h); the
  // default promises nothing, so the engine assumes the least.
  static Result<std::unique_ptr<Engine>> create(const Config& config,
                                                std::unique_ptr<Bootstrap> bootstrap,
                                                std::unique_ptr<transport::Transport> transport,
                                                const SendCancelLayer& send_cancel,
                                                bool one_host = false,
                                                const transport::Capabilities& caps = {});
  // From the environment: Config::from_environment(send_cancel.settings)
  // and create_bootstrap().
  static Result<std::unique_ptr<Engine>> create_from_environment(
      const SendCancelLayer& send_cancel);

  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Job-wide barrier, then closes connections. Called by the destructor if
  // not before.
  Status finalize();

  int world_rank() const { return world_->rank(); }
  int world_size() const { return world_->size(); }
  Communicator* world() const { return world_.get(); }
  Communicator* self() const { return self_.get(); }
  const Config& config() const { return config_; }
  // The send-cancel layer decides cancels alone with the slot descriptors.
  bool cancels_one_sided() const { return one_sided_; }
  // Whether the rooted collectives go flat through the root rather than
  // along a tree (Config::collective_shape, resolved at start-up).
  bool flat_collectives() const { return flat_collectives_; }
  std::string_view transport_name() const { return transport_->name(); }
  const transport::Capabilities& transport_capabilities() const { return caps_; }
  bool transport_connects_on_first_use() const { return transport_->connects_on_first_use(); }
  std::string_view bootstrap_kind() const { return bootstrap_->kind(); }
  // The operations under way, a line each (kind, peer, tag, communicator,
  // bytes, age, what it waits for): what a hung rank prints on SIGUSR1.
  std::string pending_report();
  // Asks every engine of this process for its report at its next look
  // around (async-signal-safe: a signal handler calls it).
  static void ask_for_pending_report();
  // MPI_Abort: every peer is told to end with `code` (a kAbort message)
  // and answers; the launcher is asked to end the job first where it ends
  // every rank itself, else only if a peer did not answer. The caller
  // exits next.
  // `left`: not MPI_Abort but an exit without MPI_Finalize (what the
  // peers say they end for).
  void abort_job(int code, std::string_view why, bool left = false);
  // Bytes of this rank's transport address: every rank keeps one per rank
  // of the job, so the address table grows with the job.
  std::size_t address_bytes() const { return address_bytes_; }
  // This rank's transport address as published at start-up (what the
  // isolation test hands to an intruder from another job).
  std::vector<std::uint8_t> transport_address() const { return transport_->address(); }

  // Point-to-point, in bytes (datatypes live above this layer).
  Result<Request*> isend(const void* buffer, std::size_t bytes, int dest, int tag,
                         Communicator* comm, SendMode mode = SendMode::kStandard);
  Result<Request*> irecv(void* buffer, std::size_t bytes, int source, int tag, Communicator* comm);
  Status send(const void* buffer, std::size_t bytes, int dest, int tag, Communicator* comm,
              SendMode mode = SendMode::kStandard);
  // A blocking receive (blocking_receive.cc). recv() returns the call's
  // error or else the message's; receive() returns only the call's (as
  // wait() does) and leaves the message's in status->error.
  Status recv(void* buffer, std::size_t bytes, int source, int tag, Communicator* comm,
              MessageStatus* status);
  Status receive(void* buffer, std::size_t bytes, int source, int tag, Communicator* comm,
                 MessageStatus* status);
  // A sendrecv whose send goes eager at once: sent with no request, then
  // received as receive() does (blocking_receive.cc), the receive's
  // arguments checked before anything goes. False, having done nothing,
  // when the call needs requests; true with the call's result otherwise
  // (receive()'s split of errors).
  bool sendrecv_unnamed(const void* out, std::size_t out_bytes, int dest, int send_tag, void* in,
                        std::size_t in_bytes, int source, int recv_tag, Communicator* comm,
                        MessageStatus* status, Status* result);

  // Persistent requests: inactive until start().
  Result<Request*> send_init(const void* buffer, std::size_t bytes, int dest, int tag,
                             Communicator* comm, SendMode mode = SendMode::kStandard);
  Result<Request*> recv_init(void* buffer, std::size_t bytes, int source, int tag,
                             Communicator* comm);
  Status start(Request* request);

  // MPI handles. A request's handle is its slot in the engine's request
  // table plus one (0 is MPI_REQUEST_NULL): the MPI layer keeps no table.
  // hand_out() marks the request as the application's and returns its
  // handle; by_handle() finds such a request from any thread, without the
  // engine's lock, and nothing else (a released or engine-internal one).
  int hand_out(Request* r) {
    r->handed_out = true;
    return static_cast<int>(static_cast<std::uint32_t>(r->id)) + 1;
  }
  Request* by_handle(int handle) const {
    if (handle <= 0) return nullptr;
    Request* r = requests_.at_slot(static_cast<std::uint32_t>(handle - 1));
    return r != nullptr && r->handed_out ? r : nullptr;
  }

  // Completion. test/wait on a completed non-persistent request release
  // it; a persistent one becomes inactive. A null or inactive request
  // completes at once with an empty status.
  Result<bool> test(Request* request, MessageStatus* status);
  Status wait(Request* request, MessageStatus* status);
  // Index of the completed request, or -1 if every request is null/inactive.
  Result<int> wait_any(std::span<Request* const> requests, MessageStatus* status);
  // Waits for every request and finishes them in order, each one's status
  // in `statuses`; returns the first request's error, or ok. A request
  // must not be listed twice (its first finish releases it).
  Status wait_all(std::span<Request* const> requests, std::span<MessageStatus> statuses);
  // The same, handing each request's status to `finished` (under the
  // engine's lock, before the request is released) instead of copying it
  // into an array the caller must build: MPI_Waitall converts it to an
  // MPI_Status in place.
  using Finished = void (*)(void* context, std::size_t index, const MessageStatus& status);
  Status wait_all(std::span<Request* const> requests, Finished finished, void* context);
  // The same with `finished(index, status)` inlined into the caller
  // (MPI_Waitall's common case): as a call through a pointer it was 20
  // instructions a request.
  template <typename OnFinished>
  Status wait_all_with(std::span<Request* const> requests, OnFinished&& finished);
  // Indices of the requests that completed (empty if none yet).
  Result<std::vector<int>> test_some(std::span<Request* const> requests,
                                     std::span<MessageStatus> statuses);
  // Completion status without releasing (MPI_Request_get_status).
  Result<bool> peek_status(Request* request, MessageStatus* status);
  Status request_free(Request* request);
  // MPI_Cancel: a posted receive is removed here and now; a send asks its
  // receiver and completes by the answer (cancelled or delivered).
  Status cancel(Request* request);

  // Probe: the message a receive would get now.
  Result<bool> iprobe(int source, int tag, Communicator* comm, MessageStatus* status);
  Status probe(int source, int tag, Communicator* comm, MessageStatus* status);
  Result<std::unique_ptr<Message>> improbe(int source, int tag, Communicator* comm,
                                           MessageStatus* status);
  Result<std::unique_ptr<Message>> mprobe(int source, int tag, Communicator* comm,
                                          MessageStatus* status);
  Result<Request*> imrecv(void* buffer, std::size_t bytes, std::unique_ptr<Message> message);

  // Buffered sends.
  Status buffer_attach(void* buffer, std::size_t bytes);
  // MPI_Alloc_mem: memory registered with the transport for remote READ
  // once, for its lifetime, so rendezvous sends from it register nothing
  // per message. It stays readable by peers that hold its key until
  // free_registered (the price of skipping per-message registration).
  Result<void*> alloc_registered(std::size_t bytes);
  Status free_registered(void* memory);
  // Waits for pending buffered sends, then hands the buffer back.
  Result<std::pair<void*, std::size_t>> buffer_detach();
  static constexpr std::size_t kBsendOverhead = BsendBuffer::kOverhead;

  // Communicators (collective over `comm`).
  Result<Communicator*> comm_dup(Communicator* comm);
  // MPI_Comm_idup: a duplicate from the communicator's idup block, at once
  // and without communication; once the block is used up, comm_dup.
  Result<Communicator*> comm_idup(Communicator* comm);
  Result<Communicator*> comm_split(Communicator* comm, int color, int key);  // null: undefined
  // Collective over the members only (world ranks, in the new order), which
  // must all be in `comm`; `tag` keeps concurrent calls on `comm` apart.
  // Null for a caller that is not a member.
  Result<Communicator*> comm_create_group(Communicator* comm, const std::vector<int>& members,
                                          int tag);
  Status comm_free(Communicator* comm);
  // Intercommunicators (intercomm.cc). Collective over both groups: each
  // side passes its local intracommunicator and the other group's world
  // ranks (which its leader learnt over the peer communicator); `tag` keeps
  // concurrent creations apart, in the same space as comm_create_group's.
  Result<Communicator*> intercomm_create(Communicator* local, const std::vector<int>& remote,
                                         int tag);
  // Collective over both groups: one intracommunicator of all their
  // members, the group that passed high = false first (when both passed the
  // same, the group holding the lower world rank).
  Result<Communicator*> intercomm_merge(Communicator* inter, bool high);
  // `stop_at_death` (the default, every collective's rule: peer_failure.cc):
  // fail at once when any member is dead. False: run every round, failing
  // only a round whose partner died (finalize's choice without a launcher
  // that holds the survivors). MPI_Barrier and the window fence took that
  // by default until 2026-11-30: a survivor then waited for ever in
  // MPI_Win_free for a live rank whose MPI_Win_create had failed with the
  // death and that never came.
  Status barrier(Communicator* comm, bool stop_at_death = true);
  // A send or receive on the communicator's collective context, for
  // collectives built above the engine: it can never match user traffic.
  Result<Request*> post_collective(RequestKind kind, void* buffer, std::size_t bytes, int peer,
                                   int tag, Communicator* comm);
  // One blocking step of such a collective on an intracommunicator: `out`
  // to `to` while `in` comes from `from` (exchange(): a small one without
  // requests); the call's error, else the received message's.
  Status collective_exchange(Communicator* comm, int to, std::span<const std::uint8_t> out,
                             int from, std::span<std::uint8_t> in, int tag) {
    return exchange(comm, to, out, from, in, tag);
  }
  // Several small steps of such a collective at once, for a host whose
  // ranks outnumber its cores (collectives.cc's all-to-all there): every
  // `sends` goes out before the first of `receives` waits, so a rank that
  // gets its core once hands each peer what it waits for; pairwise steps
  // made it wait, and yield its core, once a step. Without requests where
  // the messages go eagerly (send_unnamed, receive_unnamed), else as
  // requests (the sends waited for last). The first error, else the first
  // failed message's.
  struct Outgoing {
    int peer;
    std::span<const std::uint8_t> bytes;
  };
  struct Incoming {
    int peer;
    std::span<std::uint8_t> bytes;
  };
  Status collective_exchange_all(Communicator* comm, std::span<const Outgoing> sends,
                                 std::span<const Incoming> receives, int tag);
  // A collective's schedule (schedule.h, schedule_run.cc): run to its end
  // here (a blocking collective), or started as a request of kind
  // kSchedule that every poll of the engine moves on (a nonblocking one);
  // it completes with the first error of its steps.
  Status run_schedule(Schedule& schedule);
  Result<Request*> start_schedule(std::unique_ptr<Schedule> schedule);
  // A persistent collective (MPI-4's MPI_Bcast_init and the rest): an
  // inactive persistent request that each start() runs a fresh schedule
  // for, written down by `build` outside the engine lock.
  using ScheduleBuilder = std::function<Result<std::unique_ptr<Schedule>>()>;
  Result<Request*> schedule_init(Communicator* comm, ScheduleBuilder build);
  // A generalized request (MPI_Grequest_start; generalized_request.cc):
  // running until complete_generalized, from any thread.
  Request* start_generalized();
  Status complete_generalized(Request* r);
  // The refusal of an operation intercommunicators do not have yet.
  static Status not_on_intercomm(const char* what);

  // One-sided communication (window.cc). Collective over `comm`. `hints`:
  // what the window's MPI_Info asked (WindowHints).
  Result<Window*> win_create(void* base, std::size_t size, int disp_unit, Communicator* comm,
                             const WindowHints& hints = {});
  // A window creation that failed at this rank before its first exchange
  // (a bad argument, memory that would not register): this rank still
  // takes its part in that exchange, saying so, so that every rank of
  // `comm` returns an error (the failing rank's class) instead of waiting
  // for it. Returns `why`. For win_create, win_allocate and
  // win_create_dynamic, whose first exchange is win_open's.
  Status win_fail(Communicator* comm, Status why);
  // The same over `size` bytes the transport allocates (zeroed; on shm in
  // a segment the peers map, so their puts and gets are a memcpy), freed
  // with the window; Window::base says where.
  Result<Window*> win_allocate(std::size_t size, int disp_unit, Communicator* comm,
                               const WindowHints& hints = {});
  // The same in one segment of shared memory that every rank maps
  // (window_shared.cc; MPI_Win_allocate_shared): the parts follow each
  // other in rank order, without a gap when `contiguous`, else each on its
  // own pages. kRmaShared unless every rank of `comm` is on this host.
  Result<Window*> win_allocate_shared(std::size_t size, int disp_unit, Communicator* comm,
                                      bool contiguous, const WindowHints& hints = {});
  // win_fail for win_allocate_shared, whose first exchange is its own.
  Status win_shared_fail(Communicator* comm, Status why);
  // A window without memory (window_dynamic.cc; MPI_Win_create_dynamic):
  // each rank attaches regions later, and origins address them by their
  // absolute address (disp unit 1). Attach registers the region and
  // publishes it in this rank's directory; kRmaAttach when it overlaps an
  // attached one or the directory is full.
  Result<Window*> win_create_dynamic(Communicator* comm, const WindowHints& hints = {});
  Status win_attach(Window* window, void* base, std::size_t size);
  Status win_detach(Window* window, const void* base);
  // Collective: completes every access of the epoch first.
  Status win_free(Window* window);
  // Collective: ends the epoch (every put and get done at its target, then
  // a barrier) and opens the next.
  Status win_fence(Window* window);
  // `bytes` to or from `target`'s window at displacement `disp` (in the
  // target's disp units) and `offset` bytes further (a piece of a derived
  // datatype); complete at the next fence.
  Status put(Window* window, const void* origin, std::size_t bytes, int target, std::uint64_t disp,
             std::ptrdiff_t offset = 0);
  Status get(Window* window, void* origin, std::size_t bytes, int target, std::uint64_t disp,
             std::ptrdiff_t offset = 0);
  // Where such an access lands in this process when it may go as a copy
  // now: a mapped target of a window that is not dynamic, inside an
  // epoch, in range, alive. Null: rma() goes on with its general path,
  // which says what is wrong if anything is. (With the lock held. That
  // path was two thirds of an 8-byte put + flush on shm, 2026-12-02.)
  // Inline: MPI_Fetch_and_op's path (mapped_word) calls it on every
  // update, and the call was a tenth of an 8-byte fetch-and-op + flush.
  [[gnu::always_inline]] std::uint8_t* mapped_access(Window* w, std::size_t bytes, int target,
                                                     std::uint64_t disp,
                                                     std::ptrdiff_t offset) const {
    const auto t = static_cast<std::size_t>(target);  // (negative: past every rank)
    if (w == nullptr || w->dynamic || t >= w->ranks.size()) return nullptr;
    const RemoteWindow& rw = w->ranks[t];
    std::uint64_t at = 0;
    if (rw.view == nullptr || !w->may_access(t) || !rw.place(disp, offset, bytes, &at) ||
        is_dead(w->comm->world_rank(target))) {
      return nullptr;
    }
    return rw.view + at;
  }
  // A put (`put`) or get of `bytes` at `origin` as a copy where
  // mapped_access lets it go now; false when it does not (rma() then goes
  // on with its general path, which says what is wrong if anything is).
  // Inline: MPI_Put's and MPI_Get's commonest case reaches it from the
  // handle lookup, without rma()'s frame and Status (a third of an 8-byte
  // put + flush: 345 instructions against Open MPI osc/sm's 296,
  // 2026-12-02). One word is one move, not a call of memcpy.
  [[gnu::always_inline]] bool mapped_copy(Window* w, void* origin, std::size_t bytes, int target,
                                          std::uint64_t disp, std::ptrdiff_t offset, bool put) {
    if (origin == nullptr) return false;
    EngineGuard lock(mutex_);
    std::uint8_t* const here = mapped_access(w, bytes, target, disp, offset);
    if (here == nullptr) return false;
    void* const to = put ? static_cast<void*>(here) : origin;
    const void* const from = put ? static_cast<const void*>(origin) : here;
    if (bytes == 8) {
      std::memcpy(to, from, 8);
    } else {
      copy_cached(to, from, bytes);
    }
    return true;
  }
  // Where one aligned 8-byte word of a mapped window (view_atomics) is
  // when mapped_access lets the access go now, counted as a word atomic;
  // null when it does not or the word is unaligned (the callers' general
  // paths decide then). Takes the lock for the checks only: the atomic
  // itself runs outside it, as every other origin's on the same word.
  [[gnu::always_inline]] std::uint8_t* mapped_word_at(Window* w, int target, std::uint64_t disp,
                                                      std::ptrdiff_t offset) {
    EngineGuard lock(mutex_);
    std::uint8_t* here = mapped_access(w, 8, target, disp, offset);
    if (here == nullptr || reinterpret_cast<std::uintptr_t>(here) % 8 != 0) return nullptr;
    ++counters_.word_atomics;
    return here;
  }
  // One aligned 8-byte word of a window whose every rank maps every part
  // (shm's MPI_Win_allocate, a shared window), updated by the CPU's atomic
  // where mapped_access lets the access go now: the word's old value. What
  // the update does is one of MPI's commonest: fetch-and-add (MPI_SUM),
  // read (MPI_NO_OP), swap (MPI_REPLACE), compare-and-swap. Nothing when
  // anything else must be decided (update_words, then accumulate(), do it
  // and say what is wrong). MPI_Fetch_and_op's and MPI_Compare_and_swap's
  // whole path on such a window: through update_words' general word
  // update they were 1.2-1.4x Open MPI's osc/sm (2026-12-02).
  enum class WordOp : std::uint8_t { kFetchAdd, kRead, kSwap, kCompareAndSwap };
  [[gnu::always_inline]] std::optional<std::uint64_t> mapped_word(Window* w, int target,
                                                                  std::uint64_t disp, WordOp op,
                                                                  std::uint64_t operand,
                                                                  std::uint64_t compare = 0) {
    if (w == nullptr || !w->view_atomics) return std::nullopt;
    std::uint8_t* const here = mapped_word_at(w, target, disp, 0);
    if (here == nullptr) return std::nullopt;
    // (Outside the lock, as every other origin's atomic on this word.)
    std::atomic_ref<std::uint64_t> word(*reinterpret_cast<std::uint64_t*>(here));
    switch (op) {
      case WordOp::kFetchAdd:
        return word.fetch_add(operand, std::memory_order_acq_rel);
      case WordOp::kRead:
        return word.load(std::memory_order_acquire);
      case WordOp::kSwap:
        return word.exchange(operand, std::memory_order_acq_rel);
      case WordOp::kCompareAndSwap:
        word.compare_exchange_strong(compare, operand, std::memory_order_acq_rel);
        return compare;  // what the word held: the desired value went in if it equals `compare`
    }
    return std::nullopt;
  }
  // The checks of a put or get of `bytes` there (epoch, rank, range, an
  // attached region), without moving anything: a datatype of many pieces
  // is checked whole before its first piece moves.
  Status rma_check(Window* window, std::size_t bytes, int target, std::uint64_t disp,
                   std::ptrdiff_t offset, const char* what);
  // Passive target (window_lock.cc): MPI_Win_lock / unlock of `target` (a
  // rank of the window's communicator) and lock_all / unlock_all of every
  // rank; `check` false is MPI_MODE_NOCHECK (no lock word is touched).
  // Unlocking completes the epoch's accesses at their targets first.
  Status win_lock(Window* window, int target, bool exclusive, bool check);
  Status win_unlock(Window* window, int target);
  Status win_lock_all(Window* window, bool check);
  Status win_unlock_all(Window* window);
  // General active target (window_pscw.cc), groups as ranks of the
  // window's communicator. post and start open the exposure and access
  // epochs (start waits for each target's post), complete ends the access
  // epoch (its accesses at their targets, then each target told), and
  // test / wait end the exposure epoch once every origin completed (test:
  // false while one has not; block: wait for them).
  Status win_post(Window* window, std::span<const int> origins);
  Status win_start(Window* window, std::span<const int> targets);
  Status win_complete(Window* window);
  Result<bool> win_test(Window* window, bool block);
  // Every put and get issued so far complete here (MPI_Win_flush_local),
  // or at their targets too (MPI_Win_flush). The status is for `target`
  // (a rank of the window's group), or for every target when it is -1:
  // Window::lost says why.
  Status win_flush_local(Window* window, int target = -1);
  // Inline for the case of every MPI_Put / MPI_Fetch_and_op + flush on a
  // mapped window: every access since the last flush was done in place
  // and nothing has failed, so there is nothing to wait for or report
  // (the call and take_flush_errors' were a quarter of an 8-byte put +
  // flush's instructions, 2026-12-02).
  Status win_flush(Window* window, int target = -1) {
    if (window != nullptr && flushed(window)) return Status();
    return win_flush_waiting(window, target);
  }
  // That case alone: a flush of `window` now has nothing to do. (For
  // MPI_Win_flush to answer without building a Status: its lookup,
  // checks and returns were 100 instructions where Open MPI spends 40.)
  [[gnu::always_inline]] bool flushed(Window* window) {
    EngineGuard lock(mutex_);
    return window->pending == 0 && !window->unflushed && nothing_failed(*window);
  }
  // An accumulate: the `bytes` at `target`'s displacement `disp` are read
  // and handed to `update`, which may change them in place and says
  // whether to write them back; all under the target's accumulate lock, so
  // accumulates are atomic with respect to each other. Complete (at the
  // target too) when it returns. `written`, when not empty, are the only
  // pieces of the bytes written back (a strided datatype's elements): the
  // gaps between them may be another origin's puts, made meanwhile.
  using AccumulateUpdate = std::function<Result<bool>(std::span<std::uint8_t> target_bytes)>;
  struct ByteRange {
    std::size_t offset;
    std::size_t length;
  };
  // `offset`: the bytes start that far from the displacement (a datatype
  // with a negative lower bound reaches before it).
  Status accumulate(Window* window, int target, std::uint64_t disp, std::size_t bytes,
                    const AccumulateUpdate& update, const char* what,
                    std::span<const ByteRange> written = {}, std::ptrdiff_t offset = 0);
  // Word atomics (window_atomics.cc): on a window whose every rank's
  // transport offers them (Transport::offers_word_atomics), or that every
  // rank maps (Window::view_atomics), and with TAGWIRE_RMA_ATOMICS on,
  // accumulates of 8-byte integers update each word with one atomic (the
  // transport's, or the CPU's on the mapping) instead of under the
  // accumulate lock: a fetch-and-add, or compare-and-swap retried until it
  // takes. Every origin takes this path for every 8-byte integer word of
  // such a window, so they are atomic with respect to each other.
  struct WordUpdate {
    enum Kind : std::uint8_t {
      kAdd,             // word += operand (MPI_SUM; MPI_NO_OP with 0)
      kCompareAndSwap,  // word = operand if word == compare (one word)
      kCombine,         // word = combine(word, operand), swapped until it takes
    };
    Kind kind = kAdd;
    std::span<const std::uint64_t> operands;  // one per word
    std::uint64_t compare = 0;
    std::function<std::uint64_t(std::uint64_t word, std::uint64_t operand)> combine;
    // What a word holding `word` holds after this update with `operand`;
    // nothing when it stays as it is (an add of 0, a compare that fails).
    // The one statement of the update: every path applies it its own way
    // (under the lock, in a CPU or a NIC compare-and-swap).
    std::optional<std::uint64_t> next(std::uint64_t word, std::uint64_t operand) const {
      switch (kind) {
        case kAdd:
          if (operand == 0) return std::nullopt;
          return word + operand;
        case kCompareAndSwap:
          if (word != compare) return std::nullopt;
          return operand;
        case kCombine:
          return combine(word, operand);
      }
      return std::nullopt;
    }
  };
  // Whether `window` takes word atomics at all (then update_words decides
  // per call). Cheap: for the MPI layer to choose its path.
  static bool takes_word_atomics(const Window* window);
  // The 8-byte words at `offsets` (bytes from displacement `disp` of
  // `target`), updated as `how` says, their old values into `old_values`
  // (one per word). False, having done nothing, when the window takes
  // neither kind: the caller then uses accumulate(). Complete at the target
  // when it returns.
  Result<bool> update_words(Window* window, int target, std::uint64_t disp,
                            std::span<const std::ptrdiff_t> offsets, const WordUpdate& how,
                            std::span<std::uint64_t> old_values, const char* what);

  // Drives communication from the calling thread.
  unsigned progress();

  // MPI_THREAD_MULTIPLE: from now on any number of application threads may
  // call in at once. Call before the application starts a second thread.
  // Point-to-point, probe, mprobe and cancel are safe from any thread;
  // creating communicators or windows from two threads at once is not
  // (their context-id agreement assumes one creation at a time).
  void allow_application_threads();

  EngineCounters counters() const;
  transport::TransportCounters transport_counters() const;

  // transport::Receiver
  void on_message(std::span<const std::uint8_t> header,
                  std::span<const std::uint8_t> payload) override;
  // As if the launcher had reported it dead, with the transport's reason.
  void on_peer_unreachable(int peer, const Status& why) override;

 private:
  Engine(const Config& config, std::unique_ptr<Bootstrap> bootstrap,
         std::unique_ptr<transport::Transport> transport);
  Status start_up();
  // The transport's connect_all (TAGWIRE_UCX_CONNECT), then progress
  // until every rank's finished.
  Status connect_everyone();
  // The transport's NIC matching if the engine can use it (start-up).
  transport::NicMatching* usable_nic_matching() const;

  // All below: the caller holds mutex_.
  // One poll: inline, so that a wait's loop spends a few compares and the
  // transport's poll per turn, not four calls (they were half of each
  // turn's instructions in an 8-byte ping-pong).
  [[gnu::always_inline]] unsigned progress_locked() {
    if (++failure_poll_ticks_ >= kFailurePollTicks) look_around();
    unsigned n = transport_->progress();
    flush_nic_ops();  // DELs for receives software matched to untagged messages
    if (!deferred_.empty()) run_deferred();
    if (!schedules_.empty()) [[unlikely]]
      advance_schedules();
    return n;
  }
  // Dead peers (peer_failure.cc): the launcher's reports, looked at every
  // kFailurePollTicks polls and at most every 10 ms, so that an 8-byte
  // ping-pong is not slowed by a system call.
  static constexpr unsigned kFailurePollTicks = 256;
  // Polls per hold of the engine lock in a blocking wait: taking it for
  // each poll was a tenth of an 8-byte ping-pong.
  static constexpr unsigned kPollsPerLock = 64;
  // A blocking wait's loop (wait, wait_all, receive_unnamed): polls with
  // `lock` held until done() (asked before each poll), in runs of
  // kPollsPerLock, letting the lock go only to pause between runs (a
  // helper thread never needs it while the application is here).
  template <typename Done>
  [[gnu::always_inline]] void poll_until(std::unique_lock<EngineLock>& lock, Done done) {
    IdleBackoff idle;
    for (;;) {
      for (unsigned turn = 0;; ++turn) {
        if (done()) return;
        if (turn == kPollsPerLock) break;
        // A rank that shares its core yields after the first empty poll:
        // the peer it waits for may be the one this core would run next.
        if (progress_locked() == 0 && idle.yields_at_once()) break;
      }
      lock.unlock();
      idle.pause();
      lock.lock();
    }
  }
  // win_flush with something to wait for or report.
  Status win_flush_waiting(Window* window, int target);
  // No access of `w` has failed and no rank is dead: a flush has nothing
  // to report (take_flush_errors' first question, and win_flush's).
  [[gnu::always_inline]] bool nothing_failed(const Window& w) const {
    return w.error.is_ok() && w.lost.is_ok() && !dead_peers_.any();
  }
  void watch_failures(std::chrono::steady_clock::time_point now);
  [[noreturn]] void on_abort(const Header& h);
  [[gnu::cold, gnu::noinline]] static void trace_send(const Request& r, const Header& h,
                                                      int world_dest);
  [[gnu::cold, gnu::noinline]] static void trace_arrival(const Header& h, bool matched);
  // Every kFailurePollTicks polls: dead peers, the coarse clock, and a
  // pending-operations report if one was asked for (pending_report.cc).
  void look_around();
  void tick_clock(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  void report_pending_if_asked();
  // `why`: the transport's reason (ok: the launcher reported it dead).
  void on_peer_failed(int world_rank, const Status& why = Status::ok());
  bool is_dead(int world_rank) const { return dead_peers_.contains(world_rank); }
  Status peer_failed_status(int world_rank) const { return dead_peers_.status_for(world_rank); }
  // A dead member of `comm`'s group, or of its remote group if it is an
  // intercommunicator (world rank), or -1.
  int dead_member(const Communicator* comm) const;
  Status check_comm(Communicator* comm) const;
  // A rank of `comm` (its remote group for an intercommunicator's
  // point-to-point), MPI_PROC_NULL, or with `allow_any` MPI_ANY_SOURCE.
  // Inline for the ranks in range (every call on the message and window
  // paths makes one or more); the rest, errors included, out of line.
  Status check_peer(Communicator* comm, int rank, bool allow_any, const char* what,
                    bool collective = false) const {
    if (rank >= 0 && rank < static_cast<int>(comm->peer_group(collective).size())) [[likely]]
      return Status::ok();
    return check_other_peer(comm, rank, allow_any, what, collective);
  }
  Status check_other_peer(Communicator* comm, int rank, bool allow_any, const char* what,
                          bool collective) const;
  // Both groups of an intercommunicator, in the order both sides agree on
  // (the group holding the lower world rank first), and a scratch
  // communicator of them on the intercommunicator's collective context.
  static std::vector<int> both_groups(const Communicator& inter);
  Result<Communicator*> intercomm_dup(Communicator* inter);
  // MPI_Comm_split (and so MPI_Comm_create) of an intercommunicator: the
  // members of each color in both groups, each group ordered by (key, old
  // rank); null for MPI_UNDEFINED or a color the other group lacks.
  Result<Communicator*> intercomm_split(Communicator* inter, int color, int key);
  // The world ranks of `group`'s members whose (color, key) (two int32s
  // at color_key(rank in group)) has `color`, ordered by (key, rank): a
  // split's new group.
  static std::vector<int> members_of_color(
      const std::vector<int>& group, int color,
      const std::function<const std::uint8_t*(int)>& color_key);
  // Takes a new communicator into the engine's list. `agreed`: its id came
  // from agree_context_id (so the ids after it are its idup block).
  Communicator* adopt(std::unique_ptr<Communicator> comm, bool agreed = true);
  Status check_tag(int tag, bool allow_any) const;
  Status check_buffer(const void* buffer, std::size_t bytes) const;
  Request* new_request(RequestKind kind);
  // A message's header as start_send and send_unnamed fill it.
  void fill_message_header(Header* h, Communicator* comm, bool collective, int tag,
                           std::uint64_t id, std::size_t bytes) const;
  // receive()'s path without a request (unnamed_receive.h); false when
  // the receive needs one, with nothing taken.
  // `collective`: on the communicator's collective context, failing with
  // any member's death (exchange()).
  bool receive_unnamed(void* buffer, std::size_t bytes, int source, int tag, Communicator* comm,
                       MessageStatus* status, bool collective = false);
  // An arrival for the armed unnamed receive: true if it took it.
  bool take_unnamed(const Header& h, std::span<const std::uint8_t> payload);
  // Completes the armed unnamed receive with this status.
  void finish_unnamed(int source, int tag, std::size_t count, Status error);
  // send()'s path without a request; false when the message needs one.
  bool send_unnamed(const void* buffer, std::size_t bytes, int dest, int tag, Communicator* comm,
                    SendMode mode, Status* failed, bool collective = false);
  // exchange()'s path without requests for a small step; false when it
  // needs them, having done nothing.
  bool exchange_unnamed(Communicator* comm, int to, std::span<const std::uint8_t> out, int from,
                        std::span<std::uint8_t> in, int tag, Status* result);
  // A collective step's receive: without a request when the message is
  // here or small (receive_unnamed), else through one, waited for. The
  // transfer's error, else the message's.
  Status collective_receive(Communicator* comm, int from, std::span<std::uint8_t> in, int tag);
  // A send's or receive's arguments, checked (an error names what is wrong).
  Status check_request(RequestKind kind, const void* buffer, std::size_t bytes, int peer, int tag,
                       Communicator* comm, bool collective) const;
  // What is wrong with arguments check_request refused (out of line).
  Status request_error(RequestKind kind, const void* buffer, std::size_t bytes, int peer, int tag,
                       Communicator* comm, bool collective) const;
  // A new inactive (persistent) request with these arguments; lock held.
  Request* fill_request(RequestKind kind, void* buffer, std::size_t bytes, int peer, int tag,
                        Communicator* comm, SendMode mode, bool collective);
  // Checks the arguments and makes an inactive request (send_init, recv_init).
  Result<Request*> make_request(RequestKind kind, void* buffer, std::size_t bytes, int peer,
                                int tag, Communicator* comm, SendMode mode,
                                bool collective = false);
  // Checks the arguments and starts a one-shot operation (isend, irecv):
  // one function per kind, so that neither carries the other's path.
  template <RequestKind kKind>
  Result<Request*> start_request(void* buffer, std::size_t bytes, int peer, int tag,
                                 Communicator* comm, SendMode mode);
  Status start_operation(Request* r);
  // Marks a new operation under way; true if it is already finished (PROC_NULL).
  bool begin_operation(Request* r);
  void release_request(Request* r);
  [[gnu::cold, gnu::noinline]] bool release_unusual(Request* r);
  // `slot_out`: where to note the slot descriptor the message took (a
  // buffered send's user request, for its internal send).
  Status start_send(Request* r, std::optional<SlotTicket>* slot_out = nullptr);
  Status send_operation(Request* r, std::optional<SlotTicket>* slot_out);
  // start_send's way out when the NIC matches tags (out of line).
  Result<transport::Issued> send_through_nic(Request* r, int world_dest, const Header& h,
                                             std::span<const std::uint8_t> payload,
                                             transport::Completion sent);
  Status start_receive(Request* r);
  Status receive_operation(Request* r);
  Status start_matching_receive(Request* r, matching::ContextId context);
  void withdraw_if_sender_dead(Request* r);
  void withdraw_from_dead(Request* r, int world_source);
  // Withdraws a posted receive from matching: true if it is out now. False
  // if a message took it, or if the NIC holds a copy: then the NIC's
  // answer decides, and a receive it did not match completes later with
  // `reason` (ok: cancelled) by complete_withdrawn.
  bool withdraw_receive(Request* r, const Status& reason);
  void complete_withdrawn(Request* r, const Status& reason);
  // Hands the matcher's NIC operations to the transport (tag matching on;
  // inline: every receive and every progress call asks).
  void flush_nic_ops() {
    if (nic_matching_ != nullptr) post_nic_ops();
  }
  void post_nic_ops();
  void complete_null(Request* r);
  // Completes `r` if nothing is outstanding. Inline: every message calls
  // it; what only some completions need is complete_rest().
  void maybe_complete(Request* r);
  void complete_rest(Request* r);
  void finish(Request* r, MessageStatus* status);
  void deliver(Request* r, PendingMessage& message, std::span<const std::uint8_t> eager_data);
  // An eager message matched on arrival, copied from the transport's buffer.
  void deliver_eager(Request* r, const Header& h, std::span<const std::uint8_t> payload);
  // Fills a matched receive's status (truncation included); the bytes to take.
  std::size_t take_envelope(Request* r, int source, int tag, std::uint64_t length);
  void note_truncation(Request* r, int source, int tag, std::uint64_t length);
  void send_control(int world_peer, MessageType type, std::uint64_t request_id,
                    std::uint8_t flags = 0);
  Status send_header(int world_peer, const Header& h);
  // send_header with a completion, for a caller that waits for it to leave.
  Result<transport::Issued> issue_header(int world_peer, const Header& h,
                                         transport::Completion done);
  // A message without a NIC tag: on the NIC's tag-matching channel while
  // the engine holds it (one channel per pair keeps a control message
  // behind the message it names; the transport's own send refuses then),
  // else by the transport's send.
  Result<transport::Issued> send_untagged(int world_peer, std::span<const std::uint8_t> header,
                                          std::span<const std::uint8_t> payload,
                                          transport::Completion done,
                                          transport::Delivery delivery) {
    return nic_matching_ != nullptr
               ? nic_matching_->send_untagged(world_peer, header, payload, done, delivery)
               : transport_->send(world_peer, header, payload, done, delivery);
  }
  // One-sided cancel: before a receive or probe looks at the unexpected
  // queue (inline: every receive asks, and only that mode settles).
  void settle_unexpected(const matching::ReceivePattern& pattern, bool claim_head) {
    if (one_sided_) send_cancel_->settle(pattern, claim_head);
  }
  // CancelSite: what the send-cancel layer may use (engine/send_cancel.h).
  transport::Transport& cancel_transport() override { return *transport_; }
  MatchingState& cancel_matching() override { return matching_; }
  EngineCounters& cancel_counters() override { return counters_; }
  Request* cancel_find(std::uint64_t request_id) override { return requests_.find(request_id); }
  Status cancel_send_header(int world_peer, const Header& h) override {
    return send_header(world_peer, h);
  }
  void cancel_defer_header(int world_peer, const Header& h) override;
  void cancel_send_control(int world_peer, MessageType type, std::uint64_t request_id,
                           std::uint8_t flags) override {
    send_control(world_peer, type, request_id, flags);
  }
  void cancel_maybe_complete(Request* r) override { maybe_complete(r); }
  bool cancel_peer_dead(int world_rank) const override { return is_dead(world_rank); }
  int cancel_rank() const override { return bootstrap_->rank(); }
  int cancel_size() const override { return bootstrap_->size(); }
  // ProtocolSite: what the rendezvous and buffered protocols may use.
  transport::Transport& protocol_transport() override { return *transport_; }
  EngineCounters& protocol_counters() override { return counters_; }
  const transport::Registration* protocol_pinned(const void* address,
                                                 std::size_t bytes) const override {
    return pinned_for(address, bytes);
  }
  void protocol_send_control(int world_peer, MessageType type, std::uint64_t request_id) override {
    send_control(world_peer, type, request_id);
  }
  void protocol_defer_read(Request* r) override;
  void protocol_fail(Request* r, int world_peer, const Status& s) override {
    note_peer_error(r, world_peer, s);
  }
  void protocol_maybe_complete(Request* r) override { maybe_complete(r); }
  Request* protocol_new_send() override { return new_request(RequestKind::kSend); }
  Status protocol_start_send(Request* r, std::optional<SlotTicket>* slot_out) override {
    return start_send(r, slot_out);
  }
  void protocol_release(Request* r) override { release_request(r); }
  void on_remote_answer(const Header& h);
  // How an EAGER or RTS reached software: without a NIC tag, or tagged
  // and counted by the NIC as unexpected (perhaps asking for a sync).
  enum class Arrival { kUntagged, kTagged, kTaggedSyncRequested };
  void on_envelope(const Header& h, std::span<const std::uint8_t> payload, Arrival how);
  // The message an EAGER or RTS header describes, without its data.
  // `with_slot`: one-sided cancel's slot fields too (only that mode reads them).
  static PendingMessage pending_from(const Header& h, bool with_slot = false);
  // A tagged message's header: decode()'s checks, and EAGER or RTS only.
  Result<Header> decode_tagged(std::span<const std::uint8_t> header,
                               std::span<const std::uint8_t> payload) const;
  // transport::NicMatchingSink (tag matching on: the NIC's reports).
  void on_tag_match(std::uint64_t entry, std::span<const std::uint8_t> header,
                    std::span<const std::uint8_t> payload) override;
  void on_tag_unexpected(std::span<const std::uint8_t> header,
                         std::span<const std::uint8_t> payload, bool sync_requested) override;
  void on_tag_op_done(matching::NicOp::Kind kind, std::uint64_t entry, bool ok,
                      bool sync_requested) override;
  void on_tag_batch_end() override;
  void run_deferred();
  Result<bool> test_locked(Request* r, MessageStatus* status);
  void note_error(Request* r, const Status& s);
  // note_error for the transport's error `s` on r's operation with
  // `world_peer`: held for the launcher's verdict on the peer where one
  // comes (held_errors.h), so that a death ends r with MPI_ERR_PROC_FAILED.
  void note_peer_error(Request* r, int world_peer, const Status& s);
  void resolve_held(const HeldErrors::Held& h, const Status& error);
  // What a blocking call reports for the transport's error `s` with
  // `world_peer`: MPI_ERR_PROC_FAILED if the launcher reports the peer dead
  // within the wait held errors get, else `s`. Called under the lock held
  // by `lock`: it polls with it, and lets it go while it sleeps between
  // looks, so that other threads' calls go on meanwhile.
  Status verdict_on(int world_peer, Status s, std::unique_lock<EngineLock>& lock);
  // verdict_on for an error that any rank of `comm` may have caused (a
  // flush of every target): MPI_ERR_PROC_FAILED naming the first of them
  // reported dead within the wait.
  Status verdict_on_any(const Communicator& comm, Status s, std::unique_lock<EngineLock>& lock);
  template <typename DeadOne>
  Status await_verdict(Status s, std::unique_lock<EngineLock>& lock, DeadOne dead_one);
  bool worth_a_verdict(const Status& s) const;
  // One collective step: receive `in` from `from` while sending `out` to `to`.
  // `tag` on the communicator's collective context: kCollectiveTag for the
  // engine's collectives, others for Comm_create_group's agreement.
  // `partner_only`: the step fails when `to` or `from` dies, not when any
  // member does (the barrier's rounds, which must all run: barrier()).
  Status exchange(Communicator* comm, int to, std::span<const std::uint8_t> out, int from,
                  std::span<std::uint8_t> in, int tag, bool partner_only = false);
  Result<std::vector<std::vector<std::uint8_t>>> allgather(Communicator* comm,
                                                           std::span<const std::uint8_t> mine,
                                                           int tag);
  Result<std::uint32_t> agree_context_id(Communicator* comm, int tag);
  // The helper thread: kProgress serves the transport all the time,
  // kAgent only while the application is away.
  enum class HelperMode { kNone, kProgress, kAgent };
  // `topology` and `pu`: where to bind it, found in start_up (see there).
  void helper_thread_main(HelperMode mode, const Result<Topology>& topology, int pu);
  // The unexpected queue holds as much as the helper thread may take in
  // (Config::unexpected_limit): it leaves the rest to the transport.
  bool holds_enough() const { return matching_.held_bytes() >= config_.unexpected_limit; }

  // update_words' parts (window_atomics.cc): one word under the
  // accumulate lock (misaligned for every origin), and the words of a
  // window the transport does not map here, by its atomics (`at`: where
  // they are, `lo` the lowest offset).
  Status update_word_locked(Window* w, int target, std::uint64_t disp, std::ptrdiff_t offset,
                            const WordUpdate& how, std::uint64_t operand, std::uint64_t* old,
                            const char* what);
  Result<bool> update_remote_words(Window* w, int target, std::uint64_t disp, int peer,
                                   const RmaTarget& at, std::span<const std::ptrdiff_t> offsets,
                                   std::ptrdiff_t lo, const WordUpdate& how,
                                   std::span<std::uint64_t> old_values, const char* what);
  // Under `lock`: what a flush of `target` (-1: every target) reports,
  // taken from the window (window.cc).
  Status take_flush_errors(Window* w, int target, std::unique_lock<EngineLock>& lock);
  // Where a put, get or accumulate lands, after the epoch and range checks
  // (window.cc); on a dynamic window in `region` (dynamic_region's).
  Result<RmaTarget> rma_target(Window* w, std::size_t bytes, int target, std::uint64_t disp,
                               const char* what, const DynamicRegion* region,
                               std::ptrdiff_t offset = 0);
  // Dynamic windows (window_dynamic.cc): the region of `target` that holds
  // `bytes` at `address`, from this rank's copy of its directory, fetched
  // or revalidated first when needed; null when the access needs none
  // (not a dynamic window, no bytes, MPI_PROC_NULL, a bad rank: rma_target
  // reports those). Called without the engine lock.
  Result<std::shared_ptr<const DynamicRegion>> dynamic_region(Window* w, int target,
                                                              std::uint64_t address,
                                                              std::size_t bytes, const char* what);
  // How an access of `bytes` at `address` divides among `target`'s
  // regions attached back to back (MPI lets one access span them): each
  // region, as dynamic_region found it, and the bytes in it, in order;
  // dynamic_region's error when some byte is in none.
  struct DynamicPart {
    std::shared_ptr<const DynamicRegion> region;
    std::size_t length = 0;
  };
  Result<std::vector<DynamicPart>> dynamic_parts(Window* w, int target, std::uint64_t address,
                                                 std::size_t bytes, const char* what);
  Status fetch_directory(Window* w, int target, DynamicTarget& copy);
  // Bytes of `target`'s window memory at `offset`: a memcpy where it is
  // mapped here, else a blocking transport read.
  Status read_window_memory(Window* w, int target, std::size_t offset, std::span<std::uint8_t> out);
  // Rewrites this rank's directory from `attached` (dynamic mutex held).
  Status publish_directory(Window* w);
  Status rma(Window* w, std::span<std::uint8_t> origin, int target, std::uint64_t disp,
             std::ptrdiff_t offset, bool put);
  static void on_rma_done(void* ctx, const Status& s);
  // win_fail's and win_shared_fail's common part: this rank's `record`
  // (which carries why's code) in the creation's first exchange, then
  // `why`. Nothing is exchanged when `why` is ok or `comm` invalid.
  Status fail_in_first_exchange(Communicator* comm, Status why,
                                std::span<const std::uint8_t> record);
  // The part of win_create and win_allocate after the memory: lock words,
  // and every rank's addresses and keys to every other (collective).
  Result<Window*> win_open(void* base, std::size_t size, int disp_unit, Communicator* comm,
                           std::unique_ptr<transport::Registration> registration,
                           const WindowHints& hints);
  // Progresses until `done()`, asked under the engine lock, says so; the
  // blocking waits of the window code (window*.cc) share it.
  template <typename Done>
  void progress_until(Done done) {
    IdleBackoff idle;
    for (;;) {
      unsigned n;
      {
        EngineGuard lock(mutex_);
        if (done()) return;
        n = progress_locked();
      }
      idle.turn(n != 0);
    }
  }
  // Progresses until `op` finished (window.cc).
  void await(WindowOpWait& op) {
    progress_until([&] { return op.finished; });
  }
  // The lock words of a window's rank (window_lock.cc): one
  // compare-and-swap, blocking; the swap retried until it takes; taking
  // and giving back a word.
  struct WordSwap {
    std::uint64_t expected;
    std::uint64_t desired;
  };
  Result<std::uint64_t> lock_word_cas(Window* w, int target, unsigned word, std::uint64_t expected,
                                      std::uint64_t desired);
  template <typename Plan>
  Status lock_word_swap(Window* w, int target, unsigned word, WordSwap swap, Plan plan,
                        const char* what);
  std::uint64_t exclusive_value(unsigned word) const;
  Status acquire_word(Window* w, int target, unsigned word, bool exclusive);
  Status release_word(Window* w, int target, unsigned word, bool exclusive);
  // PSCW's counts (window_pscw.cc): one more in `target`'s word that only
  // this rank writes; one taken from this rank's word that only `from`
  // writes, waiting for it.
  Status bump_word(Window* w, int target, unsigned word, std::uint64_t* sent);
  Status take_word(Window* w, int from, unsigned word, std::uint64_t* taken, const char* what);
  static void on_send_done(void* ctx, const Status& s);
  // A transport operation of an abandoned request came back at last.
  static void abandoned_op_done(Request* r) { --r->local_pending; }
  // start_request's failure: the request goes, and a peer the transport
  // found gone is marked dead. Out of line and cold: inside start_request
  // it cost the hot path the inlining of RequestTable::add (+19
  // instructions per message at each end).
  [[gnu::cold, gnu::noinline]] void fail_start(Request* r, const Status& s);
  // Starts a one-shot request fill_request just made; it goes if it cannot.
  Result<Request*> start_made(Request* r);
  static void on_read_done(void* ctx, const Status& s);
  // start() of a persistent collective's request.
  Status restart_schedule(Request* r);
  // A schedule's request, not started (start_schedule, schedule_init).
  Request* schedule_request(Communicator* comm);
  // Starts `schedule` as `r`'s operation: its first round now, the rest
  // queued for progress.
  void launch(Request* r, std::unique_ptr<Schedule> schedule);
  // The persistent collectives' builders, by request (released with it).
  std::unordered_map<const Request*, ScheduleBuilder> schedule_builders_;
  // A started schedule (start_schedule): the round it reached and the
  // sends and receives of that round still out.
  struct ScheduleRun {
    std::unique_ptr<Schedule> schedule;
    Request* request = nullptr;
    std::size_t next_round = 0;
    std::vector<Request*> pending;
    Status error;
  };
  // Starts round `round` of `schedule`: its steps in order, each send and
  // receive a request added to `posted`. Stops at the first step that
  // fails and returns its error; what it posted before runs on.
  Status start_round(const Schedule& schedule, std::size_t round, std::vector<Request*>* posted);
  // Moves every started schedule on as far as it can go now.
  void advance_schedules();
  // True once `run` has ended (its request completed).
  bool advance(ScheduleRun& run);
  // post_collective's work, the lock held; also a schedule's step on an
  // intercommunicator, whose peer is in the remote group when `remote`.
  Result<Request*> post_collective_locked(RequestKind kind, void* buffer, std::size_t bytes,
                                          int peer, int tag, Communicator* comm,
                                          bool remote = false);

  Config config_;
  std::unique_ptr<Bootstrap> bootstrap_;
  bool one_host_ = false;          // every rank runs on this host
  bool flat_collectives_ = false;  // flat_collectives()
  transport::Capabilities caps_;   // what the transport's entry declares
  // Released requests whose transport operations never came back (their
  // peer died: Request::abandoned). Declared before transport_ so that
  // they outlive it: its teardown may still complete those operations.
  std::vector<std::unique_ptr<Request>> abandoned_;
  // Started schedules (their scratch buffers too, which a receive may be
  // writing: before transport_, like abandoned_).
  std::vector<std::unique_ptr<ScheduleRun>> schedules_;
  bool advancing_schedules_ = false;
  std::unique_ptr<transport::Transport> transport_;
  DecodeLimits limits_;
  std::unique_ptr<Communicator> world_;
  std::unique_ptr<Communicator> self_;
  std::vector<std::unique_ptr<Communicator>> comms_;          // dup / split results
  std::vector<std::unique_ptr<Communicator>> retired_comms_;  // freed while in use
  std::uint32_t next_context_id_ = 2;                         // 0: world, 1: self
  // Ids from here up (to 2^31: contexts are id * 2 + 1) are
  // scratch_context_id's.
  static constexpr std::uint32_t kScratchContextIds = 1u << 30;
  static std::uint32_t scratch_context_id(std::uint32_t parent, const std::vector<int>& members);
  // Software decides every match. Where the transport offers the NIC's
  // tag matching (nic_matching()), the NIC holds copies of some posted
  // receives and may consume them; else its capacity is 0.
  MatchingState matching_;
  transport::NicMatching* nic_matching_ = nullptr;
  RequestTable requests_;
  RequestPool request_pool_;
  std::uint64_t next_send_id_ = 0;
  // Work that must not run inside a transport callback.
  struct Deferred {
    enum class Kind { kControl, kRead, kHeader } kind;
    int peer = 0;
    MessageType type = MessageType::kFin;
    std::uint64_t request_id = 0;
    std::uint8_t flags = 0;
    Request* request = nullptr;
    Header header{};  // kHeader: sent as it is
  };
  std::vector<Deferred> deferred_;
  // The send-cancel layer (src/cancel/), and whether it arbitrates every
  // match on a slot descriptor (asked on every message: cached).
  std::unique_ptr<SendCancel> send_cancel_;
  bool one_sided_ = false;
  std::vector<std::unique_ptr<Window>> windows_;
  // The protocols with state or steps of their own (protocol_site.h); the
  // eager protocol stays inline in start_send and on_envelope.
  RendezvousProtocol rendezvous_{*this};
  BufferedSend buffered_{*this};  // and MPI_Buffer_attach's buffer
  EngineCounters counters_;
  bool finalized_ = false;
  std::size_t address_bytes_ = 0;
  HeldErrors held_errors_;        // transport errors awaiting a peer's verdict
  DeadPeers dead_peers_;          // the launcher's reports and the transport's
  std::vector<char> abort_seen_;  // abort_job: which peers answered
  UnnamedReceive unnamed_;
  // alloc_registered regions by start address: length and registration.
  struct Pinned {
    std::size_t length;
    std::unique_ptr<transport::Registration> registration;
  };
  std::map<std::uintptr_t, Pinned> pinned_;
  // The registration of a pinned region holding [address, address+bytes).
  const transport::Registration* pinned_for(const void* address, std::size_t bytes) const;
  unsigned failure_poll_ticks_ = 0;
  // Milliseconds since the engine started, brought up to date at most
  // every 10 ms while the library polls and at each wake of a helper
  // thread: requests are stamped with it (no clock read per message), so a
  // report's ages are as good as that.
  std::atomic<std::uint32_t> clock_ms_{0};
  std::chrono::steady_clock::time_point clock_start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_failure_poll_{};

  mutable EngineLock mutex_;
  std::thread helper_thread_;
  int application_pu_ = -1;  // where the application thread ran at start-up
  std::atomic<bool> stop_helper_thread_{false};
};

// Inline: each was one more call (and Result) on every message's path.
inline Result<Request*> Engine::isend(const void* buffer, std::size_t bytes, int dest, int tag,
                                      Communicator* comm, SendMode mode) {
  return start_request<RequestKind::kSend>(const_cast<void*>(buffer), bytes, dest, tag, comm, mode);
}

// Always inlined (as fill_request and start_operation in engine.cc): a
// nonblocking call goes through each of these once, and as calls they
// were a sixth of an Irecv. Here for the schedules (schedule_run.cc) too.
[[gnu::always_inline]] inline Request* Engine::new_request(RequestKind kind) {
  Request* r = request_pool_.take();
  r->kind = kind;
  r->engine = this;
  r->id = requests_.add(r);
  ++counters_.live_requests;
  return r;
}

[[gnu::always_inline]] inline Status Engine::check_request(RequestKind kind, const void* buffer,
                                                           std::size_t bytes, int peer, int tag,
                                                           Communicator* comm,
                                                           bool collective) const {
  // The common case in a few compares, a receive's wildcards included
  // (they took the out-of-line path: 1 % of a crowded all-to-all's time);
  // request_error (engine.cc) names what is wrong, and passes the rest.
  const bool receive = kind == RequestKind::kReceive;
  if (comm != nullptr && (buffer != nullptr || bytes == 0) &&
      ((tag >= 0 && tag <= kTagUpperBound) || (receive && tag == matching::kAnyTag)) &&
      ((peer >= 0 && peer < static_cast<int>(comm->peer_group(collective).size())) ||
       (receive && peer == matching::kAnySource))) {
    return Status::ok();
  }
  return request_error(kind, buffer, bytes, peer, tag, comm, collective);
}

inline Result<Request*> Engine::irecv(void* buffer, std::size_t bytes, int source, int tag,
                                      Communicator* comm) {
  return start_request<RequestKind::kReceive>(buffer, bytes, source, tag, comm,
                                              SendMode::kStandard);
}

template <typename OnFinished>
Status Engine::wait_all_with(std::span<Request* const> requests, OnFinished&& finished) {
  // One lock for a run of requests, not one each: a window of eager sends
  // is complete before its wait, and a lock and a call per request were a
  // fifth of the sender's instructions per 8-byte message. Requests finish
  // in order; the first one not complete yet is polled for, as wait() does.
  Status first_error;
  std::size_t next = 0;  // requests before it are finished
  std::unique_lock lock(mutex_);
  poll_until(lock, [&] {
    for (; next < requests.size(); ++next) {
      Request* r = requests[next];
      if (null_or_inactive(r)) {
        finished(next, empty_status());
        continue;
      }
      if (!r->complete()) return false;
      if (!r->status.error.is_ok() && first_error.is_ok()) first_error = r->status.error;
      finished(next, r->status);
      finish(r, nullptr);
    }
    return true;
  });
  return first_error;
}

// Always inlined: wait_all runs it for each request of a window, and as a
// call it was 18 instructions a request at each end.
[[gnu::always_inline]] inline void Engine::finish(Request* r, MessageStatus* status) {
  if (r->persistent) {
    if (status != nullptr) *status = r->status;
    r->set_phase(RequestPhase::kInactive);
    r->status.clear();
  } else {
    // Released next: its status moves out (no copy of an error's message).
    if (status != nullptr) *status = std::move(r->status);
    release_request(r);
  }
}

inline void Engine::maybe_complete(Request* r) {
  if (r->complete() || (r->local_pending > 0 && !r->abandoned) || r->awaiting != 0) return;
  r->set_phase(RequestPhase::kComplete);
  if (r->registration || r->bsend_copy != nullptr || r->user_freed) complete_rest(r);
}

}  // namespace tagwire::engine
