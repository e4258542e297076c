#include "verbs/verbs_status.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace tagwire::verbs {

Status verbs_error(std::string_view call, int error) {
  std::string message(call);
  message += " failed: ";
  message += std::strerror(error);
  const ErrorCode code = error == ENOMEM || error == EAGAIN ? ErrorCode::kOutOfResources
                         : error == ENODEV || error == ENOSYS || error == EOPNOTSUPP
                             ? ErrorCode::kUnsupported
                             : ErrorCode::kTransport;
  return {code, std::move(message)};
}

Status completion_error(std::string_view what, const ibv_wc& wc) {
  std::string message(what);
  message += " completed with ";
  message += ibv_wc_status_str(wc.status);
  message += " (vendor error " + std::to_string(wc.vendor_err) + ")";
  // Retry exhaustion is the peer gone; the rest is a transport fault.
  const ErrorCode code = wc.status == IBV_WC_RETRY_EXC_ERR || wc.status == IBV_WC_RNR_RETRY_EXC_ERR
                             ? ErrorCode::kPeerFailed
                             : ErrorCode::kTransport;
  return {code, std::move(message)};
}

}  // namespace tagwire::verbs
