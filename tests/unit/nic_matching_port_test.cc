// NicMatchingPort against the verbs contract, through a ScriptedSrq: the
// completions a ConnectX would produce for the engine's operations and
// messages, on any machine. Each test pins one rule of the port: which
// buffer an ADD gives the NIC, which handle a DEL names, what a match,
// an unexpected and a NO_TAG message hand on, when a buffer is reused.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "scripted_srq.h"
#include "verbs/nic_matching_port.h"
#include "verbs/tm_header.h"

namespace tagwire::verbs {
namespace {

using matching::NicOp;
using testing::ScriptedSrq;

std::vector<std::uint8_t> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

// What the port tells the engine.
class RecordingSink final : public transport::NicMatchingSink, public transport::Receiver {
 public:
  struct Message {
    std::uint64_t entry = 0;
    std::string header;
    std::string payload;
    bool sync_requested = false;
  };
  struct OpDone {
    NicOp::Kind kind;
    std::uint64_t entry;
    bool ok;
  };
  void on_tag_match(std::uint64_t entry, std::span<const std::uint8_t> header,
                    std::span<const std::uint8_t> payload) override {
    matches.push_back({entry, text(header), text(payload), false});
  }
  void on_tag_unexpected(std::span<const std::uint8_t> header,
                         std::span<const std::uint8_t> payload, bool sync_requested) override {
    unexpected.push_back({0, text(header), text(payload), sync_requested});
  }
  void on_tag_op_done(NicOp::Kind kind, std::uint64_t entry, bool ok, bool) override {
    ops.push_back({kind, entry, ok});
  }
  void on_tag_batch_end() override { ++batches; }
  void on_message(std::span<const std::uint8_t> header,
                  std::span<const std::uint8_t> payload) override {
    untagged.push_back({0, text(header), text(payload), false});
  }

  static std::string text(std::span<const std::uint8_t> b) { return {b.begin(), b.end()}; }
  std::vector<Message> matches, unexpected, untagged;
  std::vector<OpDone> ops;
  int batches = 0;
};

class PortContract : public ::testing::Test {
 protected:
  void SetUp() override {
    auto srq = std::make_unique<ScriptedSrq>();
    srq_ = srq.get();
    NicMatchingPortOptions options;
    options.entries = 2;
    options.message_bytes = 128;
    options.unexpected_buffers = 3;
    auto port = NicMatchingPort::create_with(options, std::move(srq));
    ASSERT_TRUE(port.is_ok()) << port.status().to_string();
    port_ = std::move(port).value();
    ASSERT_EQ(srq_->buffers.size(), 3u);
  }

  void add(std::uint64_t entry) {
    const NicOp op{NicOp::Kind::kAdd, entry, {0x70, ~0ull}, 0};
    ASSERT_TRUE(port_->post_ops(std::span<const NicOp>(&op, 1)).is_ok());
  }
  void progress() { ASSERT_TRUE(port_->progress(sink_, sink_).is_ok()); }
  void complete_op(ibv_wc_opcode opcode, std::uint64_t entry, ibv_wc_status status) {
    TmCompletion c;
    c.opcode = opcode;
    c.wr_id = entry;
    c.status = status;
    srq_->cq.push_back(c);
    progress();
  }
  // The NIC matched `entry`: it put what follows the TMH in the entry's buffer.
  void nic_matches(std::uint64_t entry, const std::string& header, const std::string& payload) {
    const auto message = encode_port_message(0x70, bytes_of(header), bytes_of(payload));
    const ScriptedSrq::Op* add = nullptr;
    for (const auto& op : srq_->ops) {
      if (op.op.kind == NicOp::Kind::kAdd && op.op.entry == entry) add = &op;
    }
    ASSERT_NE(add, nullptr);
    ASSERT_LE(message.size() - kTmHeaderBytes, add->add_buffer.length);
    std::memcpy(add->add_buffer.address, message.data() + kTmHeaderBytes,
                message.size() - kTmHeaderBytes);
    TmCompletion c;
    c.opcode = IBV_WC_TM_RECV;
    c.flags = IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID;
    c.wr_id = entry;
    c.byte_len = static_cast<std::uint32_t>(message.size() - kTmHeaderBytes);
    c.app_context = static_cast<std::uint32_t>(header.size());  // as the NIC reports the TMH's
    srq_->cq.push_back(c);
    progress();
  }
  // A message lands whole in the next SRQ buffer.
  void lands(const std::vector<std::uint8_t>& message, ibv_wc_opcode opcode, unsigned flags = 0) {
    ASSERT_FALSE(srq_->buffers.empty());
    auto [wr_id, buffer] = srq_->buffers.front();
    srq_->buffers.pop_front();
    ASSERT_LE(message.size(), buffer.length);
    std::memcpy(buffer.address, message.data(), message.size());
    TmCompletion c;
    c.opcode = opcode;
    c.flags = flags;
    c.wr_id = wr_id;
    c.byte_len = static_cast<std::uint32_t>(message.size());
    srq_->cq.push_back(c);
    progress();
  }

  ScriptedSrq* srq_ = nullptr;
  std::unique_ptr<NicMatchingPort> port_;
  RecordingSink sink_;
};

TEST(PortMessage, CarriesTheHeaderLengthAndSplitsBackApart) {
  const auto header = bytes_of("HEADER");
  const auto payload = bytes_of("payload bytes");
  const auto m = encode_port_message(0xabcdef, header, payload);
  auto tmh = decode_tm_header(m);
  ASSERT_TRUE(tmh.has_value());
  EXPECT_EQ(tmh->op, IBV_TMH_EAGER);
  EXPECT_EQ(tmh->tag, 0xabcdefu);
  EXPECT_EQ(tmh->app_context, header.size());
  auto split = split_port_message(tmh->app_context, std::span(m).subspan(kTmHeaderBytes));
  ASSERT_TRUE(split.has_value());
  EXPECT_TRUE(std::equal(split->header.begin(), split->header.end(), header.begin()));
  EXPECT_TRUE(std::equal(split->payload.begin(), split->payload.end(), payload.begin()));
  EXPECT_EQ(split->payload.size(), payload.size());

  const auto control = encode_port_message(std::nullopt, header, {});
  EXPECT_EQ(decode_tm_header(control)->op, IBV_TMH_NO_TAG);
  // A header longer than the message is refused, not read past its end.
  EXPECT_FALSE(split_port_message(7, std::span(header)).has_value());
}

TEST_F(PortContract, AddGivesAnEntryBufferAndDelNamesItsHandle) {
  add(5);
  add(6);
  ASSERT_EQ(srq_->ops.size(), 2u);
  EXPECT_NE(srq_->ops[0].add_buffer.address, srq_->ops[1].add_buffer.address);
  EXPECT_EQ(srq_->ops[0].add_buffer.length, 128u);
  // No third buffer: the engine's book never asks for more than capacity.
  const NicOp third{NicOp::Kind::kAdd, 7, {0, 0}, 0};
  EXPECT_FALSE(port_->post_ops(std::span<const NicOp>(&third, 1)).is_ok());
  const NicOp del{NicOp::Kind::kDel, 6, {}, 0};
  ASSERT_TRUE(port_->post_ops(std::span<const NicOp>(&del, 1)).is_ok());
  EXPECT_EQ(srq_->ops.back().handle, srq_->ops[1].handle);
  // The DEL succeeds: the buffer is free for the next ADD.
  complete_op(IBV_WC_TM_DEL, 6, IBV_WC_SUCCESS);
  EXPECT_EQ(port_->entries_in_use(), 1u);
  ASSERT_EQ(sink_.ops.size(), 1u);
  EXPECT_EQ(sink_.ops[0].kind, NicOp::Kind::kDel);
  EXPECT_TRUE(sink_.ops[0].ok);
  add(7);
  EXPECT_EQ(srq_->ops.back().add_buffer.address, srq_->ops[1].add_buffer.address);
}

TEST_F(PortContract, MatchHandsOverHeaderAndPayloadFromTheEntryBuffer) {
  add(9);
  complete_op(IBV_WC_TM_ADD, 9, IBV_WC_SUCCESS);
  nic_matches(9, "engine-header", "the payload");
  ASSERT_EQ(sink_.matches.size(), 1u);
  EXPECT_EQ(sink_.matches[0].entry, 9u);
  EXPECT_EQ(sink_.matches[0].header, "engine-header");
  EXPECT_EQ(sink_.matches[0].payload, "the payload");
  EXPECT_EQ(port_->entries_in_use(), 0u);
  EXPECT_EQ(sink_.batches, 2);  // one per poll that found something
  EXPECT_EQ(port_->counters().matched, 1u);
}

TEST_F(PortContract, DelThatLostToTheMatchFreesNothingTwice) {
  add(3);
  const NicOp del{NicOp::Kind::kDel, 3, {}, 0};
  ASSERT_TRUE(port_->post_ops(std::span<const NicOp>(&del, 1)).is_ok());
  nic_matches(3, "h", "p");  // the NIC consumed it before the DEL
  complete_op(IBV_WC_TM_DEL, 3, IBV_WC_TM_ERR);
  ASSERT_EQ(sink_.matches.size(), 1u);
  ASSERT_EQ(sink_.ops.size(), 1u);
  EXPECT_FALSE(sink_.ops[0].ok);
  EXPECT_EQ(port_->entries_in_use(), 0u);
  add(4);  // both buffers are usable again
  add(5);
  EXPECT_EQ(port_->entries_in_use(), 2u);
}

TEST_F(PortContract, RefusedAddFreesItsBuffer) {
  add(1);
  complete_op(IBV_WC_TM_ADD, 1, IBV_WC_TM_ERR);
  EXPECT_EQ(port_->entries_in_use(), 0u);
  ASSERT_EQ(sink_.ops.size(), 1u);
  EXPECT_FALSE(sink_.ops[0].ok);
}

// The engine may post a DEL for an entry after the port heard it was
// refused or consumed but before the engine did (its ops wait while the
// port reports a batch). The driver may have given that handle to another
// entry by then: the port must not post it, and answers as the NIC would.
TEST_F(PortContract, DelOfAnEntryAlreadyGoneIsAnsweredFailedAndNotPosted) {
  add(1);
  add(2);
  complete_op(IBV_WC_TM_ADD, 1, IBV_WC_TM_ERR);  // refused
  nic_matches(2, "h", "p");                      // consumed
  const std::size_t posted = srq_->ops.size();
  sink_.ops.clear();
  const int batches = sink_.batches;
  const NicOp after[] = {{NicOp::Kind::kDel, 1, {}, 0},
                         {NicOp::Kind::kDel, 2, {}, 0},
                         {NicOp::Kind::kAdd, 3, {0x70, ~0ull}, 0}};
  ASSERT_TRUE(port_->post_ops(after).is_ok());
  // Neither DEL reached the NIC; the ADD behind them did.
  ASSERT_EQ(srq_->ops.size(), posted + 1);
  EXPECT_EQ(srq_->ops.back().op.kind, NicOp::Kind::kAdd);
  EXPECT_TRUE(sink_.ops.empty());  // answered at progress, not inside post_ops
  progress();                      // the CQ is empty: the answers come anyway
  ASSERT_EQ(sink_.ops.size(), 2u);
  EXPECT_EQ(sink_.ops[0].entry, 1u);
  EXPECT_EQ(sink_.ops[1].entry, 2u);
  for (const auto& done : sink_.ops) {
    EXPECT_EQ(done.kind, NicOp::Kind::kDel);
    EXPECT_FALSE(done.ok);
  }
  EXPECT_EQ(sink_.batches, batches + 1);  // and a batch end, for the SYNC it may need
  progress();
  EXPECT_EQ(sink_.ops.size(), 2u);  // each answered once
}

TEST_F(PortContract, UnexpectedAndUntaggedMessagesGoTheirWaysAndBuffersReturn) {
  lands(encode_port_message(0x70, bytes_of("H1"), bytes_of("tagged")), IBV_WC_TM_RECV,
        IBV_WC_TM_SYNC_REQ);
  lands(encode_port_message(std::nullopt, bytes_of("C1"), bytes_of("control")), IBV_WC_TM_NO_TAG);
  ASSERT_EQ(sink_.unexpected.size(), 1u);
  EXPECT_EQ(sink_.unexpected[0].header, "H1");
  EXPECT_EQ(sink_.unexpected[0].payload, "tagged");
  EXPECT_TRUE(sink_.unexpected[0].sync_requested);
  ASSERT_EQ(sink_.untagged.size(), 1u);
  EXPECT_EQ(sink_.untagged[0].header, "C1");
  EXPECT_EQ(sink_.untagged[0].payload, "control");
  EXPECT_EQ(srq_->buffers.size(), 3u);  // both went back to the SRQ
}

TEST_F(PortContract, MalformedTaggedMessageIsStillCountedAndLosesNothing) {
  std::vector<std::uint8_t> garbage(40, 0xff);  // no valid TMH
  lands(garbage, IBV_WC_TM_RECV);
  // The engine hears of it (an empty header it refuses, and counts).
  ASSERT_EQ(sink_.unexpected.size(), 1u);
  EXPECT_TRUE(sink_.unexpected[0].header.empty());
  EXPECT_EQ(port_->counters().malformed, 1u);
  // A header length past the message's end.
  auto m = encode_port_message(0x70, bytes_of("HDR"), {});
  m[4] = m[5] = m[6] = 0;  // the TMH's app context: big-endian, low byte last
  m[7] = 200;
  lands(m, IBV_WC_TM_RECV);
  EXPECT_EQ(port_->counters().malformed, 2u);
  // A malformed NO_TAG message is not counted (the NIC did not count it).
  lands(garbage, IBV_WC_TM_NO_TAG);
  EXPECT_EQ(sink_.unexpected.size(), 2u);
  EXPECT_TRUE(sink_.untagged.empty());
  EXPECT_EQ(srq_->buffers.size(), 3u);
}

TEST_F(PortContract, TmhRendezvousFailsTheReceiveAndKeepsTheBufferUntilTheRead) {
  add(2);
  TmCompletion c;
  c.opcode = IBV_WC_TM_RECV;
  c.flags = IBV_WC_TM_MATCH;  // the NIC reads the data itself
  c.wr_id = 2;
  srq_->cq.push_back(c);
  progress();
  ASSERT_EQ(sink_.matches.size(), 1u);
  EXPECT_TRUE(sink_.matches[0].header.empty());  // the engine fails that receive
  EXPECT_EQ(port_->entries_in_use(), 1u);        // the NIC still writes there
  c.flags = IBV_WC_TM_DATA_VALID;
  srq_->cq.push_back(c);
  progress();
  EXPECT_EQ(port_->entries_in_use(), 0u);
}

}  // namespace
}  // namespace tagwire::verbs
