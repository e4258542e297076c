#include "bootstrap/frame_io.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace tagwire::bootstrap {

namespace {

Status write_all(int fd, const void* data, std::size_t length) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (length > 0) {
    // MSG_NOSIGNAL: a launcher or peer that has gone is an error to
    // report, not a SIGPIPE that kills this rank; write() for a descriptor
    // that is not a socket.
    ssize_t n = ::send(fd, p, length, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd, p, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return {ErrorCode::kPeerFailed,
              std::string("bootstrap write failed: ") + std::strerror(errno)};
    }
    p += n;
    length -= static_cast<std::size_t>(n);
  }
  return Status::ok();
}

Status read_all(int fd, void* data, std::size_t length) {
  auto* p = static_cast<std::uint8_t*>(data);
  while (length > 0) {
    ssize_t n = ::read(fd, p, length);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return {ErrorCode::kPeerFailed, "bootstrap connection closed"};
    if (n < 0) {
      return {ErrorCode::kPeerFailed,
              std::string("bootstrap read failed: ") + std::strerror(errno)};
    }
    p += n;
    length -= static_cast<std::size_t>(n);
  }
  return Status::ok();
}

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  std::uint8_t b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

}  // namespace

Status write_frame(int fd, std::span<const std::uint8_t> payload) {
  if (payload.size() > kMaxFrame) return {ErrorCode::kInvalidArgument, "bootstrap frame too large"};
  auto length = static_cast<std::uint32_t>(payload.size());
  TAGWIRE_RETURN_IF_ERROR(write_all(fd, &length, sizeof(length)));
  return write_all(fd, payload.data(), payload.size());
}

Result<std::vector<std::uint8_t>> read_frame(int fd) {
  std::uint32_t length = 0;
  TAGWIRE_RETURN_IF_ERROR(read_all(fd, &length, sizeof(length)));
  if (length > kMaxFrame) return Status(ErrorCode::kProtocol, "bootstrap frame too large");
  std::vector<std::uint8_t> payload(length);
  TAGWIRE_RETURN_IF_ERROR(read_all(fd, payload.data(), length));
  return payload;
}

Result<bool> FrameReader::read_available(int fd) {
  // The frames taken so far go before more bytes come: a client that sends
  // frame after frame, each read ending mid-frame, keeps one frame here.
  buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
  start_ = 0;
  for (;;) {
    std::uint8_t chunk[65536];
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n > 0) {
      buffer_.insert(buffer_.end(), chunk, chunk + n);
      continue;
    }
    if (n == 0) return true;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
    return Status(ErrorCode::kPeerFailed,
                  std::string("bootstrap read failed: ") + std::strerror(errno));
  }
}

Result<std::optional<std::vector<std::uint8_t>>> FrameReader::next() {
  std::uint32_t length = 0;
  if (pending() < sizeof(length)) return std::optional<std::vector<std::uint8_t>>();
  std::memcpy(&length, buffer_.data() + start_, sizeof(length));
  if (length > kMaxFrame) return Status(ErrorCode::kProtocol, "bootstrap frame too large");
  if (pending() < sizeof(length) + length) return std::optional<std::vector<std::uint8_t>>();
  const auto* begin = buffer_.data() + start_ + sizeof(length);
  std::vector<std::uint8_t> frame(begin, begin + length);
  start_ += sizeof(length) + length;
  return std::optional<std::vector<std::uint8_t>>(std::move(frame));
}

std::vector<std::uint8_t> pack_table(const std::vector<std::vector<std::uint8_t>>& entries) {
  std::vector<std::uint8_t> out;
  put_u32(out, static_cast<std::uint32_t>(entries.size()));
  for (const auto& e : entries) {
    put_u32(out, static_cast<std::uint32_t>(e.size()));
    out.insert(out.end(), e.begin(), e.end());
  }
  return out;
}

Result<std::vector<std::vector<std::uint8_t>>> unpack_table(std::span<const std::uint8_t> bytes) {
  auto take_u32 = [&](std::uint32_t* v) {
    if (bytes.size() < 4) return false;
    std::memcpy(v, bytes.data(), 4);
    bytes = bytes.subspan(4);
    return true;
  };
  std::uint32_t count = 0;
  if (!take_u32(&count) || count > kMaxFrame / 4) {
    return Status(ErrorCode::kProtocol, "malformed bootstrap table");
  }
  std::vector<std::vector<std::uint8_t>> entries(count);
  for (auto& e : entries) {
    std::uint32_t length = 0;
    if (!take_u32(&length) || length > bytes.size()) {
      return Status(ErrorCode::kProtocol, "malformed bootstrap table entry");
    }
    e.assign(bytes.begin(), bytes.begin() + length);
    bytes = bytes.subspan(length);
  }
  if (!bytes.empty()) return Status(ErrorCode::kProtocol, "trailing bytes in bootstrap table");
  return entries;
}

}  // namespace tagwire::bootstrap
