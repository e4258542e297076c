// Turning UCX results into Status.
#pragma once

#include <ucs/type/status.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace tagwire::ucx {

inline Status ucx_error(std::string_view call, ucs_status_t status) {
  std::string message(call);
  message += " failed: ";
  message += ucs_status_string(status);
  // A peer's shared memory that is gone (UCS_ERR_SHMEM_SEGMENT) is, over
  // UCX's sm lanes, a peer that exited: sends queued to it end so.
  ErrorCode code = status == UCS_ERR_NO_MEMORY ? ErrorCode::kOutOfResources
                   : (status == UCS_ERR_ENDPOINT_TIMEOUT || status == UCS_ERR_CONNECTION_RESET ||
                      status == UCS_ERR_UNREACHABLE || status == UCS_ERR_SHMEM_SEGMENT)
                       ? ErrorCode::kPeerFailed
                       : ErrorCode::kTransport;
  return {code, std::move(message)};
}

}  // namespace tagwire::ucx
