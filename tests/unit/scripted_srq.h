// ScriptedSrq: a TmSrq that records what was posted and reports what the
// test puts in its CQ, so that the code above an SRQ is driven through
// completion sequences no device here produces.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "matching/nic_matcher.h"
#include "verbs/tm_srq.h"

namespace tagwire::verbs::testing {

// The NIC's side of the SRQ: what was posted, and the CQ it reports to.
class ScriptedSrq final : public TmSrq {
 public:
  struct Op {
    matching::NicOp op;
    LocalBuffer add_buffer;
    std::uint32_t handle = 0;
  };
  Status post_buffer(std::uint64_t wr_id, LocalBuffer buffer) override {
    buffers.push_back({wr_id, buffer});
    return Status::ok();
  }
  Result<std::uint32_t> post_op(const matching::NicOp& op, LocalBuffer add_buffer,
                                std::uint32_t del_handle) override {
    const std::uint32_t handle =
        op.kind == matching::NicOp::Kind::kAdd ? next_handle++ : del_handle;
    ops.push_back({op, add_buffer, handle});
    return handle;
  }
  Status poll(unsigned max, std::vector<TmCompletion>* out) override {
    for (unsigned i = 0; i < max && !cq.empty(); ++i) {
      out->push_back(cq.front());
      cq.pop_front();
    }
    return Status::ok();
  }

  std::deque<std::pair<std::uint64_t, LocalBuffer>> buffers;  // posted, not yet used
  std::vector<Op> ops;
  std::deque<TmCompletion> cq;
  std::uint32_t next_handle = 100;
};

}  // namespace tagwire::verbs::testing
