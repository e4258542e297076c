// Isolation between jobs (tests/isolation_test.sh): a process of another
// job that knows a rank's transport address, and so can reach it, still
// cannot inject a message: every engine message carries the job's token,
// and a message with another token is dropped and counted, never matched.
//
//   victim ADDRESS_FILE DONE_FILE     (a job of 2 ranks)
//     rank 0 writes its transport address, then serves the transport
//     until DONE_FILE appears; it must have dropped every injected message
//     and matched none; then ranks 0 and 1 still talk.
//   intruder ADDRESS_FILE DONE_FILE   (a job of its own, 1 rank)
//     connects to that address with its own transport and sends messages
//     that are well formed but for its own job, with a zero token, and
//     garbage; then creates DONE_FILE.
//     Over shared memory (TAGWIRE_TRANSPORT=shm, or auto on one host) a
//     rank's segment holds a ring for each rank of its own job and none
//     for anyone else: the intruder's transport must refuse the address
//     before it writes a byte, and DONE_FILE says "refused".
// Each prints "isolation: <role> ok" on success.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cancel/send_cancel_factory.h"
#include "engine/engine.h"
#include "engine/wire.h"
#include "shm/shm_transport.h"
#include "ucx/ucx_transport.h"

namespace {

using namespace tagwire;
using namespace tagwire::engine;
using Clock = std::chrono::steady_clock;

constexpr int kInjected = 3;

int fail(const std::string& why) {
  std::fprintf(stderr, "isolation: FAILED: %s\n", why.c_str());
  return 1;
}

bool exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

// The other job polls for the file and reads it at once: write it whole
// under another name and rename it, so that it never sees it empty.
void publish(const std::string& path, const std::string& text) {
  std::ofstream(path + ".tmp", std::ios::binary) << text;
  std::rename((path + ".tmp").c_str(), path.c_str());
}

int victim(const std::string& address_file, const std::string& done_file) {
  auto made = Engine::create_from_environment(tagwire::cancel::kSendCancelLayer);
  if (!made) return fail(made.status().to_string());
  Engine& e = **made;
  Communicator* w = e.world();
  if (w->rank() == 0) {
    const auto address = e.transport_address();
    publish(address_file, std::string(address.begin(), address.end()));
    // Serve the transport (iprobe progresses it) while the intruder works.
    const auto until = Clock::now() + std::chrono::seconds(60);
    MessageStatus st;
    while (!exists(done_file) && Clock::now() < until) {
      auto found = e.iprobe(matching::kAnySource, matching::kAnyTag, w, &st);
      if (found && *found) return fail("an injected message reached the matcher");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!exists(done_file)) return fail("the intruder never finished");
    std::string outcome;
    std::getline(std::ifstream(done_file), outcome);
    for (int i = 0; i < 200; ++i) {  // what is still in flight arrives now
      auto found = e.iprobe(matching::kAnySource, matching::kAnyTag, w, &st);
      if (found && *found) return fail("an injected message reached the matcher");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const auto dropped = e.counters().dropped_messages;
    std::printf("isolation: victim dropped %llu foreign messages\n",
                static_cast<unsigned long long>(dropped));
    if (outcome == "refused") {
      if (dropped != 0) return fail("a refused intruder's messages arrived");
    } else if (dropped < kInjected) {
      return fail("not every injected message was dropped and counted");
    }
  }
  // The job's own ranks still talk: rank 1 waits for rank 0's word (so
  // that nothing of its own is in rank 0's queue while it checks), then
  // sends what the intruder tried to.
  int token = 0;
  if (w->rank() == 0) {
    if (!e.send(&token, sizeof(token), 1, 8, w).is_ok()) return fail("send within the job");
    if (!e.recv(&token, sizeof(token), 1, 9, w, nullptr).is_ok() || token != 4711) {
      return fail("the job's own message did not arrive");
    }
  } else {
    if (!e.recv(&token, sizeof(token), 0, 8, w, nullptr).is_ok()) return fail("recv in the job");
    token = 4711;
    if (!e.send(&token, sizeof(token), 0, 9, w).is_ok()) return fail("send within the job");
  }
  if (Status s = e.finalize(); !s.is_ok()) return fail(s.to_string());
  std::printf("isolation: victim rank %d ok\n", w->rank());
  return 0;
}

int intruder(const std::string& address_file, const std::string& done_file) {
  const auto until = Clock::now() + std::chrono::seconds(60);
  while (!exists(address_file) && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::ifstream in(address_file, std::ios::binary);
  std::vector<std::uint8_t> address((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
  if (address.empty()) return fail("no address to attack");
  auto config =
      tagwire::engine::Config::from_environment(tagwire::cancel::kSendCancelLayer.settings);
  if (!config) return fail(config.status().to_string());
  if (config->transport == "shm" || config->transport == "auto") {
    shm::ShmOptions options;
    options.max_payload = shm::kTransportEntry.capabilities.eager_threshold;
    auto t = shm::create_shm_transport(options);
    if (!t) return fail(t.status().to_string());
    Status s = (*t)->set_peer_addresses({address});
    if (s.is_ok()) return fail("a transport outside the job accepted the victim's address");
    std::printf("isolation: refused: %s\n", s.to_string().c_str());
    publish(done_file, "refused\n");
    std::printf("isolation: intruder ok\n");
    return 0;
  }
  auto t = ucx::create_ucx_transport({});
  if (!t) return fail(t.status().to_string());
  transport::Transport& tr = **t;
  if (Status s = tr.set_peer_addresses({address}); !s.is_ok()) return fail(s.to_string());
  // Well formed, aimed at the victim's world communicator and its rank,
  // but with a token that is not the victim job's.
  Header h;
  h.type = MessageType::kEager;
  h.origin = 1;
  h.source = 1;
  h.tag = 9;
  h.length = 4;
  std::uint32_t payload = 4711;
  std::vector<EncodedHeader> headers;
  for (std::uint64_t token : {std::uint64_t{0x1234567890abcdefull}, std::uint64_t{0}}) {
    h.job_token = token;
    headers.push_back(encode(h));
  }
  EncodedHeader garbage;
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<std::uint8_t>(i * 37);
  headers.push_back(garbage);
  int pending = 0;
  for (const auto& bytes : headers) {
    auto sent = tr.send(0, bytes, {reinterpret_cast<const std::uint8_t*>(&payload), 4},
                        {[](void* ctx, const Status&) { --*static_cast<int*>(ctx); }, &pending},
                        transport::Delivery::kPolled);
    if (!sent) return fail(sent.status().to_string());
    if (*sent == transport::Issued::kPending) ++pending;
  }
  while (pending > 0 && Clock::now() < until) tr.progress();
  (void)tr.disconnect_all();
  publish(done_file, "done\n");
  std::printf("isolation: intruder sent %d foreign messages; intruder ok\n", kInjected);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s victim|intruder ADDRESS_FILE DONE_FILE\n", argv[0]);
    return 2;
  }
  const std::string role = argv[1];
  if (role == "victim") return victim(argv[2], argv[3]);
  if (role == "intruder") return intruder(argv[2], argv[3]);
  return fail("unknown role " + role);
}
