// Randomized differential test: long random sequences of post / arrive /
// probe / mprobe / cancel, with random wildcards, run against the indexed
// Matcher and the ListMatcher reference model; every result must agree.
//
// The seed is fixed so CI is repeatable; TAGWIRE_TEST_SEED=N runs another,
// and every failure prints the seed, sequence and step that reproduce it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "matching/list_matcher.h"
#include "matching/matcher.h"

namespace tagwire::matching {
namespace {

std::uint64_t base_seed() {
  if (const char* text = std::getenv("TAGWIRE_TEST_SEED")) return std::strtoull(text, nullptr, 0);
  return 0x7a6e0c2bull;
}

int sequence_count() {
  if (const char* text = std::getenv("TAGWIRE_TEST_SEQUENCES")) return std::atoi(text);
  return 3000;
}

// One random sequence. The small ranges of contexts, sources, tags and
// request ids make collisions, wildcard overlap and duplicate sender
// request ids common, which is where matching bugs live.
class Sequence {
 public:
  explicit Sequence(std::uint64_t seed) : rng_(seed) {}

  void run(int steps) {
    for (step_ = 0; step_ < steps; ++step_) {
      int op = pick(100);
      if (op < 30) {
        post();
      } else if (op < 65) {
        arrive();
      } else if (op < 75) {
        probe();
      } else if (op < 80) {
        mprobe();
      } else if (op < 90) {
        cancel_receive();
      } else {
        cancel_unexpected();
      }
      ASSERT_EQ(fast_.posted_count(), model_.posted_count()) << where();
      ASSERT_EQ(fast_.unexpected_count(), model_.unexpected_count()) << where();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }

  std::size_t matches() const { return matches_; }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string where() const { return "at step " + std::to_string(step_); }

  ReceivePattern random_pattern() {
    ReceivePattern p{static_cast<ContextId>(pick(2)), pick(4), pick(4)};
    if (pick(4) == 0) p.source = kAnySource;
    if (pick(4) == 0) p.tag = kAnyTag;
    return p;
  }

  void post() {
    auto pattern = random_pattern();
    std::uint64_t cookie = next_receive_cookie_++;
    auto a = fast_.post_receive(pattern, cookie);
    auto b = model_.post_receive(pattern, cookie);
    ASSERT_EQ(a.matched, b.matched) << where();
    if (a.matched) {
      ASSERT_EQ(a.message, b.message) << where();
      ++matches_;
    } else {
      posted_.push_back({a.handle, b.handle});
    }
  }

  void arrive() {
    IncomingMessage message{Envelope{static_cast<ContextId>(pick(2)), pick(4), pick(4)},
                            static_cast<std::uint64_t>(pick(6)),  // few ids: duplicates happen
                            static_cast<std::uint64_t>(pick(1 << 16)), next_message_cookie_++};
    auto a = fast_.arrive(message);
    auto b = model_.arrive(message);
    ASSERT_EQ(a.matched, b.matched) << where();
    if (a.matched) {
      ASSERT_EQ(a.receive_cookie, b.receive_cookie) << where();
      ASSERT_EQ(a.receive.sequence, b.receive.sequence) << where();
      ++matches_;
    }
  }

  void probe() {
    auto pattern = random_pattern();
    ASSERT_EQ(fast_.probe(pattern), model_.probe(pattern)) << where();
  }

  void mprobe() {
    auto pattern = random_pattern();
    ASSERT_EQ(fast_.mprobe(pattern), model_.mprobe(pattern)) << where();
  }

  void cancel_receive() {
    if (posted_.empty()) return;
    // Any receive ever posted: live, matched or already cancelled.
    const auto& [fast_handle, model_handle] =
        posted_[static_cast<std::size_t>(pick(static_cast<int>(posted_.size())))];
    ASSERT_EQ(fast_.cancel_receive(fast_handle), model_.cancel_receive(model_handle)) << where();
  }

  void cancel_unexpected() {
    auto context = static_cast<ContextId>(pick(2));
    Rank source = pick(4);
    auto request = static_cast<std::uint64_t>(pick(6));
    ASSERT_EQ(fast_.cancel_unexpected(context, source, request),
              model_.cancel_unexpected(context, source, request))
        << where();
  }

  std::mt19937_64 rng_;
  Matcher fast_;
  ListMatcher model_;
  std::vector<std::pair<ReceiveHandle, ReceiveHandle>> posted_;
  std::uint64_t next_receive_cookie_ = 1;
  std::uint64_t next_message_cookie_ = 1;
  std::size_t matches_ = 0;
  int step_ = 0;
};

TEST(MatcherDifferential, RandomSequencesAgreeWithReferenceModel) {
  const std::uint64_t seed = base_seed();
  const int sequences = sequence_count();
  std::mt19937_64 seeds(seed);
  std::size_t total_matches = 0;
  for (int i = 0; i < sequences; ++i) {
    std::uint64_t sequence_seed = seeds();
    SCOPED_TRACE("TAGWIRE_TEST_SEED=" + std::to_string(seed) + ", sequence " + std::to_string(i) +
                 " (its own seed " + std::to_string(sequence_seed) + ")");
    Sequence sequence(sequence_seed);
    // Lengths vary so that both short and deep queues are covered.
    sequence.run(50 + static_cast<int>(sequence_seed % 400));
    if (HasFatalFailure()) return;
    total_matches += sequence.matches();
  }
  // The generator must actually exercise matching, not just queue things.
  EXPECT_GT(total_matches, static_cast<std::size_t>(sequences) * 20);
  RecordProperty("sequences", sequences);
  RecordProperty("matches", static_cast<int>(total_matches));
}

}  // namespace
}  // namespace tagwire::matching
