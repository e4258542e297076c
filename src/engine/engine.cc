#include "engine/engine.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/host_identity.h"
#include "common/log.h"
#include "common/small_copy.h"
#include "common/topology.h"
#include "engine/idle_backoff.h"
#include "engine/transport_list.h"

namespace tagwire::engine {

namespace {

constexpr std::size_t kMaxRemoteKey = 4096;

// Whether every rank of the job runs on this host (and can share memory
// with this process): then TAGWIRE_TRANSPORT=auto may take a transport
// that reaches only this host (Capabilities::one_host_only).
Result<bool> whole_job_on_this_host(Bootstrap& bootstrap) {
  if (bootstrap.size() == 1) return true;
  const std::string mine = host_identity();
  const std::vector<std::uint8_t> bytes(mine.begin(), mine.end());
  auto all = bootstrap.allgather(bytes);
  if (!all) return all.status().with_context("finding which ranks share this host");
  for (const auto& theirs : *all) {
    if (!std::equal(theirs.begin(), theirs.end(), mine.begin(), mine.end())) return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------- start-up

Engine::Engine(const Config& config, std::unique_ptr<Bootstrap> bootstrap,
               std::unique_ptr<transport::Transport> transport)
    : config_(config), bootstrap_(std::move(bootstrap)), transport_(std::move(transport)) {}

namespace {

// A setting of a transport this job does not run on acts on nothing:
// refused, so that TAGWIRE_TM=on or TAGWIRE_DEVICE over shared memory is
// not taken for done.
Status refuse_other_transports_settings(const Config& config,
                                        const transport::TransportEntry& chosen) {
  for (const transport::TransportEntry* entry : built_transports()) {
    if (entry == &chosen) continue;
    for (const SettingInfo* s : entry->settings) {
      if (!config.settings.is_set(s->name) ||
          find_setting({&chosen.settings, 1}, s->name) != nullptr) {
        continue;
      }
      return Status(ErrorCode::kConfig,
                    std::string(s->name) + " is a setting of the " + std::string(entry->name) +
                        " transport, and this job runs on " + std::string(chosen.name) +
                        " (TAGWIRE_TRANSPORT=" + config.transport + "): unset it, or choose " +
                        std::string(entry->name));
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Engine>> Engine::create(const Config& config,
                                               std::unique_ptr<Bootstrap> bootstrap,
                                               const SendCancelLayer& send_cancel) {
  log::set_level(config.log_level);
  log::set_rank(bootstrap->rank());
  Config resolved = config;
  auto local = whole_job_on_this_host(*bootstrap);
  if (!local) return local.status();
  auto entry = transport::choose_transport(built_transports(), config.transport, *local);
  if (!entry) return entry.status();
  TAGWIRE_RETURN_IF_ERROR(refuse_other_transports_settings(config, **entry));
  const transport::Capabilities& caps = (*entry)->capabilities;
  if (!config.eager_threshold_set && caps.eager_threshold != 0) {
    resolved.resolve_eager_threshold(caps.eager_threshold);
  }
  transport::TransportSetup setup;
  setup.rank = bootstrap->rank();
  setup.size = bootstrap->size();
  setup.eager_threshold = resolved.eager_threshold;
  setup.max_remote_key = kMaxRemoteKey;
  setup.wake_on_every_message = resolved.progress_thread;
  setup.helper_thread = resolved.progress_thread || resolved.cancel_agent;
  setup.settings = &resolved.settings;
  auto transport = (*entry)->create(setup);
  if (!transport) return transport.status();
  return create(resolved, std::move(bootstrap), std::move(transport).value(), send_cancel, *local,
                caps);
}

Result<std::unique_ptr<Engine>> Engine::create(const Config& config,
                                               std::unique_ptr<Bootstrap> bootstrap,
                                               std::unique_ptr<transport::Transport> transport,
                                               const SendCancelLayer& send_cancel, bool one_host,
                                               const transport::Capabilities& caps) {
  log::set_level(config.log_level);
  log::set_rank(bootstrap->rank());
  if (send_cancel.create == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "an engine needs a send-cancel layer");
  }
  std::unique_ptr<Engine> engine(new Engine(config, std::move(bootstrap), std::move(transport)));
  engine->one_host_ = one_host;
  engine->caps_ = caps;
  auto layer = send_cancel.create(engine->config_, *engine);
  if (!layer) return layer.status();
  engine->send_cancel_ = std::move(layer).value();
  engine->one_sided_ = engine->send_cancel_->arbitrates_matches();
  TAGWIRE_RETURN_IF_ERROR(engine->start_up());
  return engine;
}

Result<std::unique_ptr<Engine>> Engine::create_from_environment(
    const SendCancelLayer& send_cancel) {
  auto config = Config::from_environment(send_cancel.settings);
  if (!config) return config.status();
  auto bootstrap = create_bootstrap();
  if (!bootstrap) return bootstrap.status();
  return create(*config, std::move(bootstrap).value(), send_cancel);
}

transport::NicMatching* Engine::usable_nic_matching() const {
  transport::NicMatching* tm = transport_->nic_matching();
  if (tm == nullptr) return nullptr;
  const std::size_t largest =
      sizeof(Header) + std::max<std::size_t>(config_.eager_threshold, kMaxRemoteKey);
  if (one_sided_) {
    // A one-sided cancel's receiver claims the message's slot descriptor
    // before it lets a receive take it; the NIC takes it without asking.
    TW_INFO("engine", "tag matching in software: one-sided send cancel needs every match");
    return nullptr;
  }
  if (tm->max_tagged_message() < largest) {
    TW_WARN("engine", "tag matching in software: the NIC's buffers hold "
                          << tm->max_tagged_message() << " B, a message may need " << largest);
    return nullptr;
  }
  return tm;
}

Status Engine::start_up() {
  const int rank = bootstrap_->rank();
  const int size = bootstrap_->size();
  limits_ = DecodeLimits{bootstrap_->job_token(), size, config_.eager_threshold, kMaxRemoteKey};

  // Each rank publishes its eager threshold with its address: ranks that
  // disagree would drop each other's messages, so refuse to start instead.
  // So does the cancel mode: a one-sided sender needs the receiver's slot
  // descriptors, published here, and a receiver that claims them. And so
  // does the NIC's matching: a rank that sends untagged to one that
  // matches in the NIC would still be matched in order, but a job that asked for the
  // NIC and got it on some ranks only is a setup to report, not to run.
  // And whether connections are all made now: connect_everyone's barrier
  // needs every rank.
  transport::NicMatching* nic = usable_nic_matching();
  const std::uint64_t threshold = config_.eager_threshold;
  const std::uint64_t mode = one_sided_ ? 1 : 0;  // the cancel layer's own answer
  const std::uint64_t in_nic = nic != nullptr ? 1 : 0;
  const std::uint64_t connect_all = transport_->connects_all_at_start() ? 1 : 0;
  const std::array<std::uint64_t, 4> words{threshold, mode, in_nic, connect_all};
  std::vector<std::uint8_t> mine(sizeof(words));
  std::memcpy(mine.data(), words.data(), sizeof(words));
  TAGWIRE_RETURN_IF_ERROR(send_cancel_->publish(&mine));
  auto address = transport_->address();
  address_bytes_ = address.size();
  mine.insert(mine.end(), address.begin(), address.end());
  auto all = bootstrap_->allgather(mine);
  if (!all) return all.status().with_context("address exchange");
  std::vector<std::vector<std::uint8_t>> addresses;
  for (int r = 0; r < size; ++r) {
    auto& entry = (*all)[static_cast<std::size_t>(r)];
    std::remove_const_t<decltype(words)> their_words{};
    if (entry.size() < sizeof(their_words)) {
      return Status(ErrorCode::kProtocol, "malformed address from rank " + std::to_string(r));
    }
    std::memcpy(their_words.data(), entry.data(), sizeof(their_words));
    const auto [theirs, their_mode, their_nic_matching, their_connect_all] = their_words;
    if (theirs != threshold) {
      return Status(ErrorCode::kConfig,
                    "TAGWIRE_EAGER_THRESHOLD differs between ranks (" + std::to_string(threshold) +
                        " here, " + std::to_string(theirs) + " at rank " + std::to_string(r) + ")");
    }
    if (their_mode != mode) {
      return Status(ErrorCode::kConfig, "TAGWIRE_CANCEL_MODE differs between ranks (rank " +
                                            std::to_string(r) + " has the other one)");
    }
    if (their_nic_matching != in_nic) {
      return Status(ErrorCode::kConfig,
                    std::string("the NIC's tag matching is on at rank ") +
                        std::to_string(in_nic != 0 ? rank : r) + " and off at rank " +
                        std::to_string(in_nic != 0 ? r : rank) +
                        " (TAGWIRE_TM, the device, and TAGWIRE_CANCEL_MODE must agree)");
    }
    if (their_connect_all != connect_all) {
      return Status(ErrorCode::kConfig, std::string("rank ") +
                                            std::to_string(connect_all != 0 ? rank : r) +
                                            " connects to every rank in MPI_Init and rank " +
                                            std::to_string(connect_all != 0 ? r : rank) +
                                            " on first use (TAGWIRE_UCX_CONNECT must agree)");
    }
    std::span<const std::uint8_t> rest(entry);
    rest = rest.subspan(sizeof(their_words));
    TAGWIRE_RETURN_IF_ERROR(send_cancel_->take_peer(r, &rest));
    addresses.emplace_back(rest.begin(), rest.end());
  }
  TAGWIRE_RETURN_IF_ERROR(transport_->set_peer_addresses(std::move(addresses)));
  transport_->set_receiver(this);
  if (nic != nullptr) {
    nic_matching_ = nic;
    matching_.use_nic(nic->capacity());
    nic_matching_->set_sink(this);
  }

  std::vector<int> everyone(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) everyone[static_cast<std::size_t>(r)] = r;
  world_ = std::make_unique<Communicator>(0, std::move(everyone), rank);
  self_ = std::make_unique<Communicator>(1, std::vector<int>{rank}, 0);
  world_->set_idup_block(2, true);
  self_->set_idup_block(2 + kIdupReserve, true);
  next_context_id_ = 2 + 2 * kIdupReserve;

  // Spin or yield (idle_backoff.h): on one host with more ranks than
  // cores, or with ranks the launcher did not bind (two may share a core),
  // a waiting rank may hold the core its peer needs.
  const bool one_host = one_host_ && size > 1;
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t placement;
  const bool bound =
      ::sched_getaffinity(0, sizeof(placement), &placement) == 0 && CPU_COUNT(&placement) == 1;
  const bool oversubscribed = one_host && cores > 0 && size > cores;
  const bool crowded = oversubscribed || (one_host && !bound);
  set_waiting_policy(oversubscribed ? WaitingPolicy::kYield
                     : crowded      ? WaitingPolicy::kShareCore
                                    : WaitingPolicy::kSpin);
  // A tree's every hop waits for its rank to be scheduled when ranks
  // outnumber cores: there the root's one pass is faster (8 ranks on 2
  // cores, 8-byte reduce: 2.5x; docs/measurements.md).
  flat_collectives_ = config_.collective_shape == CollectiveShape::kFlat ||
                      (config_.collective_shape == CollectiveShape::kAuto && oversubscribed);
  TW_INFO("engine", "rank " << rank << " of " << size << " up over " << transport_->name()
                            << " (bootstrap " << bootstrap_->kind() << ", eager threshold "
                            << config_.eager_threshold << " B, " << send_cancel_->name()
                            << " send cancel, "
                            << (oversubscribed ? "yields at once when idle"
                                : crowded      ? "yields when idle"
                                               : "spins when idle")
                            << ", " << (flat_collectives_ ? "flat" : "tree") << " collectives)");
  TAGWIRE_RETURN_IF_ERROR(connect_everyone());
  const HelperMode helper = config_.progress_thread ? HelperMode::kProgress
                            : config_.cancel_agent  ? HelperMode::kAgent
                                                    : HelperMode::kNone;
  if (helper != HelperMode::kNone) {
    application_pu_ = sched_getcpu();
    // Where the helper goes is found here, in MPI_Init, not in the new
    // thread: PCI discovery is slow (a large part of a second in the
    // soft-RoCE VM), and done beside the application it ran into the first
    // thousands of ping-pongs and doubled their latency there. Near the
    // device the transport drives (verbs: the one it opened, named or
    // not), and off the core the application thread started on when there
    // is another. (PCI only with a device to be near, and a core to pick.)
    //
    // The cancel agent mostly sleeps, and each of its wake-ups preempts
    // whoever runs on its core. Where every core has a rank of this job
    // (one host, as many ranks as cores, the application bound) that is
    // its own rank's core: on another rank's, each look while the
    // application waits in the library stalled a rank that had not asked
    // for it (a verbs ping-pong in the soft-RoCE VM: 21.7 -> 20.6 us, one
    // boot; docs/measurements.md). The progress thread works all the
    // time, beside the application: never there.
    const bool own_core =
        helper == HelperMode::kAgent && one_host && bound && cores > 0 && size >= cores;
    const std::string_view device = transport_->device_name();
    auto topology = Topology::load(!own_core && !device.empty());
    const int helper_pu = own_core   ? application_pu_
                          : topology ? topology->pick_helper_pu(device, application_pu_)
                                     : -1;
    mutex_.enable();
    helper_thread_ = std::thread([this, helper, helper_pu, topo = std::move(topology)] {
      helper_thread_main(helper, topo, helper_pu);
    });
  }
  return Status::ok();
}

Status Engine::connect_everyone() {
  if (!transport_->connects_all_at_start()) return Status::ok();
  // On the stack: nothing returns from here while the completion is pending.
  struct Wait {
    bool finished = false;
    Status result;
  } connecting;
  const transport::Completion done{[](void* ctx, const Status& s) {
                                     auto* w = static_cast<Wait*>(ctx);
                                     w->result = s;
                                     w->finished = true;
                                   },
                                   &connecting};
  auto issued = transport_->connect_all(done);
  if (!issued) return issued.status().with_context("connecting to every rank in MPI_Init");
  // No deadline of our own: the transport fails a connection to a rank that
  // does not answer (UCX's peer error mode), and the launcher's notice of
  // a death fails it too (peer_failed).
  while (*issued == transport::Issued::kPending && !connecting.finished) transport_->progress();
  if (!connecting.result.is_ok())
    return connecting.result.with_context("connecting to every rank in MPI_Init");
  // A peer still connecting needs this rank's answers: progress until all
  // are done. The message barrier, not the bootstrap's: PMIx's and PMI-2's
  // barriers do not progress the transport while they wait.
  return barrier(world_.get()).with_context("connecting to every rank in MPI_Init");
}

void Engine::allow_application_threads() {
  mutex_.allow_application_threads();
  if (!mutex_.enabled()) mutex_.enable();  // no helper thread: the lock was off
}

Engine::~Engine() {
  Status s = finalize();
  if (!s.is_ok()) TW_WARN("engine", "finalize: " << s.to_string());
  // Requests still live now can never complete (a receive from a rank that
  // died, or one finalize's failed barrier left behind): nobody may use
  // them after MPI_Finalize, so they go with the engine.
  requests_.for_each([this](Request* r) { release_request(r); });
  // The transport goes next (members go in reverse order), and with it
  // the context its registrations were made in: a registration kept by an
  // abandoned request (the memory of a send to a rank that died) is let go
  // first. UCX's ucp_cleanup asserted on the still-mapped region (rcache.c:
  // 409, peer_kill over UCX sm, 1 run in 4). The requests themselves stay
  // until after the transport, which may still complete into them.
  for (auto& r : abandoned_) r->registration.reset();
}

Status Engine::finalize() {
  if (finalized_) return Status::ok();
  finalized_ = true;
  // A start-up refused before the world existed (ranks that disagree on a
  // setting): no rank has a communicator to meet on, and the destructor's
  // finalize warned "null communicator" about the barrier.
  if (world_ == nullptr) return Status::ok();
  // Every rank reaches this point before anyone closes a connection. Under
  // a launcher that knows who is alive, a death known or learnt meanwhile
  // ends the message barrier: the survivors then meet through the
  // launcher instead (below).
  const bool launcher_holds_survivors = bootstrap_->barrier_holds_survivors();
  Status result = barrier(world_.get(), /*stop_at_death=*/launcher_holds_survivors);
  if (helper_thread_.joinable()) {
    stop_helper_thread_ = true;
    helper_thread_.join();
    TW_INFO("engine", "helper thread took the lock " << counters_.helper_entries
                                                     << " times and progressed "
                                                     << counters_.helper_progressed);
  }
  if (launcher_holds_survivors && dead_peers_.any()) {
    // After a death the dissemination barrier's rounds route around the
    // dead and so do not prove that every survivor arrived, and its
    // messages go over connections a death has touched: over UCX shared
    // memory a survivor waited for ever in it for a live peer's signal that
    // peer had sent (peer_kill, about 1 run in 30 on a busy machine; the
    // cause inside UCX is not known). The launcher's barrier waits for
    // exactly the ranks alive, serving the transport meanwhile. (No helper
    // thread any more: it would read the launcher's answer as news.)
    Status s = bootstrap_->barrier_with_progress([this] {
      EngineGuard lock(mutex_);
      transport_->progress();
    });
    if (result.is_ok()) result = s;
  }
  EngineGuard lock(mutex_);
  Status s = transport_->disconnect_all();
  if (result.is_ok()) result = s;
  // Nobody tears down its worker while a peer may still be closing towards
  // it: wait for everyone, serving the transport meanwhile.
  s = bootstrap_->barrier_with_progress([this] { transport_->progress(); });
  if (result.is_ok()) result = s;
  // Nobody can CAS or read our slot descriptors, or reach a window that
  // the program did not free, any more.
  if (send_cancel_ != nullptr) send_cancel_->close();
  windows_.clear();
  bootstrap_->finalized();
  return result;
}

// ------------------------------------------------------------- validation

Status Engine::not_on_intercomm(const char* what) {
  return {ErrorCode::kUnsupported, std::string(what) +
                                       " on an intercommunicator: not supported (merge it into "
                                       "an intracommunicator first)"};
}

Status Engine::check_comm(Communicator* comm) const {
  if (comm == nullptr) return {ErrorCode::kInvalidComm, "null communicator"};
  return Status::ok();
}

Status Engine::check_other_peer(Communicator* comm, int rank, bool allow_any, const char* what,
                                bool collective) const {
  if (rank == kProcNull) return Status::ok();
  if (allow_any && rank == kAnySource) return Status::ok();
  const int count = static_cast<int>(comm->peer_group(collective).size());
  if (rank < 0 || rank >= count) {
    return {ErrorCode::kInvalidRank,
            std::string(what) + " rank " + std::to_string(rank) + " is outside a" +
                (comm->inter() && !collective ? " remote group" : " communicator") + " of size " +
                std::to_string(count)};
  }
  return Status::ok();
}

Status Engine::check_tag(int tag, bool allow_any) const {
  if (allow_any && tag == kAnyTag) return Status::ok();
  if (tag < 0 || tag > kTagUpperBound) {
    return {ErrorCode::kInvalidTag,
            "tag " + std::to_string(tag) + " is outside 0.." + std::to_string(kTagUpperBound)};
  }
  return Status::ok();
}

Status Engine::check_buffer(const void* buffer, std::size_t bytes) const {
  if (buffer == nullptr && bytes > 0) {
    return {ErrorCode::kInvalidBuffer, "null buffer with " + std::to_string(bytes) + " bytes"};
  }
  return Status::ok();
}

// --------------------------------------------------------------- requests

void Engine::release_request(Request* r) {
  requests_.remove(r->id);
  --counters_.live_requests;
  if ((r->kind == RequestKind::kSchedule && r->persistent) || r->abandoned) [[unlikely]] {
    if (release_unusual(r)) return;
  }
  request_pool_.give(r);
}

// release_request's rare cases, out of line so that its common one makes
// no call of its own: true if the request is kept, not given back.
bool Engine::release_unusual(Request* r) {
  if (r->kind == RequestKind::kSchedule && r->persistent) schedule_builders_.erase(r);
  if (r->abandoned && r->local_pending > 0) {
    abandoned_.emplace_back(r);  // the transport may still complete into it
    return true;
  }
  return false;
}

void Engine::complete_null(Request* r) {
  r->status = proc_null_status();
  r->set_phase(RequestPhase::kComplete);
}

void Engine::note_error(Request* r, const Status& s) {
  if (r->status.error.is_ok()) r->status.error = s;
  if (r->kind == RequestKind::kSend) r->stop_awaiting(kRemoteAnswer);  // no answer will come
}

void Engine::complete_rest(Request* r) {
  // (An abandoned request's registration stays while the transport may
  // still use it: it goes with the request.)
  if (!r->abandoned || r->local_pending == 0) r->registration.reset();
  buffered_.release(r);
  if (r->user_freed) release_request(r);
}

// ------------------------------------------------------------------ sends

Result<Request*> Engine::send_init(const void* buffer, std::size_t bytes, int dest, int tag,
                                   Communicator* comm, SendMode mode) {
  return make_request(RequestKind::kSend, const_cast<void*>(buffer), bytes, dest, tag, comm, mode);
}

Status Engine::request_error(RequestKind kind, const void* buffer, std::size_t bytes, int peer,
                             int tag, Communicator* comm, bool collective) const {
  const bool receive = kind == RequestKind::kReceive;  // only receives take wildcards
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  TAGWIRE_RETURN_IF_ERROR(
      check_peer(comm, peer, receive, receive ? "source" : "destination", collective));
  TAGWIRE_RETURN_IF_ERROR(check_tag(tag, receive));
  return check_buffer(buffer, bytes);
}

[[gnu::always_inline]] inline Request* Engine::fill_request(RequestKind kind, void* buffer,
                                                            std::size_t bytes, int peer, int tag,
                                                            Communicator* comm, SendMode mode,
                                                            bool collective) {
  Request* r = new_request(kind);
  r->persistent = true;
  r->collective = collective;
  r->mode = mode;
  r->buffer = buffer;
  r->bytes = bytes;
  r->peer = peer;
  r->tag = tag;
  r->comm = comm;
  return r;
}

Result<Request*> Engine::make_request(RequestKind kind, void* buffer, std::size_t bytes, int peer,
                                      int tag, Communicator* comm, SendMode mode, bool collective) {
  TAGWIRE_RETURN_IF_ERROR(check_request(kind, buffer, bytes, peer, tag, comm, collective));
  EngineGuard lock(mutex_);
  return fill_request(kind, buffer, bytes, peer, tag, comm, mode, collective);
}

template <RequestKind kKind>
Result<Request*> Engine::start_request(void* buffer, std::size_t bytes, int peer, int tag,
                                       Communicator* comm, SendMode mode) {
  TAGWIRE_RETURN_IF_ERROR(check_request(kKind, buffer, bytes, peer, tag, comm, false));
  // One lock for making and starting: a blocking ping-pong does this twice
  // per iteration.
  EngineGuard lock(mutex_);
  Request* r = fill_request(kKind, buffer, bytes, peer, tag, comm, mode, false);
  r->persistent = false;
  // Both starts inlined here (the matcher's post_expected always inlined
  // into the receive's: without that it went out of line and the two
  // saved nothing).
  Status s = kKind == RequestKind::kReceive ? receive_operation(r) : send_operation(r, nullptr);
  if (!s.is_ok()) [[unlikely]] {
    fail_start(r, s);
    return s;
  }
  return r;
}

[[gnu::always_inline]] inline Result<Request*> Engine::start_made(Request* r) {
  r->persistent = false;
  Status s = start_operation(r);
  if (!s.is_ok()) {
    fail_start(r, s);
    return s;
  }
  return r;
}

void Engine::fail_start(Request* r, const Status& s) {
  const bool peer_gone = s.code() == ErrorCode::kPeerFailed && r->kind == RequestKind::kSend;
  const int world_peer = peer_gone ? r->comm->peer_world_rank(r->peer, r->peer_in_own_group()) : -1;
  release_request(r);
  // The transport found the peer gone before anyone told us (its first
  // message, to a rank that died): everything else with it fails now too,
  // not at the launcher's notice (which srun and mpirun never give).
  if (peer_gone && !is_dead(world_peer)) on_peer_failed(world_peer, s);
}

[[gnu::always_inline]] inline Status Engine::start_operation(Request* r) {
  if (r->kind == RequestKind::kReceive) return start_receive(r);
  // Each operation of a persistent send goes out under a fresh wire id:
  // the receiver may still hold an earlier operation's message, and a
  // cancel must name this one only (IMPI: one id, one cancellable message).
  if (r->persistent) r->id = requests_.rename(r->id);
  return send_operation(r, nullptr);
}

[[gnu::always_inline]] inline bool Engine::begin_operation(Request* r) {
  r->set_phase(RequestPhase::kRunning);
  r->started_ms = clock_ms_.load(std::memory_order_relaxed);
  r->awaiting = 0;
  r->remote_matched = false;
  r->status.clear();
  if (r->peer != kProcNull) return false;
  complete_null(r);
  return true;
}

// The per-message trace lines, out of line: built inside start_send and
// on_envelope they cost the hot path registers and instructions even at
// the default level (bench/instructions saw +9 and +8 per message).
void Engine::trace_send(const Request& r, const Header& h, int world_dest) {
  TW_TRACE("engine", "send " << r.id << " to rank " << world_dest << " (context " << h.context
                             << ", tag " << h.tag << ", " << r.bytes
                             << " B): " << (h.type == MessageType::kEager ? "eager" : "rendezvous")
                             << (r.mode == SendMode::kSynchronous ? ", synchronous" : ""));
}

void Engine::trace_arrival(const Header& h, bool matched) {
  TW_TRACE("engine", (h.type == MessageType::kEager ? "eager" : "rendezvous offer")
                         << " from rank " << h.origin << " (context " << h.context << ", tag "
                         << h.tag << ", " << h.length << " B, id " << h.request_id
                         << "): " << (matched ? "matched a posted receive" : "unexpected"));
}

Status Engine::start_send(Request* r, std::optional<SlotTicket>* slot_out) {
  return send_operation(r, slot_out);
}

// start_send's work, always inlined into start_operation: an Isend was a
// call from start_request into start_send, with a Status handed back
// through memory and the registers saved twice (bench/instructions).
[[gnu::always_inline]] inline Status Engine::send_operation(Request* r,
                                                            std::optional<SlotTicket>* slot_out) {
  if (begin_operation(r)) return Status::ok();
  if (r->mode == SendMode::kBuffered) return buffered_.start(r);

  Communicator* comm = r->comm;
  const int world_dest = comm->peer_world_rank(r->peer, r->peer_in_own_group());
  if (is_dead(world_dest)) return peer_failed_status(world_dest);
  Header& h = r->header.emplace();
  fill_message_header(&h, comm, r->collective, r->tag, r->id, r->bytes);
  std::span<const std::uint8_t> payload;
  if (r->bytes <= config_.eager_threshold) {
    h.type = MessageType::kEager;
    if (r->mode == SendMode::kSynchronous) {
      h.flags = kFlagSync;
      r->await(kRemoteAnswer);
    }
    payload = {static_cast<const std::uint8_t*>(r->buffer), r->bytes};
    ++counters_.eager_sent;
  } else {
    TAGWIRE_RETURN_IF_ERROR(rendezvous_.offer(r, &h, &payload));
  }
  r->slot = one_sided_ ? send_cancel_->take_slot(world_dest) : std::nullopt;
  if (r->slot) {
    h.slot = static_cast<std::uint8_t>(r->slot->index + 1);
    h.slot_expected = static_cast<std::uint32_t>(r->slot->expected);
  }
  if (slot_out != nullptr) *slot_out = r->slot;
  if (log::enabled(log::Level::kTrace)) [[unlikely]]
    trace_send(*r, h, world_dest);
  r->header.seal();
  const transport::Completion sent{&Engine::on_send_done, r};
  auto issued = nic_matching_ == nullptr ? transport_->send(world_dest, r->header, payload, sent,
                                                            transport::Delivery::kPolled)
                                         : send_through_nic(r, world_dest, h, payload, sent);
  if (!issued) {
    r->stop_awaiting(kRemoteAnswer);
    r->registration.reset();
    if (r->slot) {
      send_cancel_->give_back(world_dest, *r->slot);
      r->slot.reset();
      if (slot_out != nullptr) slot_out->reset();
    }
    return issued.status();
  }
  if (*issued == transport::Issued::kPending) ++r->local_pending;
  maybe_complete(r);
  return Status::ok();
}

template Result<Request*> Engine::start_request<RequestKind::kSend>(void*, std::size_t, int, int,
                                                                    Communicator*, SendMode);
template Result<Request*> Engine::start_request<RequestKind::kReceive>(void*, std::size_t, int, int,
                                                                       Communicator*, SendMode);

// With the NIC's tag matching, an envelope that fits the NIC's tag goes
// tagged, so that the receiver's NIC can match it (and counts it if not).
// Out of line: without the NIC, start_send goes straight to the transport.
Result<transport::Issued> Engine::send_through_nic(Request* r, int world_dest, const Header& h,
                                                   std::span<const std::uint8_t> payload,
                                                   transport::Completion sent) {
  if (auto nic_tag = matching::encode_nic_tag({h.context, h.source, h.tag})) {
    return nic_matching_->send_tagged(world_dest, *nic_tag, r->header, payload, sent);
  }
  return nic_matching_->send_untagged(world_dest, r->header, payload, sent,
                                      transport::Delivery::kPolled);
}

void Engine::on_send_done(void* ctx, const Status& s) {
  auto* r = static_cast<Request*>(ctx);
  if (r->abandoned) return abandoned_op_done(r);
  if (!s.is_ok()) [[unlikely]] {
    const int peer =
        r->comm != nullptr ? r->comm->peer_world_rank(r->peer, r->peer_in_own_group()) : -1;
    r->engine->note_peer_error(r, peer, s);
  }
  --r->local_pending;
  r->engine->maybe_complete(r);
}

[[gnu::always_inline]] inline void Engine::fill_message_header(Header* h, Communicator* comm,
                                                               bool collective, int tag,
                                                               std::uint64_t id,
                                                               std::size_t bytes) const {
  h->job_token = limits_.job_token;
  h->origin = world_->rank();
  h->context = collective ? comm->collective_context() : comm->p2p_context();
  h->source = comm->rank();
  h->tag = tag;
  h->request_id = id;
  h->length = bytes;
}

// A blocking standard or ready send that goes eager, as a message with no
// request: nobody can cancel it or wait for an answer, so its wire id is 0
// (never a live request's: every id's generation is at least 1), and the
// transport must take it whole at once (try_send). True when sent; false,
// having sent nothing, for every other case.
bool Engine::send_unnamed(const void* buffer, std::size_t bytes, int dest, int tag,
                          Communicator* comm, SendMode mode, Status* failed, bool collective) {
  if (bytes > config_.eager_threshold || one_sided_ || nic_matching_ != nullptr ||
      (mode != SendMode::kStandard && mode != SendMode::kReady)) {
    return false;
  }
  if (Status s = check_request(RequestKind::kSend, buffer, bytes, dest, tag, comm, collective);
      !s.is_ok()) {
    *failed = std::move(s);
    return true;
  }
  if (dest == kProcNull) return false;
  EngineGuard lock(mutex_);
  const int world_dest = comm->peer_world_rank(dest, collective);
  if (is_dead(world_dest)) return false;  // the request path reports it
  EncodedHeader encoded;
  fill_message_header(&encoded.emplace(), comm, collective, tag, 0, bytes);
  encoded.seal();
  auto sent =
      transport_->try_send(world_dest, encoded, {static_cast<const std::uint8_t*>(buffer), bytes});
  if (!sent || !*sent) return false;  // an error: the request path meets and reports it
  ++counters_.eager_sent;
  return true;
}

Status Engine::send(const void* buffer, std::size_t bytes, int dest, int tag, Communicator* comm,
                    SendMode mode) {
  Status failed;
  if (send_unnamed(buffer, bytes, dest, tag, comm, mode, &failed)) return failed;
  auto r = isend(buffer, bytes, dest, tag, comm, mode);
  if (!r) return r.status();
  MessageStatus status;
  TAGWIRE_RETURN_IF_ERROR(wait(*r, &status));
  return status.error;
}

// --------------------------------------------------------------- receives

Result<Request*> Engine::recv_init(void* buffer, std::size_t bytes, int source, int tag,
                                   Communicator* comm) {
  return make_request(RequestKind::kReceive, buffer, bytes, source, tag, comm, SendMode::kStandard);
}

// Nothing from a dead sender can still arrive to a receive just queued:
// what it sent before it died was matched or is lost.
[[gnu::always_inline]] inline void Engine::withdraw_if_sender_dead(Request* r) {
  if (r->peer == matching::kAnySource) return;
  const int world_source = r->comm->peer_world_rank(r->peer, r->peer_in_own_group());
  if (is_dead(world_source)) [[unlikely]]
    withdraw_from_dead(r, world_source);
}

void Engine::withdraw_from_dead(Request* r, int world_source) {
  const Status failed = peer_failed_status(world_source);
  if (withdraw_receive(r, failed)) complete_withdrawn(r, failed);
}

Status Engine::start_receive(Request* r) {
  return receive_operation(r);
}

// start_receive's work, always inlined into start_request<kReceive> (a
// call and a Status through memory less per Irecv, as send_operation).
[[gnu::always_inline]] inline Status Engine::receive_operation(Request* r) {
  if (begin_operation(r)) return Status::ok();
  Communicator* comm = r->comm;
  const matching::ContextId context =
      r->collective ? comm->collective_context() : comm->p2p_context();
  matching::NicMatcher& matcher = matching_.matcher();
  if (one_sided_ || !matcher.posts_only_queue()) [[unlikely]]
    return start_matching_receive(r, context);
  // Nothing to take, claim or offer (a window of receives posted ahead).
  r->receive_handle = matcher.post_expected({context, r->peer, r->tag}, r->id);
  withdraw_if_sender_dead(r);
  return Status::ok();
}

// start_receive when a message may already wait, or must be claimed first
// (one-sided cancel), or the NIC may take the receive.
Status Engine::start_matching_receive(Request* r, matching::ContextId context) {
  const matching::ReceivePattern pattern{context, r->peer, r->tag};
  settle_unexpected(pattern, true);  // one-sided cancel: claim before taking
  auto posted = matching_.post_receive(pattern, r->id);
  flush_nic_ops();
  if (posted.in_slot) {
    PendingMessage message = matching_.queued(*posted.in_slot);
    deliver(r, message, matching_.queued_data(*posted.in_slot));  // an eager one: copied now
    matching_.drop(*posted.in_slot);
    run_deferred();
    return Status::ok();
  }
  if (posted.message) {
    PendingMessage& message = *posted.message;
    deliver(r, message, message.data);
    run_deferred();
    return Status::ok();
  }
  r->receive_handle = posted.handle;
  withdraw_if_sender_dead(r);
  return Status::ok();
}

// MPI_Cancel. A receive's is local: the posted receive leaves the matcher,
// or it has already matched and completes normally. A send's belongs to the
// send-cancel layer (src/cancel/).
Status Engine::cancel(Request* r) {
  if (r == nullptr) return {ErrorCode::kInvalidRequest, "cancel of a null request"};
  EngineGuard lock(mutex_);
  if (!r->active()) return Status::ok();  // nothing under way: reports not cancelled
  if (r->kind == RequestKind::kSchedule) {
    return {ErrorCode::kInvalidRequest,
            "MPI_Cancel of a nonblocking collective's request (erroneous: MPI-3.1 §5.12)"};
  }
  if (r->kind == RequestKind::kGeneralized) return Status::ok();  // its cancel_fn decides
  if (r->kind == RequestKind::kSend) {
    TW_DEBUG("cancel", "cancel of send " << r->id << " (tag " << r->tag << ", " << r->bytes
                                         << " B) asked, by " << send_cancel_->name());
    return send_cancel_->cancel(r);
  }
  if (r->complete()) return Status::ok();
  // Else a message took it, or the NIC's answer to the DEL decides.
  const bool withdrawn = withdraw_receive(r, Status::ok());
  TW_DEBUG("cancel", "cancel of receive "
                         << r->id << " (source " << r->peer << ", tag " << r->tag
                         << "): " << (withdrawn ? "cancelled" : "a message took it first"));
  if (withdrawn) complete_withdrawn(r, Status::ok());
  return Status::ok();
}

bool Engine::withdraw_receive(Request* r, const Status& reason) {
  switch (matching_.matcher().cancel_receive(r->receive_handle)) {
    case matching::NicMatcher::CancelOutcome::kCancelled:
      return true;
    case matching::NicMatcher::CancelOutcome::kAlreadyMatched:
      return false;
    case matching::NicMatcher::CancelOutcome::kPending:
      // Out of software's queue; the DEL is on its way to the NIC.
      if (!r->awaits(kNicDel)) {
        r->await(kNicDel);
        r->withdraw_reason = reason;
      }
      flush_nic_ops();
      return false;
  }
  return false;
}

void Engine::complete_withdrawn(Request* r, const Status& reason) {
  r->stop_awaiting(kNicDel);
  if (reason.is_ok()) {
    r->status = empty_status();  // other fields are undefined when cancelled
    r->status.cancelled = true;
  } else {
    note_error(r, reason);
  }
  maybe_complete(r);
}

void Engine::post_nic_ops() {
  std::vector<matching::NicOp> ops = matching_.matcher().take_ops();
  if (ops.empty()) return;
  if (Status s = nic_matching_->post_ops(ops); !s.is_ok()) {
    // The book now says the NIC has what it does not: nothing to recover.
    ++counters_.nic_errors;
    TW_ERROR("engine", "posting tag-matching operations: " << s.to_string());
  }
}

[[gnu::always_inline]] inline std::size_t Engine::take_envelope(Request* r, int source, int tag,
                                                                std::uint64_t length) {
  r->status.source = source;
  r->status.tag = tag;
  // Nothing past the buffer is written: we copy or read only what fits.
  if (length > r->bytes) note_truncation(r, source, tag, length);
  const std::size_t n = std::min<std::size_t>(length, r->bytes);
  r->status.count = n;
  return n;
}

void Engine::note_truncation(Request* r, int source, int tag, std::uint64_t length) {
  r->status.error = Status(ErrorCode::kTruncate,
                           "message of " + std::to_string(length) + " bytes from rank " +
                               std::to_string(source) + " (tag " + std::to_string(tag) +
                               ") does not fit a buffer of " + std::to_string(r->bytes) + " bytes");
}

void Engine::deliver_eager(Request* r, const Header& h, std::span<const std::uint8_t> payload) {
  const std::size_t n = take_envelope(r, h.source, h.tag, h.length);
  copy_small(r->buffer, payload.data(), n);
  if ((h.flags & kFlagSync) != 0) send_control(h.origin, MessageType::kSyncAck, h.request_id);
  maybe_complete(r);
}

void Engine::deliver(Request* r, PendingMessage& message,
                     std::span<const std::uint8_t> eager_data) {
  const std::size_t n = take_envelope(r, message.source, message.tag, message.length);
  if (message.type == MessageType::kEager) {
    copy_small(r->buffer, eager_data.data(), n);
    if (message.synchronous) {
      send_control(message.origin, MessageType::kSyncAck, message.sender_request_id);
    }
    maybe_complete(r);
    return;
  }
  // Rendezvous: read straight into the user's buffer, outside callbacks.
  rendezvous_.accept(r, std::move(message));
}

void Engine::protocol_defer_read(Request* r) {
  deferred_.push_back(Deferred{Deferred::Kind::kRead, 0, MessageType::kFin, 0, 0, r, {}});
}

void Engine::on_read_done(void* ctx, const Status& s) {
  auto* r = static_cast<Request*>(ctx);
  if (r->abandoned) return abandoned_op_done(r);
  r->engine->rendezvous_.read_done(r, s);
}

void Engine::send_control(int world_peer, MessageType type, std::uint64_t request_id,
                          std::uint8_t flags) {
  deferred_.push_back(
      Deferred{Deferred::Kind::kControl, world_peer, type, request_id, flags, nullptr, {}});
}

void Engine::run_deferred() {
  while (!deferred_.empty()) {
    std::vector<Deferred> batch;
    batch.swap(deferred_);
    for (const Deferred& d : batch) {
      if (d.kind == Deferred::Kind::kRead) {
        rendezvous_.read(d.request, {&Engine::on_read_done, d.request});
        continue;
      }
      if (is_dead(d.peer)) continue;  // a FIN or answer nobody will read
      if (d.kind == Deferred::Kind::kHeader) {
        Status s = send_header(d.peer, d.header);
        if (!s.is_ok()) {
          TW_WARN("engine", "control message to rank " << d.peer << " failed: " << s.to_string());
        }
        continue;
      }
      Header h;
      h.type = d.type;
      h.flags = d.flags;
      h.request_id = d.request_id;
      Status s = send_header(d.peer, h);
      if (!s.is_ok()) {
        TW_WARN("engine", "control message to rank " << d.peer << " failed: " << s.to_string());
      }
    }
  }
}

void Engine::cancel_defer_header(int world_peer, const Header& h) {
  deferred_.push_back(Deferred{Deferred::Kind::kHeader, world_peer, h.type, 0, 0, nullptr, h});
}

Status Engine::send_header(int world_peer, const Header& h) {
  auto issued = issue_header(world_peer, h, {});
  return issued ? Status::ok() : issued.status();
}

Result<transport::Issued> Engine::issue_header(int world_peer, const Header& h,
                                               transport::Completion done) {
  Header out = h;
  out.job_token = limits_.job_token;
  out.origin = world_->rank();
  // A cancel request must reach the peer's cancel agent while its
  // application computes (docs/architecture.md §4), and so must an abort;
  // everything else is polled for.
  const bool wake = (h.type == MessageType::kCancelRequest && (h.flags & kFlagCancelled) == 0) ||
                    (h.type == MessageType::kAbort && (h.flags & kFlagAbortSeen) == 0);
  return send_untagged(world_peer, encode(out), {}, done,
                       wake ? transport::Delivery::kWake : transport::Delivery::kPolled);
}

// --------------------------------------------------------- arrivals

void Engine::on_message(std::span<const std::uint8_t> header,
                        std::span<const std::uint8_t> payload) {
  if (Header h; decode_compact_eager(header, payload.size(), limits_, &h)) {
    on_envelope(h, payload, Arrival::kUntagged);
    return;
  }
  auto decoded = decode(header, payload, limits_);
  if (!decoded) {
    ++counters_.dropped_messages;
    TW_WARN("engine", "dropped a message: " << decoded.status().to_string());
    return;
  }
  switch (decoded->type) {
    case MessageType::kEager:
    case MessageType::kRts:
      on_envelope(*decoded, payload, Arrival::kUntagged);
      break;
    case MessageType::kFin:
    case MessageType::kSyncAck:
      on_remote_answer(*decoded);
      break;
    case MessageType::kCancelRequest:
      send_cancel_->on_cancel_request(*decoded);
      break;
    case MessageType::kCancelReply:
      send_cancel_->on_cancel_reply(*decoded);
      break;
    case MessageType::kAbort:
      if ((decoded->flags & kFlagAbortSeen) != 0) {
        if (decoded->origin < static_cast<int>(abort_seen_.size()))
          abort_seen_[decoded->origin] = 1;
        break;
      }
      on_abort(*decoded);
      break;
  }
}

// A peer called MPI_Abort: this rank ends too, with the same code, so that
// the job's status is the code whatever the launcher makes of the exits
// (Slurm's PMI-2 abort carries none). From any thread: the cancel agent
// takes it while the application computes.
void Engine::on_abort(const Header& h) {
  const int code = static_cast<int>(h.request_id & 0xff);
  if ((h.flags & kFlagLeft) != 0) {
    std::fprintf(stderr,
                 "[tagwire %d] rank %d exited without MPI_Finalize; this rank ends too (status "
                 "%d)\n",
                 world_->rank(), h.origin, code == 0 ? 1 : code);
  } else {
    std::fprintf(stderr, "[tagwire %d] rank %d called MPI_Abort(%d); this rank ends too\n",
                 world_->rank(), h.origin, code);
  }
  std::fflush(nullptr);  // the application's buffered output is not lost
  // The aborting rank is told this rank ends with the code itself, so it
  // need not have the launcher kill the job (abort_job). Given a few
  // milliseconds to leave; if it does not, the aborting rank's backstop
  // ends this rank.
  Header seen;
  seen.type = MessageType::kAbort;
  seen.flags = kFlagAbortSeen;
  bool sent = false;
  transport::Completion done{[](void* ctx, const Status&) { *static_cast<bool*>(ctx) = true; },
                             &sent};
  auto issued = issue_header(h.origin, seen, done);
  if (issued && *issued == transport::Issued::kDone) sent = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (issued && !sent && std::chrono::steady_clock::now() < deadline) transport_->progress();
  std::_Exit(code == 0 ? 1 : code);
}

// Every live peer is told to end with the code (woken if it sleeps) and
// answers that it does. Where the launcher ends every rank itself
// (tagwire-run), it is asked first. Elsewhere its abort is only the
// backstop for a peer that did not answer within kAbortAnswerWait (an
// application computing with the cancel agent off): Slurm's PMI-2 abort
// carries no code and kills the step, so a rank it kills exits with
// status 137 however quickly it was ending with the code itself.
void Engine::abort_job(int code, std::string_view why, bool left) {
  constexpr auto kAbortAnswerWait = std::chrono::milliseconds(500);
  const bool launcher_first = bootstrap_->abort_ends_every_rank();
  if (launcher_first) bootstrap_->abort(code, why);
  bool all_answered = true;
  {
    EngineGuard lock(mutex_);
    abort_seen_.assign(static_cast<std::size_t>(world_->size()), 0);
    Header h;
    h.type = MessageType::kAbort;
    h.flags = left ? kFlagLeft : 0;
    h.request_id = static_cast<std::uint64_t>(code & 0xff);
    std::vector<int> told;
    for (int peer = 0; peer < world_->size(); ++peer) {
      if (peer == world_->rank() || is_dead(peer)) continue;
      if (send_header(peer, h).is_ok()) {
        told.push_back(peer);
      } else {
        all_answered = false;
      }
    }
    const auto answered = [&] {
      for (int peer : told) {
        if (abort_seen_[static_cast<std::size_t>(peer)] == 0 && !is_dead(peer)) return false;
      }
      return true;
    };
    const auto deadline = std::chrono::steady_clock::now() + kAbortAnswerWait;
    while (!answered() && std::chrono::steady_clock::now() < deadline) transport_->progress();
    all_answered = all_answered && answered();
  }
  if (!launcher_first && !all_answered) bootstrap_->abort(code, why);
}

PendingMessage Engine::pending_from(const Header& h, bool with_slot) {
  PendingMessage message;
  if (with_slot) {
    message.slot = h.slot;
    message.slot_expected = h.slot_expected;
  }
  message.type = h.type;
  message.origin = h.origin;
  message.source = h.source;
  message.tag = h.tag;
  message.synchronous = (h.flags & kFlagSync) != 0;
  message.sender_request_id = h.request_id;
  message.length = h.length;
  message.remote_address = h.remote_address;
  return message;
}

void Engine::on_envelope(const Header& h, std::span<const std::uint8_t> payload, Arrival how) {
  // A blocking receive waiting without a request (never armed with tag
  // matching or one-sided cancel on, so neither block below is skipped).
  if (unnamed_.armed_for(h) && how == Arrival::kUntagged && take_unnamed(h, payload)) return;
  // One-sided cancel: a message its sender cancelled, or one that would
  // match but lost its slot descriptor, is dropped here, never seen by a
  // receive or a probe.
  if (one_sided_ && h.slot != 0 && !send_cancel_->admit(h, {h.context, h.source, h.tag})) return;
  // The cookie names the slot keep() will fill if the matcher queues the
  // message: asked after admit(), which may free one (a cancelled message).
  matching::IncomingMessage incoming{
      {h.context, h.source, h.tag}, h.request_id, h.length, matching_.next_cookie()};
  auto arrival = how == Arrival::kUntagged ? matching_.matcher().on_untagged(incoming)
                                           : matching_.matcher().on_unexpected(
                                                 incoming, how == Arrival::kTaggedSyncRequested);
  if (log::enabled(log::Level::kTrace)) [[unlikely]]
    trace_arrival(h, arrival.matched);
  if (arrival.matched && h.type == MessageType::kEager) {
    // An expected eager message (the common case): copied straight from
    // the transport's buffer, no PendingMessage made.
    deliver_eager(requests_.find(arrival.receive_cookie), h, payload);
    return;
  }
  PendingMessage message = pending_from(h, one_sided_);
  if (arrival.matched) {
    Request* r = requests_.find(arrival.receive_cookie);
    if (h.type == MessageType::kRts) message.data.assign(payload.begin(), payload.end());
    deliver(r, message, payload);
  } else {
    matching_.keep(incoming.cookie, message, payload);
    ++counters_.unexpected;
  }
}

void Engine::on_remote_answer(const Header& h) {
  Request* r = requests_.find(h.request_id);
  if (r == nullptr || r->kind != RequestKind::kSend || !r->awaits(kRemoteAnswer)) {
    ++counters_.dropped_messages;
    TW_WARN("engine",
            "answer for unknown send request " << h.request_id << " from rank " << h.origin);
    return;
  }
  r->stop_awaiting(kRemoteAnswer);
  r->remote_matched = true;
  RendezvousProtocol::on_fin(r);  // the peer has read it: close the window now
  maybe_complete(r);
}

// --------------------------------------------------------------- progress

unsigned Engine::progress() {
  EngineGuard lock(mutex_);
  return progress_locked();
}

// ------------------------------------------------------------- completion

Result<bool> Engine::test_locked(Request* r, MessageStatus* status) {
  if (null_or_inactive(r)) {
    if (status != nullptr) *status = empty_status();
    return true;
  }
  if (!r->complete()) progress_locked();
  if (!r->complete()) return false;
  finish(r, status);
  return true;
}

Result<bool> Engine::test(Request* r, MessageStatus* status) {
  EngineGuard lock(mutex_);
  return test_locked(r, status);
}

Status Engine::wait(Request* r, MessageStatus* status) {
  std::unique_lock lock(mutex_);
  if (null_or_inactive(r)) {
    if (status != nullptr) *status = empty_status();
    return Status::ok();
  }
  // Done already (a window's eager sends, a receive a poll matched)
  // finishes without a poll.
  poll_until(lock, [r] { return r->complete(); });
  finish(r, status);
  return Status::ok();
}

Result<bool> Engine::peek_status(Request* r, MessageStatus* status) {
  EngineGuard lock(mutex_);
  if (null_or_inactive(r)) {
    if (status != nullptr) *status = empty_status();
    return true;
  }
  if (!r->complete()) progress_locked();
  if (r->complete() && status != nullptr) *status = r->status;
  return r->complete();
}

Result<int> Engine::wait_any(std::span<Request* const> requests, MessageStatus* status) {
  IdleBackoff idle;
  for (;;) {
    std::unique_lock lock(mutex_);
    bool any_active = false;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      Request* r = requests[i];
      if (null_or_inactive(r)) continue;
      any_active = true;
      if (r->complete()) {
        finish(r, status);
        return static_cast<int>(i);
      }
    }
    if (!any_active) {
      if (status != nullptr) *status = empty_status();
      return -1;
    }
    unsigned n = progress_locked();
    lock.unlock();
    idle.turn(n != 0);
  }
}

Status Engine::wait_all(std::span<Request* const> requests, std::span<MessageStatus> statuses) {
  return wait_all(
      requests,
      [](void* context, std::size_t index, const MessageStatus& status) {
        auto* into = static_cast<std::span<MessageStatus>*>(context);
        if (index < into->size()) (*into)[index] = status;
      },
      &statuses);
}

Status Engine::wait_all(std::span<Request* const> requests, Finished finished, void* context) {
  return wait_all_with(requests, [&](std::size_t index, const MessageStatus& status) {
    finished(context, index, status);
  });
}

Result<std::vector<int>> Engine::test_some(std::span<Request* const> requests,
                                           std::span<MessageStatus> statuses) {
  EngineGuard lock(mutex_);
  progress_locked();
  std::vector<int> done;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    Request* r = requests[i];
    if (null_or_inactive(r) || !r->complete()) continue;
    finish(r, i < statuses.size() ? &statuses[i] : nullptr);
    done.push_back(static_cast<int>(i));
  }
  return done;
}

Status Engine::start(Request* r) {
  if (r == nullptr) return {ErrorCode::kInvalidRequest, "null request"};
  if (r->kind == RequestKind::kSchedule) return restart_schedule(r);
  EngineGuard lock(mutex_);
  if (!r->persistent) return {ErrorCode::kInvalidRequest, "start of a non-persistent request"};
  if (r->active()) return {ErrorCode::kInvalidRequest, "start of an active persistent request"};
  if (r->abandoned) {
    // Its last operation's transport work with a dead rank is still out:
    // a new one would be counted with it, and complete before its own.
    if (r->local_pending > 0) {
      return {ErrorCode::kPeerFailed,
              "start of a persistent request whose last operation, with a rank that died, the "
              "transport still holds"};
    }
    r->abandoned = false;
  }
  return start_operation(r);
}

Status Engine::request_free(Request* r) {
  if (r == nullptr) return {ErrorCode::kInvalidRequest, "free of a null request"};
  EngineGuard lock(mutex_);
  if (r->user_freed) return {ErrorCode::kInvalidRequest, "request freed twice"};
  if (!r->active() || r->complete()) {
    release_request(r);
  } else {
    r->user_freed = true;   // released when its operation completes
    r->handed_out = false;  // its handle is dead from now on
  }
  return Status::ok();
}

// ------------------------------------------------------------------ probe

Result<bool> Engine::iprobe(int source, int tag, Communicator* comm, MessageStatus* status) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  TAGWIRE_RETURN_IF_ERROR(check_peer(comm, source, true, "source"));
  TAGWIRE_RETURN_IF_ERROR(check_tag(tag, true));
  if (source == kProcNull) {
    if (status != nullptr) *status = proc_null_status();
    return true;
  }
  EngineGuard lock(mutex_);
  matching::ReceivePattern pattern{comm->p2p_context(), source, tag};
  settle_unexpected(pattern, false);  // a probe never shows a cancelled send
  auto found = matching_.matcher().probe(pattern);
  if (!found) {
    progress_locked();
    settle_unexpected(pattern, false);
    found = matching_.matcher().probe(pattern);
  }
  if (!found) return false;
  if (status != nullptr) {
    *status = MessageStatus{};
    status->source = found->envelope.source;
    status->tag = found->envelope.tag;
    status->count = found->length;
  }
  return true;
}

Status Engine::probe(int source, int tag, Communicator* comm, MessageStatus* status) {
  IdleBackoff idle;
  for (;;) {
    auto found = iprobe(source, tag, comm, status);
    if (!found) return found.status();
    if (*found) return Status::ok();
    idle.turn(false);
  }
}

Result<std::unique_ptr<Message>> Engine::improbe(int source, int tag, Communicator* comm,
                                                 MessageStatus* status) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  TAGWIRE_RETURN_IF_ERROR(check_peer(comm, source, true, "source"));
  TAGWIRE_RETURN_IF_ERROR(check_tag(tag, true));
  if (source == kProcNull) {
    if (status != nullptr) *status = proc_null_status();
    auto message = std::make_unique<Message>();
    message->pending.source = kProcNull;  // MPI_MESSAGE_NO_PROC
    return message;
  }
  EngineGuard lock(mutex_);
  matching::ReceivePattern pattern{comm->p2p_context(), source, tag};
  settle_unexpected(pattern, true);  // mprobe takes the message: claim it first
  auto found = matching_.mprobe(pattern);
  if (!found) {
    progress_locked();
    settle_unexpected(pattern, true);
    found = matching_.mprobe(pattern);
  }
  if (!found) return std::unique_ptr<Message>();
  auto message = std::make_unique<Message>();
  message->pending = std::move(*found);
  message->comm = comm;
  if (status != nullptr) {
    *status = MessageStatus{};
    status->source = message->pending.source;
    status->tag = message->pending.tag;
    status->count = message->pending.length;
  }
  return message;
}

Result<std::unique_ptr<Message>> Engine::mprobe(int source, int tag, Communicator* comm,
                                                MessageStatus* status) {
  IdleBackoff idle;
  for (;;) {
    auto message = improbe(source, tag, comm, status);
    if (!message || *message) return message;
    idle.turn(false);
  }
}

Result<Request*> Engine::imrecv(void* buffer, std::size_t bytes, std::unique_ptr<Message> message) {
  if (!message) return Status(ErrorCode::kInvalidRequest, "mrecv of a null message");
  TAGWIRE_RETURN_IF_ERROR(check_buffer(buffer, bytes));
  EngineGuard lock(mutex_);
  Request* r = new_request(RequestKind::kReceive);
  r->set_phase(RequestPhase::kRunning);
  r->buffer = buffer;
  r->bytes = bytes;
  r->comm = message->comm;
  if (message->comm == nullptr) {
    complete_null(r);
    return r;
  }
  deliver(r, message->pending, message->pending.data);
  run_deferred();
  return r;
}

// ----------------------------------------------------------- buffered sends

Status Engine::buffer_attach(void* buffer, std::size_t bytes) {
  EngineGuard lock(mutex_);
  return buffered_.buffer().attach(buffer, bytes);
}

Result<std::pair<void*, std::size_t>> Engine::buffer_detach() {
  IdleBackoff idle;
  for (;;) {
    unsigned n;
    {
      EngineGuard lock(mutex_);
      if (!buffered_.buffer().in_use()) break;
      n = progress_locked();  // the standard: detach blocks until buffered messages are sent
    }
    idle.turn(n != 0);
  }
  EngineGuard lock(mutex_);
  return buffered_.buffer().detach();
}

// --------------------------------------------------------- communicators

// A small step as a ping-pong's messages go (send_unnamed, then
// receive_unnamed): the requests, their vector and their wait were most
// of an 8-byte MPI_Allreduce at 2 ranks (collectives.cc). The send goes
// first: it is eager, so it never waits for the partner's receive.
bool Engine::exchange_unnamed(Communicator* comm, int to, std::span<const std::uint8_t> out,
                              int from, std::span<std::uint8_t> in, int tag, Status* result) {
  if (comm->inter() || dead_peers_.any()) return false;  // the request path's rules
  Status failed;
  if (!send_unnamed(out.data(), out.size(), to, tag, comm, SendMode::kStandard, &failed, true)) {
    return false;
  }
  if (!failed.is_ok()) {
    *result = failed.with_context("collective");
    return true;
  }
  *result = collective_receive(comm, from, in, tag).with_context("collective");
  return true;
}

Status Engine::collective_receive(Communicator* comm, int from, std::span<std::uint8_t> in,
                                  int tag) {
  MessageStatus status;
  if (receive_unnamed(in.data(), in.size(), from, tag, comm, &status, true)) {
    return std::move(status.error);
  }
  // The message needs a request (too long for `in`, a rendezvous) or the
  // direct path is closed (another thread, a death meanwhile: the
  // collective post fails at once then).
  auto r = post_collective(RequestKind::kReceive, in.data(), in.size(), from, tag, comm);
  if (!r) return r.status();
  Status waited = wait(*r, &status);
  return waited.is_ok() ? std::move(status.error) : waited;
}

Status Engine::exchange(Communicator* comm, int to, std::span<const std::uint8_t> out, int from,
                        std::span<std::uint8_t> in, int tag, bool partner_only) {
  if (Status s; !partner_only && exchange_unnamed(comm, to, out, from, in, tag, &s)) return s;
  std::vector<Request*> requests;
  {
    EngineGuard lock(mutex_);
    // A step that fails with any member's death fails at once after one
    // (peer_failure.cc's rule): a partner may have given up already.
    if (!partner_only) {
      if (const int dead = dead_member(comm); dead >= 0) return peer_failed_status(dead);
    }
    const std::pair<RequestKind, int> legs[] = {{RequestKind::kReceive, from},
                                                {RequestKind::kSend, to}};
    for (auto [kind, peer] : legs) {
      Request* r = new_request(kind);
      r->collective = true;
      r->partner_only = partner_only;
      r->comm = comm;
      r->peer = peer;
      r->tag = tag;
      r->bytes = kind == RequestKind::kSend ? out.size() : in.size();
      r->buffer = kind == RequestKind::kSend ? const_cast<std::uint8_t*>(out.data()) : in.data();
      Status s = start_operation(r);
      if (!s.is_ok()) {
        release_request(r);
        // The receive already posted must not outlive the buffer it names:
        // withdraw it (if a message already matched it, it completes into
        // `in` now or never, and is released when it does).
        for (Request* posted : requests) {
          if (withdraw_receive(posted, Status::ok()) || posted->complete()) {
            release_request(posted);
          } else {
            posted->user_freed = true;
          }
        }
        return s.with_context("collective");
      }
      requests.push_back(r);
    }
  }
  std::vector<MessageStatus> statuses(requests.size());
  return wait_all(requests, statuses);
}

Status Engine::collective_exchange_all(Communicator* comm, std::span<const Outgoing> sends,
                                       std::span<const Incoming> receives, int tag) {
  Status result;
  std::vector<Request*> sending;  // the sends that needed a request
  for (const Outgoing& o : sends) {
    Status failed;
    if (send_unnamed(o.bytes.data(), o.bytes.size(), o.peer, tag, comm, SendMode::kStandard,
                     &failed, true)) {
      result = std::move(failed);
    } else if (auto r =
                   post_collective(RequestKind::kSend, const_cast<std::uint8_t*>(o.bytes.data()),
                                   o.bytes.size(), o.peer, tag, comm)) {
      sending.push_back(*r);
    } else {
      result = r.status();
    }
    if (!result.is_ok()) break;
  }
  for (std::size_t i = 0; result.is_ok() && i < receives.size(); ++i) {
    result = collective_receive(comm, receives[i].peer, receives[i].bytes, tag);
  }
  // The sends name the caller's buffers: they end here, whatever happened
  // (a collective's request fails at once once a member is dead).
  if (!sending.empty()) {
    std::vector<MessageStatus> statuses(sending.size());
    Status sent = wait_all(sending, statuses);
    if (result.is_ok()) result = std::move(sent);
  }
  return result.is_ok() ? result : result.with_context("collective");
}

Result<std::vector<std::vector<std::uint8_t>>> Engine::allgather(Communicator* comm,
                                                                 std::span<const std::uint8_t> mine,
                                                                 int tag) {
  // Bruck's algorithm: ceil(log2 n) steps; at distance d a rank sends the
  // blocks it holds to rank-d and receives as many from rank+d. `rotated`
  // holds block i = the part of rank (me + i) mod n. A rank thus talks to
  // at most 2 ceil(log2 n) peers: communicator creation never connects
  // everyone to everyone (connections are made on first use).
  const auto n = static_cast<std::size_t>(comm->size());
  const auto me = static_cast<std::size_t>(comm->rank());
  const std::size_t m = mine.size();
  std::vector<std::uint8_t> rotated(n * m);
  std::copy(mine.begin(), mine.end(), rotated.begin());
  for (std::size_t d = 1; d < n; d <<= 1) {
    const std::size_t count = std::min(d, n - d);
    TAGWIRE_RETURN_IF_ERROR(exchange(comm, static_cast<int>((me + n - d) % n),
                                     {rotated.data(), count * m}, static_cast<int>((me + d) % n),
                                     {rotated.data() + d * m, count * m}, tag));
  }
  std::vector<std::vector<std::uint8_t>> parts(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto block = rotated.begin() + static_cast<std::ptrdiff_t>(i * m);
    parts[(me + i) % n].assign(block, block + static_cast<std::ptrdiff_t>(m));
  }
  return parts;
}

Result<std::uint32_t> Engine::agree_context_id(Communicator* comm, int tag) {
  std::uint32_t mine;
  {
    EngineGuard lock(mutex_);
    mine = next_context_id_;
  }
  std::uint8_t bytes[4];
  std::memcpy(bytes, &mine, 4);
  auto all = allgather(comm, bytes, tag);
  if (!all) return all.status();
  std::uint32_t agreed = 0;
  for (const auto& part : *all) {
    std::uint32_t v;
    std::memcpy(&v, part.data(), 4);
    agreed = std::max(agreed, v);
  }
  EngineGuard lock(mutex_);
  next_context_id_ = agreed + 1 + kIdupReserve;  // and the new communicator's idup ids
  return agreed;
}

Result<Communicator*> Engine::comm_dup(Communicator* comm) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  if (comm->inter()) return intercomm_dup(comm);
  auto id = agree_context_id(comm, kCollectiveTag);
  if (!id) return id.status();
  return adopt(std::make_unique<Communicator>(*id, comm->world_ranks(), comm->rank()));
}

Result<Communicator*> Engine::comm_idup(Communicator* comm) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  std::optional<Communicator::IdupIds> ids;
  {
    EngineGuard lock(mutex_);
    ids = comm->take_idup_id();
  }
  // The block used up: an agreement like MPI_Comm_dup's (it waits for the
  // other members to call it too).
  if (!ids) return comm_dup(comm);
  // The same groups (no remote group: an intracommunicator again).
  auto dup = std::make_unique<Communicator>(ids->id, comm->world_ranks(), comm->rank(),
                                            comm->remote_world_ranks());
  if (ids->block) dup->set_idup_block(*ids->block, false);
  return adopt(std::move(dup), false);
}

Result<Communicator*> Engine::comm_split(Communicator* comm, int color, int key) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  if (color < 0 && color != kUndefinedColor) {
    return Status(ErrorCode::kInvalidArgument, "split color must be >= 0 or MPI_UNDEFINED");
  }
  if (comm->inter()) return intercomm_split(comm, color, key);
  std::int32_t mine[2] = {color, key};
  auto all =
      allgather(comm, {reinterpret_cast<const std::uint8_t*>(mine), sizeof(mine)}, kCollectiveTag);
  if (!all) return all.status();
  auto id = agree_context_id(comm, kCollectiveTag);
  if (!id) return id.status();
  if (color == kUndefinedColor) return static_cast<Communicator*>(nullptr);
  std::vector<int> world_ranks = members_of_color(comm->world_ranks(), color, [&](int r) {
    return (*all)[static_cast<std::size_t>(r)].data();
  });
  const int my_rank = static_cast<int>(
      std::find(world_ranks.begin(), world_ranks.end(), world_->rank()) - world_ranks.begin());
  return adopt(std::make_unique<Communicator>(*id, std::move(world_ranks), my_rank));
}

std::vector<int> Engine::members_of_color(
    const std::vector<int>& group, int color,
    const std::function<const std::uint8_t*(int)>& color_key) {
  std::vector<std::pair<std::int32_t, int>> members;  // (key, rank in group)
  for (int r = 0; r < static_cast<int>(group.size()); ++r) {
    std::int32_t theirs[2];
    std::memcpy(theirs, color_key(r), sizeof(theirs));
    if (theirs[0] == color) members.emplace_back(theirs[1], r);
  }
  std::sort(members.begin(), members.end());
  std::vector<int> world_ranks;
  for (const auto& member : members) {
    world_ranks.push_back(group[static_cast<std::size_t>(member.second)]);
  }
  return world_ranks;
}

// A communicator id for the members of one MPI_Comm_create_group, the
// same at each of them: a hash of the parent's id and the world ranks in
// group order, above every id agree_context_id hands out (those count up
// from 2, and 2^30 communicators are never made).
std::uint32_t Engine::scratch_context_id(std::uint32_t parent, const std::vector<int>& members) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
      h = (h ^ ((v >> (8 * i)) & 0xffu)) * 1099511628211ull;
    }
  };
  mix(parent);
  for (int w : members) mix(static_cast<std::uint32_t>(w));
  return kScratchContextIds | static_cast<std::uint32_t>(h % kScratchContextIds);
}

Result<Communicator*> Engine::comm_create_group(Communicator* comm, const std::vector<int>& members,
                                                int tag) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  TAGWIRE_RETURN_IF_ERROR(check_tag(tag, false));
  const auto mine = std::find(members.begin(), members.end(), world_->rank());
  if (mine == members.end()) return static_cast<Communicator*>(nullptr);
  // Only the members agree, so they do it on a scratch communicator of
  // their own: ranks numbered as in the group, a tag of the user's that no
  // engine collective uses (kCollectiveTag is 1), so that another
  // Comm_create_group with another tag cannot take its messages, and a
  // context of this membership's own. (On the parent's context, a rank
  // that finished one call and started the next, with another group and
  // the same tag, sent under its new group rank, which a slower member
  // still in the first call took for another process's: MPICH's
  // comm_group_rand, truncated messages and hangs.)
  Communicator scratch(scratch_context_id(comm->id(), members), members,
                       static_cast<int>(mine - members.begin()));
  auto id = agree_context_id(&scratch, kCollectiveTag + 1 + tag);
  if (!id) return id.status();
  return adopt(std::make_unique<Communicator>(*id, members, scratch.rank()));
}

Status Engine::comm_free(Communicator* comm) {
  EngineGuard lock(mutex_);
  if (comm == world_.get() || comm == self_.get()) {
    return {ErrorCode::kInvalidComm, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed"};
  }
  auto it =
      std::find_if(comms_.begin(), comms_.end(), [&](const auto& c) { return c.get() == comm; });
  if (it == comms_.end()) return {ErrorCode::kInvalidComm, "unknown or already freed communicator"};
  // Operations still pending on it complete normally (MPI-3.1 §6.4.3: the
  // free only marks it): their requests and schedules keep pointing at it,
  // so it stays until the engine ends.
  bool in_use = false;
  requests_.for_each([&](Request* r) { in_use = in_use || (r->comm == comm && r->active()); });
  if (in_use) retired_comms_.push_back(std::move(*it));
  comms_.erase(it);
  return Status::ok();
}

Result<Request*> Engine::post_collective(RequestKind kind, void* buffer, std::size_t bytes,
                                         int peer, int tag, Communicator* comm) {
  if (comm != nullptr && comm->inter()) return not_on_intercomm("collective operations");
  EngineGuard lock(mutex_);  // the agent may be adding a dead rank
  return post_collective_locked(kind, buffer, bytes, peer, tag, comm);
}

Result<Request*> Engine::post_collective_locked(RequestKind kind, void* buffer, std::size_t bytes,
                                                int peer, int tag, Communicator* comm,
                                                bool remote) {
  // A collective on a communicator with a dead member fails at once at
  // every rank that knows of the death (peer_failure.cc). (The engine's
  // barrier runs all its rounds instead: exchange().)
  if (const int dead = dead_member(comm); dead >= 0) return peer_failed_status(dead);
  TAGWIRE_RETURN_IF_ERROR(check_request(kind, buffer, bytes, peer, tag, comm, !remote));
  Request* r = fill_request(kind, buffer, bytes, peer, tag, comm, SendMode::kStandard, true);
  r->remote_group = remote;
  return start_made(r);
}

Status Engine::barrier(Communicator* comm, bool stop_at_death) {
  if (comm != nullptr && comm->inter()) return not_on_intercomm("MPI_Barrier");
  // Dissemination barrier: in round k each rank signals rank+2^k and hears
  // from rank-2^k; after ceil(log2 n) rounds everyone has (transitively)
  // heard from everyone. Finalize uses it too, so it must not connect all
  // pairs.
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  const int n = comm->size();
  const int me = comm->rank();
  std::uint8_t out = 0;
  std::uint8_t in = 0;
  Status first_failure;
  for (int d = 1; d < n; d <<= 1) {
    Status s = exchange(comm, (me + d) % n, {&out, 1}, (me + n - d) % n, {&in, 1}, kCollectiveTag,
                        /*partner_only=*/!stop_at_death);
    if (s.is_ok()) continue;
    if (s.code() != ErrorCode::kPeerFailed || stop_at_death) return s;
    // A round with a dead partner fails, and the rounds after it still
    // run: a live rank waits in each round for a live one's signal, which
    // must not be skipped (finalize with a dead rank let some ranks leave
    // their barrier early, and a live rank waited for ever for one gone).
    // So a round fails only with its own partner's death, not with any
    // member's as other collective steps do (depends_on): with that rule
    // a rank left finalize's barrier at once, unlinked its shared memory,
    // and a rank still in its rounds failed to reach it and hung the job
    // (peer_kill over shm, 1 run in a few: the launcher test's 20 s check).
    if (first_failure.is_ok()) first_failure = std::move(s);
  }
  return first_failure;
}

// --------------------------------------------------------------- counters

EngineCounters Engine::counters() const {
  EngineGuard lock(mutex_);
  EngineCounters c = counters_;
  c.matching = matching_.matcher().counters();
  c.nic_entries_in_book = matching_.matcher().nic_entries();
  c.unexpected_bytes_peak = matching_.held_peak();
  return c;
}

transport::TransportCounters Engine::transport_counters() const {
  EngineGuard lock(mutex_);
  return transport_->counters();
}

}  // namespace tagwire::engine
