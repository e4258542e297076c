// A transport error on an operation with a peer the launcher may be about
// to report dead (engine/held_errors.h): rank 0 of a 4-rank job over a
// transport that holds its operations until the test ends them. The
// error waits for the verdict: a death reported within the wait ends the
// operation with MPI_ERR_PROC_FAILED, no word in time with the transport's
// own error, and a launcher that reports no deaths holds nothing back.
// (The race itself, a READ from a rank being killed, is the rxe run of
// tests/kill_random_test.sh.)
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "../support/null_job.h"
#include "cancel/send_cancel_factory.h"
#include "engine/engine.h"
#include "engine/wire.h"

namespace tagwire::engine {
namespace {

constexpr std::uint64_t kToken = 0x6865'6c64'6572'7221ull;
const Status kRemoteAccess{ErrorCode::kTransport, "read: remote access error"};

struct Job {
  testing::NullBootstrap* bootstrap;
  testing::NullTransport* transport;
  Engine* engine;
};

// Finalizing would wait for peers that do not exist: the engine is kept
// for the process's life, never destroyed.
Job make_job(bool launcher_reports_deaths) {
  Config config;
  config.cancel_agent = false;
  config.progress_thread = false;
  config.log_level = log::Level::kError;
  auto bootstrap = std::make_unique<testing::NullBootstrap>(kToken, 4);
  auto transport = std::make_unique<testing::NullTransport>();
  Job job{bootstrap.get(), transport.get(), nullptr};
  if (launcher_reports_deaths) bootstrap->watch_deaths();
  auto made = Engine::create(config, std::move(bootstrap), std::move(transport),
                             tagwire::cancel::kSendCancelLayer);
  EXPECT_TRUE(made.is_ok()) << made.status().to_string();
  if (!made) return job;
  job.engine = std::move(made).value().release();
  static std::vector<Engine*>* const kept = new std::vector<Engine*>();  // LeakSanitizer's root
  kept->push_back(job.engine);
  job.transport->hold_operations();
  return job;
}

// Tests `r` until it completes or `limit` passes; its status if it did.
std::optional<MessageStatus> test_for(Engine& e, Request* r, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  do {
    MessageStatus st;
    auto done = e.test(r, &st);
    EXPECT_TRUE(done.is_ok()) << done.status().to_string();
    if (!done.is_ok() || *done) return st;
  } while (std::chrono::steady_clock::now() < end);
  return std::nullopt;
}

// A rendezvous message from rank 1 that `r` matches: its READ is issued.
void rts_from_rank_1(Engine& e, std::size_t bytes) {
  Header h;
  h.job_token = kToken;
  h.type = MessageType::kRts;
  h.origin = 1;
  h.source = 1;
  h.tag = 7;
  h.context = e.world()->p2p_context();
  h.request_id = 99;
  h.length = bytes;
  h.remote_address = 0x10000;
  const EncodedHeader header = encode(h);
  const std::uint8_t key[8] = {'t', 'a', 'g', 'w', 'i', 'r', 'e', 0};
  e.on_message(header, key);
}

TEST(HeldError, ARendezvousReadThatFailsEndsWithTheDeathTheLauncherReports) {
  Job job = make_job(true);
  ASSERT_NE(job.engine, nullptr);
  Engine& e = *job.engine;
  std::vector<std::uint8_t> buffer(e.config().eager_threshold * 2);
  auto r = e.irecv(buffer.data(), buffer.size(), 1, 7, e.world());
  ASSERT_TRUE(r.is_ok());
  rts_from_rank_1(e, buffer.size());
  ASSERT_FALSE(test_for(e, *r, std::chrono::milliseconds(0)));
  ASSERT_EQ(job.transport->held(), 1u) << "the READ was not issued";

  job.transport->finish_held(kRemoteAccess);  // the dead rank's memory went first
  EXPECT_FALSE(test_for(e, *r, std::chrono::milliseconds(50)))
      << "the read's error did not wait for the launcher's word on rank 1";
  job.bootstrap->report_death(1);
  auto st = test_for(e, *r, std::chrono::seconds(5));
  ASSERT_TRUE(st) << "the receive still waits after rank 1 was reported dead";
  EXPECT_EQ(st->error.code(), ErrorCode::kPeerFailed) << st->error.to_string();
}

TEST(HeldError, ASendErrorWithNoWordOnThePeerEndsWithTheTransportsErrorAfterTheWait) {
  Job job = make_job(true);
  ASSERT_NE(job.engine, nullptr);
  Engine& e = *job.engine;
  std::uint64_t word = 5;
  auto r = e.isend(&word, sizeof word, 2, 7, e.world());
  ASSERT_TRUE(r.is_ok());
  ASSERT_EQ(job.transport->held(), 1u);
  const auto failed_at = std::chrono::steady_clock::now();
  job.transport->finish_held(kRemoteAccess);
  auto st = test_for(e, *r, std::chrono::seconds(10));
  ASSERT_TRUE(st) << "a held error never ended its send";
  EXPECT_EQ(st->error.code(), ErrorCode::kTransport) << st->error.to_string();
  EXPECT_GE(std::chrono::steady_clock::now() - failed_at, std::chrono::milliseconds(500))
      << "the error did not wait for a verdict";
  // A rank that dies later changes nothing for what already ended, and
  // what follows towards it fails at once.
  job.bootstrap->report_death(2);
  auto later = e.isend(&word, sizeof word, 2, 7, e.world());
  for (int i = 0; i < 100000 && later.is_ok(); ++i) {
    (void)test_for(e, *later, std::chrono::milliseconds(0));
    later = e.isend(&word, sizeof word, 2, 7, e.world());
  }
  EXPECT_EQ(later.status().code(), ErrorCode::kPeerFailed) << later.status().to_string();
}

TEST(HeldError, WithoutDeathReportsTheTransportsErrorStandsAtOnce) {
  Job job = make_job(false);  // srun, mpirun: no launcher notice will come
  ASSERT_NE(job.engine, nullptr);
  Engine& e = *job.engine;
  std::uint64_t word = 5;
  auto r = e.isend(&word, sizeof word, 1, 7, e.world());
  ASSERT_TRUE(r.is_ok());
  job.transport->finish_held(kRemoteAccess);
  auto st = test_for(e, *r, std::chrono::milliseconds(0));
  ASSERT_TRUE(st) << "a send's error was held with no launcher to give a verdict";
  EXPECT_EQ(st->error.code(), ErrorCode::kTransport) << st->error.to_string();
}

}  // namespace
}  // namespace tagwire::engine
