// Status: the one error type that crosses Tagwire's layers.
//
// A Status is a code plus a human-readable message. A code says what went
// wrong, not who reports it or how: the MPI layer maps each code to one MPI
// error class in one table (mpi_api/state.cc, error_class()), and no layer
// below it knows MPI's classes.
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
  // An argument no other code describes.
  kInvalidArgument,
  // A named object or value of the messaging model is not valid: a rank
  // outside the group, a tag out of range, a count, a buffer, a
  // communicator, a request, a datatype, a reduction operation, a group, an
  // attribute key, an info object, a one-sided window.
  kInvalidRank,
  kInvalidTag,
  kInvalidCount,
  kInvalidBuffer,
  kInvalidComm,
  kInvalidRequest,
  kInvalidType,
  kInvalidOp,
  kInvalidGroup,
  kInvalidKeyval,
  kInvalidInfo,
  kInvalidTopology,  // a communicator without the topology the call needs
  kInvalidDims,      // a dimension or grid that does not fit
  kInfoKey,          // an info key empty or too long
  kInfoValue,        // an info value too long
  kInfoNoKey,        // an info key that is not there
  kTruncate,         // a message longer than the buffer that takes it
  kInvalidWindow,
  kRmaRange,   // a put or get outside the target window
  kRmaSync,    // a put or get outside an access epoch
  kRmaShared,  // a shared-memory window over ranks that cannot share memory
  kRmaFlavor,  // a window call that its kind of window does not have
  kRmaAttach,  // memory that cannot be attached to a dynamic window
  kNotFound,   // a lookup found nothing (callers turn it into something better)
  kOutOfResources,
  kConfig,       // a TAGWIRE_* setting is wrong, or does not fit the job
  kUnsupported,  // asked of a layer or device that cannot do it
  kTransport,    // a verbs / UCX / system call failed
  kPeerFailed,   // a peer died, left, or stayed silent past its time
  kProtocol,     // a peer sent bytes that do not decode
  kApplication,  // the application's own callback reported a failure
  kConversion,   // a value the data representation asked for cannot hold
  kInternal,     // a bug in Tagwire
};

// Short stable name of a code, e.g. "invalid-rank"; used in messages and logs.
std::string_view error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  Status(ErrorCode code, std::string message)
      : code_(code), message_(std::make_shared<const std::string>(std::move(message))) {}
  // An ok Status is a code and null pointers: building, copying and
  // dropping one costs a few instructions, which matters because every
  // call on the message path makes several (the string was a tenth of an
  // 8-byte ping-pong's instructions). An error's message is immutable and
  // shared by its copies: when a peer dies, each of thousands of pending
  // requests takes a copy of one error without allocating.
  Status(const Status&) = default;
  Status(Status&&) noexcept = default;
  Status& operator=(const Status&) = default;
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
  // Inline for the ok case, which every layer passes up on its success
  // path (it was a call and a copy: ~10 instructions each, three times in
  // an 8-byte MPI_Win_lock + MPI_Put + MPI_Win_unlock).
  Status with_context(std::string_view context) const {
    return is_ok() ? Status() : prefixed(context);
  }

 private:
  static const std::string& empty_message();
  Status prefixed(std::string_view context) const;

  ErrorCode code_ = ErrorCode::kOk;
  std::shared_ptr<const std::string> message_;
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
