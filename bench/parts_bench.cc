// The engine's small parts, each on its own, so that a change to one shows
// here before it is lost in a wire benchmark's noise:
//   request/cycle        take a request from the pool, name it in the wire
//                        table, find it by its id (as an answer does), drop it
//   header/encode        a wire header into its 56 bytes
//   header/decode        and back, with every check a received message gets
//   slot/claim           one-sided cancel, receiver side: the matcher claims a
//                        message's slot descriptor (CAS expected -> MATCHED),
//                        the sender settles the slot from the word it reads
//   slot/cancel          one-sided cancel, sender side: its CAS wins the word
//                        (expected -> CANCELLED) and the slot is free again
//   agent/cancel         agent cancel, receiver side: an unexpected message
//                        arrives, the agent finds it by its sender's request
//                        id and takes it out (what a CANCEL_REQUEST does)
// A registration cache (issue 4) does not exist yet, so it has no entry.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>

#include "cancel/sender_slots.h"
#include "engine/request.h"
#include "engine/wire.h"
#include "matching/matcher.h"
#include "ns_reporter.h"

namespace tagwire::engine {
namespace {

void request_cycle(benchmark::State& state) {
  RequestPool pool;
  RequestTable table;
  for (auto _ : state) {
    Request* r = pool.take();
    r->id = table.add(r);
    Request* found = table.find(r->id);
    benchmark::DoNotOptimize(found);
    table.remove(r->id);
    pool.give(r);
  }
  if (table.live() != 0) state.SkipWithError("a request stayed in the table");
}

Header sample_header() {
  Header h;
  h.job_token = 0x5eed;
  h.type = MessageType::kEager;
  h.origin = 1;
  h.context = 4;
  h.source = 1;
  h.tag = 7;
  h.request_id = 42;
  h.length = 8;
  return h;
}

void header_encode(benchmark::State& state) {
  const Header h = sample_header();
  for (auto _ : state) {
    EncodedHeader bytes = encode(h);
    benchmark::DoNotOptimize(bytes);
  }
}

void header_decode(benchmark::State& state) {
  const EncodedHeader bytes = encode(sample_header());
  const std::uint8_t payload[8] = {};
  const DecodeLimits limits{0x5eed, 4, 8192, 4096};
  for (auto _ : state) {
    auto h = decode(bytes, payload, limits);
    benchmark::DoNotOptimize(h);
    if (!h) state.SkipWithError("a good header did not decode");
  }
}

// One receiver's descriptor words for this sender, as its slot table holds
// them; a settled word is what the slot's next message expects.
struct SlotTable {
  std::atomic<std::uint64_t> words[kSlotsPerPeer] = {};
};

// One message's slot, from the sender's acquire to its settle. `decide`
// turns the expected word into what the winning side writes: MATCHED for
// the receiver's claim, CANCELLED for the sender's remote CAS (here a
// local one). Either way the sender then settles from the word as it now
// is (a read-back after a claim, its own CAS's result after a cancel).
void slot_round(benchmark::State& state, std::uint64_t (*decide)(std::uint64_t)) {
  cancel::SenderSlots slots;
  SlotTable table;
  for (auto _ : state) {
    auto ticket = slots.acquire();
    std::atomic<std::uint64_t>& word = table.words[ticket->index];
    std::uint64_t expected = ticket->expected;
    if (!word.compare_exchange_strong(expected, decide(ticket->expected))) {
      state.SkipWithError("the CAS lost with nothing racing it");
    }
    if (!slots.settle(*ticket, word.load())) state.SkipWithError("the slot did not settle");
  }
}

void slot_claim(benchmark::State& state) {
  slot_round(state, &SlotWord::matched);
}

void slot_cancel(benchmark::State& state) {
  slot_round(state, &SlotWord::cancelled);
}

void agent_cancel(benchmark::State& state) {
  matching::Matcher m;
  std::uint64_t id = 1;
  for (auto _ : state) {
    m.arrive(matching::IncomingMessage{matching::Envelope{4, 1, 7}, id, 8, id});
    auto taken = m.cancel_unexpected(4, 1, id);
    if (!taken) state.SkipWithError("the unexpected message was not found by its id");
    ++id;
  }
}

}  // namespace
}  // namespace tagwire::engine

int main(int argc, char** argv) {
  using namespace tagwire::engine;
  benchmark::Initialize(&argc, argv);
  benchmark::RegisterBenchmark("request/cycle", request_cycle);
  benchmark::RegisterBenchmark("header/encode", header_encode);
  benchmark::RegisterBenchmark("header/decode", header_decode);
  benchmark::RegisterBenchmark("slot/claim", slot_claim);
  benchmark::RegisterBenchmark("slot/cancel", slot_cancel);
  benchmark::RegisterBenchmark("agent/cancel", agent_cancel);
  tagwire::bench::NsReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
