// A job that tests make up around one engine: rank 0 of `ranks`, with a
// bootstrap whose every rank "publishes" what rank 0 does, and a transport
// that delivers nothing. Used by the wire fuzzer (every operation done at
// once) and by the engine's peer-failure tests, which hold operations
// pending and end them with an error of their choosing, and have the
// "launcher" report a death.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "plain_memory.h"
#include "transport/transport.h"

namespace tagwire::testing {

class NullBootstrap final : public bootstrap::Bootstrap {
 public:
  NullBootstrap(std::uint64_t job_token, int ranks) : job_token_(job_token), ranks_(ranks) {}
  std::string_view kind() const override { return "null"; }
  int rank() const override { return 0; }
  int size() const override { return ranks_; }
  std::uint64_t job_token() const override { return job_token_; }
  Result<std::vector<std::vector<std::uint8_t>>> allgather(
      std::span<const std::uint8_t> mine) override {
    return std::vector<std::vector<std::uint8_t>>(static_cast<std::size_t>(ranks_),
                                                  {mine.begin(), mine.end()});
  }
  // As tagwire-run: deaths are reported (those report_death() queues).
  void watch_deaths() { reports_deaths_ = true; }
  void report_death(int rank) { failed_.push_back(rank); }
  bool reports_deaths() const override { return reports_deaths_; }
  std::vector<int> take_failed_ranks() override { return std::exchange(failed_, {}); }

 private:
  std::uint64_t job_token_;
  int ranks_;
  bool reports_deaths_ = false;
  std::vector<int> failed_;
};

// Accepts every operation and delivers nothing: the only messages the
// engine sees are the test's. Operations are done at once, or, after
// hold_operations(), pending until the test ends them (finish_held()).
class NullTransport final : public transport::Transport {
 public:
  void hold_operations() { hold_ = true; }
  std::size_t held() const { return held_.size(); }
  // Ends the held operations, oldest first, with `s`.
  void finish_held(const Status& s) {
    for (transport::Completion done : std::exchange(held_, {})) done(s);
  }

  std::string_view name() const override { return "null"; }
  bool connects_on_first_use() const override { return false; }
  std::vector<std::uint8_t> address() const override { return {0x4e}; }
  Status set_peer_addresses(std::vector<std::vector<std::uint8_t>>) override {
    return Status::ok();
  }
  void set_receiver(transport::Receiver*) override {}
  std::size_t max_header() const override { return 64; }
  Result<transport::Issued> send(transport::PeerId, std::span<const std::uint8_t>,
                                 std::span<const std::uint8_t>, transport::Completion done,
                                 transport::Delivery) override {
    return issue(done);
  }
  Result<std::unique_ptr<transport::Registration>> register_memory(
      void* address, std::size_t length, transport::RemoteAccess) override {
    return std::unique_ptr<transport::Registration>(new PlainRegistration(address, length));
  }
  Result<transport::Issued> read(transport::PeerId, std::span<std::uint8_t>, std::uint64_t,
                                 std::span<const std::uint8_t>,
                                 transport::Completion done) override {
    return issue(done);
  }
  Result<transport::Issued> write(transport::PeerId, std::span<const std::uint8_t>, std::uint64_t,
                                  std::span<const std::uint8_t>,
                                  transport::Completion done) override {
    return issue(done);
  }
  Result<transport::Issued> flush(transport::Completion) override {
    return transport::Issued::kDone;
  }
  Result<transport::Issued> compare_and_swap(transport::PeerId, std::uint64_t,
                                             std::span<const std::uint8_t>, std::uint64_t expected,
                                             std::uint64_t, std::uint64_t* old_value,
                                             transport::Completion) override {
    *old_value = expected;
    return transport::Issued::kDone;
  }
  Result<std::uint64_t> local_compare_and_swap(const transport::Registration&, std::uint64_t* word,
                                               std::uint64_t expected,
                                               std::uint64_t desired) override {
    return plain_compare_and_swap(word, expected, desired);
  }
  unsigned progress() override { return 0; }
  Result<bool> arm() override { return false; }
  int event_fd() const override { return -1; }
  Status disconnect_all() override { return Status::ok(); }
  transport::TransportCounters counters() const override { return {}; }

 private:
  Result<transport::Issued> issue(transport::Completion done) {
    if (!hold_) return transport::Issued::kDone;
    held_.push_back(done);
    return transport::Issued::kPending;
  }

  bool hold_ = false;
  std::vector<transport::Completion> held_;
};

}  // namespace tagwire::testing
