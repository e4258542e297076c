// UnexpectedQueue: messages that arrived before a receive matched them.
//
// Each message is threaded into four bins at once, keyed (c,s,t), (c,ANY,t),
// (c,s,ANY) and (c,ANY,ANY), each bin a FIFO in arrival order. A receive
// pattern, wildcards included, is itself one of those keys, so the earliest
// matching message is the head of exactly one bin: one lookup whatever the
// depth. Send cancel searches the (c,s,ANY) bin newest-first, as the IMPI
// protocol requires: a walk through that sender's queued messages, where
// an index by request id cost every queued message about 100 bytes
// (a flood queues millions; a cancel is rare).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "matching/bin_table.h"
#include "matching/envelope.h"
#include "matching/node_pool.h"
#include "matching/slot_list.h"

namespace tagwire::matching {

class UnexpectedQueue {
 public:
  void push(const IncomingMessage& message);

  // The earliest message that matches, left in place.
  const IncomingMessage* peek(const ReceivePattern& pattern) const;

  // The earliest message that matches, removed.
  std::optional<IncomingMessage> take(const ReceivePattern& pattern);

  // The newest message from `source` on `context` carrying this sender
  // request id, removed.
  std::optional<IncomingMessage> take_by_sender_request(ContextId context, Rank source,
                                                        std::uint64_t sender_request_id);

  std::size_t size() const { return pool_.live(); }

 private:
  // The hook of the (c,s,ANY) bin, which send cancel walks.
  static constexpr std::size_t kSourceHook = 2;

  // 80 bytes: the envelope's 40 and four slot hooks.
  struct Node {
    IncomingMessage message;
    std::array<SlotHook, 4> hooks;  // bins by pattern kind
  };

  // The four bin keys a message belongs to, in pattern_kind() order.
  static std::array<BinKey, 4> bin_keys(const Envelope& e);
  std::optional<IncomingMessage> remove(std::uint32_t slot);

  NodePool<Node> pool_;
  KeptBins<BinKey, SlotList, BinKeyHash> bins_;
};

}  // namespace tagwire::matching
