// TagMatchingReceiver's bookkeeping against the tag-matching contract
// (rdma-core Documentation/tag_matching.md, ibv_post_srq_ops(3),
// ibv_create_cq_ex(3)), with the test playing the NIC through a scripted
// TmSrq: it sees every SRQ buffer and TAG_ADD / DEL / SYNC the receiver
// posts, writes what the NIC would scatter, and queues the completions the
// contract defines -- including the ones no device here can produce: a
// match (IBV_WC_TM_MATCH with and without DATA_VALID), a rendezvous the NIC
// reads itself, IBV_WC_TM_RNDV_INCOMPLETE, IBV_WC_TM_ERR on ADD and DEL,
// IBV_WC_TM_SYNC_REQ, IBV_WC_TM_NO_TAG. Runs on any machine.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "matching/nic_tag.h"
#include "scripted_srq.h"
#include "verbs/tag_matching_receiver.h"
#include "verbs/tm_header.h"
#include "verbs/tm_srq.h"

namespace tagwire::verbs {
namespace {

using matching::Envelope;
using matching::kAnySource;
using matching::kAnyTag;
using matching::NicOp;
using Completed = TagMatchingReceiver::Completed;
using testing::ScriptedSrq;

constexpr std::uint32_t kQp = 7;  // the QP every message "arrives" on

class RecordingSink final : public TagMatchingSink {
 public:
  struct Read {
    std::uint32_t qp_num;
    LocalBuffer into;
    RendezvousHeader header;
    std::uint32_t id;
  };
  void on_control(std::uint32_t qp_num, std::span<const std::uint8_t> bytes) override {
    EXPECT_EQ(qp_num, kQp);
    controls.emplace_back(bytes.begin(), bytes.end());
  }
  void on_fin(std::uint32_t qp_num, std::uint32_t app_context) override {
    EXPECT_EQ(qp_num, kQp);
    fins.push_back(app_context);
  }
  Status start_read(std::uint32_t qp_num, LocalBuffer into, const RendezvousHeader& header,
                    std::uint32_t id) override {
    reads.push_back({qp_num, into, header, id});
    return Status::ok();
  }
  std::vector<std::string> controls;
  std::vector<std::uint32_t> fins;
  std::vector<Read> reads;
};

class ReceiverContract : public ::testing::Test {
 protected:
  static constexpr std::uint32_t kBuffers = 8, kBufferBytes = 256;

  void SetUp() override {
    auto srq = std::make_unique<ScriptedSrq>();
    srq_ = srq.get();
    TagMatchingOptions options;
    options.hardware = true;
    options.nic_entries = 8;
    options.buffers = kBuffers;
    options.buffer_bytes = kBufferBytes;
    auto r = TagMatchingReceiver::create_with(options, std::move(srq));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    rx_ = std::move(r).value();
    rx_->set_sink(&sink_);
    ASSERT_EQ(srq_->buffers.size(), kBuffers);
  }

  // Posts into user buffer `slot`; returns the receive id.
  TagMatchingReceiver::ReceiveId post(const matching::ReceivePattern& p, std::uint32_t slot,
                                      std::uint32_t length = 1024) {
    auto id = rx_->post_receive(p, {user_[slot], length, 0}, 1000 + slot, &done_);
    EXPECT_TRUE(id.is_ok()) << id.status().to_string();
    return id.is_ok() ? *id : 0;
  }

  // The NIC executes every operation posted so far, successfully.
  void execute_ops() {
    for (; executed_ < srq_->ops.size(); ++executed_) {
      const NicOp& op = srq_->ops[executed_].op;
      TmCompletion c;
      c.wr_id = op.entry;
      c.opcode = op.kind == NicOp::Kind::kAdd   ? IBV_WC_TM_ADD
                 : op.kind == NicOp::Kind::kDel ? IBV_WC_TM_DEL
                                                : IBV_WC_TM_SYNC;
      srq_->cq.push_back(c);
    }
    ASSERT_TRUE(rx_->progress(&done_).is_ok());
  }

  // The last ADD posted: its entry and the buffer the NIC would fill.
  const ScriptedSrq::Op& last_add() const {
    for (auto it = srq_->ops.rbegin(); it != srq_->ops.rend(); ++it) {
      if (it->op.kind == NicOp::Kind::kAdd) return *it;
    }
    ADD_FAILURE() << "no TAG_ADD posted";
    return srq_->ops.front();
  }

  // A message the NIC did not match: TMH | body scattered to the next SRQ
  // buffer, reported with `opcode` (IBV_WC_TM_RECV, or IBV_WC_TM_NO_TAG).
  void unexpected(const TmHeader& tmh, std::span<const std::uint8_t> body,
                  ibv_wc_opcode opcode = IBV_WC_TM_RECV, unsigned flags = 0) {
    ASSERT_FALSE(srq_->buffers.empty()) << "the receiver left the SRQ without buffers";
    auto [wr_id, buffer] = srq_->buffers.front();
    srq_->buffers.pop_front();
    auto* out = static_cast<std::uint8_t*>(buffer.address);
    encode_tm_header(tmh, std::span<std::uint8_t, kTmHeaderBytes>(out, kTmHeaderBytes));
    if (!body.empty()) std::memcpy(out + kTmHeaderBytes, body.data(), body.size());
    TmCompletion c;
    c.wr_id = wr_id;
    c.opcode = opcode;
    c.flags = flags;
    c.byte_len = static_cast<std::uint32_t>(kTmHeaderBytes + body.size());
    c.qp_num = kQp;
    srq_->cq.push_back(c);
  }

  // A completion for NIC entry `entry` naming envelope `e` (tag info).
  void nic_completion(std::uint64_t entry, const Envelope& e, std::uint32_t app_context,
                      unsigned flags, std::uint32_t byte_len,
                      ibv_wc_status status = IBV_WC_SUCCESS) {
    TmCompletion c;
    c.wr_id = entry;
    c.status = status;
    c.opcode = IBV_WC_TM_RECV;
    c.flags = flags;
    c.byte_len = byte_len;
    c.qp_num = kQp;
    c.tag = *matching::encode_nic_tag(e);
    c.app_context = app_context;
    srq_->cq.push_back(c);
  }

  static std::vector<std::uint8_t> rvh_bytes(const RendezvousHeader& h) {
    std::vector<std::uint8_t> out(kRendezvousHeaderBytes);
    encode_rendezvous_header(h, std::span<std::uint8_t, kRendezvousHeaderBytes>(out.data(), 16));
    return out;
  }
  static std::span<const std::uint8_t> bytes_of(const std::string& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
  }

  // The NIC answers operation `entry` with IBV_WC_TM_ERR; it has executed
  // everything posted so far.
  void fail_op(std::uint64_t entry, ibv_wc_opcode opcode) {
    TmCompletion c;
    c.wr_id = entry;
    c.opcode = opcode;
    c.status = IBV_WC_TM_ERR;
    srq_->cq.push_back(c);
    executed_ = srq_->ops.size();
  }

  Status progress() { return rx_->progress(&done_); }

  ScriptedSrq* srq_ = nullptr;
  RecordingSink sink_;
  std::unique_ptr<TagMatchingReceiver> rx_;
  std::vector<Completed> done_;
  std::uint8_t user_[4][1024] = {};
  std::size_t executed_ = 0;
};

TEST_F(ReceiverContract, ExpectedEagerIsMatchedByTheNicIntoTheReceiveBuffer) {
  post({1, 2, 3}, 0);
  execute_ops();
  const ScriptedSrq::Op& add = last_add();
  EXPECT_EQ(add.add_buffer.address, user_[0]) << "the NIC scatters into the receive's own buffer";
  EXPECT_TRUE(add.op.pattern.accepts(*matching::encode_nic_tag({1, 2, 3})));
  std::memcpy(user_[0], "payload", 7);
  nic_completion(add.op.entry, {1, 2, 3}, 5, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 7);
  ASSERT_TRUE(progress().is_ok());
  ASSERT_EQ(done_.size(), 1u);
  EXPECT_TRUE(done_[0].by_nic);
  EXPECT_FALSE(done_[0].rendezvous);
  EXPECT_EQ(done_[0].length, 7u);
  EXPECT_EQ(done_[0].sender_request, 5u);
  EXPECT_EQ(done_[0].envelope, (Envelope{1, 2, 3}));
  EXPECT_EQ(rx_->counters().matched_by_nic, 1u);
}

// MATCH without DATA_VALID: the NIC reads the data itself and reports
// DATA_VALID later; the NIC sends the FIN, so software must not.
TEST_F(ReceiverContract, RendezvousTheNicReadsCompletesAtDataValid) {
  post({1, 2, 3}, 0);
  execute_ops();
  const std::uint64_t entry = last_add().op.entry;
  nic_completion(entry, {1, 2, 3}, 6, IBV_WC_TM_MATCH, 0);
  ASSERT_TRUE(progress().is_ok());
  EXPECT_TRUE(done_.empty()) << "complete only once the data is there";
  nic_completion(entry, {1, 2, 3}, 6, IBV_WC_TM_DATA_VALID, 900);
  ASSERT_TRUE(progress().is_ok());
  ASSERT_EQ(done_.size(), 1u);
  EXPECT_TRUE(done_[0].rendezvous);
  EXPECT_TRUE(done_[0].read_by_nic);
  EXPECT_FALSE(done_[0].needs_fin());
  EXPECT_EQ(done_[0].length, 900u);
  EXPECT_EQ(done_[0].sender_request, 6u);
  EXPECT_TRUE(sink_.reads.empty());
}

// IBV_WC_TM_RNDV_INCOMPLETE: matched by the NIC, read by software from the
// RVH the NIC left in the receive's buffer; software sends the FIN.
TEST_F(ReceiverContract, RendezvousHandedBackIsReadBySoftware) {
  post({1, 2, 3}, 1, 600);
  execute_ops();
  const std::uint64_t entry = last_add().op.entry;
  const RendezvousHeader rvh{0x7000, 0x99, 5000};
  auto bytes = rvh_bytes(rvh);
  std::memcpy(user_[1], bytes.data(), bytes.size());
  nic_completion(entry, {1, 2, 3}, 8, IBV_WC_TM_MATCH, 16, IBV_WC_TM_RNDV_INCOMPLETE);
  ASSERT_TRUE(progress().is_ok());
  ASSERT_EQ(sink_.reads.size(), 1u);
  EXPECT_EQ(sink_.reads[0].header, rvh);
  EXPECT_EQ(sink_.reads[0].into.address, user_[1]);
  EXPECT_EQ(sink_.reads[0].into.length, 600u) << "no more than the receive holds";
  EXPECT_TRUE(done_.empty());
  ASSERT_TRUE(rx_->read_done(sink_.reads[0].id, Status::ok(), &done_).is_ok());
  ASSERT_EQ(done_.size(), 1u);
  EXPECT_TRUE(done_[0].by_nic);
  EXPECT_TRUE(done_[0].rendezvous);
  EXPECT_FALSE(done_[0].read_by_nic);
  EXPECT_TRUE(done_[0].needs_fin());
  EXPECT_TRUE(done_[0].truncated);
  EXPECT_EQ(done_[0].length, 600u);
  EXPECT_EQ(done_[0].sender_request, 8u);
  EXPECT_FALSE(rx_->read_done(sink_.reads[0].id, Status::ok(), &done_).is_ok())
      << "a second read_done for the same receive is a bug, reported";
}

TEST_F(ReceiverContract, UnexpectedRendezvousIsProbedWithItsLengthAndReadWhenReceived) {
  const RendezvousHeader rvh{0x1000, 0x42, 70000};
  auto tag = *matching::encode_nic_tag({2, 1, 9});
  unexpected({IBV_TMH_RNDV, 31, tag}, rvh_bytes(rvh));
  ASSERT_TRUE(progress().is_ok());
  EXPECT_EQ(srq_->buffers.size(), kBuffers) << "the SRQ buffer went straight back";
  auto probed = rx_->probe({2, kAnySource, kAnyTag});
  ASSERT_TRUE(probed.has_value());
  EXPECT_EQ(probed->length, 70000u);
  EXPECT_TRUE(sink_.reads.empty());
  post({2, 1, 9}, 2);
  ASSERT_EQ(sink_.reads.size(), 1u);
  EXPECT_EQ(sink_.reads[0].header, rvh);
  ASSERT_TRUE(rx_->read_done(sink_.reads[0].id, Status::ok(), &done_).is_ok());
  ASSERT_EQ(done_.size(), 1u);
  EXPECT_FALSE(done_[0].by_nic);
  EXPECT_TRUE(done_[0].needs_fin());
  EXPECT_EQ(done_[0].sender_request, 31u);
  EXPECT_EQ(done_[0].qp_num, kQp);
}

// A failed read completes the receive with the error, and still wants the
// FIN so that its sender does not wait forever.
TEST_F(ReceiverContract, FailedReadCompletesWithTheErrorAndStillNeedsTheFin) {
  unexpected({IBV_TMH_RNDV, 32, *matching::encode_nic_tag({2, 1, 9})},
             rvh_bytes({0x1000, 0x42, 500}));
  ASSERT_TRUE(progress().is_ok());
  post({2, 1, 9}, 0);
  ASSERT_EQ(sink_.reads.size(), 1u);
  ASSERT_TRUE(
      rx_->read_done(sink_.reads[0].id, {ErrorCode::kTransport, "remote access error"}, &done_)
          .is_ok());
  ASSERT_EQ(done_.size(), 1u);
  EXPECT_EQ(done_[0].error.code(), ErrorCode::kTransport);
  EXPECT_TRUE(done_[0].needs_fin());
}

// A FIN reported as an unexpected tagged message was counted by the NIC:
// software counts it (so later ADDs carry the right count) but never lets
// a probe or receive see it.
TEST_F(ReceiverContract, FinIsCountedButNeverQueued) {
  unexpected({IBV_TMH_FIN, 33, 0}, {});
  ASSERT_TRUE(progress().is_ok());
  EXPECT_EQ(sink_.fins, std::vector<std::uint32_t>{33});
  EXPECT_FALSE(rx_->probe({0, kAnySource, kAnyTag}).has_value());
  post({0, 0, 0}, 0);
  EXPECT_EQ(last_add().op.unexpected_count, 1u);
}

// IBV_WC_TM_NO_TAG: control, handed over as it is; the NIC did not count it.
TEST_F(ReceiverContract, ControlWithoutTagIsHandedOverAndNotCounted) {
  unexpected({IBV_TMH_NO_TAG, 0, 0}, bytes_of("cancel 77"), IBV_WC_TM_NO_TAG);
  ASSERT_TRUE(progress().is_ok());
  EXPECT_EQ(sink_.controls, std::vector<std::string>{"cancel 77"});
  EXPECT_EQ(rx_->untagged(), 1u);
  post({0, 0, 0}, 0);
  EXPECT_EQ(last_add().op.unexpected_count, 0u);
  EXPECT_EQ(srq_->buffers.size(), kBuffers);
}

TEST_F(ReceiverContract, SyncRequestIsAnsweredWithTheCount) {
  post({1, 2, 3}, 0);
  execute_ops();
  unexpected({IBV_TMH_EAGER, 1, *matching::encode_nic_tag({1, 2, 4})}, bytes_of("x"),
             IBV_WC_TM_RECV, IBV_WC_TM_SYNC_REQ);
  ASSERT_TRUE(progress().is_ok());
  ASSERT_FALSE(srq_->ops.empty());
  EXPECT_EQ(srq_->ops.back().op.kind, NicOp::Kind::kSync);
  EXPECT_EQ(srq_->ops.back().op.unexpected_count, 1u);
}

// A cancel's DEL that finds the entry gone (IBV_WC_TM_ERR) lost to the
// NIC's match: the receive completes with the data, not cancelled.
TEST_F(ReceiverContract, CancelLosesToTheNicsMatch) {
  auto id = post({1, 2, 3}, 0);
  execute_ops();
  const std::uint64_t entry = last_add().op.entry;
  ASSERT_TRUE(rx_->cancel(id, &done_).is_ok());
  EXPECT_EQ(srq_->ops.back().op.kind, NicOp::Kind::kDel);
  EXPECT_EQ(srq_->ops.back().handle, last_add().handle) << "DEL names the ADD's handle";
  EXPECT_TRUE(done_.empty());
  nic_completion(entry, {1, 2, 3}, 4, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 3);
  fail_op(entry, IBV_WC_TM_DEL);
  ASSERT_TRUE(progress().is_ok());
  ASSERT_EQ(done_.size(), 1u);
  EXPECT_FALSE(done_[0].cancelled);
  EXPECT_TRUE(done_[0].by_nic);
  EXPECT_EQ(rx_->counters().cancel_lost_to_nic, 1u);
}

TEST_F(ReceiverContract, CancelWinsWhenTheDelSucceeds) {
  auto id = post({1, 2, 3}, 0);
  execute_ops();
  ASSERT_TRUE(rx_->cancel(id, &done_).is_ok());
  execute_ops();
  ASSERT_EQ(done_.size(), 1u);
  EXPECT_TRUE(done_[0].cancelled);
  // A message for it now goes unexpected.
  unexpected({IBV_TMH_EAGER, 2, *matching::encode_nic_tag({1, 2, 3})}, bytes_of("late"));
  ASSERT_TRUE(progress().is_ok());
  EXPECT_TRUE(rx_->probe({1, 2, 3}).has_value());
  EXPECT_EQ(done_.size(), 1u);
}

// An ADD the NIC refused leaves the receive to software, which matches the
// next message for it.
TEST_F(ReceiverContract, RefusedAddLeavesTheReceiveToSoftware) {
  post({1, 2, 3}, 0);
  fail_op(last_add().op.entry, IBV_WC_TM_ADD);
  ASSERT_TRUE(progress().is_ok());
  unexpected({IBV_TMH_EAGER, 3, *matching::encode_nic_tag({1, 2, 3})}, bytes_of("abc"));
  ASSERT_TRUE(progress().is_ok());
  ASSERT_EQ(done_.size(), 1u);
  EXPECT_FALSE(done_[0].by_nic);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(user_[0]), done_[0].length), "abc");
  EXPECT_EQ(rx_->counters().add_rejected, 1u);
}

TEST_F(ReceiverContract, ReceiveTooSmallForAnRvhStaysInSoftware) {
  post({1, 2, 3}, 0, 8);
  EXPECT_TRUE(srq_->ops.empty());
  EXPECT_EQ(rx_->counters().kept_by_caller, 1u);
}

// A message without a valid TMH is an error that loses nothing: the SRQ
// buffer goes back, nothing is queued, the next message is received.
TEST_F(ReceiverContract, BrokenHeaderIsReportedAndLosesNothing) {
  // A message whose TMH has non-zero reserved bytes.
  auto [wr_id, buffer] = srq_->buffers.front();
  srq_->buffers.pop_front();
  std::memset(buffer.address, 0xee, kTmHeaderBytes);
  TmCompletion broken;
  broken.wr_id = wr_id;
  broken.opcode = IBV_WC_TM_RECV;
  broken.byte_len = kTmHeaderBytes;
  broken.qp_num = kQp;
  srq_->cq.push_back(broken);
  Status s = progress();
  EXPECT_EQ(s.code(), ErrorCode::kTransport) << s.to_string();
  EXPECT_EQ(srq_->buffers.size(), kBuffers) << "its SRQ buffer went back";
  EXPECT_FALSE(rx_->probe({0, kAnySource, kAnyTag}).has_value());
  post({1, 2, 3}, 0);
  unexpected({IBV_TMH_EAGER, 4, *matching::encode_nic_tag({1, 2, 3})}, bytes_of("ok"));
  ASSERT_TRUE(progress().is_ok());
  ASSERT_EQ(done_.size(), 1u);
  EXPECT_EQ(done_[0].sender_request, 4u);
}

// mprobe takes the message out of matching: a receive posted after it
// waits for the next one; mreceive gets the data (a rendezvous by a read).
TEST_F(ReceiverContract, MprobedMessageIsOnlyMreceived) {
  unexpected({IBV_TMH_RNDV, 50, *matching::encode_nic_tag({5, 0, 1})},
             rvh_bytes({0x2000, 0x43, 300}));
  unexpected({IBV_TMH_EAGER, 51, *matching::encode_nic_tag({5, 0, 1})}, bytes_of("second"));
  ASSERT_TRUE(progress().is_ok());
  auto first = rx_->mprobe({5, kAnySource, kAnyTag});
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->sender_request_id, 50u);
  EXPECT_EQ(first->length, 300u);
  post({5, 0, 1}, 0);
  ASSERT_EQ(done_.size(), 1u) << "the receive takes the second message, not the mprobed one";
  EXPECT_EQ(done_[0].sender_request, 51u);
  EXPECT_TRUE(sink_.reads.empty());
  auto id = rx_->mreceive(*first, {user_[1], 1024, 0}, 77, &done_);
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  ASSERT_EQ(sink_.reads.size(), 1u);
  EXPECT_EQ(sink_.reads[0].header.length, 300u);
  ASSERT_TRUE(rx_->read_done(sink_.reads[0].id, Status::ok(), &done_).is_ok());
  ASSERT_EQ(done_.size(), 2u);
  EXPECT_EQ(done_[1].cookie, 77u);
  EXPECT_EQ(done_[1].sender_request, 50u);
  EXPECT_TRUE(done_[1].needs_fin());
  EXPECT_EQ(rx_->mreceive(*first, {user_[1], 1024, 0}, 78, &done_).status().code(),
            ErrorCode::kInvalidRequest)
      << "a message is mreceived once";
}

TEST_F(ReceiverContract, DataForAnUnknownEntryIsAnInternalError) {
  nic_completion(999, {1, 2, 3}, 0, IBV_WC_TM_DATA_VALID, 10);
  EXPECT_EQ(progress().code(), ErrorCode::kInternal);
}

}  // namespace
}  // namespace tagwire::verbs
