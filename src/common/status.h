// Status: the one error type that crosses Tagwire's layers.
//
// A Status is a code plus a human-readable message. Codes are chosen so that
// the MPI layer can map each one to exactly one MPI error class
// (see ErrorCode's comments); lower layers never include mpi.h.
#pragma once

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tagwire {

enum class ErrorCode : int {
  kOk = 0,
  kInvalidArgument,  // MPI_ERR_ARG
  kInvalidRank,      // MPI_ERR_RANK
  kInvalidTag,       // MPI_ERR_TAG
  kInvalidCount,     // MPI_ERR_COUNT
  kInvalidBuffer,    // MPI_ERR_BUFFER
  kInvalidComm,      // MPI_ERR_COMM
  kInvalidRequest,   // MPI_ERR_REQUEST
  kInvalidType,      // MPI_ERR_TYPE
  kInvalidOp,        // MPI_ERR_OP
  kInvalidGroup,     // MPI_ERR_GROUP
  kInvalidKeyval,    // MPI_ERR_KEYVAL
  kInvalidInfo,      // MPI_ERR_INFO (a bad info handle)
  kInfoKey,          // MPI_ERR_INFO_KEY: empty or too long
  kInfoValue,        // MPI_ERR_INFO_VALUE: too long
  kInfoNoKey,        // MPI_ERR_INFO_NOKEY
  kTruncate,         // MPI_ERR_TRUNCATE
  kInvalidWindow,    // MPI_ERR_WIN
  kRmaRange,         // MPI_ERR_RMA_RANGE: a put or get outside the target window
  kRmaSync,          // MPI_ERR_RMA_SYNC: RMA outside a fence epoch
  kNotFound,         // internal: a lookup found nothing (never reaches users as-is)
  kOutOfResources,   // MPI_ERR_NO_MEM / MPI_ERR_INTERN
  kConfig,           // MPI_ERR_OTHER: a TAGWIRE_* setting is wrong
  kUnsupported,      // MPI_ERR_UNSUPPORTED_OPERATION
  kTransport,        // MPI_ERR_OTHER: a verbs / UCX call failed
  kPeerFailed,       // MPI_ERR_PROC_FAILED-like: a peer died or timed out
  kProtocol,         // MPI_ERR_INTERN: a peer sent bytes that do not decode
  kInternal,         // MPI_ERR_INTERN: a bug in Tagwire
};

// Short stable name of a code, e.g. "invalid-rank"; used in messages and logs.
std::string_view error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  Status(ErrorCode code, std::string message)
      : code_(code), message_(std::make_unique<std::string>(std::move(message))) {}
  // An ok Status is a code and a null pointer: building, copying and
  // dropping one costs a few instructions, which matters because every
  // call on the message path makes several (the string was a tenth of an
  // 8-byte ping-pong's instructions).
  Status(const Status& other)
      : code_(other.code_),
        message_(other.message_ ? std::make_unique<std::string>(*other.message_) : nullptr) {}
  Status(Status&&) noexcept = default;
  Status& operator=(const Status& other) {
    if (this != &other) {
      code_ = other.code_;
      message_ = other.message_ ? std::make_unique<std::string>(*other.message_) : nullptr;
    }
    return *this;
  }
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status ok() { return {}; }

  bool is_ok() const { return code_ == ErrorCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_ ? *message_ : empty_message(); }

  // "invalid-rank: rank 7 is outside communicator of size 4"
  std::string to_string() const;

  // Prefixes the message with context, keeping the code: used when a lower
  // layer's error passes up through a layer that knows more about why.
  Status with_context(std::string_view context) const;

 private:
  static const std::string& empty_message();

  ErrorCode code_ = ErrorCode::kOk;
  std::unique_ptr<std::string> message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.is_ok() && "a Result built from a Status must carry an error");
  }

  bool is_ok() const { return value_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    assert(is_ok());
    return *value_;
  }
  const T& value() const& {
    assert(is_ok());
    return *value_;
  }
  T&& value() && {
    assert(is_ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace tagwire

// Returns early from the enclosing function with the error, if any.
#define TAGWIRE_RETURN_IF_ERROR(expr)                     \
  do {                                                    \
    ::tagwire::Status tagwire_status_ = (expr);           \
    if (!tagwire_status_.is_ok()) return tagwire_status_; \
  } while (0)
