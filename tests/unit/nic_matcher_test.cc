// NicMatcher against the tag-matching contract: scripted event
// sequences for each rule and each completion the verbs contract defines
// (match, unexpected, IBV_WC_TM_ERR on ADD and DEL, IBV_WC_TM_SYNC_REQ), and
// long random interleavings of posts, sends, cancels, mprobes, NIC
// operations and completion polling, checked against MPI's ordering rules
// under both readings of the contract (tests/unit/contract_nic.h).
//
// The seed is fixed so CI is repeatable; TAGWIRE_TEST_SEED=N runs another.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "contract_nic.h"
#include "matching/nic_matcher.h"
#include "matching/nic_tag.h"

namespace tagwire::matching {
namespace {

using testing::ContractNic;
using Kind = ContractNic::Completion::Kind;

// ---- The tag layout.

TEST(NicTag, EnvelopeRoundTripsAndFillsEveryField) {
  Envelope e{(1u << kNicContextBits) - 1, (1 << kNicSourceBits) - 1, (1 << kNicTagBits) - 1};
  auto tag = encode_nic_tag(e);
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(*tag, ~std::uint64_t{0});
  EXPECT_EQ(decode_nic_tag(*tag), e);
  Envelope small{3, 7, 11};
  EXPECT_EQ(decode_nic_tag(*encode_nic_tag(small)), small);
}

TEST(NicTag, FieldsThatDoNotFitAreRefused) {
  EXPECT_FALSE(encode_nic_tag({1u << kNicContextBits, 0, 0}).has_value());
  EXPECT_FALSE(encode_nic_tag({0, 1 << kNicSourceBits, 0}).has_value());
  EXPECT_FALSE(encode_nic_tag({0, 0, 1 << kNicTagBits}).has_value());
  EXPECT_FALSE(encode_nic_pattern({1u << kNicContextBits, kAnySource, kAnyTag}).has_value());
  EXPECT_FALSE(encode_nic_pattern({0, 1 << kNicSourceBits, kAnyTag}).has_value());
}

TEST(NicTag, WildcardsBecomeMasksThatAcceptExactlyWhatThePatternDoes) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    auto field = [&](int n) { return static_cast<int>(rng() % n); };
    ReceivePattern p{static_cast<ContextId>(field(3)), field(4) == 0 ? kAnySource : field(3),
                     field(4) == 0 ? kAnyTag : field(3)};
    Envelope e{static_cast<ContextId>(field(3)), field(3), field(3)};
    auto pattern = encode_nic_pattern(p);
    ASSERT_TRUE(pattern.has_value());
    EXPECT_EQ(pattern->accepts(*encode_nic_tag(e)), p.matches(e))
        << "pattern (" << p.context << "," << p.source << "," << p.tag << ") envelope ("
        << e.context << "," << e.source << "," << e.tag << ")";
  }
}

// ---- A rig: the matcher, a model NIC, and a record of who got what.

struct ReceiveRecord {
  ReceivePattern pattern;
  std::uint64_t order = 0;  // post order (mprobes included)
  ReceiveHandle handle;
  enum class State { kPending, kMatched, kCancelled } state = State::kPending;
  bool cancel_requested = false;
  bool cancel_pending = false;
  std::int64_t message = -1;
  std::uint64_t committed = 0;  // when it matched or was cancelled
};

struct MessageRecord {
  Envelope envelope;
  std::uint64_t sent = 0;  // send order, one counter for all sources
  std::int64_t receive = -1;
  std::uint64_t committed = 0;
};

class Rig {
 public:
  ReceiveRecord new_receive(const ReceivePattern& pattern) {
    ReceiveRecord r;
    r.pattern = pattern;
    r.order = ++clock;
    return r;
  }

  Rig(std::uint32_t capacity, ContractNic::StaleAdd stale, std::uint32_t sync_every = 0)
      : matcher(capacity), nic(stale, sync_every) {}

  std::size_t post(ReceivePattern pattern) {
    const std::size_t id = receives.size();
    receives.push_back(new_receive(pattern));
    PostResult r = matcher.post_receive(pattern, id);
    if (r.matched) {
      bind(id, static_cast<std::size_t>(r.message.sender_request_id), clock);
    } else {
      receives[id].handle = r.handle;
    }
    submit();
    return id;
  }

  // A message leaves its sender and reaches the NIC.
  std::size_t send(Envelope envelope) {
    const std::size_t id = messages.size();
    messages.push_back(MessageRecord{envelope, ++clock});
    std::uint64_t entry = nic.arrive({*encode_nic_tag(envelope), id});
    if (entry != 0) nic_commit_[entry] = clock;
    return id;
  }

  void cancel(std::size_t id) {
    ReceiveRecord& r = receives[id];
    if (r.state != ReceiveRecord::State::kPending || r.cancel_requested) return;
    r.cancel_requested = true;
    switch (matcher.cancel_receive(r.handle)) {
      case NicMatcher::CancelOutcome::kCancelled:
        r.state = ReceiveRecord::State::kCancelled;
        r.committed = ++clock;
        break;
      case NicMatcher::CancelOutcome::kPending:
        r.cancel_pending = true;
        r.committed = ++clock;  // out of software now; kept if the DEL wins
        break;
      case NicMatcher::CancelOutcome::kAlreadyMatched:
        ADD_FAILURE() << "receive " << id << " is pending but the matcher says matched";
        break;
    }
    submit();
  }

  void mprobe(ReceivePattern pattern) {
    if (auto m = matcher.mprobe(pattern)) {
      const std::size_t id = receives.size();
      receives.push_back(new_receive(pattern));
      bind(id, static_cast<std::size_t>(m->sender_request_id), clock);
    }
  }

  // Software polls one completion.
  void poll_one() {
    ContractNic::Completion c = nic.cq.front();
    nic.cq.pop_front();
    switch (c.kind) {
      case Kind::kAdd:
        EXPECT_TRUE(matcher.on_add_done(c.entry, c.ok, c.sync_requested).is_ok());
        break;
      case Kind::kDel: {
        auto cancelled = matcher.on_del_done(c.entry, c.ok, c.sync_requested);
        ASSERT_TRUE(cancelled.is_ok()) << cancelled.status().to_string();
        if (cancelled->has_value()) {
          ReceiveRecord& r = receives[static_cast<std::size_t>(**cancelled)];
          EXPECT_TRUE(r.cancel_pending);
          EXPECT_EQ(r.state, ReceiveRecord::State::kPending);
          r.state = ReceiveRecord::State::kCancelled;
          r.cancel_pending = false;
        }
        break;
      }
      case Kind::kSync:
        matcher.on_sync_done(c.sync_requested);
        break;
      case Kind::kMatch: {
        auto match = matcher.on_nic_match(c.entry);
        ASSERT_TRUE(match.is_ok()) << match.status().to_string();
        const auto id = static_cast<std::size_t>(match->receive_cookie);
        EXPECT_EQ(match->cancel_lost, receives[id].cancel_pending);
        receives[id].cancel_pending = false;
        bind(id, static_cast<std::size_t>(c.message.id), nic_commit_[c.entry]);
        break;
      }
      case Kind::kUnexpected: {
        const MessageRecord& m = messages[static_cast<std::size_t>(c.message.id)];
        IncomingMessage in{decode_nic_tag(c.message.nic_tag), c.message.id, 0, 0};
        EXPECT_EQ(in.envelope, m.envelope);
        ArrivalResult r = matcher.on_unexpected(in, c.sync_requested);
        if (r.matched) {
          bind(static_cast<std::size_t>(r.receive_cookie), static_cast<std::size_t>(c.message.id),
               ++clock);
        }
        break;
      }
    }
  }

  void end_batch() {
    matcher.end_of_batch();
    submit();
  }

  // Until nothing more can happen: every operation executed, every
  // completion polled, the count reported.
  void drain() {
    for (int guard = 0; guard < 100000; ++guard) {
      if (nic.has_pending_ops()) {
        nic.execute_one();
      } else if (!nic.cq.empty()) {
        poll_one();
      } else {
        end_batch();
        if (!nic.has_pending_ops()) return;
      }
    }
    FAIL() << "drain did not settle";
  }

  void submit() { nic.submit(matcher.take_ops()); }

  void bind(std::size_t receive, std::size_t message, std::uint64_t when) {
    ReceiveRecord& r = receives[receive];
    MessageRecord& m = messages[message];
    ASSERT_EQ(r.state, ReceiveRecord::State::kPending) << "receive " << receive << " matched twice";
    ASSERT_EQ(m.receive, -1) << "message " << message << " received twice";
    ASSERT_TRUE(r.pattern.matches(m.envelope));
    r.state = ReceiveRecord::State::kMatched;
    r.message = static_cast<std::int64_t>(message);
    r.committed = when;
    m.receive = static_cast<std::int64_t>(receive);
    m.committed = when;
  }

  // MPI's rules over everything recorded; call after drain().
  void check_mpi_rules(const std::string& where) {
    std::size_t unmatched = 0;
    for (std::size_t i = 0; i < messages.size(); ++i) {
      const MessageRecord& m = messages[i];
      if (m.receive < 0) {
        ++unmatched;
        // Progress: nothing still pending may accept a message left over.
        for (std::size_t j = 0; j < receives.size(); ++j) {
          if (receives[j].state == ReceiveRecord::State::kPending) {
            EXPECT_FALSE(receives[j].pattern.matches(m.envelope))
                << where << ": receive " << j << " and message " << i << " both left pending";
          }
        }
        continue;
      }
      const ReceiveRecord& r = receives[static_cast<std::size_t>(m.receive)];
      // Non-overtaking: an earlier message from the same source on the same
      // context that r would also take went to an earlier receive.
      for (std::size_t k = 0; k < i; ++k) {
        const MessageRecord& earlier = messages[k];
        if (earlier.envelope.context != m.envelope.context ||
            earlier.envelope.source != m.envelope.source || !r.pattern.matches(earlier.envelope)) {
          continue;
        }
        ASSERT_GE(earlier.receive, 0) << where << ": message " << i << " overtook " << k;
        EXPECT_LT(receives[static_cast<std::size_t>(earlier.receive)].order, r.order)
            << where << ": message " << i << " overtook " << k;
      }
      // Receive order: an earlier receive that would take m was no longer
      // pending when m was matched.
      for (std::size_t j = 0; j < receives.size(); ++j) {
        const ReceiveRecord& other = receives[j];
        if (other.order >= r.order || !other.pattern.matches(m.envelope)) continue;
        EXPECT_NE(other.state, ReceiveRecord::State::kPending)
            << where << ": message " << i << " skipped pending receive " << j;
        EXPECT_LT(other.committed, m.committed)
            << where << ": message " << i << " skipped receive " << j << " that was still pending";
      }
    }
    for (std::size_t j = 0; j < receives.size(); ++j) {
      EXPECT_FALSE(receives[j].cancel_pending) << where << ": cancel of " << j << " never resolved";
    }
    EXPECT_EQ(matcher.unexpected_count(), unmatched) << where;
    std::size_t pending = 0;
    for (const ReceiveRecord& r : receives) pending += r.state == ReceiveRecord::State::kPending;
    EXPECT_EQ(matcher.posted_count(), pending) << where;
    // The book and the NIC agree on what the NIC holds, and are in step.
    EXPECT_EQ(matcher.nic_entries(), nic.entries()) << where;
    EXPECT_TRUE(nic.all_usable()) << where;
    EXPECT_EQ(matcher.unexpected_handled(), nic.unexpected()) << where;
  }

  NicMatcher matcher;
  ContractNic nic;
  std::vector<ReceiveRecord> receives;
  std::vector<MessageRecord> messages;
  std::uint64_t clock = 0;

 private:
  std::unordered_map<std::uint64_t, std::uint64_t> nic_commit_;  // entry -> NIC match time
};

class NicMatcherRules : public ::testing::TestWithParam<ContractNic::StaleAdd> {};

INSTANTIATE_TEST_SUITE_P(BothReadings, NicMatcherRules,
                         ::testing::Values(ContractNic::StaleAdd::kHeldUnused,
                                           ContractNic::StaleAdd::kRefused),
                         [](const auto& param_info) {
                           return param_info.param == ContractNic::StaleAdd::kHeldUnused
                                      ? "HeldUnused"
                                      : "Refused";
                         });

TEST_P(NicMatcherRules, ExpectedMessageIsMatchedByTheNic) {
  Rig rig(8, GetParam());
  auto r = rig.post({1, 2, 3});
  rig.drain();
  ASSERT_EQ(rig.nic.entries(), 1u);
  rig.send({1, 2, 3});
  rig.drain();
  EXPECT_EQ(rig.receives[r].message, 0);
  EXPECT_EQ(rig.matcher.counters().matched_by_nic, 1u);
  EXPECT_EQ(rig.matcher.counters().matched_by_software, 0u);
  EXPECT_EQ(rig.matcher.posted_count(), 0u);
  rig.check_mpi_rules("expected");
}

TEST_P(NicMatcherRules, BothWildcardsAreOffloadedAsMasks) {
  Rig rig(8, GetParam());
  auto any_source = rig.post({1, kAnySource, 3});
  auto any_tag = rig.post({1, 4, kAnyTag});
  rig.drain();
  EXPECT_EQ(rig.matcher.counters().tag_adds, 2u);
  rig.send({1, 4, 9});  // only the ANY_TAG receive accepts it
  rig.send({1, 7, 3});
  rig.drain();
  EXPECT_EQ(rig.receives[any_tag].message, 0);
  EXPECT_EQ(rig.receives[any_source].message, 1);
  EXPECT_EQ(rig.matcher.counters().matched_by_nic, 2u);
  rig.check_mpi_rules("wildcards");
}

TEST_P(NicMatcherRules, UnexpectedMessageWaitsInSoftwareAndAReceiveTakesItThere) {
  Rig rig(8, GetParam());
  rig.send({1, 2, 3});
  rig.drain();
  ASSERT_TRUE(rig.matcher.probe({1, kAnySource, kAnyTag}).has_value());
  auto r = rig.post({1, 2, 3});
  EXPECT_EQ(rig.receives[r].message, 0);
  EXPECT_EQ(rig.matcher.counters().tag_adds, 0u) << "matched at post: nothing for the NIC";
  rig.drain();
  rig.check_mpi_rules("unexpected");
}

// Rule 2: a receive posted while a message it accepts is on its way to
// software must not let the NIC give it a later message.
TEST_P(NicMatcherRules, StaleAddCannotTakeALaterMessage) {
  Rig rig(8, GetParam());
  rig.send({1, 2, 3});                 // m0: unexpected at the NIC, not yet polled
  auto r = rig.post({1, 2, kAnyTag});  // ADD carries count 0; the NIC has 1
  rig.nic.execute_one();               // the stale ADD
  rig.send({1, 2, 4});                 // m1: must not be matched to r
  EXPECT_EQ(rig.nic.cq.back().kind, Kind::kUnexpected);
  rig.drain();
  EXPECT_EQ(rig.receives[r].message, 0) << "the receive takes the first message";
  EXPECT_EQ(rig.matcher.unexpected_count(), 1u);
  rig.check_mpi_rules("stale add");
}

// Rule 3: software matches an unexpected message to a receive the NIC holds
// (unused, added stale): the DEL goes before the sync that re-enables it.
TEST(NicMatcherHeld, SoftwareMatchOfAHeldEntryDeletesItBeforeTheSync) {
  Rig rig(8, ContractNic::StaleAdd::kHeldUnused);
  rig.send({1, 2, 3});
  auto r = rig.post({1, 2, 3});
  rig.nic.execute_one();  // ADD, held unused
  ASSERT_EQ(rig.nic.entries(), 1u);
  rig.poll_one();  // m0 unexpected -> software matches r
  EXPECT_EQ(rig.receives[r].message, 0);
  rig.end_batch();
  auto ops = rig.matcher.take_ops();
  EXPECT_TRUE(ops.empty());
  rig.drain();
  EXPECT_EQ(rig.nic.entries(), 0u);
  EXPECT_EQ(rig.matcher.counters().tag_dels, 1u);
  rig.send({1, 2, 3});  // nothing may take this one now
  rig.drain();
  EXPECT_EQ(rig.matcher.unexpected_count(), 1u);
  rig.check_mpi_rules("software match of held entry");
}

TEST(NicMatcherRefused, RefusedAddLeavesTheReceiveToSoftware) {
  Rig rig(8, ContractNic::StaleAdd::kRefused);
  rig.send({1, 2, 3});
  auto r = rig.post({1, 2, 5});
  rig.drain();
  EXPECT_EQ(rig.matcher.counters().add_rejected, 1u);
  EXPECT_EQ(rig.nic.entries(), 0u);
  rig.send({1, 2, 5});
  rig.drain();
  EXPECT_EQ(rig.receives[r].message, 1);
  EXPECT_EQ(rig.matcher.counters().matched_by_software, 1u);
  rig.check_mpi_rules("refused add");
}

// Rule 1: with the NIC full, a receive stays in software; a later receive
// it overlaps must stay too, one it does not overlap may go to the NIC.
TEST_P(NicMatcherRules, LaterReceiveStaysInSoftwareBehindAnOverlappingEarlierOne) {
  Rig rig(1, GetParam());
  auto first = rig.post({1, 2, 1});
  auto stuck = rig.post({1, 2, 5});  // NIC full
  EXPECT_EQ(rig.matcher.counters().kept_full, 1u);
  rig.drain();
  rig.send({1, 2, 1});  // frees the NIC's one entry
  rig.drain();
  EXPECT_EQ(rig.receives[first].message, 0);
  auto blocked = rig.post({1, kAnySource, 5});
  EXPECT_EQ(rig.matcher.counters().kept_for_order, 1u);
  auto free_to_go = rig.post({1, 2, 7});
  EXPECT_EQ(rig.matcher.counters().tag_adds, 2u);
  rig.drain();
  rig.send({1, 2, 5});
  rig.send({1, 3, 5});
  rig.send({1, 2, 7});
  rig.drain();
  EXPECT_EQ(rig.receives[stuck].message, 1);
  EXPECT_EQ(rig.receives[blocked].message, 2);
  EXPECT_EQ(rig.receives[free_to_go].message, 3);
  rig.check_mpi_rules("order");
}

TEST_P(NicMatcherRules, UnencodableReceiveStaysInSoftware) {
  Rig rig(8, GetParam());
  rig.post({1u << kNicContextBits, 0, 0});
  EXPECT_EQ(rig.matcher.counters().kept_unencodable, 1u);
  EXPECT_EQ(rig.matcher.nic_entries(), 0u);
}

// The verbs layer keeps a receive whose buffer cannot hold a rendezvous
// header out of the NIC; rule 1 then keeps later overlapping ones out too.
TEST_P(NicMatcherRules, ReceiveTheCallerKeepsInSoftwareKeepsOverlappingLaterOnesOut) {
  Rig rig(8, GetParam());
  PostResult small = rig.matcher.post_receive({1, 2, 3}, 100, /*nic_may_hold=*/false);
  ASSERT_FALSE(small.matched);
  rig.submit();
  rig.post({1, kAnySource, 3});  // could take what the first one takes
  rig.post({1, 2, 4});           // could not
  rig.drain();
  EXPECT_EQ(rig.matcher.counters().kept_by_caller, 1u);
  EXPECT_EQ(rig.matcher.counters().kept_for_order, 1u);
  EXPECT_EQ(rig.matcher.counters().tag_adds, 1u);
  EXPECT_EQ(rig.nic.entries(), 1u);
}

// A message the NIC counted as unexpected but software cannot match (a
// rendezvous FIN, a broken TMH) is counted, so the NIC's and software's
// counts agree and later ADDs are usable; and no probe ever sees it.
TEST_P(NicMatcherRules, UnmatchableArrivalIsCountedButNeverQueued) {
  Rig rig(8, GetParam());
  ASSERT_EQ(rig.nic.arrive({*encode_nic_tag({0, 0, 0}), 0}), 0u);
  ASSERT_EQ(rig.nic.cq.size(), 1u);
  ContractNic::Completion c = rig.nic.cq.front();
  rig.nic.cq.pop_front();
  ASSERT_EQ(c.kind, Kind::kUnexpected);
  rig.matcher.on_unmatchable(c.sync_requested);
  rig.end_batch();
  rig.drain();
  EXPECT_EQ(rig.matcher.unexpected_handled(), rig.nic.unexpected());
  EXPECT_EQ(rig.matcher.unexpected_count(), 0u);
  EXPECT_FALSE(rig.matcher.probe({0, kAnySource, kAnyTag}).has_value());
  rig.post({0, 0, 0});
  rig.drain();
  EXPECT_EQ(rig.nic.entries(), 1u);
  EXPECT_TRUE(rig.nic.all_usable()) << "an ADD after the unmatchable message must be usable";
}

TEST_P(NicMatcherRules, CancelOfAHeldReceiveDeletesItFromTheNic) {
  Rig rig(8, GetParam());
  auto r = rig.post({1, 2, 3});
  rig.drain();
  rig.cancel(r);
  EXPECT_TRUE(rig.receives[r].cancel_pending);
  rig.drain();
  EXPECT_EQ(rig.receives[r].state, ReceiveRecord::State::kCancelled);
  EXPECT_EQ(rig.nic.entries(), 0u);
  rig.send({1, 2, 3});
  rig.drain();
  EXPECT_EQ(rig.matcher.unexpected_count(), 1u);
  rig.check_mpi_rules("cancel");
}

// Rule 4: the NIC consumed the receive before the DEL: IBV_WC_TM_ERR, and
// the receive completes normally.
TEST_P(NicMatcherRules, CancelThatLosesToTheNicCompletesTheReceive) {
  Rig rig(8, GetParam());
  auto r = rig.post({1, 2, 3});
  rig.drain();
  rig.cancel(r);        // DEL posted, not yet executed
  rig.send({1, 2, 3});  // the NIC consumes the entry first
  rig.nic.execute_one();
  EXPECT_FALSE(rig.nic.cq.back().ok) << "DEL of a consumed entry is IBV_WC_TM_ERR";
  rig.drain();
  EXPECT_EQ(rig.receives[r].state, ReceiveRecord::State::kMatched);
  EXPECT_EQ(rig.matcher.counters().cancel_lost_to_nic, 1u);
  EXPECT_EQ(rig.matcher.nic_entries(), 0u);
  rig.check_mpi_rules("cancel lost");
}

TEST_P(NicMatcherRules, SyncRequestIsAnswered) {
  Rig rig(8, GetParam(), 1);
  rig.send({1, 2, 3});
  rig.poll_one();
  rig.end_batch();
  ASSERT_TRUE(rig.nic.has_pending_ops());
  EXPECT_EQ(rig.matcher.counters().syncs, 1u);
  rig.nic.execute_one();
  EXPECT_EQ(rig.nic.cq.back().kind, Kind::kSync);
  EXPECT_FALSE(rig.nic.cq.back().sync_requested) << "the sync carried the NIC's own count";
}

TEST(NicMatcherErrors, ImpossibleCompletionsAreInternalErrors) {
  NicMatcher m(4);
  auto match = m.on_nic_match(42);
  ASSERT_FALSE(match.is_ok());
  EXPECT_EQ(match.status().code(), ErrorCode::kInternal);
  EXPECT_FALSE(m.on_add_done(42, true, false).is_ok());
  EXPECT_FALSE(m.on_del_done(42, true, false).is_ok());

  // A DEL that finds gone an entry software matched means the NIC matched
  // it too: a message received twice. Reported, never absorbed.
  Rig rig(8, ContractNic::StaleAdd::kHeldUnused);
  rig.send({1, 2, 3});
  rig.post({1, 2, 3});
  rig.nic.execute_one();  // ADD
  rig.poll_one();         // ADD done
  rig.poll_one();         // unexpected -> software match -> DEL queued
  auto ops = rig.matcher.take_ops();
  ASSERT_EQ(ops.size(), 1u);
  ASSERT_EQ(ops[0].kind, NicOp::Kind::kDel);
  auto del = rig.matcher.on_del_done(ops[0].entry, false, false);
  ASSERT_FALSE(del.is_ok());
  EXPECT_NE(del.status().to_string().find("software had matched"), std::string::npos);
}

// ---- Random interleavings.

std::uint64_t base_seed() {
  if (const char* text = std::getenv("TAGWIRE_TEST_SEED")) return std::strtoull(text, nullptr, 0);
  return 0x5eed7a9ull;
}

TEST_P(NicMatcherRules, RandomInterleavingsKeepMpiOrder) {
  const int runs = 1500;
  NicMatchingCounters total;
  for (int run = 0; run < runs; ++run) {
    const std::uint64_t seed = base_seed() + static_cast<std::uint64_t>(run);
    std::mt19937_64 rng(seed);
    auto pick = [&](std::uint64_t n) { return static_cast<int>(rng() % n); };
    const auto capacity = static_cast<std::uint32_t>(1 + pick(12));
    Rig rig(capacity, GetParam(), static_cast<std::uint32_t>(pick(4)));
    auto pattern = [&]() {
      return ReceivePattern{static_cast<ContextId>(pick(2)), pick(4) == 0 ? kAnySource : pick(3),
                            pick(4) == 0 ? kAnyTag : pick(3)};
    };
    for (int step = 0; step < 120; ++step) {
      int op = pick(100);
      if (op < 24) {
        rig.post(pattern());
      } else if (op < 44) {
        rig.send({static_cast<ContextId>(pick(2)), pick(3), pick(3)});
      } else if (op < 50 && !rig.receives.empty()) {
        rig.cancel(static_cast<std::size_t>(pick(rig.receives.size())));
      } else if (op < 53) {
        rig.mprobe(pattern());
      } else if (op < 75) {
        if (rig.nic.has_pending_ops()) rig.nic.execute_one();
      } else if (op < 97) {
        if (!rig.nic.cq.empty()) rig.poll_one();
      } else {
        rig.end_batch();
      }
      if (::testing::Test::HasFatalFailure()) break;
    }
    rig.drain();
    rig.check_mpi_rules("seed " + std::to_string(seed));
    if (::testing::Test::HasFailure()) {
      FAIL() << "reproduce with TAGWIRE_TEST_SEED=" << seed;
    }
    const auto& c = rig.matcher.counters();
    total.matched_by_nic += c.matched_by_nic;
    total.matched_by_software += c.matched_by_software;
    total.syncs += c.syncs;
    total.kept_for_order += c.kept_for_order;
    total.kept_full += c.kept_full;
    total.add_rejected += c.add_rejected;
    total.cancel_lost_to_nic += c.cancel_lost_to_nic;
    total.tag_dels += c.tag_dels;
  }
  std::printf(
      "%d runs: NIC matched %llu, software %llu, syncs %llu, DELs %llu, kept for order %llu,"
      " kept (full) %llu, ADDs refused %llu, cancels lost to the NIC %llu\n",
      runs, static_cast<unsigned long long>(total.matched_by_nic),
      static_cast<unsigned long long>(total.matched_by_software),
      static_cast<unsigned long long>(total.syncs), static_cast<unsigned long long>(total.tag_dels),
      static_cast<unsigned long long>(total.kept_for_order),
      static_cast<unsigned long long>(total.kept_full),
      static_cast<unsigned long long>(total.add_rejected),
      static_cast<unsigned long long>(total.cancel_lost_to_nic));
  // The interleavings must reach every path the rules guard, or the test
  // proves little.
  EXPECT_GT(total.matched_by_nic, 300u);
  EXPECT_GT(total.matched_by_software, 1000u);
  EXPECT_GT(total.kept_for_order, 10u);
  EXPECT_GT(total.cancel_lost_to_nic, 0u);
  EXPECT_GT(total.tag_dels, 100u);
  if (GetParam() == ContractNic::StaleAdd::kRefused) {
    EXPECT_GT(total.add_rejected, 10u);
  }
}

}  // namespace
}  // namespace tagwire::matching
