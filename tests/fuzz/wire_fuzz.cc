// libFuzzer target: hostile bytes on the wire. Every input is one message
// as a peer could send it (56-byte header, then payload) handed to the
// engine exactly where the transport hands it over (Engine::on_message),
// in a job of 4 ranks whose transport goes nowhere. The first input byte
// picks what the engine holds when the message lands (a posted receive of
// one size or another, a pending send waiting for its FIN / SYNC_ACK /
// cancel reply), so FIN, CANCEL_REPLY and rendezvous paths are reached too.
//
// What must hold for every input: no crash, no out-of-bounds access
// (ASan), no undefined behaviour (UBSan), no request left that the
// protocol cannot finish, and the engine's accounting: a message decode()
// refuses is counted as dropped; one it accepts is not, unless it is an
// answer naming no waiting request (or a cancel notice naming no cancelled
// slot).
// Run: wire_fuzz -max_total_time=60 tests/fuzz/corpus (ci/fuzz does).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "engine/engine.h"
#include "engine/wire.h"
#include "fuzz_fixture.h"

namespace {

using namespace tagwire;
using namespace tagwire::engine;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "wire_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Never destroyed: finalize would wait for peers that do not exist. The
  // static pointer keeps it reachable, so LeakSanitizer does not call it lost.
  static fuzz::Fixture* const fixture_ptr = new fuzz::Fixture;
  fuzz::Fixture& fixture = *fixture_ptr;
  Engine& e = fixture.engine();
  if (size < 1) return 0;
  const std::uint8_t setup = data[0];
  std::span<const std::uint8_t> rest(data + 1, size - 1);
  // The setup byte's top bit picks the compact eager form's length.
  const std::size_t form = (setup & 0x80) != 0 ? kCompactEagerBytes : sizeof(Header);
  const std::size_t header_bytes = std::min(rest.size(), form);
  std::span<const std::uint8_t> header = rest.first(header_bytes);
  std::span<const std::uint8_t> payload = rest.subspan(header_bytes);

  const auto decoded = decode(header, payload, fixture.limits());
  // A well-formed ABORT ends the process, as it must (MPI_Abort at a
  // peer): the fuzzer checks that it decodes, and does not deliver it.
  if (decoded && decoded->type == MessageType::kAbort) return 0;
  auto held = fixture.prepare(setup);
  const auto before = e.counters().dropped_messages;
  e.on_message(header, payload);
  e.progress();
  const auto after = e.counters().dropped_messages;
  if (!decoded) {
    if (after != before + 1) fail("a refused message was not counted as dropped");
  } else {
    // An answer (FIN, SYNC_ACK, CANCEL_REPLY) naming no waiting request, or
    // a one-sided cancel notice naming no cancelled slot, is well-formed
    // but dropped, and counted; anything else is taken.
    const MessageType t = decoded->type;
    const bool notice = t == MessageType::kCancelRequest && (decoded->flags & kFlagCancelled) != 0;
    const bool answer = t == MessageType::kFin || t == MessageType::kSyncAck ||
                        t == MessageType::kCancelReply || notice;
    if (after != before && !(answer && after == before + 1)) {
      fail("an accepted message was counted as dropped");
    }
  }
  fixture.release(std::move(held));
  return 0;
}
