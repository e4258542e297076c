// The engine's side of a transport giving up on a peer
// (transport::Receiver::on_peer_unreachable): rank 0 of the wire fuzzer's
// 4-rank job, over a transport that delivers nothing, is told rank 1 is
// unreachable. What waits on rank 1 fails with the transport's reason, new
// operations towards it fail at once, and nothing with rank 2 changes.
// (The verbs transport's report itself is tested on rxe0:
// transport_pair_test's TransportUnreachable.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../fuzz/fuzz_fixture.h"
#include "engine/engine.h"

namespace tagwire::engine {
namespace {

TEST(PeerUnreachable, WhatWaitsOnThePeerFailsWithTheReasonAndOthersCarryOn) {
  // Finalizing waits for peers that do not exist: the fixture is never
  // destroyed (as in the fuzzer), only kept.
  static fuzz::Fixture* const fixture = new fuzz::Fixture();  // a root: LeakSanitizer keeps quiet
  Engine& e = fixture->engine();
  Communicator* w = e.world();
  std::vector<std::uint8_t> in1(64), in2(64), big(e.config().eager_threshold * 2, 1);
  auto from_1 = e.irecv(in1.data(), in1.size(), 1, 7, w);
  auto from_2 = e.irecv(in2.data(), in2.size(), 2, 7, w);
  auto to_1 = e.isend(big.data(), big.size(), 1, 7, w);  // rendezvous: waits for rank 1's FIN
  ASSERT_TRUE(from_1.is_ok() && from_2.is_ok() && to_1.is_ok());

  e.on_peer_unreachable(1, Status{ErrorCode::kPeerFailed, "rdma_cm: rejected after 5 tries"});

  for (Request* r : {*from_1, *to_1}) {
    MessageStatus st;
    auto done = e.test(r, &st);
    ASSERT_TRUE(done.is_ok());
    ASSERT_TRUE(*done) << "an operation that needs rank 1 still waits";
    EXPECT_EQ(st.error.code(), ErrorCode::kPeerFailed);
    EXPECT_NE(st.error.message().find("rank 1 is unreachable: rdma_cm: rejected"),
              std::string::npos)
        << st.error.to_string();
  }
  MessageStatus pending;
  auto done_2 = e.test(*from_2, &pending);
  ASSERT_TRUE(done_2.is_ok());
  EXPECT_FALSE(*done_2) << "a receive from rank 2 has nothing to do with rank 1";
  auto later = e.isend(big.data(), 8, 1, 7, w);
  EXPECT_EQ(later.status().code(), ErrorCode::kPeerFailed) << later.status().to_string();
  EXPECT_EQ(e.counters().peers_failed, 1u);
  ASSERT_TRUE(e.cancel(*from_2).is_ok());
}

}  // namespace
}  // namespace tagwire::engine
