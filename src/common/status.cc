#include "common/status.h"

namespace tagwire {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid-argument";
    case ErrorCode::kInvalidRank:
      return "invalid-rank";
    case ErrorCode::kInvalidTag:
      return "invalid-tag";
    case ErrorCode::kInvalidCount:
      return "invalid-count";
    case ErrorCode::kInvalidBuffer:
      return "invalid-buffer";
    case ErrorCode::kInvalidComm:
      return "invalid-comm";
    case ErrorCode::kInvalidRequest:
      return "invalid-request";
    case ErrorCode::kInvalidType:
      return "invalid-type";
    case ErrorCode::kInvalidOp:
      return "invalid-op";
    case ErrorCode::kInvalidGroup:
      return "invalid-group";
    case ErrorCode::kInvalidKeyval:
      return "invalid-keyval";
    case ErrorCode::kInvalidInfo:
      return "invalid-info";
    case ErrorCode::kInvalidTopology:
      return "invalid-topology";
    case ErrorCode::kInvalidDims:
      return "invalid-dims";
    case ErrorCode::kInfoKey:
      return "info-key";
    case ErrorCode::kInfoValue:
      return "info-value";
    case ErrorCode::kInfoNoKey:
      return "info-no-key";
    case ErrorCode::kTruncate:
      return "truncate";
    case ErrorCode::kInvalidWindow:
      return "invalid-window";
    case ErrorCode::kRmaRange:
      return "rma-range";
    case ErrorCode::kRmaSync:
      return "rma-sync";
    case ErrorCode::kRmaShared:
      return "rma-shared";
    case ErrorCode::kRmaFlavor:
      return "rma-flavor";
    case ErrorCode::kRmaAttach:
      return "rma-attach";
    case ErrorCode::kNotFound:
      return "not-found";
    case ErrorCode::kOutOfResources:
      return "out-of-resources";
    case ErrorCode::kConfig:
      return "config";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kTransport:
      return "transport";
    case ErrorCode::kPeerFailed:
      return "peer-failed";
    case ErrorCode::kProtocol:
      return "protocol";
    case ErrorCode::kApplication:
      return "application";
    case ErrorCode::kConversion:
      return "conversion";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  std::string out(error_code_name(code_));
  if (!message().empty()) {
    out += ": ";
    out += message();
  }
  return out;
}

Status Status::prefixed(std::string_view context) const {
  std::string message(context);
  message += ": ";
  message += this->message();
  return {code_, std::move(message)};
}

const std::string& Status::empty_message() {
  static const std::string empty;
  return empty;
}

}  // namespace tagwire
