// Multi-process point-to-point tests, run under tagwire-run with 2 or 4
// ranks over whatever transport the environment picks (CI: UCX shared
// memory, UCX TCP on loopback; verbs in the rxe VM). Every rank runs every
// test in the same order (SPMD); each test checks content and status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "harness.h"

namespace tagwire::engine {
namespace {

// ------------------------------------------------------------ protocols

struct ProtocolCase {
  SendMode mode;
  bool receive_first;  // receive posted before the send (expected path) or after (unexpected)
};

class Protocols : public ::testing::TestWithParam<ProtocolCase> {};

// The cases' buffers (up to 64 MiB each), made once per process and reused:
// a fresh 64 MiB allocation per size and case sometimes stalled for minutes
// on the CI machine, a VM whose balloon reports freed pages to its host
// (the kernel logged workqueue lockups in page_reporting_process while every
// rank sat in a page-faulting memset or in a barrier waiting for such a rank).
struct ProtocolBuffers {
  std::vector<std::uint8_t> out, in, bsend;
};
ProtocolBuffers& protocol_buffers() {
  static ProtocolBuffers buffers;
  return buffers;
}

TEST_P(Protocols, EverySizeArrivesIntactInARing) {
  const auto [mode, receive_first] = GetParam();
  const std::size_t t = threshold();
  const std::vector<std::size_t> sizes = {0, 1, 8, t - 1, t, t + 1, 1u << 20, 64u << 20};
  ProtocolBuffers& buffers = protocol_buffers();
  std::vector<std::uint8_t>& bsend_space = buffers.bsend;
  if (mode == SendMode::kBuffered) {
    bsend_space.resize((64u << 20) + Engine::kBsendOverhead);
    ASSERT_OK(E().buffer_attach(bsend_space.data(), bsend_space.size()));
  }
  for (std::size_t size : sizes) {
    SCOPED_TRACE("mode " + mode_name(mode) + ", size " + std::to_string(size) +
                 (receive_first ? ", receive first" : ", send first"));
    const std::uint64_t seed = size * 31 + static_cast<std::uint64_t>(me());
    std::vector<std::uint8_t>& out = buffers.out;
    fill_payload(out, size, seed);
    std::vector<std::uint8_t>& in = buffers.in;
    in.assign(size + 16, 0xEE);  // 16 canary bytes past the message
    Request* recv = nullptr;
    Request* send = nullptr;
    if (receive_first) recv = take(E().irecv(in.data(), size, left(), 5, W()));
    barrier();  // a ready send needs its receive posted
    send = take(E().isend(out.data(), size, right(), 5, W(), mode));
    barrier();  // with send first, the message is unexpected at the receiver
    if (!receive_first) recv = take(E().irecv(in.data(), size, left(), 5, W()));
    MessageStatus rs, ss;
    ASSERT_OK(E().wait(recv, &rs));
    ASSERT_OK(E().wait(send, &ss));
    ASSERT_TRUE(rs.error.is_ok()) << rs.error.to_string();
    ASSERT_TRUE(ss.error.is_ok()) << ss.error.to_string();
    EXPECT_EQ(rs.source, left());
    EXPECT_EQ(rs.tag, 5);
    EXPECT_EQ(rs.count, size);
    EXPECT_FALSE(rs.cancelled);
    const std::uint64_t sender_seed = size * 31 + static_cast<std::uint64_t>(left());
    ASSERT_EQ(first_mismatch(in.data(), size, sender_seed), std::string::npos);
    for (std::size_t i = size; i < in.size(); ++i) ASSERT_EQ(in[i], 0xEE) << "canary " << i;
  }
  if (mode == SendMode::kBuffered) {
    auto detached = take(E().buffer_detach());
    EXPECT_EQ(detached.first, bsend_space.data());
    EXPECT_EQ(detached.second, bsend_space.size());
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllModes, Protocols,
    ::testing::Values(
        ProtocolCase{SendMode::kStandard, true}, ProtocolCase{SendMode::kStandard, false},
        ProtocolCase{SendMode::kSynchronous, true}, ProtocolCase{SendMode::kSynchronous, false},
        ProtocolCase{SendMode::kReady, true},  // ready: the receive must come first
        ProtocolCase{SendMode::kBuffered, true}, ProtocolCase{SendMode::kBuffered, false}),
    [](const auto& param_info) {
      return mode_name(param_info.param.mode) +
             (param_info.param.receive_first ? "_ReceiveFirst" : "_SendFirst");
    });

TEST(Synchronous, DoesNotCompleteBeforeTheReceiveMatches) {
  if (nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  for (std::size_t size : {std::size_t{8}, threshold() + 1}) {
    auto data = make_payload(size, 3);
    std::vector<std::uint8_t> in(size);
    if (me() == 0) {
      Request* s = take(E().isend(data.data(), size, 1, 9, W(), SendMode::kSynchronous));
      // Rank 1 posts nothing until told to: the send must stay incomplete.
      for (int i = 0; i < 2000; ++i) ASSERT_FALSE(take(E().test(s, nullptr)));
      char go = 1;
      ASSERT_OK(E().send(&go, 1, 1, 10, W()));
      ASSERT_OK(E().wait(s, nullptr));
    } else if (me() == 1) {
      char go = 0;
      ASSERT_OK(E().recv(&go, 1, 0, 10, W(), nullptr));
      ASSERT_OK(E().recv(in.data(), size, 0, 9, W(), nullptr));
      EXPECT_EQ(first_mismatch(in.data(), size, 3), std::string::npos);
    }
    barrier();
  }
}

// ------------------------------------------------------------- wildcards

TEST(Wildcards, AnySourceAnyTagSeesEverySender) {
  const std::size_t size = 40;
  if (me() != 0) {
    auto data = make_payload(size, static_cast<std::uint64_t>(me()));
    ASSERT_OK(E().send(data.data(), size, 0, me() * 10, W()));
  } else {
    std::vector<bool> seen(static_cast<std::size_t>(nranks()), false);
    for (int i = 1; i < nranks(); ++i) {
      std::vector<std::uint8_t> in(size);
      MessageStatus st;
      ASSERT_OK(E().recv(in.data(), size, kAnySource, kAnyTag, W(), &st));
      ASSERT_GT(st.source, 0);
      ASSERT_LT(st.source, nranks());
      EXPECT_FALSE(seen[static_cast<std::size_t>(st.source)]) << "source " << st.source << " twice";
      seen[static_cast<std::size_t>(st.source)] = true;
      EXPECT_EQ(st.tag, st.source * 10);
      EXPECT_EQ(st.count, size);
      EXPECT_EQ(first_mismatch(in.data(), size, static_cast<std::uint64_t>(st.source)),
                std::string::npos);
    }
  }
  barrier();
}

TEST(Wildcards, AnyTagFromOneSourceKeepsSendOrder) {
  if (nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  if (me() == 0) {
    for (int tag : {7, 3, 9, 1}) ASSERT_OK(E().send(&tag, sizeof(tag), 1, tag, W()));
  } else if (me() == 1) {
    for (int expected : {7, 3, 9, 1}) {
      int got = -1;
      MessageStatus st;
      ASSERT_OK(E().recv(&got, sizeof(got), 0, kAnyTag, W(), &st));
      EXPECT_EQ(got, expected);
      EXPECT_EQ(st.tag, expected);
    }
  }
  barrier();
}

// ---------------------------------------------------------- ordering

TEST(Ordering, NonOvertakingUnderLoadWithInterleavedTagsAndSizes) {
  if (nranks() < 2) GTEST_SKIP() << "needs 2 ranks";
  constexpr int kMessages = 3000;
  const std::size_t big = threshold() + 100;  // every 97th message goes by rendezvous
  auto size_of = [&](int i) { return i % 97 == 0 ? big : static_cast<std::size_t>(8 + i % 50); };
  // Everyone sends to its right neighbour and receives from its left.
  std::vector<std::vector<std::uint8_t>> out(kMessages);
  std::vector<Request*> sends;
  for (int i = 0; i < kMessages; ++i) {
    out[static_cast<std::size_t>(i)] = make_payload(size_of(i), static_cast<std::uint64_t>(i));
    std::memcpy(out[static_cast<std::size_t>(i)].data(), &i, sizeof(i));  // sequence number first
    sends.push_back(
        take(E().isend(out[static_cast<std::size_t>(i)].data(), size_of(i), right(), i % 3, W())));
  }
  std::vector<std::uint8_t> in(big);
  int next_by_tag[3] = {0, 1, 2};
  for (int i = 0; i < kMessages; ++i) {
    MessageStatus st;
    // Alternate between ANY_TAG and specific tags: order holds for both.
    int tag = i % 2 == 0 ? kAnyTag : i % 3;
    ASSERT_OK(E().recv(in.data(), in.size(), left(), tag, W(), &st));
    int seq = -1;
    std::memcpy(&seq, in.data(), sizeof(seq));
    ASSERT_EQ(st.tag, seq % 3);
    // Messages of one tag arrive in send order.
    ASSERT_EQ(seq, next_by_tag[st.tag]) << "message " << i;
    next_by_tag[st.tag] += 3;
    ASSERT_EQ(st.count, size_of(seq));
    // Bytes after the sequence number still follow the sender's pattern.
    for (std::size_t k = sizeof(int); k < st.count; ++k) {
      ASSERT_EQ(in[k], pattern_byte(static_cast<std::uint64_t>(seq), k)) << "message " << seq;
    }
  }
  std::vector<MessageStatus> statuses(sends.size());
  ASSERT_OK(E().wait_all(sends, statuses));
  barrier();
}

// ------------------------------------------------------------- probe

TEST(Probe, ProbeThenReceiveGetsTheProbedMessage) {
  int tag = 21;
  for (std::size_t size : {std::size_t{0}, std::size_t{100}, threshold() + 5000}) {
    ++tag;  // each round its own tag: a fast neighbour's next message is not this one
    auto data = make_payload(size, 11 + static_cast<std::uint64_t>(me()));
    Request* s = take(E().isend(data.data(), size, right(), tag, W()));
    MessageStatus st;
    ASSERT_OK(E().probe(kAnySource, tag, W(), &st));
    EXPECT_EQ(st.source, left());
    EXPECT_EQ(st.tag, tag);
    ASSERT_EQ(st.count, size);
    // Probing again names the same message.
    MessageStatus again;
    ASSERT_TRUE(take(E().iprobe(kAnySource, tag, W(), &again)));
    EXPECT_EQ(again.source, st.source);
    std::vector<std::uint8_t> in(st.count);
    MessageStatus rs;
    ASSERT_OK(E().recv(in.data(), in.size(), st.source, st.tag, W(), &rs));
    EXPECT_EQ(rs.count, size);
    EXPECT_EQ(first_mismatch(in.data(), size, 11 + static_cast<std::uint64_t>(left())),
              std::string::npos);
    ASSERT_OK(E().wait(s, nullptr));
    barrier();
    EXPECT_FALSE(take(E().iprobe(kAnySource, tag, W(), nullptr)));
  }
}

TEST(Probe, MprobeTakesTheMessageSoAReceiveGetsTheNextOne) {
  const std::size_t t = threshold();
  int tag = 30;
  for (std::size_t size : {std::size_t{16}, t + 1}) {
    ++tag;  // each round its own tag: a fast neighbour's next message is not this one
    auto first = make_payload(size, 100);
    auto second = make_payload(size, 200);
    Request* s1 = take(E().isend(first.data(), size, right(), tag, W()));
    Request* s2 = take(E().isend(second.data(), size, right(), tag, W()));
    MessageStatus st;
    std::unique_ptr<Message> m = take(E().mprobe(left(), tag, W(), &st));
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(st.count, size);
    // An ordinary receive cannot take the mprobed message: it gets the second.
    std::vector<std::uint8_t> in(size);
    ASSERT_OK(E().recv(in.data(), size, left(), tag, W(), nullptr));
    EXPECT_EQ(first_mismatch(in.data(), size, 200), std::string::npos);
    Request* r = take(E().imrecv(in.data(), size, std::move(m)));
    MessageStatus rs;
    ASSERT_OK(E().wait(r, &rs));
    EXPECT_EQ(rs.source, left());
    EXPECT_EQ(first_mismatch(in.data(), size, 100), std::string::npos);
    ASSERT_OK(E().wait(s1, nullptr));
    ASSERT_OK(E().wait(s2, nullptr));
    barrier();
    auto none = take(E().improbe(kAnySource, tag, W(), nullptr));
    EXPECT_EQ(none, nullptr);
  }
}

// -------------------------------------------------------- persistence

TEST(Persistent, RestartLoopsCarryFreshDataEachRound) {
  for (std::size_t size : {std::size_t{24}, threshold() * 4}) {
    std::vector<std::uint8_t> out(size), in(size);
    Request* s = take(E().send_init(out.data(), size, right(), 40, W()));
    Request* r = take(E().recv_init(in.data(), size, left(), 40, W()));
    for (int round = 0; round < 60; ++round) {
      auto fresh = make_payload(size, static_cast<std::uint64_t>(round * 1000 + me()));
      std::copy(fresh.begin(), fresh.end(), out.begin());
      ASSERT_OK(E().start(r));
      ASSERT_OK(E().start(s));
      EXPECT_EQ(E().start(s).code(), ErrorCode::kInvalidRequest) << "start of an active request";
      MessageStatus rs;
      ASSERT_OK(E().wait(r, &rs));
      ASSERT_OK(E().wait(s, nullptr));
      ASSERT_EQ(rs.count, size);
      ASSERT_EQ(first_mismatch(in.data(), size, static_cast<std::uint64_t>(round * 1000 + left())),
                std::string::npos)
          << "round " << round;
      barrier();  // out is rewritten next round
    }
    // An inactive persistent request completes at once with an empty status.
    MessageStatus empty;
    ASSERT_TRUE(take(E().test(r, &empty)));
    EXPECT_EQ(empty.source, kAnySource);
    ASSERT_OK(E().request_free(s));
    ASSERT_OK(E().request_free(r));
  }
}

// -------------------------------------------------------------- errors

TEST(Truncation, LongMessageReportsTruncateAndWritesNothingPastTheBuffer) {
  for (std::size_t size : {std::size_t{100}, threshold() + 100}) {
    auto data = make_payload(size, 55);
    Request* s = take(E().isend(data.data(), size, right(), 50, W()));
    constexpr std::size_t kRoom = 10;
    std::vector<std::uint8_t> in(kRoom + 64, 0xC5);
    MessageStatus st;
    Status rs = E().recv(in.data(), kRoom, left(), 50, W(), &st);
    EXPECT_EQ(rs.code(), ErrorCode::kTruncate) << rs.to_string();
    EXPECT_EQ(st.error.code(), ErrorCode::kTruncate);
    EXPECT_EQ(st.count, kRoom);
    EXPECT_EQ(first_mismatch(in.data(), kRoom, 55), std::string::npos);
    for (std::size_t i = kRoom; i < in.size(); ++i) ASSERT_EQ(in[i], 0xC5) << "byte " << i;
    MessageStatus ss;
    ASSERT_OK(E().wait(s, &ss));  // the sender completes normally
    EXPECT_TRUE(ss.error.is_ok());
    barrier();
  }
}

TEST(Arguments, BadArgumentsGetPreciseErrorsAndChangeNothing) {
  char b[4] = {};
  EXPECT_EQ(E().isend(b, 4, nranks(), 0, W()).status().code(), ErrorCode::kInvalidRank);
  EXPECT_EQ(E().isend(b, 4, -7, 0, W()).status().code(), ErrorCode::kInvalidRank);
  EXPECT_EQ(E().isend(b, 4, kAnySource, 0, W()).status().code(), ErrorCode::kInvalidRank);
  EXPECT_EQ(E().isend(b, 4, 0, -3, W()).status().code(), ErrorCode::kInvalidTag);
  EXPECT_EQ(E().isend(b, 4, 0, kAnyTag, W()).status().code(), ErrorCode::kInvalidTag);
  EXPECT_EQ(E().isend(b, 4, 0, kTagUpperBound + 1, W()).status().code(), ErrorCode::kInvalidTag);
  EXPECT_EQ(E().isend(nullptr, 4, 0, 0, W()).status().code(), ErrorCode::kInvalidBuffer);
  EXPECT_EQ(E().irecv(b, 4, 0, 0, nullptr).status().code(), ErrorCode::kInvalidComm);
  EXPECT_EQ(E().irecv(b, 4, nranks() + 3, 0, W()).status().code(), ErrorCode::kInvalidRank);
  EXPECT_EQ(E().start(nullptr).code(), ErrorCode::kInvalidRequest);
  EXPECT_EQ(E().request_free(nullptr).code(), ErrorCode::kInvalidRequest);
  EXPECT_EQ(E().isend(b, 4, 0, 0, W(), SendMode::kBuffered).status().code(),
            ErrorCode::kInvalidBuffer)
      << "buffered send without an attached buffer";
  EXPECT_EQ(E().counters().live_requests, 0u) << "a refused call leaked a request";
}

TEST(ProcNull, SendAndReceiveCompleteAtOnce) {
  char b[4] = {1, 2, 3, 4};
  MessageStatus st;
  ASSERT_OK(E().send(b, 4, kProcNull, 0, W()));
  ASSERT_OK(E().recv(b, 4, kProcNull, 0, W(), &st));
  EXPECT_EQ(st.source, kProcNull);
  EXPECT_EQ(st.tag, kAnyTag);
  EXPECT_EQ(st.count, 0u);
  EXPECT_EQ(b[0], 1);
}

TEST(Cancel, PostedReceiveCancelsAndLeavesItsBufferAlone) {
  std::vector<std::uint8_t> in(32, 0x77);
  Request* r = take(E().irecv(in.data(), in.size(), kAnySource, 999, W()));
  ASSERT_OK(E().cancel(r));
  MessageStatus st;
  ASSERT_OK(E().wait(r, &st));
  EXPECT_TRUE(st.cancelled);
  for (auto b : in) ASSERT_EQ(b, 0x77);
  // A message with that tag now finds no receive and waits.
  barrier();
}

// ----------------------------------------------------- self and comms

TEST(Self, SendToSelfOverWorldAndSelf) {
  for (Communicator* c : {W(), E().self()}) {
    int dest = c->rank();
    auto data = make_payload(threshold() + 9, 4);
    std::vector<std::uint8_t> in(data.size());
    Request* s = take(E().isend(data.data(), data.size(), dest, 1, c));
    ASSERT_OK(E().recv(in.data(), in.size(), dest, 1, c, nullptr));
    ASSERT_OK(E().wait(s, nullptr));
    EXPECT_EQ(in, data);
  }
}

TEST(Communicators, DupAndSplitKeepTrafficApart) {
  Communicator* dup = take(E().comm_dup(W()));
  ASSERT_NE(dup, nullptr);
  EXPECT_EQ(dup->size(), nranks());
  EXPECT_NE(dup->p2p_context(), W()->p2p_context());
  int on_dup = 1000 + me(), on_world = 2000 + me();
  Request* a = take(E().isend(&on_dup, sizeof(int), right(), 0, dup));
  Request* b = take(E().isend(&on_world, sizeof(int), right(), 0, W()));
  int got = 0;
  ASSERT_OK(E().recv(&got, sizeof(int), left(), 0, W(), nullptr));
  EXPECT_EQ(got, 2000 + left()) << "a receive on world matched a message on its dup";
  ASSERT_OK(E().recv(&got, sizeof(int), left(), 0, dup, nullptr));
  EXPECT_EQ(got, 1000 + left());
  ASSERT_OK(E().wait(a, nullptr));
  ASSERT_OK(E().wait(b, nullptr));

  // Split by parity, ordered by descending world rank.
  Communicator* half = take(E().comm_split(W(), me() % 2, -me()));
  ASSERT_NE(half, nullptr);
  const int expected_size = (nranks() + 1 - me() % 2) / 2;
  EXPECT_EQ(half->size(), expected_size);
  for (int r = 0; r + 1 < half->size(); ++r) {
    EXPECT_GT(half->world_rank(r), half->world_rank(r + 1));
  }
  EXPECT_EQ(half->world_rank(half->rank()), me());
  int sum = me(), token = me();
  for (int step = 1; step < half->size(); ++step) {
    int to = (half->rank() + 1) % half->size();
    int from = (half->rank() + half->size() - 1) % half->size();
    Request* s = take(E().isend(&token, sizeof(int), to, 3, half));
    int in = 0;
    ASSERT_OK(E().recv(&in, sizeof(int), from, 3, half, nullptr));
    ASSERT_OK(E().wait(s, nullptr));
    token = in;
    sum += in;
  }
  int expected_sum = 0;
  for (int r = me() % 2; r < nranks(); r += 2) expected_sum += r;
  EXPECT_EQ(sum, expected_sum);
  Communicator* none = take(E().comm_split(W(), me() == 0 ? kUndefinedColor : 1, 0));
  EXPECT_EQ(none == nullptr, me() == 0);
  if (none != nullptr) ASSERT_OK(E().comm_free(none));
  ASSERT_OK(E().comm_free(half));
  ASSERT_OK(E().comm_free(dup));
  EXPECT_EQ(E().comm_free(W()).code(), ErrorCode::kInvalidComm);
  barrier();
}

TEST(Completion, WaitAnyAndTestSomeReportEachRequestOnce) {
  std::vector<int> out(4), in(4, -1);
  std::vector<Request*> reqs;
  for (int i = 0; i < 4; ++i) {
    out[static_cast<std::size_t>(i)] = me() * 100 + i;
    reqs.push_back(
        take(E().irecv(&in[static_cast<std::size_t>(i)], sizeof(int), left(), 60 + i, W())));
  }
  std::vector<Request*> sends;
  for (int i = 3; i >= 0; --i) {
    sends.push_back(
        take(E().isend(&out[static_cast<std::size_t>(i)], sizeof(int), right(), 60 + i, W())));
  }
  std::vector<bool> done(4, false);
  int completed = 0;
  while (completed < 4) {
    MessageStatus st;
    int index = take(E().wait_any(reqs, &st));
    ASSERT_GE(index, 0);
    ASSERT_FALSE(done[static_cast<std::size_t>(index)]);
    done[static_cast<std::size_t>(index)] = true;
    reqs[static_cast<std::size_t>(index)] = nullptr;  // as MPI sets MPI_REQUEST_NULL
    EXPECT_EQ(st.tag, 60 + index);
    ++completed;
  }
  EXPECT_EQ(take(E().wait_any(reqs, nullptr)), -1) << "all null: MPI_UNDEFINED";
  for (int i = 0; i < 4; ++i) EXPECT_EQ(in[static_cast<std::size_t>(i)], left() * 100 + i);
  std::vector<MessageStatus> st(sends.size());
  std::size_t finished = 0;
  while (finished < sends.size()) {
    auto some = take(E().test_some(sends, st));
    for (int i : some) sends[static_cast<std::size_t>(i)] = nullptr;
    finished += some.size();
  }
  barrier();
}

// MPI_Alloc_mem memory: registered once, so a rendezvous send from it
// opens no window of its own (and the data still arrives whole).
TEST(RegisteredMemory, RendezvousFromItRegistersNothingPerMessage) {
  const std::size_t bytes = threshold() * 4;
  auto* out = static_cast<std::uint8_t*>(take(E().alloc_registered(bytes)));
  ASSERT_NE(out, nullptr);
  auto pattern = make_payload(bytes, 91);
  std::copy(pattern.begin(), pattern.end(), out);
  const auto with_region = E().transport_counters().registrations;
  std::vector<std::uint8_t> in(bytes);
  Request* r = take(E().irecv(in.data(), bytes, left(), 93, W()));
  Request* s = take(E().isend(out, bytes, right(), 93, W()));
  EXPECT_EQ(E().transport_counters().registrations, with_region)
      << "the send registered its buffer although it lies in registered memory";
  ASSERT_OK(E().wait(s, nullptr));
  ASSERT_OK(E().wait(r, nullptr));
  EXPECT_EQ(first_mismatch(in.data(), bytes, 91), std::string::npos);
  barrier();  // every peer has read from it before it goes
  ASSERT_OK(E().free_registered(out));
  EXPECT_EQ(E().transport_counters().registrations, with_region - 1);
  EXPECT_FALSE(E().free_registered(out).is_ok()) << "freed twice";
}

TEST(Resources, NothingLeftBehind) {
  barrier();
  EXPECT_EQ(E().counters().live_requests, 0u);
  EXPECT_EQ(E().counters().dropped_messages, 0u);
  // One endpoint per peer at most (connections are never made twice).
  EXPECT_LE(E().transport_counters().connections, static_cast<std::uint64_t>(nranks()));
  // One-sided cancel keeps one registration until finalize: the slot
  // descriptors its peers CAS.
  const std::uint64_t standing = E().cancels_one_sided() ? 1 : 0;
  EXPECT_EQ(E().transport_counters().registrations, standing) << "a rendezvous window stayed open";
}

}  // namespace
}  // namespace tagwire::engine
