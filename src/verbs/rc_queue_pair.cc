#include "verbs/rc_queue_pair.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <random>
#include <string>

#include "verbs/verbs_status.h"

namespace tagwire::verbs {

Result<RcQueuePair> RcQueuePair::create(const Device& device, ibv_cq* send_cq, ibv_cq* recv_cq,
                                        std::uint32_t depth, std::uint32_t max_inline) {
  ibv_qp_init_attr init{};
  init.send_cq = send_cq;
  init.recv_cq = recv_cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = depth;
  init.cap.max_recv_wr = depth;
  // Three for an eager WRITE gathered from the caller's payload
  // (post_gathered_write); a device that grants fewer keeps copying.
  init.cap.max_send_sge = kMaxGather;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = max_inline;
  return create_from(device, init);
}

Result<RcQueuePair> RcQueuePair::create_on_srq(const Device& device, ibv_cq* send_cq,
                                               ibv_cq* recv_cq, ibv_srq* srq,
                                               std::uint32_t send_depth) {
  ibv_qp_init_attr init{};
  init.send_cq = send_cq;
  init.recv_cq = recv_cq;
  init.srq = srq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = send_depth;
  init.cap.max_send_sge = send_depth > 0 ? 1 : 0;
  return create_from(device, init);
}

Result<RcQueuePair> RcQueuePair::create_from(const Device& device, ibv_qp_init_attr& init) {
  RcQueuePair q;
  q.qp_.reset(ibv_create_qp(device.pd(), &init));
  if (!q.qp_) return verbs_error("ibv_create_qp", errno);
  q.device_ = &device;
  q.max_inline_ = init.cap.max_inline_data;  // what the device granted
  q.max_gather_ = init.cap.max_send_sge;
  q.psn_ = std::random_device{}() & 0xffffff;

  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = device.caps().port;
  attr.qp_access_flags =
      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  if (int rc = ibv_modify_qp(q.qp_.get(), &attr,
                             IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
      rc != 0) {
    return verbs_error("ibv_modify_qp(INIT)", rc);
  }
  return q;
}

QpAddress RcQueuePair::address(int gid_index) const {
  QpAddress a;
  a.qpn = qpn();
  a.psn = psn();
  ibv_port_attr port{};
  if (ibv_query_port(device_->context(), device_->caps().port, &port) == 0) a.lid = port.lid;
  ibv_query_gid(device_->context(), device_->caps().port, gid_index, &a.gid);
  return a;
}

Status RcQueuePair::connect(const QpAddress& remote, int gid_index) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = device_->caps().active_mtu;
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = 4;  // RDMA READs and atomics this QP answers at once
  attr.min_rnr_timer = 12;      // 0.64 ms
  attr.ah_attr.port_num = device_->caps().port;
  if (device_->caps().ethernet) {
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid = remote.gid;
    attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(gid_index);
    attr.ah_attr.grh.hop_limit = 64;
  } else {
    attr.ah_attr.dlid = remote.lid;
  }
  if (int rc = ibv_modify_qp(qp_.get(), &attr,
                             IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
      rc != 0) {
    return verbs_error("ibv_modify_qp(RTR)", rc);
  }
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;  // 4.096 us * 2^14 = 67 ms per try
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;  // infinite: a receiver without a posted buffer is waited for
  attr.sq_psn = psn_;
  attr.max_rd_atomic = 4;  // our own READs and atomics in flight
  if (int rc = ibv_modify_qp(qp_.get(), &attr,
                             IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
      rc != 0) {
    return verbs_error("ibv_modify_qp(RTS)", rc);
  }
  return Status::ok();
}

Status RcQueuePair::modify(ibv_qp_attr& attr, int mask, const char* what) {
  if (int rc = ibv_modify_qp(qp_.get(), &attr, mask); rc != 0) return verbs_error(what, rc);
  return Status::ok();
}

Status RcQueuePair::post_failed(const char* what, int rc) {
  return verbs_error(what, rc);
}

namespace {

ibv_sge sge_of(LocalBuffer b) {
  return ibv_sge{reinterpret_cast<std::uint64_t>(b.address), b.length, b.lkey};
}

// A work request on one scatter-gather entry; callers add what their
// opcode needs (remote address and key, atomic operands).
ibv_send_wr one_sge_wr(std::uint64_t wr_id, ibv_sge* sge, ibv_wr_opcode opcode, unsigned flags) {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = sge;
  wr.num_sge = 1;
  wr.opcode = opcode;
  wr.send_flags = flags;
  return wr;
}

}  // namespace

Status RcQueuePair::post_send(std::uint64_t wr_id, LocalBuffer data, bool signaled,
                              bool inline_data) {
  ibv_sge sge = sge_of(data);
  unsigned flags = 0;
  if (signaled) flags |= IBV_SEND_SIGNALED;
  if (inline_data && data.length <= max_inline_) flags |= IBV_SEND_INLINE;
  ibv_send_wr wr = one_sge_wr(wr_id, &sge, IBV_WR_SEND, flags);
  return post(wr, "ibv_post_send(SEND)");
}

Status RcQueuePair::post_recv(std::uint64_t wr_id, LocalBuffer into) {
  ibv_sge sge = sge_of(into);
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp_.get(), &wr, &bad); rc != 0)
    return verbs_error("ibv_post_recv", rc);
  return Status::ok();
}

Status RcQueuePair::post_write(std::uint64_t wr_id, LocalBuffer data, std::uint64_t remote_address,
                               std::uint32_t rkey, bool signaled) {
  WriteOptions options;
  options.signaled = signaled;
  return post_write(wr_id, data, remote_address, rkey, options);
}

Status RcQueuePair::post_write(std::uint64_t wr_id, LocalBuffer data, std::uint64_t remote_address,
                               std::uint32_t rkey, const WriteOptions& options) {
  ibv_sge sge = sge_of(data);
  unsigned flags = 0;
  if (options.signaled) flags |= IBV_SEND_SIGNALED;
  if (options.inline_data && data.length <= max_inline_) flags |= IBV_SEND_INLINE;
  ibv_send_wr wr = one_sge_wr(
      wr_id, &sge, options.with_immediate ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE, flags);
  // Some providers read a zero-length entry as 2 GiB: none at all instead.
  if (data.length == 0) wr.num_sge = 0;
  if (options.with_immediate) wr.imm_data = htonl(options.immediate);
  wr.wr.rdma.remote_addr = remote_address;
  wr.wr.rdma.rkey = rkey;
  return post(wr, options.with_immediate ? "ibv_post_send(RDMA_WRITE_WITH_IMM)"
                                         : "ibv_post_send(RDMA_WRITE)");
}

Status RcQueuePair::post_gathered_write(std::uint64_t wr_id, std::span<const LocalBuffer> pieces,
                                        std::uint64_t remote_address, std::uint32_t rkey,
                                        bool with_immediate) {
  ibv_sge sge[kMaxGather];
  const std::size_t n = std::min<std::size_t>(pieces.size(), kMaxGather);
  for (std::size_t i = 0; i < n; ++i) sge[i] = sge_of(pieces[i]);
  ibv_send_wr wr =
      one_sge_wr(wr_id, sge, with_immediate ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
                 IBV_SEND_SIGNALED);
  wr.num_sge = static_cast<int>(n);
  wr.wr.rdma.remote_addr = remote_address;
  wr.wr.rdma.rkey = rkey;
  return post(wr, with_immediate ? "ibv_post_send(gathered RDMA_WRITE_WITH_IMM)"
                                 : "ibv_post_send(gathered RDMA_WRITE)");
}

Status RcQueuePair::post_read(std::uint64_t wr_id, LocalBuffer into, std::uint64_t remote_address,
                              std::uint32_t rkey) {
  ibv_sge sge = sge_of(into);
  ibv_send_wr wr = one_sge_wr(wr_id, &sge, IBV_WR_RDMA_READ, IBV_SEND_SIGNALED);
  wr.wr.rdma.remote_addr = remote_address;
  wr.wr.rdma.rkey = rkey;
  return post(wr, "ibv_post_send(RDMA_READ)");
}

Status RcQueuePair::post_compare_and_swap(std::uint64_t wr_id, LocalBuffer result,
                                          std::uint64_t remote_address, std::uint32_t rkey,
                                          std::uint64_t expected, std::uint64_t desired) {
  return post_atomic(wr_id, result, remote_address, rkey,
                     AtomicOp::compare_and_swap(expected, desired));
}

Status RcQueuePair::post_fetch_and_add(std::uint64_t wr_id, LocalBuffer result,
                                       std::uint64_t remote_address, std::uint32_t rkey,
                                       std::uint64_t add) {
  return post_atomic(wr_id, result, remote_address, rkey, AtomicOp::add(add));
}

Status RcQueuePair::post_atomic(std::uint64_t wr_id, LocalBuffer result,
                                std::uint64_t remote_address, std::uint32_t rkey,
                                const AtomicOp& atomic) {
  const char* name = atomic.fetch_add ? "fetch-and-add" : "compare-and-swap";
  if (remote_address % 8 != 0 || result.length < 8) {
    return {ErrorCode::kInvalidArgument,
            std::string(name) + " needs an 8-byte-aligned remote word and 8 result bytes"};
  }
  ibv_sge sge = sge_of(LocalBuffer{result.address, 8, result.lkey});
  ibv_send_wr wr = one_sge_wr(
      wr_id, &sge, atomic.fetch_add ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP,
      IBV_SEND_SIGNALED);
  wr.wr.atomic.remote_addr = remote_address;
  wr.wr.atomic.rkey = rkey;
  wr.wr.atomic.compare_add = atomic.compare_add;
  wr.wr.atomic.swap = atomic.swap;
  return post(wr, atomic.fetch_add ? "ibv_post_send(ATOMIC_FETCH_AND_ADD)"
                                   : "ibv_post_send(ATOMIC_CMP_AND_SWP)");
}

Status post_srq_receive(ibv_srq* srq, std::uint64_t wr_id, LocalBuffer buffer) {
  ibv_sge sge{reinterpret_cast<std::uint64_t>(buffer.address), buffer.length, buffer.lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_srq_recv(srq, &wr, &bad); rc != 0) {
    return verbs_error("ibv_post_srq_recv", rc);
  }
  return Status::ok();
}

Result<MrPtr> register_memory(const Device& device, void* address, std::size_t length, int access) {
  MrPtr mr(ibv_reg_mr(device.pd(), address, length, access));
  if (!mr) return verbs_error("ibv_reg_mr(" + std::to_string(length) + " bytes)", errno);
  return mr;
}

}  // namespace tagwire::verbs
