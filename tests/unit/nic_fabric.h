// NicFabric: engines of one job in one process, one thread per rank,
// over a transport whose NIC matches tags as rdma-core's contract says
// (ContractNic). No device here has tag matching; this is how the engine's
// side of it (transport/nic_matching.h) is driven through the contract's
// event sequences without one.
//
// What the fake does, per rank:
//  - send() and send_tagged() put the message in the peer's inbox, one
//    ordered queue per receiver (one RC channel per pair would order less:
//    nothing relies on order across senders);
//  - post_ops() hands the NIC operations to the rank's ContractNic, which
//    executes them later, at progress();
//  - progress() takes a random number of steps, each at random either the
//    NIC's next operation or the next arrival (tagged: the NIC matches it
//    or counts it unexpected; untagged: straight to the engine), then
//    reports everything in the order it happened, then ends the batch. The
//    random order is the NIC's asynchrony: operations and arrivals race;
//  - an entry's buffer is the transport's: a matched message is handed to
//    the engine from it, header and payload, as the NIC would have put it;
//  - read() and write() are memcpy (the ranks share the address space);
//  - with `through_port` (verbs builds), the NIC's reports do not go to the
//    engine directly but through the verbs NicMatchingPort, as the
//    completions a TM-SRQ would produce (FabricSrq): a match's body copied
//    into the buffer the port gave the entry's ADD, an unexpected or NO_TAG
//    message, TMH and all, into one of the port's SRQ buffers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "../support/plain_memory.h"
#include "../support/thread_bootstrap.h"
#include "bootstrap/bootstrap.h"
#include "cancel/send_cancel_factory.h"
#include "contract_nic.h"
#include "engine/engine.h"
#include "transport/nic_matching.h"
#include "transport/transport.h"
#if defined(TAGWIRE_HAVE_VERBS)
#include "../verbs/contract_tm_srq.h"
#include "verbs/nic_matching_port.h"
#include "verbs/tm_header.h"
#endif

namespace tagwire::engine::testing {

using matching::testing::ContractNic;

struct FabricOptions {
  int ranks = 2;
  std::uint32_t capacity = 4;  // entries each NIC may hold
  ContractNic::StaleAdd stale = ContractNic::StaleAdd::kHeldUnused;
  std::uint32_t sync_request_every = 0;  // the NIC asks for a sync every N unexpected
  std::uint32_t seed = 1;
  std::size_t eager_threshold = 256;
  std::uint32_t max_steps = 6;  // per progress() call
  // False for a job that declared ranks dead: finalize's barrier fails.
  bool check_finalize = true;
  // The NIC's reports reach the engine through verbs::NicMatchingPort.
  bool through_port = false;
  // This rank's transport offers no NIC matching (a misconfigured job).
  int rank_without_nic_matching = -1;
};

struct Wire {
  bool tagged = false;
  std::uint64_t nic_tag = 0;
  std::vector<std::uint8_t> header;
  std::vector<std::uint8_t> payload;
};

// What all ranks share: inboxes and the bootstrap's meeting point.
class Fabric {
 public:
  explicit Fabric(const FabricOptions& options)
      : options_(options),
        inboxes_(static_cast<std::size_t>(options.ranks)),
        meeting_(options.ranks) {}
  const FabricOptions& options() const { return options_; }

  void push(int to, Wire wire) {
    Inbox& box = inboxes_[static_cast<std::size_t>(to)];
    std::lock_guard lock(box.mutex);
    box.queue.push_back(std::move(wire));
  }
  bool pop(int rank, Wire* out) {
    Inbox& box = inboxes_[static_cast<std::size_t>(rank)];
    std::lock_guard lock(box.mutex);
    if (box.queue.empty()) return false;
    *out = std::move(box.queue.front());
    box.queue.pop_front();
    return true;
  }
  std::size_t queued(int rank) {
    Inbox& box = inboxes_[static_cast<std::size_t>(rank)];
    std::lock_guard lock(box.mutex);
    return box.queue.size();
  }

  std::vector<std::vector<std::uint8_t>> allgather(int rank, std::span<const std::uint8_t> mine) {
    return meeting_.allgather(rank, mine);
  }
  tagwire::testing::ThreadMeeting* meeting() { return &meeting_; }

  // Test-level signals between ranks (not messages: they would count).
  std::atomic<int> flag{0};

 private:
  struct Inbox {
    std::mutex mutex;
    std::deque<Wire> queue;
  };
  FabricOptions options_;
  std::deque<Inbox> inboxes_;
  tagwire::testing::ThreadMeeting meeting_;
};

#if defined(TAGWIRE_HAVE_VERBS)
// The TM-SRQ under a NicMatchingPort, played by the fabric: operations go
// to the rank's ContractNic; completions are what the test queues.
class FabricSrq final : public verbs::TmSrq {
 public:
  explicit FabricSrq(ContractNic* nic) : nic_(nic) {}
  Status post_buffer(std::uint64_t wr_id, verbs::LocalBuffer buffer) override {
    buffers.push_back({wr_id, buffer});
    return Status::ok();
  }
  Result<std::uint32_t> post_op(const matching::NicOp& op, verbs::LocalBuffer add_buffer,
                                std::uint32_t del_handle) override {
    nic_->submit({op});
    if (op.kind != matching::NicOp::Kind::kAdd) return del_handle;
    add_buffers[op.entry] = add_buffer;
    return next_handle++;
  }
  Status poll(unsigned max, std::vector<verbs::TmCompletion>* out) override {
    for (unsigned i = 0; i < max && !cq.empty(); ++i) {
      out->push_back(cq.front());
      cq.pop_front();
    }
    return Status::ok();
  }
  std::deque<std::pair<std::uint64_t, verbs::LocalBuffer>> buffers;
  std::unordered_map<std::uint64_t, verbs::LocalBuffer> add_buffers;
  std::deque<verbs::TmCompletion> cq;

 private:
  ContractNic* nic_;
  std::uint32_t next_handle = 1;
};
#endif

class FabricTransport final : public transport::Transport, public transport::NicMatching {
 public:
  FabricTransport(Fabric* fabric, int rank)
      : fabric_(fabric),
        rank_(rank),
        nic_(fabric->options().stale, fabric->options().sync_request_every),
        random_(fabric->options().seed * 7919u + static_cast<std::uint32_t>(rank)) {
#if defined(TAGWIRE_HAVE_VERBS)
    if (fabric->options().through_port) {
      auto srq = std::make_unique<FabricSrq>(&nic_);
      srq_ = srq.get();
      verbs::NicMatchingPortOptions options;
      options.entries = fabric->options().capacity;
      options.message_bytes = static_cast<std::uint32_t>(kMaxTaggedMessage);
      options.unexpected_buffers = 64;  // reposted at once: a report uses a few
      auto port = verbs::NicMatchingPort::create_with(options, std::move(srq));
      if (port) port_ = std::move(port).value();
    }
#endif
  }

  // ---- Transport
  std::string_view name() const override {
    return "nic-fabric";
  }
  bool connects_on_first_use() const override {
    return false;
  }
  std::vector<std::uint8_t> address() const override {
    return {static_cast<std::uint8_t>(rank_)};
  }
  Status set_peer_addresses(std::vector<std::vector<std::uint8_t>>) override {
    return Status::ok();
  }
  void set_receiver(transport::Receiver* receiver) override {
    receiver_ = receiver;
  }
  std::size_t max_header() const override {
    return 64;
  }
  Result<transport::Issued> send(transport::PeerId peer, std::span<const std::uint8_t> header,
                                 std::span<const std::uint8_t> payload, transport::Completion,
                                 transport::Delivery) override {
    // As the verbs transport: while the engine holds the facet, untagged
    // messages go by send_untagged, on the tagged messages' channel.
    if (sink_ != nullptr) {
      return Status(ErrorCode::kInvalidArgument, "send() while the NIC matches: use send_untagged");
    }
    fabric_->push(peer,
                  Wire{false, 0, {header.begin(), header.end()}, {payload.begin(), payload.end()}});
    return transport::Issued::kDone;
  }
  Result<std::unique_ptr<transport::Registration>> register_memory(
      void* address, std::size_t length, transport::RemoteAccess) override {
    return std::unique_ptr<transport::Registration>(
        new tagwire::testing::PlainRegistration(address, length));
  }
  Result<transport::Issued> read(transport::PeerId, std::span<std::uint8_t> local,
                                 std::uint64_t remote_address, std::span<const std::uint8_t>,
                                 transport::Completion) override {
    std::memcpy(local.data(), reinterpret_cast<const void*>(remote_address), local.size());
    return transport::Issued::kDone;
  }
  Result<transport::Issued> write(transport::PeerId, std::span<const std::uint8_t> local,
                                  std::uint64_t remote_address, std::span<const std::uint8_t>,
                                  transport::Completion) override {
    std::memcpy(reinterpret_cast<void*>(remote_address), local.data(), local.size());
    return transport::Issued::kDone;
  }
  Result<transport::Issued> flush(transport::Completion) override {
    return transport::Issued::kDone;
  }
  Result<transport::Issued> compare_and_swap(transport::PeerId, std::uint64_t,
                                             std::span<const std::uint8_t>, std::uint64_t,
                                             std::uint64_t, std::uint64_t*,
                                             transport::Completion) override {
    return Status(ErrorCode::kUnsupported, "the fabric has no remote atomics");
  }
  Result<std::uint64_t> local_compare_and_swap(const transport::Registration&, std::uint64_t* word,
                                               std::uint64_t expected,
                                               std::uint64_t desired) override {
    return tagwire::testing::plain_compare_and_swap(word, expected, desired);
  }
  unsigned progress() override;
  Result<bool> arm() override {
    return false;
  }
  int event_fd() const override {
    return -1;
  }
  Status disconnect_all() override {
    return Status::ok();
  }
  transport::TransportCounters counters() const override {
    return {};
  }
  transport::NicMatching* nic_matching() override {
    return rank_ == fabric_->options().rank_without_nic_matching ? nullptr : this;
  }

  // ---- NicMatching
  std::uint32_t capacity() const override {
    return fabric_->options().capacity;
  }
  static constexpr std::size_t kMaxTaggedMessage = 8192;
  std::size_t max_tagged_message() const override {
    return kMaxTaggedMessage;
  }
  void set_sink(transport::NicMatchingSink* sink) override {
    sink_ = sink;
  }
  Result<transport::Issued> send_tagged(transport::PeerId peer, std::uint64_t nic_tag,
                                        std::span<const std::uint8_t> header,
                                        std::span<const std::uint8_t> payload,
                                        transport::Completion) override {
    if (header.size() + payload.size() > max_tagged_message()) {
      return Status(ErrorCode::kInvalidCount, "tagged message larger than an entry's buffer");
    }
    ++tagged_sent_;
    fabric_->push(
        peer,
        Wire{true, nic_tag, {header.begin(), header.end()}, {payload.begin(), payload.end()}});
    return transport::Issued::kDone;
  }
  Result<transport::Issued> send_untagged(transport::PeerId peer,
                                          std::span<const std::uint8_t> header,
                                          std::span<const std::uint8_t> payload,
                                          transport::Completion, transport::Delivery) override {
    fabric_->push(peer,
                  Wire{false, 0, {header.begin(), header.end()}, {payload.begin(), payload.end()}});
    return transport::Issued::kDone;
  }
  Status post_ops(std::span<const matching::NicOp> ops) override {
#if defined(TAGWIRE_HAVE_VERBS)
    if (port_ != nullptr) return port_->post_ops(ops);
#endif
    nic_.submit({ops.begin(), ops.end()});
    return Status::ok();
  }

  // What the test looks at (from the rank's own thread).
  const ContractNic& nic() const {
    return nic_;
  }
  std::uint64_t tagged_sent() const {
    return tagged_sent_;
  }
#if defined(TAGWIRE_HAVE_VERBS)
  const verbs::NicMatchingPort* port() const {
    return port_.get();
  }
#endif

 private:
  // One event, in the order the NIC (or the channel) produced it.
  struct Event {
    bool untagged = false;
    ContractNic::Completion completion;
    std::uint64_t wire = 0;  // untagged, kMatch, kUnexpected: index in wires_
  };
  void take_completions();
  unsigned report();
#if defined(TAGWIRE_HAVE_VERBS)
  // In port mode: `e` as the TM-SRQ's completion, its data placed.
  void to_srq(const Event& e);
  std::unique_ptr<verbs::NicMatchingPort> port_;
  FabricSrq* srq_ = nullptr;
#endif

  Fabric* fabric_;
  int rank_;
  ContractNic nic_;
  std::mt19937 random_;
  transport::Receiver* receiver_ = nullptr;
  transport::NicMatchingSink* sink_ = nullptr;
  std::deque<Event> events_;
  std::unordered_map<std::uint64_t, Wire> wires_;
  std::uint64_t next_wire_ = 1;
  std::uint64_t tagged_sent_ = 0;
};

inline void FabricTransport::take_completions() {
  while (!nic_.cq.empty()) {
    Event e;
    e.completion = nic_.cq.front();
    nic_.cq.pop_front();
    if (e.completion.kind == ContractNic::Completion::Kind::kMatch ||
        e.completion.kind == ContractNic::Completion::Kind::kUnexpected) {
      e.wire = e.completion.message.id;
    }
    events_.push_back(e);
  }
}

inline unsigned FabricTransport::progress() {
  const unsigned steps = 1 + random_() % fabric_->options().max_steps;
  for (unsigned i = 0; i < steps; ++i) {
    const bool ops = nic_.has_pending_ops();
    const bool arrivals = fabric_->queued(rank_) != 0;
    if (!ops && !arrivals) break;
    if (ops && (!arrivals || random_() % 2 == 0)) {
      nic_.execute_one();
    } else {
      Wire wire;
      if (!fabric_->pop(rank_, &wire)) break;
      const std::uint64_t id = next_wire_++;
      const bool tagged = wire.tagged;
      const std::uint64_t nic_tag = wire.nic_tag;
      wires_.emplace(id, std::move(wire));
      if (tagged) {
        nic_.arrive({nic_tag, id});
      } else {
        Event e;
        e.untagged = true;
        e.wire = id;
        take_completions();  // what came before it, first
        events_.push_back(e);
      }
    }
    take_completions();
  }
  return report();
}

inline unsigned FabricTransport::report() {
#if defined(TAGWIRE_HAVE_VERBS)
  if (port_ != nullptr) {
    const auto n = static_cast<unsigned>(events_.size());
    while (!events_.empty()) {
      to_srq(events_.front());
      events_.pop_front();
    }
    // Once per progress() at least, as a transport polls its port: the
    // port may have answers of its own (a DEL of an entry already gone).
    unsigned reported = 0;
    do {
      auto polled = port_->progress(*sink_, *receiver_);
      EXPECT_TRUE(polled.is_ok()) << polled.status().to_string();
      if (!polled.is_ok()) break;
      reported += *polled;
    } while (!srq_->cq.empty());
    return std::max(n, reported);
  }
#endif
  unsigned n = 0;
  bool nic_batch = false;
  while (!events_.empty()) {
    const Event e = events_.front();
    events_.pop_front();
    ++n;
    if (e.untagged) {
      auto node = wires_.extract(e.wire);
      receiver_->on_message(node.mapped().header, node.mapped().payload);
      continue;
    }
    nic_batch = true;
    const ContractNic::Completion& c = e.completion;
    using Kind = ContractNic::Completion::Kind;
    switch (c.kind) {
      case Kind::kAdd:
        sink_->on_tag_op_done(matching::NicOp::Kind::kAdd, c.entry, c.ok, c.sync_requested);
        break;
      case Kind::kDel:
        sink_->on_tag_op_done(matching::NicOp::Kind::kDel, c.entry, c.ok, c.sync_requested);
        break;
      case Kind::kSync:
        sink_->on_tag_op_done(matching::NicOp::Kind::kSync, c.entry, c.ok, c.sync_requested);
        break;
      case Kind::kMatch: {
        auto node = wires_.extract(e.wire);
        sink_->on_tag_match(c.entry, node.mapped().header, node.mapped().payload);
        break;
      }
      case Kind::kUnexpected: {
        auto node = wires_.extract(e.wire);
        sink_->on_tag_unexpected(node.mapped().header, node.mapped().payload, c.sync_requested);
        break;
      }
    }
  }
  if (nic_batch) sink_->on_tag_batch_end();
  return n;
}

#if defined(TAGWIRE_HAVE_VERBS)
inline void FabricTransport::to_srq(const Event& e) {
  verbs::TmCompletion c;
  using Kind = ContractNic::Completion::Kind;
  auto land = [&](const Wire& wire, bool tagged) {
    // Into the next SRQ buffer, TMH and all.
    const auto bytes = verbs::encode_port_message(
        tagged ? std::optional<std::uint64_t>(wire.nic_tag) : std::nullopt, wire.header,
        wire.payload);
    EXPECT_FALSE(srq_->buffers.empty()) << "the port posted too few SRQ buffers";
    auto [wr_id, buffer] = srq_->buffers.front();
    srq_->buffers.pop_front();
    EXPECT_LE(bytes.size(), buffer.length);
    std::memcpy(buffer.address, bytes.data(), std::min<std::size_t>(bytes.size(), buffer.length));
    c.wr_id = wr_id;
    c.byte_len = static_cast<std::uint32_t>(bytes.size());
  };
  if (e.untagged) {
    auto node = wires_.extract(e.wire);
    land(node.mapped(), false);
    c.opcode = IBV_WC_TM_NO_TAG;
    srq_->cq.push_back(c);
    return;
  }
  const ContractNic::Completion& n = e.completion;
  c = verbs::testing::tm_completion_of(n);  // the kind, status and entry; bytes below
  switch (n.kind) {
    case Kind::kMatch: {
      // What follows the TMH, into the buffer the entry's ADD gave.
      auto node = wires_.extract(e.wire);
      const Wire& wire = node.mapped();
      const verbs::LocalBuffer into = srq_->add_buffers.at(n.entry);
      const std::size_t body = wire.header.size() + wire.payload.size();
      EXPECT_LE(body, into.length);
      auto* out = static_cast<std::uint8_t*>(into.address);
      std::memcpy(out, wire.header.data(), wire.header.size());
      if (!wire.payload.empty()) {
        std::memcpy(out + wire.header.size(), wire.payload.data(), wire.payload.size());
      }
      c.byte_len = static_cast<std::uint32_t>(body);
      c.app_context = static_cast<std::uint32_t>(wire.header.size());
      break;
    }
    case Kind::kUnexpected: {
      auto node = wires_.extract(e.wire);
      land(node.mapped(), true);
      break;
    }
    default:
      break;
  }
  srq_->cq.push_back(c);
}
#endif

// One rank: its engine (over a FabricTransport it keeps a pointer to).
struct Rank {
  int rank = 0;
  Fabric* fabric = nullptr;
  FabricTransport* transport = nullptr;
  Engine* engine = nullptr;
};

// Runs `body` on every rank of a job over a new fabric, each in a thread,
// then finalizes (unless the test has failed by then). Engine start-up
// and finalize failures are reported through `failure`.
inline void run_job(const FabricOptions& options, const std::function<void(Rank&)>& body,
                    Status* failure) {
  Fabric fabric(options);
  std::vector<std::thread> threads;
  std::mutex failure_mutex;
  for (int r = 0; r < options.ranks; ++r) {
    threads.emplace_back([&, r] {
      Config config;
      config.cancel_agent = false;
      config.progress_thread = false;
      config.eager_threshold = options.eager_threshold;
      config.eager_threshold_set = true;
      auto transport = std::make_unique<FabricTransport>(&fabric, r);
      FabricTransport* raw = transport.get();
      auto engine = Engine::create(
          config, std::make_unique<tagwire::testing::ThreadBootstrap>(fabric.meeting(), r),
          std::move(transport), tagwire::cancel::kSendCancelLayer);
      if (!engine) {
        std::lock_guard lock(failure_mutex);
        *failure = engine.status();
        return;
      }
      Rank me{r, &fabric, raw, engine->get()};
      body(me);
      // Whatever the scenario, the book reconciled every report of the
      // NIC's and every operation was posted.
      EXPECT_EQ((*engine)->counters().nic_errors, 0u) << "rank " << r;
      // Every body ends before any rank's finalize sends its barrier's
      // messages: a body that counts arrivals sees only its own.
      (void)fabric.allgather(r, {});
      if (::testing::Test::HasFailure()) {
        // A job that failed may have lost messages: finalize's barrier
        // could wait for ever. The engine is left behind.
        (void)engine->release();
        return;
      }
      Status s = (*engine)->finalize();
      if (!s.is_ok() && options.check_finalize) {
        std::lock_guard lock(failure_mutex);
        *failure = s;
      }
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace tagwire::engine::testing
