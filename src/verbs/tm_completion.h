// What a completion on a tag-matching SRQ's CQ means, decided from the
// fields the verbs contract gives it (opcode, status, flags), apart from
// the polling so that the mapping is tested on any machine:
//   IBV_WC_TM_ADD / _DEL / _SYNC       an operation finished; status
//                                      IBV_WC_TM_ERR means it failed (a DEL
//                                      whose entry the NIC already consumed)
//   IBV_WC_TM_RECV + MATCH + DATA_VALID an expected eager message: the data is
//                                      in the receive's own buffer
//   IBV_WC_TM_RECV + MATCH             a rendezvous request the NIC matched;
//                                      it reads the data itself
//   IBV_WC_TM_RECV + DATA_VALID        that read finished
//   IBV_WC_TM_RECV, no MATCH/DATA_VALID unexpected: TMH and all in an SRQ
//                                      buffer, for software to match
//   status IBV_WC_TM_RNDV_INCOMPLETE   matched, but software must do the read
//   IBV_WC_TM_NO_TAG                   a message without a tag (control)
//   IBV_WC_RECV                        a plain SRQ (no tag matching): every
//                                      tagged message reaches software
// IBV_WC_TM_SYNC_REQ on any of them asks for a TAG_SYNC.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace tagwire::verbs {

struct TmCompletion {
  std::uint64_t wr_id = 0;
  ibv_wc_status status = IBV_WC_SUCCESS;
  ibv_wc_opcode opcode = IBV_WC_RECV;
  unsigned flags = 0;
  std::uint32_t byte_len = 0;
  std::uint32_t qp_num = 0;  // the local QP the message arrived on
  std::uint64_t tag = 0;     // from the TMH, where the NIC reports it
  std::uint32_t app_context = 0;
};

enum class TmEventKind {
  kAddDone,
  kDelDone,
  kSyncDone,
  kMatched,
  kMatchedDataFollows,
  kDataArrived,
  kRendezvousInSoftware,
  kUnexpected,
  kUntagged,
  kFailed,
};

struct TmEvent {
  TmEventKind kind = TmEventKind::kFailed;
  bool ok = true;  // kAddDone / kDelDone / kSyncDone: false on IBV_WC_TM_ERR
  bool sync_requested = false;
};

TmEvent classify_tm_completion(const TmCompletion& c);

}  // namespace tagwire::verbs
