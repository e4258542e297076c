// What the engine asks of the send-cancel layer (src/cancel/), and what it
// lends it. The layer sits above the engine: it includes this header, the
// engine never includes the layer. Whoever creates an engine hands it a
// SendCancelLayer (src/cancel/send_cancel_factory.h gives the one that
// reads TAGWIRE_CANCEL_MODE), and the engine calls its create once its
// transport is up, before the address exchange.
//
// Everything here runs under the engine's lock: on the application's
// thread inside an MPI call, or on the helper thread (the cancel agent).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/settings.h"
#include "common/status.h"
#include "engine/engine_config.h"
#include "engine/slot_word.h"
#include "engine/wire.h"
#include "matching/envelope.h"

namespace tagwire::transport {
class Transport;
}  // namespace tagwire::transport

namespace tagwire::engine {

struct EngineCounters;
class MatchingState;
struct Request;

// The engine's face towards the cancel layer: the few things a cancel may
// read or do. Engine implements it.
class CancelSite {
 public:
  virtual transport::Transport& cancel_transport() = 0;
  virtual MatchingState& cancel_matching() = 0;
  virtual EngineCounters& cancel_counters() = 0;
  // The live request with this id (a send's own id), or null.
  virtual Request* cancel_find(std::uint64_t request_id) = 0;
  // Sends now (an MPI call's context).
  virtual Status cancel_send_header(int world_peer, const Header& h) = 0;
  // Sends once the transport's callback has returned (a completion's context).
  virtual void cancel_defer_header(int world_peer, const Header& h) = 0;
  virtual void cancel_send_control(int world_peer, MessageType type, std::uint64_t request_id,
                                   std::uint8_t flags) = 0;
  // Completes the request if nothing is outstanding any more.
  virtual void cancel_maybe_complete(Request* r) = 0;
  virtual bool cancel_peer_dead(int world_rank) const = 0;
  // This rank and the job's size (known before MPI_COMM_WORLD exists).
  virtual int cancel_rank() const = 0;
  virtual int cancel_size() const = 0;

 protected:
  ~CancelSite() = default;
};

// One way of cancelling sends (MPI_Cancel of a send, and the receiver's
// side of it). Two live in src/cancel/: the cancel agent's request / reply
// and the one-sided slot descriptors.
class SendCancel {
 public:
  virtual ~SendCancel() = default;
  virtual std::string_view name() const = 0;

  // True if every match must first win the message's slot descriptor: the
  // engine then calls take_slot, admit and settle, keeps messages off the
  // NIC's matching and off the request-less receive path.
  virtual bool arbitrates_matches() const { return false; }

  // Start-up, inside the address exchange: what this rank publishes beside
  // its address, and a peer's part of the same (advance `entry` past it).
  virtual Status publish(std::vector<std::uint8_t>* out) {
    (void)out;
    return Status::ok();
  }
  virtual Status take_peer(int rank, std::span<const std::uint8_t>* entry) {
    (void)rank;
    (void)entry;
    return Status::ok();
  }
  // Finalize: no peer may reach what publish handed out any more.
  virtual void close() {}

  // --- sender
  // MPI_Cancel of an active send request.
  virtual Status cancel(Request* r) = 0;
  // A slot descriptor for a new message to `world_dest` (none: it goes
  // without one), and one given back by a message that never left.
  virtual std::optional<SlotTicket> take_slot(int world_dest) {
    (void)world_dest;
    return std::nullopt;
  }
  virtual void give_back(int world_dest, const SlotTicket& ticket) {
    (void)world_dest;
    (void)ticket;
  }

  // --- receiver
  virtual void on_cancel_request(const Header& h) = 0;  // CANCEL_REQUEST
  virtual void on_cancel_reply(const Header& h) = 0;    // CANCEL_REPLY
  // A slotted EAGER or RTS on arrival: false if it must be dropped (its
  // sender cancelled it, or it would match a receive and lost the slot).
  virtual bool admit(const Header& h, const matching::Envelope& envelope) {
    (void)h;
    (void)envelope;
    return true;
  }
  // Before a receive or probe looks at what `pattern` would take: drops
  // cancelled messages at the head; with `claim_head`, claims the one left.
  virtual void settle(const matching::ReceivePattern& pattern, bool claim_head) {
    (void)pattern;
    (void)claim_head;
  }
};

// The layer as the engine is handed it: how to make it, and the settings it
// reads out of Config::settings (known to a process beside the engine's).
struct SendCancelLayer {
  Result<std::unique_ptr<SendCancel>> (*create)(const Config& config, CancelSite& site) = nullptr;
  SettingTable settings;
};

}  // namespace tagwire::engine
