// The engine's side of the NIC's tag matching (transport/nic_matching.h):
// what the NIC reports, turned into the matcher's book and the requests.
// The receives and sends themselves stay in engine.cc: with tag matching
// on, a send picks the tagged path and a receive flushes the matcher's
// NIC operations; everything else is the same protocol.
#include <string>

#include "common/log.h"
#include "engine/engine.h"

namespace tagwire::engine {

Result<Header> Engine::decode_tagged(std::span<const std::uint8_t> header,
                                     std::span<const std::uint8_t> payload) const {
  auto decoded = decode(header, payload, limits_);
  if (decoded && decoded->type != MessageType::kEager && decoded->type != MessageType::kRts) {
    return Status(ErrorCode::kProtocol, "a tagged message that is not EAGER or RTS");
  }
  return decoded;
}

void Engine::on_tag_match(std::uint64_t entry, std::span<const std::uint8_t> header,
                          std::span<const std::uint8_t> payload) {
  auto match = matching_.matcher().on_nic_match(entry);
  if (!match) {
    ++counters_.nic_errors;
    TW_ERROR("engine", "tag matching: " << match.status().to_string());
    return;
  }
  Request* r = requests_.find(match->receive_cookie);
  if (r == nullptr || r->kind != RequestKind::kReceive) {
    ++counters_.nic_errors;
    TW_ERROR("engine", "tag matching: the NIC matched entry " << entry << " of no live receive");
    return;
  }
  // A cancel (or a dead sender's withdrawal) under way lost to the NIC:
  // the receive completes with the message (match->cancel_lost).
  r->stop_awaiting(kNicDel);
  auto decoded = decode_tagged(header, payload);
  if (!decoded) {
    // The receive is consumed and the message unusable: say so on it.
    ++counters_.dropped_messages;
    note_error(r, Status(ErrorCode::kProtocol,
                         "the NIC matched a malformed message: " + decoded.status().to_string()));
    maybe_complete(r);
    return;
  }
  PendingMessage message = pending_from(*decoded);
  if (message.type == MessageType::kRts) message.data.assign(payload.begin(), payload.end());
  deliver(r, message, payload);
}

void Engine::on_tag_unexpected(std::span<const std::uint8_t> header,
                               std::span<const std::uint8_t> payload, bool sync_requested) {
  auto decoded = decode_tagged(header, payload);
  if (!decoded) {
    // The NIC counted it: so does software, or the counts part for good.
    matching_.matcher().on_unmatchable(sync_requested);
    ++counters_.dropped_messages;
    TW_WARN("engine", "dropped a tagged message: " << decoded.status().to_string());
    return;
  }
  on_envelope(*decoded, payload, sync_requested ? Arrival::kTaggedSyncRequested : Arrival::kTagged);
}

void Engine::on_tag_op_done(matching::NicOp::Kind kind, std::uint64_t entry, bool ok,
                            bool sync_requested) {
  switch (kind) {
    case matching::NicOp::Kind::kAdd:
      if (Status s = matching_.matcher().on_add_done(entry, ok, sync_requested); !s.is_ok()) {
        ++counters_.nic_errors;
        TW_ERROR("engine", "tag matching: " << s.to_string());
      }
      return;
    case matching::NicOp::Kind::kDel: {
      auto cancelled = matching_.matcher().on_del_done(entry, ok, sync_requested);
      if (!cancelled) {
        ++counters_.nic_errors;
        TW_ERROR("engine", "tag matching: " << cancelled.status().to_string());
        return;
      }
      if (!cancelled->has_value()) return;
      // The DEL won: the withdrawn receive is out of the NIC too.
      Request* r = requests_.find(**cancelled);
      if (r == nullptr || !r->awaits(kNicDel)) {
        ++counters_.nic_errors;
        TW_ERROR("engine", "tag matching: a DEL succeeded for no withdrawn receive");
        return;
      }
      const Status reason = r->withdraw_reason;
      complete_withdrawn(r, reason);
      return;
    }
    case matching::NicOp::Kind::kSync:
      matching_.matcher().on_sync_done(sync_requested);
      return;
  }
}

void Engine::on_tag_batch_end() {
  matching_.matcher().end_of_batch();
  flush_nic_ops();
}

}  // namespace tagwire::engine
