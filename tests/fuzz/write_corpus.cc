// Writes the wire fuzzer's seed corpus (tests/fuzz/corpus): one file per
// kind of message a peer can send, each preceded by the fixture's setup
// byte, with the job token the fixture accepts. The fuzzer starts from
// well-formed messages and mutates them; without seeds it would spend its
// time failing the token check.
//   write_corpus DIR
#include <cstdio>
#include <string>
#include <vector>

#include "fuzz_fixture.h"

using namespace tagwire::engine;

namespace {

void write(const std::string& dir, const char* name, std::uint8_t setup, const Header& h,
           std::size_t payload_bytes) {
  const EncodedHeader bytes = encode(h);
  // The fuzzer reads a compact header when the setup byte's top bit says so.
  if (bytes.size() == kCompactEagerBytes) setup |= 0x80;
  std::vector<std::uint8_t> out{setup};
  out.insert(out.end(), bytes.begin(), bytes.end());
  for (std::size_t i = 0; i < payload_bytes; ++i) out.push_back(static_cast<std::uint8_t>(i));
  const std::string path = dir + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(out.data(), 1, out.size(), f) != out.size()) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::fclose(f);
}

Header base(MessageType type) {
  Header h;
  h.job_token = fuzz::kJobToken;
  h.type = type;
  h.origin = 1;
  h.source = 1;
  h.tag = 7;
  h.context = 0;
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  Header h = base(MessageType::kEager);
  h.length = 16;
  write(dir, "eager-unexpected", 0, h, 16);
  write(dir, "eager-matched", 1, h, 16);
  write(
      dir, "eager-truncated", 1,
      [&] {
        Header t = h;
        t.length = 100;
        return t;
      }(),
      100);
  h.flags = kFlagSync;
  write(dir, "eager-sync", 4, h, 16);
  Header rts = base(MessageType::kRts);
  rts.length = 20000;
  rts.remote_address = 0x10000;
  write(dir, "rts-unexpected", 0, rts, 8);
  write(dir, "rts-matched", 2, rts, 8);
  Header fin = base(MessageType::kFin);
  fin.request_id = 1;
  write(dir, "fin-unknown", 8, fin, 0);
  Header ack = base(MessageType::kSyncAck);
  ack.origin = 2;
  ack.request_id = 2;
  write(dir, "sync-ack", 16, ack, 0);
  Header creq = base(MessageType::kCancelRequest);
  creq.request_id = 5;
  creq.remote_address = 9;
  write(dir, "cancel-request", 0, creq, 0);
  Header crep = base(MessageType::kCancelReply);
  crep.origin = 3;
  crep.request_id = 3;
  crep.flags = kFlagCancelled;
  write(dir, "cancel-reply", 32, crep, 0);
  // One-sided cancel: a message with a slot descriptor (unexpected, and
  // matched by a posted receive, so the claim runs), and a notice naming one.
  Header slotted = base(MessageType::kEager);
  slotted.length = 8;
  slotted.slot = 3;
  slotted.slot_expected = 0;
  write(dir, "eager-slotted-unexpected", 0, slotted, 8);
  write(dir, "eager-slotted-matched", 1, slotted, 8);
  Header notice = base(MessageType::kCancelRequest);
  notice.flags = kFlagCancelled;
  notice.request_id = 5;
  notice.slot = 3;
  notice.slot_expected = 0;
  write(dir, "cancel-notice", 0, notice, 0);
  Header bad = base(MessageType::kEager);
  bad.origin = 99;
  write(dir, "bad-origin", 63, bad, 0);
  return 0;
}
