// The verbs layer on a real device: device and capability probe, RC queue
// pairs connected to each other on one port, and every work request the
// transport uses (SEND/RECV, inline SEND, RDMA WRITE, RDMA READ,
// compare-and-swap), plus a READ with a bad rkey turned into a Status.
// Without a device (this machine's kernel has no RDMA), the device tests
// skip and say where they run: the soft-RoCE VM (bash ci/rxe-vm). The
// capability decisions are plain functions, tested everywhere.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "test_device.h"
#include "verbs/device.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/tm_completion.h"
#include "verbs/tm_header.h"
#include "verbs/verbs_status.h"
#include "verbs/verbs_transport.h"

namespace tagwire::verbs {
namespace {

DeviceCaps caps_with(bool tm, ibv_atomic_cap atomic) {
  DeviceCaps c;
  c.name = "dev0";
  c.tm_rc = tm;
  c.atomic_cap = atomic;
  return c;
}

TEST(NicMatchingProbe, FollowsTheDeviceAndTheSetting) {
  EXPECT_TRUE(*use_nic_matching(caps_with(true, IBV_ATOMIC_HCA), NicMatchingChoice::kAuto));
  EXPECT_FALSE(*use_nic_matching(caps_with(false, IBV_ATOMIC_HCA), NicMatchingChoice::kAuto));
  EXPECT_FALSE(*use_nic_matching(caps_with(true, IBV_ATOMIC_HCA), NicMatchingChoice::kOff));
  EXPECT_TRUE(*use_nic_matching(caps_with(true, IBV_ATOMIC_HCA), NicMatchingChoice::kOn));
  auto refused = use_nic_matching(caps_with(false, IBV_ATOMIC_HCA), NicMatchingChoice::kOn);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kConfig);
  EXPECT_NE(refused.status().to_string().find("IBV_TM_CAP_RC"), std::string::npos);
  EXPECT_NE(refused.status().to_string().find("dev0"), std::string::npos);
}

// TAGWIRE_DEVICE unset: the device whose local PUs hold most of the PUs
// this process may run on; the first on a tie (rxe: local to everything).
TEST(NearestDevice, MostOverlapWinsAndTiesGoToTheFirst) {
  const std::vector<int> socket0 = {0, 1, 2, 3}, socket1 = {4, 5, 6, 7};
  EXPECT_EQ(nearest_device({socket0, socket1}, {5, 6}), 1u);
  EXPECT_EQ(nearest_device({socket0, socket1}, {1}), 0u);
  EXPECT_EQ(nearest_device({socket0, socket1}, {3, 4, 5}), 1u);
  EXPECT_EQ(nearest_device({socket0, socket1}, {3, 4}), 0u) << "a tie: the first";
  EXPECT_EQ(nearest_device({{}, socket1}, {0, 1}), 0u) << "no overlap anywhere: the first";
  EXPECT_EQ(nearest_device({socket0}, {}), 0u);
}

TEST(OneSidedCancel, OnlyWhereNicAndCpuAtomicsAgree) {
  EXPECT_TRUE(one_sided_cancel_possible(caps_with(false, IBV_ATOMIC_GLOB)));
  EXPECT_FALSE(one_sided_cancel_possible(caps_with(false, IBV_ATOMIC_HCA)));
  EXPECT_FALSE(one_sided_cancel_possible(caps_with(false, IBV_ATOMIC_NONE)));
}

TEST(VerbsStatus, CompletionErrorsNameTheStatus) {
  ibv_wc wc{};
  wc.status = IBV_WC_RETRY_EXC_ERR;
  Status s = completion_error("RDMA READ", wc);
  EXPECT_EQ(s.code(), ErrorCode::kPeerFailed);
  EXPECT_NE(s.to_string().find("RDMA READ"), std::string::npos);
  wc.status = IBV_WC_REM_ACCESS_ERR;
  EXPECT_EQ(completion_error("RDMA READ", wc).code(), ErrorCode::kTransport);
}

// The tag-matching headers, byte for byte as rdma-core's tm_types.h lays
// them out (big-endian), and what a malformed one is.
TEST(TmHeader, EncodesBigEndianAndRoundTrips) {
  std::uint8_t bytes[kTmHeaderBytes];
  TmHeader h{IBV_TMH_EAGER, 0x01020304u, 0x1122334455667788ull};
  encode_tm_header(h, std::span<std::uint8_t, kTmHeaderBytes>(bytes));
  const std::uint8_t expected[kTmHeaderBytes] = {3,    0,    0,    0,    1,    2,    3,    4,
                                                 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  EXPECT_EQ(std::memcmp(bytes, expected, sizeof bytes), 0);
  auto back = decode_tm_header(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, h);

  bytes[1] = 1;  // reserved must be zero
  EXPECT_FALSE(decode_tm_header(bytes).has_value());
  bytes[1] = 0;
  bytes[0] = 9;  // no such operation
  EXPECT_FALSE(decode_tm_header(bytes).has_value());
  EXPECT_FALSE(decode_tm_header(std::span<const std::uint8_t>(bytes, 15)).has_value());

  std::uint8_t rvh[kRendezvousHeaderBytes];
  RendezvousHeader r{0xdeadbeef00ull, 0xabcd, 1u << 20};
  encode_rendezvous_header(r, std::span<std::uint8_t, kRendezvousHeaderBytes>(rvh));
  EXPECT_EQ(rvh[15], 0);
  EXPECT_EQ(rvh[13], 0x10);
  EXPECT_EQ(*decode_rendezvous_header(rvh), r);
}

// Every completion the tag-matching contract defines, mapped to what it
// means (see tm_completion.h for the table).
TEST(TmCompletion, EachContractCompletionMeansOneThing) {
  auto kind = [](ibv_wc_opcode op, ibv_wc_status status, unsigned flags) {
    TmCompletion c;
    c.opcode = op;
    c.status = status;
    c.flags = flags;
    return classify_tm_completion(c);
  };
  EXPECT_EQ(kind(IBV_WC_TM_ADD, IBV_WC_SUCCESS, 0).kind, TmEventKind::kAddDone);
  EXPECT_TRUE(kind(IBV_WC_TM_ADD, IBV_WC_SUCCESS, 0).ok);
  TmEvent refused = kind(IBV_WC_TM_ADD, IBV_WC_TM_ERR, IBV_WC_TM_SYNC_REQ);
  EXPECT_EQ(refused.kind, TmEventKind::kAddDone);
  EXPECT_FALSE(refused.ok);
  EXPECT_TRUE(refused.sync_requested);
  TmEvent gone = kind(IBV_WC_TM_DEL, IBV_WC_TM_ERR, 0);
  EXPECT_EQ(gone.kind, TmEventKind::kDelDone);
  EXPECT_FALSE(gone.ok) << "DEL of a consumed entry";
  EXPECT_EQ(kind(IBV_WC_TM_SYNC, IBV_WC_SUCCESS, 0).kind, TmEventKind::kSyncDone);
  EXPECT_EQ(kind(IBV_WC_TM_RECV, IBV_WC_SUCCESS, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID).kind,
            TmEventKind::kMatched);
  EXPECT_EQ(kind(IBV_WC_TM_RECV, IBV_WC_SUCCESS, IBV_WC_TM_MATCH).kind,
            TmEventKind::kMatchedDataFollows);
  EXPECT_EQ(kind(IBV_WC_TM_RECV, IBV_WC_SUCCESS, IBV_WC_TM_DATA_VALID).kind,
            TmEventKind::kDataArrived);
  TmEvent unexpected = kind(IBV_WC_TM_RECV, IBV_WC_SUCCESS, IBV_WC_TM_SYNC_REQ);
  EXPECT_EQ(unexpected.kind, TmEventKind::kUnexpected);
  EXPECT_TRUE(unexpected.sync_requested);
  EXPECT_EQ(kind(IBV_WC_RECV, IBV_WC_SUCCESS, 0).kind, TmEventKind::kUnexpected)
      << "a plain SRQ hands every message to software";
  EXPECT_EQ(kind(IBV_WC_TM_RECV, IBV_WC_TM_RNDV_INCOMPLETE, IBV_WC_TM_MATCH).kind,
            TmEventKind::kRendezvousInSoftware);
  EXPECT_EQ(kind(IBV_WC_TM_NO_TAG, IBV_WC_SUCCESS, 0).kind, TmEventKind::kUntagged);
  // IBV_WC_TM_ERR is an answer only to a list operation; on a receive, and
  // any other error status anywhere, the completion failed.
  EXPECT_EQ(kind(IBV_WC_TM_RECV, IBV_WC_TM_ERR, 0).kind, TmEventKind::kFailed);
  EXPECT_EQ(kind(IBV_WC_TM_RECV, IBV_WC_LOC_LEN_ERR, IBV_WC_TM_MATCH).kind, TmEventKind::kFailed);
  EXPECT_EQ(kind(IBV_WC_TM_ADD, IBV_WC_WR_FLUSH_ERR, 0).kind, TmEventKind::kFailed);
}

// ------------------------------------------------------------ on a device

class OnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    device_ = testing::open_test_device(&why_not);
    if (!device_) GTEST_SKIP() << why_not;
    auto gid = device_->roce_v2_ipv4_gid_index();
    ASSERT_TRUE(gid.is_ok()) << gid.status().to_string();
    gid_index_ = *gid;
    cq_.reset(ibv_create_cq(device_->context(), 64, nullptr, nullptr, 0));
    ASSERT_NE(cq_, nullptr);
  }
  void TearDown() override {
    a_.reset();
    b_.reset();
    cq_.reset();
  }

  // Two QPs on one port, connected to each other.
  void connect_pair() {
    auto a = RcQueuePair::create(*device_, cq_.get(), cq_.get(), 32, 64);
    auto b = RcQueuePair::create(*device_, cq_.get(), cq_.get(), 32, 64);
    ASSERT_TRUE(a.is_ok()) << a.status().to_string();
    ASSERT_TRUE(b.is_ok()) << b.status().to_string();
    a_ = std::make_unique<RcQueuePair>(std::move(a).value());
    b_ = std::make_unique<RcQueuePair>(std::move(b).value());
    ASSERT_TRUE(a_->connect(b_->address(gid_index_), gid_index_).is_ok());
    ASSERT_TRUE(b_->connect(a_->address(gid_index_), gid_index_).is_ok());
  }

  // The next `n` completions (timers run slowly under TCG: generous bound).
  std::vector<ibv_wc> completions(int n) {
    std::vector<ibv_wc> out;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (static_cast<int>(out.size()) < n && std::chrono::steady_clock::now() < until) {
      ibv_wc wc[8];
      int got = ibv_poll_cq(cq_.get(), 8, wc);
      EXPECT_GE(got, 0);
      for (int i = 0; i < got; ++i) out.push_back(wc[i]);
    }
    EXPECT_EQ(static_cast<int>(out.size()), n) << "completions missing after 30 s";
    return out;
  }

  MrPtr reg(std::vector<std::uint8_t>& v) {
    auto mr = register_memory(*device_, v.data(), v.size(),
                              IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
    EXPECT_TRUE(mr.is_ok()) << mr.status().to_string();
    return mr.is_ok() ? std::move(mr).value() : nullptr;
  }

  std::unique_ptr<Device> device_;
  int gid_index_ = 0;
  CqPtr cq_;
  std::unique_ptr<RcQueuePair> a_, b_;
};

TEST_F(OnDevice, ReportsCapabilitiesAndPicksTheMatcher) {
  const DeviceCaps& c = device_->caps();
  EXPECT_TRUE(c.port_active);
  EXPECT_GT(c.max_qp_wr, 0u);
  std::printf("device %s: atomic_cap %d, tag matching %s (max tags %u), MTU %d\n", c.name.c_str(),
              static_cast<int>(c.atomic_cap), c.tm_rc ? "RC" : "none", c.tm_max_tags,
              128 << static_cast<int>(c.active_mtu));
  auto chosen = use_nic_matching(c, NicMatchingChoice::kAuto);
  ASSERT_TRUE(chosen.is_ok());
  EXPECT_EQ(*chosen, c.tm_rc);
  if (c.name.rfind("rxe", 0) == 0) {
    // soft-RoCE: no tag matching, NIC-only atomics (what docs/architecture.md §4 plans for).
    EXPECT_FALSE(c.tm_rc);
    EXPECT_EQ(c.atomic_cap, IBV_ATOMIC_HCA);
    EXPECT_FALSE(use_nic_matching(c, NicMatchingChoice::kOn).is_ok());
  }
}

TEST_F(OnDevice, TagMatchingSrqWhereTheDeviceHasIt) {
  const DeviceCaps& c = device_->caps();
  if (!c.tm_rc) GTEST_SKIP() << "device " << c.name << " reports no IBV_TM_CAP_RC";
  ibv_srq_init_attr_ex attr{};
  attr.comp_mask =
      IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
  attr.srq_type = IBV_SRQT_TM;
  attr.pd = device_->pd();
  attr.cq = cq_.get();
  attr.attr.max_wr = 64;
  attr.attr.max_sge = 1;
  attr.tm_cap.max_num_tags = std::min<std::uint32_t>(c.tm_max_tags, 64);
  attr.tm_cap.max_ops = 16;
  ibv_srq* srq = ibv_create_srq_ex(device_->context(), &attr);
  ASSERT_NE(srq, nullptr) << "ibv_create_srq_ex(IBV_SRQT_TM) failed: " << std::strerror(errno);
  EXPECT_EQ(ibv_destroy_srq(srq), 0);
}

TEST_F(OnDevice, SendReceiveWriteReadAndAtomics) {
  connect_pair();
  std::vector<std::uint8_t> src(4096), dst(4096, 0), word(8, 0), result(8, 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 3);
  MrPtr src_mr = reg(src), dst_mr = reg(dst), word_mr = reg(word), result_mr = reg(result);
  ASSERT_TRUE(src_mr && dst_mr && word_mr && result_mr);

  // SEND / RECV, then a small inline SEND.
  ASSERT_TRUE(b_->post_recv(1, {dst.data(), 4096, dst_mr->lkey}).is_ok());
  ASSERT_TRUE(a_->post_send(2, {src.data(), 4096, src_mr->lkey}, true, false).is_ok());
  for (const ibv_wc& wc : completions(2)) {
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
    if (wc.wr_id == 1) {
      EXPECT_EQ(wc.byte_len, 4096u);
    }
  }
  EXPECT_EQ(dst, src);
  std::fill(dst.begin(), dst.end(), 0);
  ASSERT_TRUE(b_->post_recv(3, {dst.data(), 4096, dst_mr->lkey}).is_ok());
  ASSERT_TRUE(a_->post_send(4, {src.data(), 32, src_mr->lkey}, true, true).is_ok());
  for (const ibv_wc& wc : completions(2)) EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(dst.data(), src.data(), 32), 0);
  EXPECT_EQ(dst[32], 0) << "an inline SEND of 32 bytes wrote more";

  // RDMA WRITE into b's buffer, RDMA READ it back into another.
  std::fill(dst.begin(), dst.end(), 0);
  ASSERT_TRUE(a_->post_write(5, {src.data(), 4096, src_mr->lkey},
                             reinterpret_cast<std::uint64_t>(dst.data()), dst_mr->rkey, true)
                  .is_ok());
  EXPECT_EQ(completions(1)[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(dst, src);
  std::vector<std::uint8_t> back(4096, 0);
  MrPtr back_mr = reg(back);
  ASSERT_TRUE(b_->post_read(6, {back.data(), 4096, back_mr->lkey},
                            reinterpret_cast<std::uint64_t>(dst.data()), dst_mr->rkey)
                  .is_ok());
  EXPECT_EQ(completions(1)[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(back, src);

  // Compare-and-swap: wins when the word holds the expected value, and
  // leaves it alone (returning what is there) when it does not.
  std::uint64_t initial = 0x1122334455667788ull;
  std::memcpy(word.data(), &initial, 8);
  const auto word_addr = reinterpret_cast<std::uint64_t>(word.data());
  ASSERT_TRUE(a_->post_compare_and_swap(7, {result.data(), 8, result_mr->lkey}, word_addr,
                                        word_mr->rkey, initial, 42)
                  .is_ok());
  EXPECT_EQ(completions(1)[0].status, IBV_WC_SUCCESS);
  std::uint64_t old = 0, now = 0;
  std::memcpy(&old, result.data(), 8);
  std::memcpy(&now, word.data(), 8);
  EXPECT_EQ(old, initial);
  EXPECT_EQ(now, 42u);
  ASSERT_TRUE(a_->post_compare_and_swap(8, {result.data(), 8, result_mr->lkey}, word_addr,
                                        word_mr->rkey, initial, 99)
                  .is_ok());
  EXPECT_EQ(completions(1)[0].status, IBV_WC_SUCCESS);
  std::memcpy(&old, result.data(), 8);
  std::memcpy(&now, word.data(), 8);
  EXPECT_EQ(old, 42u) << "a failed CAS returns the current value";
  EXPECT_EQ(now, 42u) << "a failed CAS changed the word";
  EXPECT_FALSE(a_->post_compare_and_swap(9, {result.data(), 8, result_mr->lkey}, word_addr + 4,
                                         word_mr->rkey, 0, 1)
                   .is_ok())
      << "an unaligned CAS must be refused before it reaches the NIC";

  // Fetch-and-add (a window's 8-byte accumulates): returns the old value,
  // adds modulo 2^64, and refuses an unaligned word too.
  ASSERT_TRUE(
      a_->post_fetch_and_add(10, {result.data(), 8, result_mr->lkey}, word_addr, word_mr->rkey, 8)
          .is_ok());
  EXPECT_EQ(completions(1)[0].status, IBV_WC_SUCCESS);
  std::memcpy(&old, result.data(), 8);
  std::memcpy(&now, word.data(), 8);
  EXPECT_EQ(old, 42u);
  EXPECT_EQ(now, 50u);
  ASSERT_TRUE(a_->post_fetch_and_add(11, {result.data(), 8, result_mr->lkey}, word_addr,
                                     word_mr->rkey, ~std::uint64_t{0} - 49)
                  .is_ok());
  EXPECT_EQ(completions(1)[0].status, IBV_WC_SUCCESS);
  std::memcpy(&old, result.data(), 8);
  std::memcpy(&now, word.data(), 8);
  EXPECT_EQ(old, 50u);
  EXPECT_EQ(now, 0u) << "adding 2^64 - 50 to 50 wraps to 0";
  EXPECT_FALSE(a_->post_fetch_and_add(12, {result.data(), 8, result_mr->lkey}, word_addr + 4,
                                      word_mr->rkey, 1)
                   .is_ok())
      << "an unaligned fetch-and-add must be refused before it reaches the NIC";
}

// One-sided send cancel's claim: the transport's compare-and-swap on its own
// registered memory. Under IBV_ATOMIC_HCA (rxe) it goes through a QP
// connected to itself, so that it is atomic with peers' RDMA CAS on the
// word; under IBV_ATOMIC_GLOB it is a CPU atomic. Either way: the swap
// happens exactly when the word holds the expected value, and the old
// value comes back.
TEST_F(OnDevice, TransportClaimsItsOwnWordThroughTheNic) {
  VerbsOptions options;
  options.device = device_->caps().name;
  auto made = create_verbs_transport(options);
  ASSERT_TRUE(made.is_ok()) << made.status().to_string();
  auto transport = std::move(made).value();
  alignas(8) std::uint64_t word = 5;
  auto reg =
      transport->register_memory(&word, sizeof(word), transport::RemoteAccess::kReadAndAtomic);
  ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
  auto old = transport->local_compare_and_swap(**reg, &word, 5, 9);
  ASSERT_TRUE(old.is_ok()) << old.status().to_string();
  EXPECT_EQ(*old, 5u);
  EXPECT_EQ(word, 9u) << "the claim did not land";
  old = transport->local_compare_and_swap(**reg, &word, 5, 13);
  ASSERT_TRUE(old.is_ok()) << old.status().to_string();
  EXPECT_EQ(*old, 9u) << "a failed claim returns what is there";
  EXPECT_EQ(word, 9u) << "a failed claim changed the word";
  // Many in a row (the loopback QP is reused, its completions drained).
  for (std::uint64_t i = 9; i < 200; ++i) {
    old = transport->local_compare_and_swap(**reg, &word, i, i + 1);
    ASSERT_TRUE(old.is_ok()) << old.status().to_string();
    ASSERT_EQ(*old, i);
  }
  EXPECT_EQ(word, 200u);
}

// Memory exposure (issue 9): a rendezvous buffer is registered for remote
// READ only, and deregistered when its operation ends. A peer holding the
// old key then reads nothing, and a read-only registration cannot be
// written. (The engine's side: p2p_test's Resources test finds no
// registration left once every rendezvous has finished.)
TEST_F(OnDevice, DeregisteredOrReadOnlyMemoryRefusesThePeer) {
  std::vector<std::uint8_t> secret(256, 0x77), into(256, 0);
  MrPtr into_mr = reg(into);
  auto read_only = register_memory(*device_, secret.data(), secret.size(),
                                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  ASSERT_TRUE(read_only.is_ok()) << read_only.status().to_string();
  MrPtr secret_mr = std::move(read_only).value();
  const auto addr = reinterpret_cast<std::uint64_t>(secret.data());
  const std::uint32_t rkey = secret_mr->rkey;

  // While registered: the read works.
  connect_pair();
  ASSERT_TRUE(a_->post_read(1, {into.data(), 256, into_mr->lkey}, addr, rkey).is_ok());
  ASSERT_EQ(completions(1)[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(into, secret);

  // Writing into it is refused: the key grants READ only.
  std::vector<std::uint8_t> junk(256, 0x11);
  MrPtr junk_mr = reg(junk);
  connect_pair();  // a failed operation leaves a QP in error: fresh ones each time
  ASSERT_TRUE(a_->post_write(2, {junk.data(), 256, junk_mr->lkey}, addr, rkey, true).is_ok());
  EXPECT_NE(completions(1)[0].status, IBV_WC_SUCCESS) << "a read-only key allowed a WRITE";
  EXPECT_EQ(secret[0], 0x77);

  // Deregistered (the operation finished): the old key reads nothing.
  secret_mr.reset();
  std::fill(into.begin(), into.end(), 0);
  connect_pair();
  ASSERT_TRUE(a_->post_read(3, {into.data(), 256, into_mr->lkey}, addr, rkey).is_ok());
  EXPECT_NE(completions(1)[0].status, IBV_WC_SUCCESS) << "a deregistered buffer was read";
  EXPECT_EQ(into[0], 0) << "data arrived from a deregistered buffer";
}

TEST_F(OnDevice, ReadWithABadKeyFailsAsAStatus) {
  connect_pair();
  std::vector<std::uint8_t> buf(64, 0), target(64, 0x5A);
  MrPtr buf_mr = reg(buf), target_mr = reg(target);
  ASSERT_TRUE(a_->post_read(1, {buf.data(), 64, buf_mr->lkey},
                            reinterpret_cast<std::uint64_t>(target.data()), target_mr->rkey + 1)
                  .is_ok());
  auto wcs = completions(1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_NE(wcs[0].status, IBV_WC_SUCCESS);
  Status s = completion_error("RDMA READ", wcs[0]);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.to_string().find("RDMA READ"), std::string::npos) << s.to_string();
  EXPECT_EQ(buf[0], 0) << "a failed READ delivered data";
}

TEST(VerbsDevice, UnknownNameIsAClearError) {
  auto d = Device::open("no-such-device-42");
  ASSERT_FALSE(d.is_ok());
  EXPECT_NE(d.status().to_string().find("no-such-device-42"), std::string::npos)
      << d.status().to_string();
}

}  // namespace
}  // namespace tagwire::verbs
