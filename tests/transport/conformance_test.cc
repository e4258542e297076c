// The transport conformance suite: what the engine relies on from every
// transport (transport/transport.h), run over each transport this build
// has (engine::built_transports()), as two ranks of a job in one process.
// A transport that cannot start here (verbs without an RDMA device) skips
// with its reason; a behaviour a transport does not declare in its
// Capabilities (transport/registry.h) skips naming that capability, and is
// then checked to be absent. ci/rxe-tests runs this suite in the soft-RoCE
// VM, where verbs must run every test but the NIC's tag matching.
#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "../support/byte_patterns.h"
#include "engine/engine_config.h"
#include "engine/transport_list.h"
#include "transport/nic_matching.h"
#include "transport/registry.h"

namespace tagwire::transport {
namespace {

struct Inbox : Receiver {
  void on_message(std::span<const std::uint8_t> header,
                  std::span<const std::uint8_t> payload) override {
    headers.emplace_back(header.begin(), header.end());
    payloads.emplace_back(payload.begin(), payload.end());
  }
  std::vector<std::string> headers;
  std::vector<std::string> payloads;
};

using tagwire::testing::bytes;
using tagwire::testing::payload_for;

// Counts completions and keeps the first failure.
struct Completions {
  int done = 0;
  Status first_error;
  Completion callback() {
    return {[](void* ctx, const Status& s) {
              auto* self = static_cast<Completions*>(ctx);
              ++self->done;
              if (!s.is_ok() && self->first_error.is_ok()) self->first_error = s;
            },
            this};
  }
};

class Conformance : public ::testing::TestWithParam<const TransportEntry*> {
 protected:
  void SetUp() override {
    const TransportEntry& entry = *GetParam();
    caps_ = entry.capabilities;
    auto config = engine::Config::from_environment();
    ASSERT_TRUE(config.is_ok()) << config.status().to_string();
    config_ = *config;
    if (!config_.eager_threshold_set && caps_.eager_threshold != 0) {
      config_.resolve_eager_threshold(caps_.eager_threshold);
    }
    for (int rank = 0; rank < 2; ++rank) {
      TransportSetup setup;
      setup.rank = rank;
      setup.size = 2;
      setup.eager_threshold = config_.eager_threshold;
      setup.settings = &config_.settings;
      setup.max_remote_key = 4096;
      auto made = entry.create(setup);
      // Only a missing device may keep a transport from starting (verbs
      // on a host without RDMA); anything else is a failure.
      if (!made.is_ok() && rank == 0 && made.status().code() == ErrorCode::kUnsupported) {
        GTEST_SKIP() << entry.name << " cannot start here: " << made.status().to_string();
      }
      ASSERT_TRUE(made.is_ok()) << made.status().to_string();
      side_[rank] = std::move(made).value();
      side_[rank]->set_receiver(&inbox_[rank]);
    }
    std::vector<std::vector<std::uint8_t>> addresses = {side_[0]->address(), side_[1]->address()};
    for (auto& t : side_) ASSERT_TRUE(t->set_peer_addresses(addresses).is_ok());
  }

  void TearDown() override {
    if (!side_[0] || !side_[1]) return;
    // Both close at once, as ranks do, each progressing after its own close
    // until the other's is done: a close may wait for the peer (UCX over
    // TCP flushes through it).
    std::atomic<int> closed{0};
    Status status[2];
    auto close = [&](int rank) {
      status[rank] = side_[rank]->disconnect_all();
      closed.fetch_add(1);
      while (closed.load() < 2) side_[rank]->progress();
    };
    std::thread other(close, 1);
    close(0);
    other.join();
    EXPECT_TRUE(status[0].is_ok()) << status[0].to_string();
    EXPECT_TRUE(status[1].is_ok()) << status[1].to_string();
  }

  // Drives both sides until `done`, for at most 30 s (the VM is slow).
  template <typename Done>
  bool progress_until(Done done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done()) {
      side_[0]->progress();
      side_[1]->progress();
      if (std::chrono::steady_clock::now() > until) return false;
    }
    return true;
  }

  // One message each way, as the engine always has before it reads, writes
  // or swaps at a peer (a rendezvous follows its RTS; the slot tables come
  // through the bootstrap but a cancel follows the message): a transport
  // that connects on first use (verbs under rdma_cm) may make the
  // connection inside an operation, which waits for the peer's answer.
  void introduce() {
    Completions c;
    const std::string hi = "hi";
    auto r0 = side_[0]->send(1, bytes("hello"), bytes(hi), c.callback(), Delivery::kPolled);
    auto r1 = side_[1]->send(0, bytes("hello"), bytes(hi), c.callback(), Delivery::kPolled);
    ASSERT_TRUE(r0.is_ok() && r1.is_ok());
    const int pending = (*r0 == Issued::kPending) + (*r1 == Issued::kPending);
    ASSERT_TRUE(progress_until([&] {
      return inbox_[0].payloads.size() == 1 && inbox_[1].payloads.size() == 1 && c.done == pending;
    })) << "the introductions did not arrive";
  }

  // Waits for an operation that may finish at once or later.
  void finish(const Result<Issued>& issued, Completions& c, int before) {
    ASSERT_TRUE(issued.is_ok()) << issued.status().to_string();
    if (*issued == Issued::kPending) {
      ASSERT_TRUE(progress_until([&] { return c.done > before; })) << "no completion";
    }
    ASSERT_TRUE(c.first_error.is_ok()) << c.first_error.to_string();
  }

  Capabilities caps_;
  engine::Config config_;
  std::unique_ptr<Transport> side_[2];
  Inbox inbox_[2];
  std::deque<std::string> sent_;  // payloads of pending sends (a deque: they never move)
};

TEST_P(Conformance, MessagesOfEverySizeArriveIntactAndInOrder) {
  const std::size_t largest = config_.eager_threshold;
  const std::vector<std::size_t> sizes = {0, 1, 8, 63, 64, 65, 1000, 4096, largest - 1, largest};
  Completions c;
  int pending = 0;
  std::size_t n = 0;
  for (int lap = 0; lap < 30; ++lap) {  // enough to fill any ring and wait for room
    for (std::size_t size : sizes) {
      const std::string header = "h" + std::to_string(n);
      // The payload must outlive a pending send: keep every one.
      sent_.push_back(payload_for(n, size));
      auto r =
          side_[0]->send(1, bytes(header), bytes(sent_.back()), c.callback(), Delivery::kPolled);
      ASSERT_TRUE(r.is_ok()) << "message " << n << ": " << r.status().to_string();
      if (*r == Issued::kPending) ++pending;
      ++n;
      if (n % 7 == 0) side_[1]->progress();
    }
  }
  ASSERT_TRUE(progress_until([&] { return inbox_[1].payloads.size() == n && c.done == pending; }))
      << inbox_[1].payloads.size() << " of " << n << " arrived, " << c.done << " of " << pending
      << " completions";
  ASSERT_TRUE(c.first_error.is_ok()) << c.first_error.to_string();
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(inbox_[1].headers[i], "h" + std::to_string(i)) << "out of order at " << i;
    ASSERT_EQ(inbox_[1].payloads[i], sent_[i]) << "message " << i;
  }
  EXPECT_TRUE(inbox_[0].payloads.empty()) << "a message came back to its sender";
  EXPECT_GE(side_[0]->counters().messages_sent, n);
  EXPECT_GE(side_[1]->counters().messages_received, n);
}

TEST_P(Conformance, AnOversizeMessageIsRefusedAndNothingIsLost) {
  introduce();
  Completions c;
  const std::string too_long(side_[0]->max_header() + 1, 'h');
  auto refused = side_[0]->send(1, bytes(too_long), {}, c.callback(), Delivery::kPolled);
  ASSERT_FALSE(refused.is_ok()) << "a header longer than max_header() was sent";
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << refused.status().to_string();
  const std::string after = "after";
  auto r = side_[0]->send(1, bytes("next"), bytes(after), c.callback(), Delivery::kPolled);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_TRUE(progress_until([&] { return inbox_[1].payloads.size() == 2; }));
  EXPECT_EQ(inbox_[1].payloads[1], "after");
  EXPECT_EQ(c.done, (*r == Issued::kPending) ? 1 : 0) << "the refused send completed";
}

TEST_P(Conformance, BothRanksMaySpeakFirstAtOnce) {
  Completions c;
  std::string a = "from 0", b = "from 1";
  auto r0 = side_[0]->send(1, bytes("x"), bytes(a), c.callback(), Delivery::kPolled);
  auto r1 = side_[1]->send(0, bytes("y"), bytes(b), c.callback(), Delivery::kPolled);
  ASSERT_TRUE(r0.is_ok() && r1.is_ok());
  const int pending = (*r0 == Issued::kPending) + (*r1 == Issued::kPending);
  ASSERT_TRUE(progress_until([&] {
    return inbox_[0].payloads.size() == 1 && inbox_[1].payloads.size() == 1 && c.done == pending;
  }));
  EXPECT_EQ(inbox_[1].payloads[0], "from 0");
  EXPECT_EQ(inbox_[0].payloads[0], "from 1");
}

TEST_P(Conformance, AReadReturnsTheOwnersBytes) {
  introduce();
  // Sizes on both sides of a shared read (shm splits reads from 512 KiB).
  for (std::size_t size : {std::size_t{1}, std::size_t{4096}, std::size_t{3} << 20}) {
    const std::string owned = payload_for(size, size);
    auto reg = side_[1]->register_memory(const_cast<char*>(owned.data()), owned.size(),
                                         RemoteAccess::kRead);
    ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
    std::string got(size, '\0');
    Completions c;
    auto r = side_[0]->read(1, {reinterpret_cast<std::uint8_t*>(got.data()), got.size()},
                            (*reg)->address(), (*reg)->packed_key(), c.callback());
    finish(r, c, 0);
    ASSERT_TRUE(got == owned) << size << " bytes read differ from the owner's";
  }
}

// A read past what the owner registered fails and writes nothing into the
// reader's buffer, and the pair goes on working: the owner's other memory
// is not the peer's to read. Shm checks the key's range at the reader; UCX
// over TCP reads by message (MessageRma), and the owner refuses.
TEST_P(Conformance, AReadPastTheOwnersRegistrationFailsAndWritesNothing) {
  if (GetParam()->name == "verbs") {
    GTEST_SKIP() << "verbs: the NIC refuses such a read (IBV_WC_REM_ACCESS_ERR) and the RC "
                    "connection goes down with it; the engine never reads past a key";
  }
  introduce();
  const std::string owned = payload_for(7, 8192);
  auto reg = side_[1]->register_memory(const_cast<char*>(owned.data()), 4096, RemoteAccess::kRead);
  ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
  const std::uint64_t base = (*reg)->address();
  auto read = [&](std::uint64_t at, std::string& into, Completions& c) {
    const int before = c.done;
    auto r = side_[0]->read(1, {reinterpret_cast<std::uint8_t*>(into.data()), into.size()}, at,
                            (*reg)->packed_key(), c.callback());
    if (!r.is_ok()) return r.status();
    if (*r == Issued::kPending && !progress_until([&] { return c.done > before; })) {
      return Status(ErrorCode::kInternal, "no completion");
    }
    return c.first_error;
  };
  Completions inside;
  std::string got(64, 'x');
  Status s = read(base + 100, got, inside);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  ASSERT_EQ(got, owned.substr(100, 64));
  if (GetParam()->name == "ucx" && side_[0]->counters().bytes_helped_by_peers == 0) {
    GTEST_SKIP() << "UCX reads by RDMA here (its shared memory copies by CMA where it is told, "
                    "checking no registration); over TCP it reads by message";
  }
  Completions past;
  std::string beyond(64, 'x');
  s = read(base + 4096 + 64, beyond, past);
  EXPECT_FALSE(s.is_ok()) << "a read past the registration succeeded";
  EXPECT_EQ(beyond, std::string(64, 'x')) << "a refused read wrote into the reader's buffer";
  std::string again(64, 'x');
  Completions after;
  s = read(base + 4000, again, after);
  ASSERT_TRUE(s.is_ok()) << "the pair stopped working after a refused read: " << s.to_string();
  EXPECT_EQ(again, owned.substr(4000, 64));
}

TEST_P(Conformance, AWriteLandsOnceFlushed) {
  introduce();
  std::string target(64 << 10, '\0');
  auto reg = side_[1]->register_memory(target.data(), target.size(), RemoteAccess::kReadAndWrite);
  ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
  const std::string data = payload_for(5, 10000);
  Completions c;
  auto w =
      side_[0]->write(1, bytes(data), (*reg)->address() + 100, (*reg)->packed_key(), c.callback());
  finish(w, c, 0);
  const int before = c.done;
  auto f = side_[0]->flush(c.callback());
  finish(f, c, before);
  EXPECT_TRUE(target.compare(100, data.size(), data) == 0) << "the written bytes differ";
  EXPECT_TRUE(target.compare(0, 100, std::string(100, '\0')) == 0) << "written before the address";
  EXPECT_EQ(target[100 + data.size()], '\0') << "written past the end";
}

// A peer that dies with reads, a write and a CAS of ours in flight
// (its transport is destroyed: its QPs, worker and memory are gone, as in
// a killed process): once told (peer_failed), the transport ends each of
// them within seconds, where the device's or UCX's own timeouts take tens
// of seconds over RDMA, and a flush after it waits for nobody.
TEST_P(Conformance, APeersDeathEndsItsOperationsAtOnce) {
  introduce();
  std::string owned(256 << 10, 'o');
  auto reg = side_[1]->register_memory(owned.data(), owned.size(), RemoteAccess::kReadAndWrite);
  ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
  auto words = side_[1]->allocate_atomic_words(1);
  ASSERT_TRUE(words.is_ok()) << words.status().to_string();
  const std::uint64_t base = (*reg)->address();
  const std::vector<std::uint8_t> key((*reg)->packed_key().begin(), (*reg)->packed_key().end());
  const std::uint64_t word = (*words)->address();
  const std::vector<std::uint8_t> word_key((*words)->packed_key().begin(),
                                           (*words)->packed_key().end());
  // One Completions per operation: `done` 1 once it ended (at once
  // counts too), with its error if it failed.
  std::vector<std::string> into(4, std::string(64 << 10, '\0'));
  const std::string data(4096, 'w');
  std::uint64_t old = 0;
  std::vector<Completions> outcomes(6);
  auto issued = [&](const Result<Issued>& r, Completions& c) {
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    if (*r == Issued::kDone) c.done = 1;
  };
  for (std::size_t i = 0; i < 4; ++i) {
    std::span<std::uint8_t> local(reinterpret_cast<std::uint8_t*>(into[i].data()), into[i].size());
    issued(side_[0]->read(1, local, base + i * (64 << 10), key, outcomes[i].callback()),
           outcomes[i]);
  }
  issued(side_[0]->write(1, bytes(data), base, key, outcomes[4].callback()), outcomes[4]);
  issued(side_[0]->compare_and_swap(1, word, word_key, 0, 1, &old, outcomes[5].callback()),
         outcomes[5]);
  // The peer dies: nothing of it answers any more.
  words->reset();
  reg->reset();
  side_[1].reset();
  side_[0]->peer_failed(1);
  Completions flushed;
  auto f = side_[0]->flush(flushed.callback());
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  const int flush_pending = *f == Issued::kPending ? 1 : 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto all_ended = [&] {
    return flushed.done == flush_pending &&
           std::all_of(outcomes.begin(), outcomes.end(),
                       [](const Completions& c) { return c.done; });
  };
  while (!all_ended() && std::chrono::steady_clock::now() < until) side_[0]->progress();
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    EXPECT_EQ(outcomes[i].done, 1) << "operation " << i << " still running 5 s after the death";
    if (!outcomes[i].first_error.is_ok()) {
      EXPECT_EQ(outcomes[i].first_error.code(), ErrorCode::kPeerFailed)
          << "operation " << i << ": " << outcomes[i].first_error.to_string();
    }
  }
  EXPECT_EQ(flushed.done, flush_pending) << "a flush after the death waited for the dead peer";
  // A later operation does not wait either (the engine issues none to a
  // dead rank; a transport that maps the peer's memory may still write
  // into its segment): refused, or ended within the same bound.
  Completions after;
  auto again = side_[0]->write(1, bytes(data), base, key, after.callback());
  if (again.is_ok() && *again == Issued::kPending) {
    const auto until_again = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (after.done == 0 && std::chrono::steady_clock::now() < until_again) side_[0]->progress();
    EXPECT_EQ(after.done, 1) << "a write to the dead peer is still running after 5 s";
    EXPECT_EQ(after.first_error.code(), ErrorCode::kPeerFailed) << after.first_error.to_string();
  } else if (!again.is_ok()) {
    EXPECT_EQ(again.status().code(), ErrorCode::kPeerFailed) << again.status().to_string();
  }
}

// One-sided send cancel: a sender's remote CAS and the owner's local CAS on
// the same word, each seeing the other's result.
TEST_P(Conformance, RemoteAndLocalCompareAndSwapSeeEachOther) {
  introduce();
  auto words = side_[1]->allocate_atomic_words(4);
  ASSERT_TRUE(words.is_ok()) << words.status().to_string();
  const Registration& reg = **words;
  auto* word = reinterpret_cast<std::uint64_t*>(reg.address()) + 2;
  const std::uint64_t remote = reg.address() + 2 * sizeof(std::uint64_t);
  std::uint64_t old = 99;
  Completions c;
  auto r = side_[0]->compare_and_swap(1, remote, reg.packed_key(), 0, 7, &old, c.callback());
  finish(r, c, 0);
  EXPECT_EQ(old, 0u) << "the words start zeroed";
  auto local = side_[1]->local_compare_and_swap(reg, word, 7, 9);
  ASSERT_TRUE(local.is_ok()) << local.status().to_string();
  EXPECT_EQ(*local, 7u) << "the owner does not see the peer's swap";
  int before = c.done;
  r = side_[0]->compare_and_swap(1, remote, reg.packed_key(), 7, 1, &old, c.callback());
  finish(r, c, before);
  EXPECT_EQ(old, 9u) << "the peer does not see the owner's swap";
  local = side_[1]->local_compare_and_swap(reg, word, 9, 9);
  ASSERT_TRUE(local.is_ok());
  EXPECT_EQ(*local, 9u) << "a failed remote swap changed the word";
  if (caps_.cpu_atomics) {
    EXPECT_EQ(*word, 9u) << "declared cpu_atomics, yet the word differs";
  }
}

TEST_P(Conformance, AWakeMessageRaisesTheSleepingPeersEvent) {
  if (!caps_.wake_events) {
    GTEST_SKIP() << GetParam()->name << " does not declare wake_events (a sleeper must also look)";
  }
  const int fd = side_[1]->event_fd();
  ASSERT_GE(fd, 0) << "wake_events declared, but no event fd";
  // Connect first (verbs under rdma_cm connects on first use).
  Completions c;
  auto r = side_[0]->send(1, bytes("hello"), {}, c.callback(), Delivery::kPolled);
  ASSERT_TRUE(r.is_ok());
  ASSERT_TRUE(progress_until([&] { return inbox_[1].payloads.size() == 1; }));
  // Arm until nothing is pending, then only the peer may make the fd readable.
  bool armed = false;
  ASSERT_TRUE(progress_until([&] {
    auto a = side_[1]->arm();
    armed = a.is_ok() && *a;
    return armed || !a.is_ok();
  }));
  ASSERT_TRUE(armed) << "arm() never said the transport was idle";
  r = side_[0]->send(1, bytes("wake"), {}, c.callback(), Delivery::kWake);
  ASSERT_TRUE(r.is_ok());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool raised = false;
  while (!raised && std::chrono::steady_clock::now() < until) {
    side_[0]->progress();  // only the sender: the sleeper does not poll
    pollfd p{fd, POLLIN, 0};
    raised = ::poll(&p, 1, 1) == 1;
  }
  EXPECT_TRUE(raised) << "a kWake message did not raise the event";
  ASSERT_TRUE(progress_until([&] { return inbox_[1].payloads.size() == 2; }));
  EXPECT_EQ(inbox_[1].headers[1], "wake");
}

TEST_P(Conformance, OffersNicMatchingOnlyWhereDeclared) {
  if (!caps_.may_match_in_nic) {
    EXPECT_EQ(side_[0]->nic_matching(), nullptr) << "tag matching offered but not declared";
    GTEST_SKIP() << GetParam()->name << " does not declare may_match_in_nic";
  }
  const NicMatching* offload = side_[0]->nic_matching();
  if (offload == nullptr) {
    GTEST_SKIP() << GetParam()->name
                 << ": this device has no tag matching (IBV_TM_CAP_RC) or TAGWIRE_TM=off";
  }
  EXPECT_GT(offload->capacity(), 0u);
}

TEST(TransportRegistry, TheBuildHasSharedMemoryAndEveryEntryIsWhole) {
  const TransportList built = engine::built_transports();
  ASSERT_FALSE(built.empty());
  bool shm = false;
  for (std::size_t i = 0; i < built.size(); ++i) {
    EXPECT_NE(built[i]->create, nullptr) << built[i]->name;
    EXPECT_FALSE(built[i]->description.empty()) << built[i]->name;
    shm |= built[i]->name == "shm";
    for (std::size_t j = i + 1; j < built.size(); ++j) EXPECT_NE(built[i]->name, built[j]->name);
  }
  EXPECT_TRUE(shm) << "the shared-memory transport needs nothing and is always built";
}

// The choice among entries, over made-up ones.
TEST(TransportRegistry, AutoTakesThePreferredTransportThatReachesTheJob) {
  const TransportEntry local{
      "local", "one host", {.one_host_only = true, .preference = 2}, nullptr, {}};
  const TransportEntry wide{
      "wide", "any host", {.one_host_only = false, .preference = 1}, nullptr, {}};
  const TransportEntry named{
      "named", "when named", {.one_host_only = false, .preference = 0}, nullptr, {}};
  const TransportEntry* all[] = {&named, &wide, &local};
  auto here = choose_transport(all, "auto", true);
  ASSERT_TRUE(here.is_ok());
  EXPECT_EQ((*here)->name, "local");
  auto spread = choose_transport(all, "auto", false);
  ASSERT_TRUE(spread.is_ok());
  EXPECT_EQ((*spread)->name, "wide") << "a one-host transport taken for a job across hosts";
  auto asked = choose_transport(all, "named", false);
  ASSERT_TRUE(asked.is_ok());
  EXPECT_EQ((*asked)->name, "named");
  // Named, a one-host transport is the user's choice: it refuses strangers itself.
  auto forced = choose_transport(all, "local", false);
  ASSERT_TRUE(forced.is_ok());
  EXPECT_EQ((*forced)->name, "local");
}

TEST(TransportRegistry, AMissingTransportIsAnErrorThatSaysWhatTheBuildHas) {
  const TransportEntry local{
      "local", "one host", {.one_host_only = true, .preference = 2}, nullptr, {}};
  const TransportEntry named{"named", "when named", {}, nullptr, {}};
  const TransportEntry* all[] = {&local, &named};
  auto missing = choose_transport(all, "verbs", true);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(missing.status().message().find("it has: local named"), std::string::npos)
      << missing.status().message();
  auto none = choose_transport(all, "auto", false);
  ASSERT_FALSE(none.is_ok()) << "nothing reaches other hosts by itself here";
  EXPECT_NE(none.status().message().find("TAGWIRE_TRANSPORT"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Built, Conformance,
                         ::testing::ValuesIn(engine::built_transports().begin(),
                                             engine::built_transports().end()),
                         [](const ::testing::TestParamInfo<const TransportEntry*>& param) {
                           return std::string(param.param->name);
                         });

}  // namespace
}  // namespace tagwire::transport
