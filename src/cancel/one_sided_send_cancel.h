// OneSidedSendCancel: send cancel decided by the sender's remote
// compare-and-swap on the message's slot descriptor at the receiver
// (TAGWIRE_CANCEL_MODE=onesided; docs/architecture.md §4). A message that
// went without a slot (all of them busy towards its receiver) is cancelled
// the agent's way, which this class inherits.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "cancel/agent_send_cancel.h"
#include "cancel/sender_slots.h"
#include "transport/transport.h"

namespace tagwire::cancel {

class OneSidedSendCancel final : public AgentSendCancel {
 public:
  explicit OneSidedSendCancel(engine::CancelSite& site) : AgentSendCancel(site) {}

  std::string_view name() const override { return "one-sided"; }
  bool arbitrates_matches() const override { return true; }
  Status publish(std::vector<std::uint8_t>* out) override;
  Status take_peer(int rank, std::span<const std::uint8_t>* entry) override;
  void close() override { table_.reset(); }

  Status cancel(engine::Request* r) override;
  std::optional<SlotTicket> take_slot(int world_dest) override;
  void give_back(int world_dest, const SlotTicket& ticket) override;

  void on_cancel_request(const engine::Header& h) override;
  bool admit(const engine::Header& h, const matching::Envelope& envelope) override;
  void settle(const matching::ReceivePattern& pattern, bool claim_head) override;

 private:
  // Our kSlotsPerPeer words in one receiver's table, and what we know of them.
  struct RemoteSlots {
    OneSidedSendCancel* owner = nullptr;
    int rank = 0;
    std::uint64_t address = 0;
    std::vector<std::uint8_t> key;
    SenderSlots slots;
    std::vector<std::uint64_t> read_back;
    bool reading = false;
  };
  struct SlotCancel;

  void on_taken(const engine::PendingMessage& m) override;
  void read_back_slots(int world_dest);
  Status cancel_by_slot(engine::Request* r);
  void on_slot_cancel_done(SlotCancel& op, const Status& s);
  static void slot_cancel_done(void* ctx, const Status& s);
  static void slot_read_done(void* ctx, const Status& s);
  // The receiver's word for a message from `origin` in slot `slot` (1-based).
  std::uint64_t* slot_word(int origin, std::uint8_t slot);
  // Which slot descriptor a message holds: from its header on arrival, or
  // from the unexpected queue's copy (slot 0: none).
  struct HeldSlot {
    int origin = 0;
    std::uint8_t slot = 0;
    std::uint32_t expected = 0;
    static HeldSlot of(const engine::Header& h) { return {h.origin, h.slot, h.slot_expected}; }
    static HeldSlot of(const engine::PendingMessage& m) {
      return {m.origin, m.slot, m.slot_expected};
    }
  };
  // The receiver's claim: true if the message may be delivered.
  bool claim(HeldSlot held);
  // Its slot descriptor no longer expects it: its sender cancelled it.
  bool undeliverable(HeldSlot held);
  // Takes a cancelled message out of the unexpected queue (if still there).
  void drop_cancelled(matching::ContextId context, matching::Rank source,
                      std::uint64_t sender_request_id);

  // This rank's table (kSlotsPerPeer words per sender, registered for
  // remote atomics) and, per receiver, our part of its table.
  std::unique_ptr<transport::Registration> table_;
  std::vector<RemoteSlots> remote_slots_;  // by world rank
};

}  // namespace tagwire::cancel
