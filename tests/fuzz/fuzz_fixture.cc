#include "fuzz_fixture.h"
#include "cancel/cancel_settings.h"
#include "cancel/send_cancel_factory.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "../support/null_job.h"

namespace tagwire::engine::fuzz {

namespace {

[[noreturn]] void die(const char* what, const Status& s) {
  std::fprintf(stderr, "wire_fuzz fixture: %s: %s\n", what, s.to_string().c_str());
  std::abort();
}

// An answer from `peer` to the send `r`, as the real receiver would send it.
void answer(Engine& e, Request* r, MessageType type, int peer) {
  Header h;
  h.job_token = kJobToken;
  h.type = type;
  h.origin = peer;
  h.request_id = r->id;
  const EncodedHeader bytes = encode(h);
  e.on_message(bytes, {});
}

}  // namespace

Fixture::Fixture() {
  Config config;
  config.cancel_agent = false;
  config.progress_thread = false;
  config.log_level = log::Level::kError;  // a warning per dropped message would drown the run
  // TAGWIRE_TEST_CANCEL_MODE=onesided: the engine keeps slot descriptors,
  // and hostile slot fields reach the claim and the notice paths.
  if (const char* mode = std::getenv("TAGWIRE_TEST_CANCEL_MODE");
      mode != nullptr && std::string_view(mode) == "onesided") {
    if (Status s = config.settings.set(tagwire::cancel::cancel_mode_setting(), "onesided");
        !s.is_ok()) {
      die("settings", s);
    }
  }
  auto made = Engine::create(
      config, std::make_unique<tagwire::testing::NullBootstrap>(kJobToken, kRanks),
      std::make_unique<tagwire::testing::NullTransport>(), tagwire::cancel::kSendCancelLayer);
  if (!made) die("engine", made.status());
  engine_ = std::move(made).value();
  limits_ = DecodeLimits{kJobToken, kRanks, config.eager_threshold, 4096};
}

Fixture::~Fixture() = default;

Held Fixture::prepare(std::uint8_t setup) {
  Engine& e = *engine_;
  Communicator* w = e.world();
  Held held;
  auto add_buffer = [&](std::size_t n) {
    held.buffers.emplace_back(n, 0);
    return held.buffers.back().data();
  };
  held.buffers.reserve(8);
  auto keep = [&](Result<Request*> r) {
    if (!r) die("posting", r.status());
    held.requests.push_back(*r);
  };
  const std::size_t big = e.config().eager_threshold * 2;
  if (setup & 1) keep(e.irecv(add_buffer(64), 64, matching::kAnySource, matching::kAnyTag, w));
  if (setup & 2) keep(e.irecv(add_buffer(big), big, matching::kAnySource, matching::kAnyTag, w));
  if (setup & 4) keep(e.irecv(add_buffer(256), 256, 1, 7, w));
  if (setup & 8) keep(e.isend(add_buffer(big), big, 1, 7, w, SendMode::kStandard));
  if (setup & 16) keep(e.isend(add_buffer(8), 8, 2, 7, w, SendMode::kSynchronous));
  if (setup & 32) {
    Request* r = nullptr;
    keep(e.isend(add_buffer(8), 8, 3, 7, w, SendMode::kStandard));
    r = held.requests.back();
    if (Status s = e.cancel(r); !s.is_ok()) die("cancel", s);
  }
  return held;
}

void Fixture::release(Held held) {
  Engine& e = *engine_;
  for (Request* r : held.requests) {
    MessageStatus st;
    auto done = e.test(r, &st);
    if (done && *done) continue;
    if (r->kind == RequestKind::kReceive) {
      if (Status s = e.cancel(r); !s.is_ok()) die("cancel", s);
    } else {
      // Whatever it waits for, the receiver says it now.
      const int peer = e.world()->world_rank(r->peer);
      if (r->awaits(kCancelAnswer)) answer(e, r, MessageType::kCancelReply, peer);
      if (r->awaits(kRemoteAnswer)) {
        answer(e, r,
               r->bytes > e.config().eager_threshold ? MessageType::kFin : MessageType::kSyncAck,
               peer);
      }
    }
    e.progress();
    done = e.test(r, &st);
    if (!done || !*done) std::abort();  // a request the protocol cannot finish
  }
  // Take what the fuzzed message left unexpected on the world, so the
  // state stays bounded (messages for other contexts stay, as they would).
  // By mprobe: the message's source need not be a rank of the world.
  std::vector<std::uint8_t> sink(e.config().eager_threshold * 2);
  for (;;) {
    MessageStatus st;
    auto found = e.improbe(matching::kAnySource, matching::kAnyTag, e.world(), &st);
    if (!found) die("drain probe", found.status());
    if (*found == nullptr) break;
    auto r = e.imrecv(sink.data(), sink.size(), std::move(found).value());
    if (!r) die("drain", r.status());
    (void)e.wait(*r, &st);  // truncation is an answer too
  }
}

}  // namespace tagwire::engine::fuzz
