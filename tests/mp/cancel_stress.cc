// Send-cancel race stress test: thousands of sends, a cancel fired at a
// random moment for most of them (at once, after a random number of
// progress turns, while the receiver is matching or reading, or late, when
// most receives have completed), while the receiver posts receives at
// random times, sometimes only for messages a probe has shown it.
// Every round both sides check the either-or rule: the sender reports which
// of its sends completed as delivered, and the receiver must have received
// exactly those, each once, with intact content, and nothing else.
//
// Ranks pair up (0,1), (2,3): the even rank sends. The seed is printed;
// TAGWIRE_TEST_SEED replays a run, TAGWIRE_TEST_CANCEL_ATTEMPTS sets the
// number of cancel attempts per pair (default 100000).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "harness.h"

namespace tagwire::engine {
namespace {

// On the summary communicator: what was delivered (sender to receiver),
// "receives are under way" and "round checked" (receiver to sender).
constexpr int kSummaryTag = 1;
constexpr int kReadyTag = 2;
constexpr int kDoneTag = 3;
constexpr std::size_t kMaxBatch = 12;

// When the sender fires its cancel. kLate: after the receiver has been
// posting receives for a while (most messages received, some still not).
enum Timing : int { kNever, kAtOnce, kAfterTurns, kLate, kTimings };
const char* timing_name(int t) {
  static const char* names[] = {"never", "at once", "after 1-64 turns", "late"};
  return names[t];
}

struct Outcome {
  std::uint64_t cancelled = 0;
  std::uint64_t delivered = 0;
};

// One message as the sender describes it in its summary.
struct Sent {
  std::uint32_t tag;  // unique in the round: names the message
  std::uint32_t size;
};

std::uint64_t content_seed(std::uint64_t round, std::uint32_t tag) {
  return round * 64 + tag;
}

class CancelStress {
 public:
  CancelStress(std::uint64_t seed, Communicator* summary_comm)
      : rng_(seed + static_cast<std::uint64_t>(me())), summary_comm_(summary_comm) {
    sizes_ = {0, 8, 1024, threshold(), threshold() + 1, 64 * 1024};
  }

  // Runs rounds until `attempts` cancels were fired. Returns the number of
  // either-or violations seen by this rank.
  std::uint64_t run_sender(std::uint64_t attempts) {
    std::vector<std::uint8_t> attached(kMaxBatch * (64 * 1024 + Engine::kBsendOverhead));
    EXPECT_TRUE(E().buffer_attach(attached.data(), attached.size()).is_ok());
    std::uint64_t fired = 0;
    for (std::uint64_t round = 0; fired < attempts; ++round) fired += sender_round(round);
    // The receiver learns that we are done from an empty summary.
    std::uint32_t end = 0xFFFFFFFFu;
    EXPECT_TRUE(E().send(&end, sizeof(end), partner(), kSummaryTag, summary_comm_).is_ok());
    std::uint32_t ready = 0;
    EXPECT_TRUE(
        E().recv(&ready, sizeof(ready), partner(), kReadyTag, summary_comm_, nullptr).is_ok());
    EXPECT_TRUE(E().buffer_detach().is_ok());
    return 0;
  }

  std::uint64_t run_receiver() {
    std::uint64_t violations = 0;
    for (std::uint64_t round = 0;; ++round) {
      bool more = true;
      violations += receiver_round(round, &more);
      if (!more || violations > 0) break;
    }
    return violations;
  }

  void print_matrix(std::uint64_t seed) const {
    std::printf("cancel stress (seed %" PRIu64 "): mode x size x timing -> cancelled / delivered\n",
                seed);
    std::printf("%-12s %8s %-18s %10s %10s\n", "mode", "bytes", "cancel fired", "cancelled",
                "delivered");
    std::uint64_t total_cancelled = 0, total_delivered = 0, attempts = 0;
    for (const auto& [key, o] : matrix_) {
      const auto& [mode, size, timing] = key;
      std::printf("%-12s %8zu %-18s %10" PRIu64 " %10" PRIu64 "\n",
                  mode_name(static_cast<SendMode>(mode)).c_str(), size, timing_name(timing),
                  o.cancelled, o.delivered);
      total_cancelled += o.cancelled;
      total_delivered += o.delivered;
      if (timing != kNever) attempts += o.cancelled + o.delivered;
    }
    std::printf("cancel attempts %" PRIu64 ", cancelled %" PRIu64 ", delivered %" PRIu64
                " (all checked by the receiver)\n",
                attempts, total_cancelled, total_delivered);
  }

 private:
  int partner() const { return me() ^ 1; }

  std::uint64_t sender_round(std::uint64_t round) {
    struct Op {
      Request* request = nullptr;
      Sent sent{};
      SendMode mode = SendMode::kStandard;
      int timing = kNever;
      int turn = 0;  // kAfterTurns: when
      std::vector<std::uint8_t> data;
      bool cancel_fired = false;
    };
    const std::size_t batch = 1 + rng_() % kMaxBatch;
    std::vector<Op> ops(batch);
    for (std::size_t i = 0; i < batch; ++i) {
      Op& op = ops[i];
      op.sent.tag = static_cast<std::uint32_t>(10 + i);
      op.sent.size = static_cast<std::uint32_t>(sizes_[rng_() % sizes_.size()]);
      static constexpr SendMode kModes[] = {SendMode::kStandard, SendMode::kStandard,
                                            SendMode::kSynchronous, SendMode::kBuffered};
      op.mode = kModes[rng_() % 4];
      op.timing = static_cast<int>(rng_() % kTimings);
      op.turn = 1 + static_cast<int>(rng_() % 64);
      op.data = make_payload(op.sent.size, content_seed(round, op.sent.tag));
      op.request = take(E().isend(op.data.data(), op.sent.size, partner(),
                                  static_cast<int>(op.sent.tag), W(), op.mode));
      if (op.request == nullptr) return batch;  // the failure is recorded
      if (op.timing == kAtOnce) fire(op.request, &op.cancel_fired);
    }
    for (int turn = 1; turn <= 64; ++turn) {
      E().progress();
      for (Op& op : ops) {
        if (op.timing == kAfterTurns && op.turn == turn) fire(op.request, &op.cancel_fired);
      }
    }
    // kLate: fired once the receiver says it has been receiving for a
    // while; waiting for that keeps the other sends moving meanwhile.
    std::uint32_t ready = 0;
    EXPECT_TRUE(
        E().recv(&ready, sizeof(ready), partner(), kReadyTag, summary_comm_, nullptr).is_ok());
    for (Op& op : ops) {
      if (op.timing == kLate) fire(op.request, &op.cancel_fired);
    }
    std::vector<Sent> delivered;
    std::uint64_t fired = 0;
    for (Op& op : ops) {
      MessageStatus st;
      EXPECT_TRUE(E().wait(op.request, &st).is_ok());
      EXPECT_TRUE(st.error.is_ok()) << st.error.to_string();
      if (op.cancel_fired) ++fired;
      if (!st.cancelled) delivered.push_back(op.sent);
      EXPECT_FALSE(st.cancelled && !op.cancel_fired) << "cancelled without a cancel";
      Outcome& o = matrix_[{static_cast<int>(op.mode), op.sent.size, op.timing}];
      ++(st.cancelled ? o.cancelled : o.delivered);
    }
    std::uint32_t n = static_cast<std::uint32_t>(delivered.size());
    std::vector<std::uint8_t> summary(sizeof(n) + n * sizeof(Sent));
    std::memcpy(summary.data(), &n, sizeof(n));
    if (n > 0) std::memcpy(summary.data() + sizeof(n), delivered.data(), n * sizeof(Sent));
    EXPECT_TRUE(
        E().send(summary.data(), summary.size(), partner(), kSummaryTag, summary_comm_).is_ok());
    // The next round starts once this one is checked: its receives must not
    // meet this round's leftovers.
    std::uint32_t done = 0;
    EXPECT_TRUE(E().recv(&done, sizeof(done), partner(), kDoneTag, summary_comm_, nullptr).is_ok());
    return fired;
  }

  static void fire(Request* r, bool* fired) {
    EXPECT_TRUE(E().cancel(r).is_ok());
    *fired = true;
  }

  // Receives until the sender's summary says what was delivered, then
  // checks. `more` is cleared by the sender's end marker.
  std::uint64_t receiver_round(std::uint64_t round, bool* more) {
    const std::size_t max_size = sizes_.back();
    const int delay = static_cast<int>(rng_() % 80);  // turns before the first receive
    const std::size_t depth = 1 + rng_() % 4;         // receives kept posted
    const bool probe_first = rng_() % 4 == 0;         // probe, then receive what it saw
    struct Posted {
      Request* request;
      std::vector<std::uint8_t> buffer;
    };
    std::vector<Posted> posted;
    std::map<std::uint32_t, std::uint32_t> received;  // tag -> size
    std::uint64_t violations = 0;
    auto check = [&](const MessageStatus& st, const std::vector<std::uint8_t>& buffer) {
      if (st.cancelled) return;
      const auto tag = static_cast<std::uint32_t>(st.tag);
      if (!received.emplace(tag, static_cast<std::uint32_t>(st.count)).second) {
        ADD_FAILURE() << "round " << round << ": message " << tag << " received twice";
        ++violations;
      }
      if (first_mismatch(buffer.data(), st.count, content_seed(round, tag)) != std::string::npos) {
        ADD_FAILURE() << "round " << round << ": message " << tag << " corrupted";
        ++violations;
      }
    };
    bool told_ready = false;
    std::vector<std::uint8_t> summary;
    for (int turn = 0;; ++turn) {
      if (turn >= delay) {
        while (posted.size() < depth) {
          Posted p{nullptr, std::vector<std::uint8_t>(max_size)};
          if (probe_first) {
            MessageStatus seen;
            if (!take(E().iprobe(partner(), kAnyTag, W(), &seen))) break;
          }
          p.request = take(E().irecv(p.buffer.data(), max_size, partner(), kAnyTag, W()));
          posted.push_back(std::move(p));
        }
      }
      for (auto it = posted.begin(); it != posted.end();) {
        MessageStatus st;
        if (take(E().test(it->request, &st))) {
          check(st, it->buffer);
          it = posted.erase(it);
        } else {
          ++it;
        }
      }
      if (turn == delay + 100 && !told_ready) {
        // Late cancels (kLate) now race with whatever is left.
        std::uint32_t go = 1;
        EXPECT_TRUE(E().send(&go, sizeof(go), partner(), kReadyTag, summary_comm_).is_ok());
        told_ready = true;
      }
      if (summary.empty()) {
        MessageStatus st;
        if (take(E().iprobe(partner(), kSummaryTag, summary_comm_, &st))) {
          summary.resize(st.count);
          EXPECT_TRUE(E().recv(summary.data(), summary.size(), partner(), kSummaryTag,
                               summary_comm_, nullptr)
                          .is_ok());
          std::uint32_t n = 0;
          std::memcpy(&n, summary.data(), sizeof(n));
          if (n == 0xFFFFFFFFu) {
            *more = false;
            if (!told_ready) {
              std::uint32_t go = 1;
              EXPECT_TRUE(E().send(&go, sizeof(go), partner(), kReadyTag, summary_comm_).is_ok());
              told_ready = true;
            }
            break;
          }
        }
      }
      if (!summary.empty()) {
        std::uint32_t n = 0;
        std::memcpy(&n, summary.data(), sizeof(n));
        if (received.size() >= n) break;
        if (posted.empty()) {  // make sure every delivered message finds a receive
          Posted p{nullptr, std::vector<std::uint8_t>(max_size)};
          p.request = take(E().irecv(p.buffer.data(), max_size, partner(), kAnyTag, W()));
          posted.push_back(std::move(p));
        }
      }
      E().progress();
    }
    // Receives still posted: nothing is due for them, so each must cancel.
    for (Posted& p : posted) {
      EXPECT_TRUE(E().cancel(p.request).is_ok());
      MessageStatus st;
      EXPECT_TRUE(E().wait(p.request, &st).is_ok());
      if (!st.cancelled) {
        check(st, p.buffer);
        ADD_FAILURE() << "round " << round << ": an extra message " << st.tag << " arrived";
        ++violations;
      }
    }
    if (!*more) return violations;
    if (!told_ready) {
      ADD_FAILURE() << "round " << round << ": summary before the ready signal";
      ++violations;
    }
    std::uint32_t n = 0;
    std::memcpy(&n, summary.data(), sizeof(n));
    std::map<std::uint32_t, std::uint32_t> expected;
    for (std::uint32_t i = 0; i < n; ++i) {
      Sent s;
      std::memcpy(&s, summary.data() + sizeof(n) + i * sizeof(Sent), sizeof(Sent));
      expected.emplace(s.tag, s.size);
    }
    if (expected != received) {
      ADD_FAILURE() << "round " << round << ": the sender reports " << expected.size()
                    << " delivered, the receiver got " << received.size()
                    << " (a cancelled message arrived, or a delivered one did not)";
      ++violations;
    }
    if (take(E().iprobe(partner(), kAnyTag, W(), nullptr))) {
      ADD_FAILURE() << "round " << round << ": a message is left over after the round";
      ++violations;
    }
    std::uint32_t done = 1;
    EXPECT_TRUE(E().send(&done, sizeof(done), partner(), kDoneTag, summary_comm_).is_ok());
    return violations;
  }

  std::mt19937_64 rng_;
  Communicator* summary_comm_;
  std::vector<std::size_t> sizes_;
  std::map<std::tuple<int, std::size_t, int>, Outcome> matrix_;
};

TEST(CancelStress, EitherCancelledOrDeliveredNeverBothNeverNeither) {
  if (nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  std::uint64_t seed = env_number("TAGWIRE_TEST_SEED", std::random_device{}());
  // Everyone uses rank 0's seed, so one number replays the whole job.
  ASSERT_OK(E().barrier(W()));
  std::uint64_t shared = seed;
  if (me() == 0) {
    for (int r = 1; r < nranks(); ++r) ASSERT_OK(E().send(&shared, sizeof(shared), r, 3, W()));
  } else {
    ASSERT_OK(E().recv(&shared, sizeof(shared), 0, 3, W(), nullptr));
  }
  seed = shared;
  if (me() == 0) std::printf("cancel stress seed %" PRIu64 " (TAGWIRE_TEST_SEED)\n", seed);
  const std::uint64_t attempts = env_number("TAGWIRE_TEST_CANCEL_ATTEMPTS", 100000);
  Communicator* summaries = take(E().comm_dup(W()));
  ASSERT_NE(summaries, nullptr);
  if ((me() ^ 1) < nranks()) {
    CancelStress stress(seed, summaries);
    if (me() % 2 == 0) {
      stress.run_sender(attempts);
      if (me() == 0) stress.print_matrix(seed);
    } else {
      EXPECT_EQ(stress.run_receiver(), 0u) << "seed " << seed;
    }
  }
  ASSERT_OK(E().barrier(W()));
  ASSERT_OK(E().comm_free(summaries));
  const auto c = E().counters();
  EXPECT_EQ(c.live_requests, 0u);
  EXPECT_EQ(c.dropped_messages, 0u);
  if (E().cancels_one_sided() && (me() ^ 1) < nranks()) {
    // The one-sided path really decided: the sender's CASes cancelled
    // sends, read-backs freed slots, and the receiver claimed what it took.
    if (me() % 2 == 0) {
      EXPECT_GT(c.one_sided_cancels, 0u);
      EXPECT_GT(c.slotted_sends, 0u);
      EXPECT_GT(c.slot_read_backs, 0u);
      std::printf("one-sided: %" PRIu64 " sends with a slot, %" PRIu64 " without, %" PRIu64
                  " cancels by CAS, %" PRIu64 " by the agent, %" PRIu64 " read-backs\n",
                  c.slotted_sends, c.unslotted_sends, c.one_sided_cancels,
                  c.sends_cancelled - c.one_sided_cancels, c.slot_read_backs);
    } else {
      EXPECT_GT(c.slot_claims, 0u);
    }
  }
}

}  // namespace
}  // namespace tagwire::engine
