// RcQueuePair: one reliable-connected QP, from creation through the
// INIT -> RTR -> RTS transitions to the work requests the engine posts
// (SEND, RECV, RDMA WRITE, RDMA READ, compare-and-swap). It only posts;
// completions are the CQ owner's business.
#pragma once

#include <cstdint>
#include <span>

#include "common/status.h"
#include "verbs/device.h"
#include "verbs/verbs_handles.h"

namespace tagwire::verbs {

// What a peer needs to connect to this QP (exchanged out of band).
struct QpAddress {
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;
  std::uint16_t lid = 0;  // InfiniBand
  ibv_gid gid{};          // RoCE
};

// A registered buffer as work requests name it.
struct LocalBuffer {
  void* address;
  std::uint32_t length;
  std::uint32_t lkey;
};

// How an RDMA WRITE is posted.
struct WriteOptions {
  bool signaled = true;         // completes in the CQ (else only implied by a later one)
  bool inline_data = false;     // copied at post time, when it fits max_inline()
  bool with_immediate = false;  // consumes a receive at the target: its CQ sees it
  std::uint32_t immediate = 0;
};

// One of the NIC's two 8-byte atomics: a compare-and-swap (if the word is
// `compare_add`, it becomes `swap`) or a fetch-and-add of `compare_add`.
// Both return the word's old value.
struct AtomicOp {
  bool fetch_add = false;
  std::uint64_t compare_add = 0;
  std::uint64_t swap = 0;
  static AtomicOp compare_and_swap(std::uint64_t expected, std::uint64_t desired) {
    return {false, expected, desired};
  }
  static AtomicOp add(std::uint64_t value) { return {true, value, 0}; }
};

class RcQueuePair {
 public:
  // Scatter-gather entries asked for per send: a gathered eager WRITE's
  // prefix and header, payload, trailer.
  static constexpr std::uint32_t kMaxGather = 3;
  // `depth`: send and receive queue sizes; `max_inline`: bytes a SEND may
  // carry inline (no registration, no DMA read of the payload).
  static Result<RcQueuePair> create(const Device& device, ibv_cq* send_cq, ibv_cq* recv_cq,
                                    std::uint32_t depth, std::uint32_t max_inline);
  // A QP whose receives come from `srq` (a tag-matching SRQ: `send_depth`
  // 0, since such a QP gives up its send queue).
  static Result<RcQueuePair> create_on_srq(const Device& device, ibv_cq* cq, ibv_srq* srq,
                                           std::uint32_t send_depth) {
    return create_on_srq(device, cq, cq, srq, send_depth);
  }
  static Result<RcQueuePair> create_on_srq(const Device& device, ibv_cq* send_cq, ibv_cq* recv_cq,
                                           ibv_srq* srq, std::uint32_t send_depth);

  QpAddress address(int gid_index) const;
  // INIT -> RTR -> RTS towards `remote`, with the device's active MTU.
  Status connect(const QpAddress& remote, int gid_index);
  // One state transition with attributes from elsewhere (rdma_cm's
  // rdma_init_qp_attr, which knows the route).
  Status modify(ibv_qp_attr& attr, int mask, const char* what);

  Status post_send(std::uint64_t wr_id, LocalBuffer data, bool signaled, bool inline_data);
  Status post_recv(std::uint64_t wr_id, LocalBuffer into);
  Status post_write(std::uint64_t wr_id, LocalBuffer data, std::uint64_t remote_address,
                    std::uint32_t rkey, bool signaled);
  // A zero-length `data` writes nothing (no scatter-gather entry): a
  // signaled one is a flush, completing after every WRITE posted before it.
  Status post_write(std::uint64_t wr_id, LocalBuffer data, std::uint64_t remote_address,
                    std::uint32_t rkey, const WriteOptions& options);
  // A work request the caller built and keeps (its scatter list too): the
  // inline eager WRITE's, whose constant fields are set once.
  Status post_prepared(ibv_send_wr& wr, const char* what) { return post(wr, what); }
  // One signaled WRITE of `pieces` (at most max_gather() of them), placed
  // one after another from `remote_address`: an eager frame whose payload
  // comes from the caller's registered memory, not a copy.
  Status post_gathered_write(std::uint64_t wr_id, std::span<const LocalBuffer> pieces,
                             std::uint64_t remote_address, std::uint32_t rkey, bool with_immediate);
  std::uint32_t max_gather() const { return max_gather_; }
  Status post_read(std::uint64_t wr_id, LocalBuffer into, std::uint64_t remote_address,
                   std::uint32_t rkey);
  // 8-byte compare-and-swap at an 8-byte-aligned remote word; the old value
  // lands in `result` (8 registered bytes).
  Status post_compare_and_swap(std::uint64_t wr_id, LocalBuffer result,
                               std::uint64_t remote_address, std::uint32_t rkey,
                               std::uint64_t expected, std::uint64_t desired);
  // 8-byte fetch-and-add of `add` (modulo 2^64) at an 8-byte-aligned remote
  // word; the old value lands in `result`.
  Status post_fetch_and_add(std::uint64_t wr_id, LocalBuffer result, std::uint64_t remote_address,
                            std::uint32_t rkey, std::uint64_t add);
  // Either of the two: `atomic` says which (AtomicOp).
  Status post_atomic(std::uint64_t wr_id, LocalBuffer result, std::uint64_t remote_address,
                     std::uint32_t rkey, const AtomicOp& atomic);

  ibv_qp* get() const { return qp_.get(); }
  std::uint32_t qpn() const { return qp_->qp_num; }
  std::uint32_t psn() const { return psn_; }
  std::uint32_t max_inline() const { return max_inline_; }

 private:
  static Result<RcQueuePair> create_from(const Device& device, ibv_qp_init_attr& init);
  // Inline, with the failure out of line: one call less on every
  // message's post (26 instructions, bench/instructions in the VM).
  Status post(ibv_send_wr& wr, const char* what) {
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(qp_.get(), &wr, &bad); rc != 0) [[unlikely]]
      return post_failed(what, rc);
    return Status::ok();
  }
  [[gnu::cold, gnu::noinline]] static Status post_failed(const char* what, int rc);

  QpPtr qp_;
  const Device* device_ = nullptr;
  std::uint32_t psn_ = 0;
  std::uint32_t max_inline_ = 0;
  std::uint32_t max_gather_ = 1;
};

// Posts `buffer` to a shared receive queue (wr_id names it in the completion).
Status post_srq_receive(ibv_srq* srq, std::uint64_t wr_id, LocalBuffer buffer);

// Registers [address, address + length) with the device's PD.
Result<MrPtr> register_memory(const Device& device, void* address, std::size_t length, int access);

}  // namespace tagwire::verbs
