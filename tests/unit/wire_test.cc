// The wire header's two forms: eager messages go compact (40 bytes, their
// length is their payload's), everything else full (56); decode takes
// both and refuses a compact header that is not eager.
#include "engine/wire.h"

#include <gtest/gtest.h>

#include <cstring>

namespace tagwire::engine {
namespace {

constexpr DecodeLimits kLimits{0x5eed, 4, 8192, 4096};

Header sample(MessageType type) {
  Header h;
  h.job_token = kLimits.job_token;
  h.type = type;
  h.origin = 2;
  h.context = 5;
  h.source = 2;
  h.tag = 77;
  h.request_id = 0x1234'0000'0042ull;
  return h;
}

TEST(Wire, AnEagerMessageAndItsPayloadFitOneCacheLine) {
  Header h = sample(MessageType::kEager);
  h.length = 8;
  const EncodedHeader bytes = encode(h);
  EXPECT_EQ(bytes.size(), kCompactEagerBytes);
  EXPECT_LE(8 + bytes.size() + 8, 64u) << "ring control word + header + 8 B payload";
  const std::uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  auto back = decode(bytes, payload, kLimits);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->length, 8u) << "a compact header's length is its payload's";
  EXPECT_EQ(back->tag, 77);
  EXPECT_EQ(back->source, 2);
  EXPECT_EQ(back->context, 5u);
  EXPECT_EQ(back->request_id, h.request_id);
  EXPECT_EQ(back->remote_address, 0u);
}

TEST(Wire, OtherTypesKeepTheFullHeader) {
  for (MessageType t : {MessageType::kRts, MessageType::kFin, MessageType::kSyncAck,
                        MessageType::kCancelRequest, MessageType::kCancelReply}) {
    EXPECT_EQ(encode(sample(t)).size(), sizeof(Header)) << static_cast<int>(t);
  }
  Header rts = sample(MessageType::kRts);
  rts.length = 1 << 20;
  rts.remote_address = 0x7000'0000;
  const std::uint8_t key[16] = {};
  auto back = decode(encode(rts), key, kLimits);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->length, rts.length);
  EXPECT_EQ(back->remote_address, rts.remote_address);
}

// MPI_Abort's message ends the receiving process, so only a clean one of
// this job is taken: the code in request_id, no flag but kFlagLeft (an
// exit without MPI_Finalize, not MPI_Abort), no payload.
TEST(Wire, AnAbortCarriesItsCodeAndNothingElse) {
  Header abort = sample(MessageType::kAbort);
  abort.request_id = 7;
  auto back = decode(encode(abort), {}, kLimits);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->type, MessageType::kAbort);
  EXPECT_EQ(back->request_id, 7u);
  const std::uint8_t payload[1] = {1};
  EXPECT_FALSE(decode(encode(abort), payload, kLimits).is_ok());
  abort.flags = kFlagLeft;
  auto left = decode(encode(abort), {}, kLimits);
  ASSERT_TRUE(left.is_ok()) << left.status().to_string();
  EXPECT_EQ(left->flags, kFlagLeft);
  abort.flags = kFlagSync;
  EXPECT_FALSE(decode(encode(abort), {}, kLimits).is_ok());
  abort.flags = 0;
  abort.job_token = kLimits.job_token + 1;
  EXPECT_FALSE(decode(encode(abort), {}, kLimits).is_ok());
  Header beyond = sample(MessageType::kAbort);
  beyond.type = static_cast<MessageType>(static_cast<int>(MessageType::kAbort) + 1);
  EXPECT_FALSE(decode(encode(beyond), {}, kLimits).is_ok());
}

TEST(Wire, ACompactHeaderMustBeEager) {
  Header fin = sample(MessageType::kFin);
  std::uint8_t bytes[sizeof(Header)];
  std::memcpy(bytes, &fin, sizeof(Header));
  auto back = decode({bytes, kCompactEagerBytes}, {}, kLimits);
  ASSERT_FALSE(back.is_ok());
  EXPECT_EQ(back.status().code(), ErrorCode::kProtocol);
}

TEST(Wire, AFullEagerHeaderIsStillChecked) {
  Header h = sample(MessageType::kEager);
  h.length = 100;  // disagrees with the 8-byte payload
  std::uint8_t bytes[sizeof(Header)];
  std::memcpy(bytes, &h, sizeof(Header));
  const std::uint8_t payload[8] = {};
  EXPECT_FALSE(decode(bytes, payload, kLimits).is_ok());
  h.length = 8;
  std::memcpy(bytes, &h, sizeof(Header));
  EXPECT_TRUE(decode(bytes, payload, kLimits).is_ok());
}

TEST(Wire, OtherLengthsAndForeignTokensAreRefused) {
  Header h = sample(MessageType::kEager);
  const EncodedHeader bytes = encode(h);
  EXPECT_FALSE(decode({bytes.data(), 39}, {}, kLimits).is_ok());
  h.job_token = 1;
  EXPECT_FALSE(decode(encode(h), {}, kLimits).is_ok());
}

}  // namespace
}  // namespace tagwire::engine
