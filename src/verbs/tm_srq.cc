#include "verbs/tm_srq.h"

#include <cerrno>

#include "verbs/verbs_handles.h"
#include "verbs/verbs_status.h"

namespace tagwire::verbs {
namespace {

using matching::NicOp;

class VerbsTmSrq final : public TmSrq {
 public:
  explicit VerbsTmSrq(bool hardware) : hardware_(hardware) {}
  ~VerbsTmSrq() override {
    srq_.reset();  // before the CQ it reports to
    cq_.reset();
  }

  Status create(const Device& device, std::uint32_t buffers, std::uint32_t nic_entries,
                ibv_comp_channel* events) {
    ibv_cq_init_attr_ex cq_attr{};
    cq_attr.cqe = buffers * 2 + nic_entries * 4 + 64;
    cq_attr.channel = events;
    cq_attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM;
    if (hardware_) cq_attr.wc_flags |= IBV_WC_EX_WITH_TM_INFO;
    cq_.reset(ibv_create_cq_ex(device.context(), &cq_attr));
    if (!cq_) return verbs_error("ibv_create_cq_ex", errno);

    ibv_srq_init_attr_ex srq_attr{};
    srq_attr.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
    srq_attr.srq_type = IBV_SRQT_BASIC;
    srq_attr.pd = device.pd();
    srq_attr.attr.max_wr = buffers;
    srq_attr.attr.max_sge = 1;
    if (hardware_) {
      srq_attr.comp_mask |= IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
      srq_attr.srq_type = IBV_SRQT_TM;
      srq_attr.cq = cq();
      srq_attr.tm_cap.max_num_tags = nic_entries;
      srq_attr.tm_cap.max_ops = nic_entries * 2 + 16;
    }
    srq_.reset(ibv_create_srq_ex(device.context(), &srq_attr));
    if (!srq_) {
      return verbs_error(hardware_ ? "ibv_create_srq_ex(IBV_SRQT_TM)" : "ibv_create_srq_ex", errno);
    }
    return Status::ok();
  }

  Status post_buffer(std::uint64_t wr_id, LocalBuffer buffer) override {
    return post_srq_receive(srq_.get(), wr_id, buffer);
  }

  Result<std::uint32_t> post_op(const NicOp& op, LocalBuffer add_buffer,
                                std::uint32_t del_handle) override {
    ibv_ops_wr wr{};
    ibv_sge sge{};
    wr.wr_id = op.entry;
    wr.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC;
    wr.tm.unexpected_cnt = op.unexpected_count;
    switch (op.kind) {
      case NicOp::Kind::kAdd:
        sge = ibv_sge{reinterpret_cast<std::uint64_t>(add_buffer.address), add_buffer.length,
                      add_buffer.lkey};
        wr.opcode = IBV_WR_TAG_ADD;
        wr.tm.add.recv_wr_id = op.entry;
        wr.tm.add.sg_list = &sge;
        wr.tm.add.num_sge = 1;
        wr.tm.add.tag = op.pattern.tag;
        wr.tm.add.mask = op.pattern.mask;
        break;
      case NicOp::Kind::kDel:
        wr.opcode = IBV_WR_TAG_DEL;
        wr.tm.handle = del_handle;
        break;
      case NicOp::Kind::kSync:
        wr.opcode = IBV_WR_TAG_SYNC;
        break;
    }
    ibv_ops_wr* bad = nullptr;
    if (int rc = ibv_post_srq_ops(srq_.get(), &wr, &bad); rc != 0) {
      return verbs_error("ibv_post_srq_ops", rc);
    }
    return wr.tm.handle;
  }

  Status poll(unsigned max, std::vector<TmCompletion>* out) override {
    // One completion per start/end batch: the documented contract lets a
    // batch run until ibv_next_poll() says ENOENT and then wants
    // ibv_end_poll(), but rxe's provider (rdma-core 44) already closes the
    // batch inside that failing ibv_next_poll(), so the end_poll moves the
    // consumer index past the producer and the CQ -- and every QP on it --
    // goes to the error state. Seen on rxe0 in the VM; a single-entry batch
    // is correct under both readings.
    for (unsigned i = 0; i < max; ++i) {
      ibv_poll_cq_attr attr{};
      const int rc = ibv_start_poll(cq_.get(), &attr);
      if (rc == ENOENT) break;
      if (rc != 0) return verbs_error("ibv_start_poll", rc);
      TmCompletion c;
      c.wr_id = cq_->wr_id;
      c.status = cq_->status;
      c.opcode = ibv_wc_read_opcode(cq_.get());
      c.flags = static_cast<unsigned>(ibv_wc_read_wc_flags(cq_.get()));
      c.byte_len = ibv_wc_read_byte_len(cq_.get());
      c.qp_num = ibv_wc_read_qp_num(cq_.get());
      if (hardware_) {
        ibv_wc_tm_info info{};
        ibv_wc_read_tm_info(cq_.get(), &info);
        c.tag = info.tag;
        c.app_context = info.priv;
      }
      ibv_end_poll(cq_.get());
      out->push_back(c);
    }
    return Status::ok();
  }

  ibv_cq* cq() const override { return ibv_cq_ex_to_cq(cq_.get()); }
  ibv_srq* srq() const override { return srq_.get(); }

 private:
  bool hardware_;
  CqExPtr cq_;
  SrqPtr srq_;
};

}  // namespace

Result<std::unique_ptr<TmSrq>> create_verbs_tm_srq(const Device& device, bool hardware,
                                                   std::uint32_t buffers, std::uint32_t nic_entries,
                                                   ibv_comp_channel* events) {
  auto srq = std::make_unique<VerbsTmSrq>(hardware);
  TAGWIRE_RETURN_IF_ERROR(srq->create(device, buffers, nic_entries, events));
  return std::unique_ptr<TmSrq>(std::move(srq));
}

}  // namespace tagwire::verbs
