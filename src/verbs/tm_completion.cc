#include "verbs/tm_completion.h"

namespace tagwire::verbs {

TmEvent classify_tm_completion(const TmCompletion& c) {
  TmEvent e;
  e.sync_requested = (c.flags & IBV_WC_TM_SYNC_REQ) != 0;
  if (c.status == IBV_WC_TM_RNDV_INCOMPLETE) {
    e.kind = TmEventKind::kRendezvousInSoftware;
    return e;
  }
  const bool operation =
      c.opcode == IBV_WC_TM_ADD || c.opcode == IBV_WC_TM_DEL || c.opcode == IBV_WC_TM_SYNC;
  if (c.status != IBV_WC_SUCCESS && !(operation && c.status == IBV_WC_TM_ERR)) {
    e.kind = TmEventKind::kFailed;
    e.ok = false;
    return e;
  }
  e.ok = c.status == IBV_WC_SUCCESS;
  const bool match = (c.flags & IBV_WC_TM_MATCH) != 0;
  const bool data = (c.flags & IBV_WC_TM_DATA_VALID) != 0;
  switch (c.opcode) {
    case IBV_WC_TM_ADD:
      e.kind = TmEventKind::kAddDone;
      break;
    case IBV_WC_TM_DEL:
      e.kind = TmEventKind::kDelDone;
      break;
    case IBV_WC_TM_SYNC:
      e.kind = TmEventKind::kSyncDone;
      break;
    case IBV_WC_TM_RECV:
      if (match && data) {
        e.kind = TmEventKind::kMatched;
      } else if (match) {
        e.kind = TmEventKind::kMatchedDataFollows;
      } else if (data) {
        e.kind = TmEventKind::kDataArrived;
      } else {
        e.kind = TmEventKind::kUnexpected;
      }
      break;
    case IBV_WC_RECV:
      e.kind = TmEventKind::kUnexpected;
      break;
    case IBV_WC_TM_NO_TAG:
      e.kind = TmEventKind::kUntagged;
      break;
    default:
      e.kind = TmEventKind::kFailed;
      e.ok = false;
      break;
  }
  return e;
}

}  // namespace tagwire::verbs
