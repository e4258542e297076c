// ContractTmSrq: a TmSrq that plays a tag-matching NIC by rdma-core's
// contract (tests/unit/contract_nic.h) over a real plain SRQ, so that the
// verbs transport's whole NIC-matching path -- two QPs per peer, SENDs with
// a TMH, the SRQ's buffers, the NicMatchingPort, the engine -- runs on a
// device without tag matching (rxe0). Only the matching is the model's:
// every byte crosses real QPs into registered buffers, as on a ConnectX.
//
// poll() first runs the operations posted so far (a NIC runs them when it
// likes; this is one of its orders), then takes what the plain SRQ
// received, in order. A NO_TAG message goes up as IBV_WC_TM_NO_TAG. A
// tagged one goes to the model: if an entry takes it, what follows its TMH
// is copied into the entry's buffer (the NIC's scatter) and the SRQ buffer
// goes back to the SRQ; else it is reported unexpected in its buffer.
#pragma once

#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "../unit/contract_nic.h"
#include "verbs/tm_header.h"
#include "verbs/tm_srq.h"

namespace tagwire::verbs::testing {

using matching::testing::ContractNic;

// The CQ entry a ConnectX writes for a completion of the model's, but for
// where a message's bytes go (the caller's part).
inline TmCompletion tm_completion_of(const ContractNic::Completion& n) {
  using Kind = ContractNic::Completion::Kind;
  TmCompletion c;
  if (n.sync_requested) c.flags |= IBV_WC_TM_SYNC_REQ;
  c.status = n.ok ? IBV_WC_SUCCESS : IBV_WC_TM_ERR;
  switch (n.kind) {
    case Kind::kAdd:
    case Kind::kDel:
    case Kind::kSync:
      c.opcode = n.kind == Kind::kAdd   ? IBV_WC_TM_ADD
                 : n.kind == Kind::kDel ? IBV_WC_TM_DEL
                                        : IBV_WC_TM_SYNC;
      c.wr_id = n.entry;
      break;
    case Kind::kMatch:
      c.opcode = IBV_WC_TM_RECV;
      c.flags |= IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID;
      c.wr_id = n.entry;
      c.tag = n.message.nic_tag;
      break;
    case Kind::kUnexpected:
      c.opcode = IBV_WC_TM_RECV;
      c.tag = n.message.nic_tag;
      break;
  }
  return c;
}

class ContractTmSrq final : public TmSrq {
 public:
  static Result<std::unique_ptr<TmSrq>> create(const Device& device, std::uint32_t buffers,
                                               ContractNic::StaleAdd stale,
                                               std::uint32_t sync_request_every,
                                               ibv_comp_channel* events = nullptr) {
    // Every arrival is a completion on the plain SRQ's CQ, so it raises the
    // channel's event as the NIC's report of it would.
    auto plain = create_verbs_tm_srq(device, /*hardware=*/false, buffers, 0, events);
    if (!plain) return plain.status();
    return std::unique_ptr<TmSrq>(
        new ContractTmSrq(std::move(plain).value(), stale, sync_request_every));
  }

  Status post_buffer(std::uint64_t wr_id, LocalBuffer buffer) override {
    buffers_[wr_id] = buffer;
    return plain_->post_buffer(wr_id, buffer);
  }
  Result<std::uint32_t> post_op(const matching::NicOp& op, LocalBuffer add_buffer,
                                std::uint32_t del_handle) override {
    nic_.submit({op});
    if (op.kind != matching::NicOp::Kind::kAdd) return del_handle;
    add_buffers_[op.entry] = add_buffer;
    return next_handle_++;
  }
  Status poll(unsigned max, std::vector<TmCompletion>* out) override {
    while (nic_.has_pending_ops()) nic_.execute_one();
    std::vector<TmCompletion> arrived;
    TAGWIRE_RETURN_IF_ERROR(plain_->poll(max, &arrived));
    for (const TmCompletion& c : arrived) {
      take_model_completions(out);  // what the NIC did before this arrival
      if (c.status != IBV_WC_SUCCESS) {
        out->push_back(c);  // a flush at teardown: as the device said it
        continue;
      }
      TAGWIRE_RETURN_IF_ERROR(arrive(c, out));
    }
    take_model_completions(out);
    return Status::ok();
  }
  ibv_cq* cq() const override { return plain_->cq(); }
  ibv_srq* srq() const override { return plain_->srq(); }

 private:
  ContractTmSrq(std::unique_ptr<TmSrq> plain, ContractNic::StaleAdd stale,
                std::uint32_t sync_request_every)
      : plain_(std::move(plain)), nic_(stale, sync_request_every) {}

  Status arrive(const TmCompletion& c, std::vector<TmCompletion>* out) {
    auto b = buffers_.find(c.wr_id);
    if (b == buffers_.end()) {
      return {ErrorCode::kInternal, "contract SRQ: a message in a buffer never posted"};
    }
    const std::span<const std::uint8_t> bytes(static_cast<const std::uint8_t*>(b->second.address),
                                              c.byte_len);
    const auto tmh = decode_tm_header(bytes);
    if (!tmh || tmh->op != IBV_TMH_EAGER) {
      // NO_TAG (or no TMH at all): the NIC hands it to software as it is.
      TmCompletion n = c;
      n.opcode = IBV_WC_TM_NO_TAG;
      out->push_back(n);
      return Status::ok();
    }
    nic_.arrive({tmh->tag, c.wr_id});
    while (!nic_.cq.empty()) {
      const ContractNic::Completion done = nic_.cq.front();
      nic_.cq.pop_front();
      TmCompletion n = tm_completion_of(done);
      if (done.kind == ContractNic::Completion::Kind::kMatch) {
        // Into the entry's buffer, TMH stripped; the SRQ buffer is free.
        const LocalBuffer into = add_buffers_.at(done.entry);
        const std::span<const std::uint8_t> body = bytes.subspan(kTmHeaderBytes);
        if (body.size() > into.length) {
          return {ErrorCode::kInternal, "contract SRQ: a match longer than its entry's buffer"};
        }
        std::memcpy(into.address, body.data(), body.size());
        n.byte_len = static_cast<std::uint32_t>(body.size());
        n.app_context = tmh->app_context;
        TAGWIRE_RETURN_IF_ERROR(plain_->post_buffer(c.wr_id, b->second));
      } else if (done.kind == ContractNic::Completion::Kind::kUnexpected) {
        n.wr_id = c.wr_id;  // in its SRQ buffer, TMH and all
        n.byte_len = c.byte_len;
      }
      n.qp_num = c.qp_num;
      out->push_back(n);
    }
    return Status::ok();
  }

  void take_model_completions(std::vector<TmCompletion>* out) {
    while (!nic_.cq.empty()) {
      out->push_back(tm_completion_of(nic_.cq.front()));
      nic_.cq.pop_front();
    }
  }

  std::unique_ptr<TmSrq> plain_;
  ContractNic nic_;
  std::unordered_map<std::uint64_t, LocalBuffer> buffers_;      // SRQ buffers by wr_id
  std::unordered_map<std::uint64_t, LocalBuffer> add_buffers_;  // entry buffers by entry
  std::uint32_t next_handle_ = 1;
};

}  // namespace tagwire::verbs::testing
