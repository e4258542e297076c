// Connections are made on first use, and the engine's own collectives
// (barrier, communicator creation, finalize) stay logarithmic: a rank that
// talks to two peers in a large job holds two connections. Run with many
// ranks (CI: 64, oversubscribed on shared memory).
//
// The tests run in order and count the transport's endpoints as they go.
#include <cstdint>
#include <vector>

#include "harness.h"

namespace tagwire::engine {
namespace {

std::uint64_t connections() {
  return E().transport_counters().connections;
}

// ceil(log2 n): the rounds of the barrier and of Bruck's allgather.
std::uint64_t log2_ceil(int n) {
  std::uint64_t rounds = 0;
  for (int d = 1; d < n; d <<= 1) ++rounds;
  return rounds;
}

// A macro, not a function: GTEST_SKIP returns from the function it is in,
// and from a helper the test went on (and failed) once a transport
// connected everyone at start-up.
#define SKIP_UNLESS_LAZY()                                                          \
  do {                                                                              \
    if (!E().transport_connects_on_first_use()) {                                   \
      GTEST_SKIP() << "this transport connects every peer at start-up (verbs with " \
                      "TAGWIRE_VERBS_CONNECT=exchange, or on InfiniBand; UCX with " \
                      "TAGWIRE_UCX_CONNECT=eager, or auto up to 64 ranks)";         \
    }                                                                               \
  } while (0)

// UCX's eager start-up (TAGWIRE_UCX_CONNECT=eager): every endpoint, this
// rank's own among them, is up when MPI_Init returns, and the first
// messages make no new one.
TEST(Connections, EveryRankAtStartUpWhenEager) {
  if (E().transport_connects_on_first_use() || E().transport_name() != "ucx") {
    GTEST_SKIP() << "only UCX with TAGWIRE_UCX_CONNECT=eager connects every rank in MPI_Init";
  }
  const auto n = static_cast<std::uint64_t>(nranks());
  EXPECT_EQ(connections(), n) << "rank " << me();
  std::vector<std::uint8_t> in(8);
  auto out = make_payload(8, static_cast<std::uint64_t>(me()));
  Request* r = take(E().irecv(in.data(), 8, left(), 9, W()));
  Request* s = take(E().isend(out.data(), 8, right(), 9, W(), SendMode::kStandard));
  ASSERT_OK(E().wait(s, nullptr));
  ASSERT_OK(E().wait(r, nullptr));
  EXPECT_EQ(connections(), n) << "rank " << me();
}

TEST(Connections, NoneAtStartUp) {
  SKIP_UNLESS_LAZY();
  // A peer that started its next test sooner may already have connected
  // to this rank (an RC QP needs both ends; this rank's cancel agent
  // accepts it): only connections this rank asked for count here.
  const auto c = E().transport_counters();
  EXPECT_EQ(c.connections - c.connections_accepted, 0u)
      << "start-up exchanges addresses through the bootstrap only";
}

// Each rank sends to its right neighbour and receives from its left, once
// eager and once by rendezvous (the receiver reads from the sender and
// answers it, so it needs the connection back to its left).
TEST(Connections, RingExchangeHoldsTwo) {
  SKIP_UNLESS_LAZY();
  for (std::size_t bytes : {std::size_t{8}, threshold() + 1}) {
    auto out = make_payload(bytes, static_cast<std::uint64_t>(me()));
    std::vector<std::uint8_t> in(bytes);
    Request* r = take(E().irecv(in.data(), bytes, left(), 7, W()));
    Request* s = take(E().isend(out.data(), bytes, right(), 7, W(), SendMode::kStandard));
    ASSERT_OK(E().wait(s, nullptr));
    MessageStatus st;
    ASSERT_OK(E().wait(r, &st));
    EXPECT_EQ(st.count, bytes);
    EXPECT_EQ(first_mismatch(in.data(), bytes, static_cast<std::uint64_t>(left())),
              std::string::npos);
  }
  const std::uint64_t expected = nranks() == 1 ? 0 : nranks() == 2 ? 1 : 2;
  EXPECT_EQ(connections(), expected) << "rank " << me() << " of " << nranks();
}

TEST(Connections, BarrierAndDupStayLogarithmic) {
  SKIP_UNLESS_LAZY();
  ASSERT_OK(E().barrier(W()));
  // Dissemination: sends to rank+2^k (the receiving side needs nothing).
  const std::uint64_t after_barrier = connections();
  EXPECT_LE(after_barrier, 2 + log2_ceil(nranks()));
  Communicator* dup = take(E().comm_dup(W()));
  ASSERT_NE(dup, nullptr);
  Communicator* half = take(E().comm_split(W(), me() % 2, me()));
  ASSERT_NE(half, nullptr);
  ASSERT_OK(E().barrier(half));
  ASSERT_OK(E().comm_free(half));
  ASSERT_OK(E().comm_free(dup));
  // Bruck's allgather adds at most the ranks at rank-2^k.
  EXPECT_LE(connections(), 2 + 2 * log2_ceil(nranks()));
  if (nranks() >= 16) {
    EXPECT_LT(connections(), static_cast<std::uint64_t>(nranks() - 1))
        << "the engine's collectives connected (nearly) every pair";
  }
}

}  // namespace
}  // namespace tagwire::engine
