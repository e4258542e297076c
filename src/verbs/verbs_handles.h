// RAII owners for verbs and rdma_cm objects: each is released with the
// matching ibv_* / rdma_* call, in the one place that knows how.
// Destruction order is the owner's job (QPs before CQs before the PD before
// the context; cm ids before their event channel).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <memory>

namespace tagwire::verbs {

struct DeviceListDeleter {
  void operator()(ibv_device** l) const { ibv_free_device_list(l); }
};
using DeviceListPtr = std::unique_ptr<ibv_device*, DeviceListDeleter>;

struct ContextDeleter {
  void operator()(ibv_context* c) const { ibv_close_device(c); }
};
using ContextPtr = std::unique_ptr<ibv_context, ContextDeleter>;

struct PdDeleter {
  void operator()(ibv_pd* p) const { ibv_dealloc_pd(p); }
};
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;

struct CompChannelDeleter {
  void operator()(ibv_comp_channel* c) const { ibv_destroy_comp_channel(c); }
};
using CompChannelPtr = std::unique_ptr<ibv_comp_channel, CompChannelDeleter>;

struct CqDeleter {
  void operator()(ibv_cq* c) const { ibv_destroy_cq(c); }
};
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;

struct QpDeleter {
  void operator()(ibv_qp* q) const { ibv_destroy_qp(q); }
};
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;

// An extended CQ (ibv_create_cq_ex) is destroyed through its ibv_cq.
struct CqExDeleter {
  void operator()(ibv_cq_ex* c) const { ibv_destroy_cq(ibv_cq_ex_to_cq(c)); }
};
using CqExPtr = std::unique_ptr<ibv_cq_ex, CqExDeleter>;

struct SrqDeleter {
  void operator()(ibv_srq* s) const { ibv_destroy_srq(s); }
};
using SrqPtr = std::unique_ptr<ibv_srq, SrqDeleter>;

struct MrDeleter {
  void operator()(ibv_mr* m) const { ibv_dereg_mr(m); }
};
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;

struct EventChannelDeleter {
  void operator()(rdma_event_channel* c) const { rdma_destroy_event_channel(c); }
};
using EventChannelPtr = std::unique_ptr<rdma_event_channel, EventChannelDeleter>;

struct CmIdDeleter {
  void operator()(rdma_cm_id* id) const { rdma_destroy_id(id); }
};
using CmIdPtr = std::unique_ptr<rdma_cm_id, CmIdDeleter>;

}  // namespace tagwire::verbs
