// TmSrq: what NicMatchingPort does to its shared receive queue and the CQ
// that reports on it, as a small ops table (rdma-core's provider shape):
//  - VerbsTmSrq (create_verbs_tm_srq): a tag-matching SRQ (IBV_SRQT_TM,
//    ibv_post_srq_ops) or a plain one, and the extended CQ it reports to;
//  - in tests, a scripted SRQ that plays the NIC by the contract, so the
//    port's bookkeeping is driven through the completion sequences no
//    device here can produce (tests/unit/nic_matching_port_test.cc), or a
//    contract SRQ over a plain one that lets the whole path run on rxe0
//    (tests/verbs/contract_tm_srq.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "matching/nic_matcher.h"
#include "verbs/device.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/tm_completion.h"

namespace tagwire::verbs {

class TmSrq {
 public:
  virtual ~TmSrq() = default;
  // An SRQ buffer for messages the NIC does not match (wr_id: its index).
  virtual Status post_buffer(std::uint64_t wr_id, LocalBuffer buffer) = 0;
  // One TAG_ADD / TAG_DEL / TAG_SYNC, signaled, with the unexpected count.
  // kAdd places a match in `add_buffer` and returns the NIC's handle for
  // the entry; kDel names the entry by `del_handle`.
  virtual Result<std::uint32_t> post_op(const matching::NicOp& op, LocalBuffer add_buffer,
                                        std::uint32_t del_handle) = 0;
  // Up to `max` completions, oldest first.
  virtual Status poll(unsigned max, std::vector<TmCompletion>* out) = 0;
  // The verbs objects, for QPs to attach to (null in tests).
  virtual ibv_cq* cq() const { return nullptr; }
  virtual ibv_srq* srq() const { return nullptr; }
};

// `hardware`: a TM-SRQ holding up to `nic_entries` tags (needs IBV_TM_CAP_RC).
// `events`: the completion channel its CQ raises events on once armed
// (ibv_req_notify_cq on cq()), so that a thread asleep on the channel wakes
// for a tagged message as for any other; null: no events.
Result<std::unique_ptr<TmSrq>> create_verbs_tm_srq(const Device& device, bool hardware,
                                                   std::uint32_t buffers, std::uint32_t nic_entries,
                                                   ibv_comp_channel* events = nullptr);

}  // namespace tagwire::verbs
