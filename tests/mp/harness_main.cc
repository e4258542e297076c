// main() of the multi-process test binary: starts the engine, runs every
// test on every rank, and ends a rank at its first failure.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cancel/send_cancel_factory.h"
#include "harness.h"

// Prints each failed assertion with the rank it happened on, then ends
// the rank: in SPMD tests the other ranks would otherwise wait for it in
// the next barrier until the launcher's timeout. A non-zero exit makes
// tagwire-run stop the whole job at once.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  // The name is kept here: asking gtest for it inside OnTestPartResult
  // would take a lock gtest already holds.
  void OnTestStart(const ::testing::TestInfo& info) override {
    test_ = std::string(info.test_suite_name()) + "." + info.name();
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s failed at %s:%d\n%s\n", rank_, test_.c_str(),
                 r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }

 private:
  int rank_;
  std::string test_;
};

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto engine = tagwire::engine::Engine::create_from_environment(tagwire::cancel::kSendCancelLayer);
  if (!engine) {
    std::fprintf(stderr, "engine start failed: %s\n", engine.status().to_string().c_str());
    return 1;
  }
  tagwire::engine::g_engine = engine->get();
  // Only rank 0 prints the full report; every rank prints its failures.
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (tagwire::engine::g_engine->world_rank() != 0) {
    delete listeners.Release(listeners.default_result_printer());
  }
  listeners.Append(new FailurePrinter(tagwire::engine::g_engine->world_rank()));
  int rc = RUN_ALL_TESTS();
  tagwire::Status s = tagwire::engine::g_engine->finalize();
  if (!s.is_ok()) {
    std::fprintf(stderr, "finalize failed: %s\n", s.to_string().c_str());
    rc = 1;
  }
  // Nothing may outlive finalize: every endpoint / QP closed, every
  // registration (rendezvous window, registered memory) gone.
  const auto left = tagwire::engine::g_engine->transport_counters();
  if (left.open_connections != 0 || left.registrations != 0) {
    std::fprintf(stderr, "after finalize: %llu connections and %llu registrations still open\n",
                 static_cast<unsigned long long>(left.open_connections),
                 static_cast<unsigned long long>(left.registrations));
    rc = 1;
  }
  engine->reset();
  return rc;
}
