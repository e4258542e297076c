#include "engine/wire.h"

#include <cstddef>
#include <cstring>
#include <string>

#include "engine/slot_word.h"

namespace tagwire::engine {

namespace {

Status bad(std::string message) {
  return {ErrorCode::kProtocol, std::move(message)};
}

std::uint8_t allowed_flags(MessageType type) {
  switch (type) {
    case MessageType::kEager:
    case MessageType::kRts:
      return kFlagSync;
    case MessageType::kCancelReply:
    case MessageType::kCancelRequest:
      return kFlagCancelled;
    case MessageType::kAbort:
      return static_cast<std::uint8_t>(kFlagLeft | kFlagAbortSeen);
    case MessageType::kFin:
    case MessageType::kSyncAck:
      return 0;
  }
  return 0;
}

bool carries_envelope(MessageType type) {
  return type == MessageType::kEager || type == MessageType::kRts ||
         type == MessageType::kCancelRequest;
}

}  // namespace

static_assert(offsetof(Header, length) == kCompactEagerBytes,
              "the compact eager form is the header up to its length");

EncodedHeader encode(const Header& header) {
  EncodedHeader out;
  encode_into(header, &out);
  return out;
}

Result<Header> decode(std::span<const std::uint8_t> bytes, std::span<const std::uint8_t> payload,
                      const DecodeLimits& limits) {
  Header h;
  if (bytes.size() == kCompactEagerBytes) {
    if (decode_compact_eager(bytes, payload.size(), limits, &h)) return h;
    if (h.type != MessageType::kEager) {
      return bad("a compact header of type " + std::to_string(static_cast<int>(h.type)) +
                 " (only eager messages are compact)");
    }
  } else if (bytes.size() == sizeof(Header)) {
    std::memcpy(&h, bytes.data(), sizeof(Header));
  } else {
    return bad("header of " + std::to_string(bytes.size()) + " bytes, expected " +
               std::to_string(kCompactEagerBytes) + " or " + std::to_string(sizeof(Header)));
  }
  if (h.version != kWireVersion) return bad("wire version " + std::to_string(h.version));
  if (h.job_token != limits.job_token) return bad("job token does not match this job");
  auto type = static_cast<std::uint8_t>(h.type);
  if (type < static_cast<std::uint8_t>(MessageType::kEager) ||
      type > static_cast<std::uint8_t>(MessageType::kAbort)) {
    return bad("unknown message type " + std::to_string(type));
  }
  if ((h.flags & ~allowed_flags(h.type)) != 0) {
    return bad("flags " + std::to_string(h.flags) + " not valid for type " + std::to_string(type));
  }
  if (h.origin < 0 || h.origin >= limits.world_size) {
    return bad("origin rank " + std::to_string(h.origin) + " outside the job");
  }
  if (carries_envelope(h.type) && (h.source < 0 || h.tag < 0)) {
    return bad("negative source or tag in a message envelope");
  }
  if (h.slot != 0) {
    if (!carries_envelope(h.type) || h.slot > kSlotsPerPeer) {
      return bad("slot " + std::to_string(h.slot) + " not valid for type " + std::to_string(type));
    }
    if (!SlotWord::valid(h.slot_expected)) {
      return bad("slot word " + std::to_string(h.slot_expected) + " is not a descriptor");
    }
  } else if (h.slot_expected != 0) {
    return bad("slot word without a slot");
  }
  if (h.type == MessageType::kCancelRequest && (h.flags & kFlagCancelled) != 0 && h.slot == 0) {
    return bad("cancel notice that names no slot");
  }
  switch (h.type) {
    case MessageType::kEager:
      if (h.length != payload.size()) return bad("eager length disagrees with its payload");
      if (h.length > limits.max_eager) return bad("eager message above the eager limit");
      break;
    case MessageType::kRts:
      if (payload.empty() || payload.size() > limits.max_remote_key) {
        return bad("RTS remote key of " + std::to_string(payload.size()) + " bytes");
      }
      if (h.length > 0 && h.remote_address == 0) return bad("RTS with a null buffer address");
      break;
    default:
      if (!payload.empty()) return bad("control message with a payload");
      break;
  }
  return h;
}

}  // namespace tagwire::engine
