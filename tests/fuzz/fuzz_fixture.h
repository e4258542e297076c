// The engine the wire fuzzer feeds: rank 0 of a 4-rank job with a fixed job
// token, over a transport that accepts every operation and delivers
// nothing. Shared by the fuzz target and by the corpus writer, so that the
// corpus's headers carry the token this engine accepts.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "engine/wire.h"

namespace tagwire::engine::fuzz {

inline constexpr std::uint64_t kJobToken = 0x7461677769726521ull;  // "!eriwgat"
inline constexpr int kRanks = 4;

// What the engine holds when a fuzzed message lands (chosen by one byte).
struct Held {
  std::vector<Request*> requests;
  std::vector<std::vector<std::uint8_t>> buffers;
};

class Fixture {
 public:
  Fixture();
  ~Fixture();  // finalizes, which waits for the peers: never run it
  Engine& engine() { return *engine_; }
  const DecodeLimits& limits() const { return limits_; }
  // Posts what `setup` asks for: receives of several sizes and sources,
  // sends that wait for an answer (rendezvous FIN, SYNC_ACK, cancel reply).
  Held prepare(std::uint8_t setup);
  // Cancels, completes and frees what prepare() made, and drains messages
  // left unexpected, so the engine's state stays bounded across inputs.
  void release(Held held);

 private:
  std::unique_ptr<Engine> engine_;
  DecodeLimits limits_;
};

}  // namespace tagwire::engine::fuzz
