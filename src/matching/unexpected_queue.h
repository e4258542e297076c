// UnexpectedQueue: messages that arrived before a receive matched them.
//
// Each message is threaded into four bins at once, keyed (c,s,t), (c,ANY,t),
// (c,s,ANY) and (c,ANY,ANY), each bin a FIFO in arrival order. A receive
// pattern, wildcards included, is itself one of those keys, so the earliest
// matching message is the head of exactly one bin: one lookup whatever the
// depth. A fifth list per (context, source, sender request id) serves send
// cancel, searched newest-first as the IMPI protocol requires.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "matching/bin_table.h"
#include "matching/envelope.h"
#include "matching/intrusive_list.h"
#include "matching/node_pool.h"

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
  static constexpr std::size_t kRequestHook = 4;

  struct Node {
    IncomingMessage message;
    std::uint32_t slot = 0;
    std::array<ListHook<Node>, 5> hooks;  // 0..3: bins by pattern kind; 4: request index
  };

  struct RequestKey {
    ContextId context;
    Rank source;
    std::uint64_t sender_request_id;
    friend bool operator==(const RequestKey&, const RequestKey&) = default;
  };
  struct RequestKeyHash {
    std::size_t operator()(const RequestKey& k) const {
      return hash_words(k.context, k.source, k.sender_request_id);
    }
  };

  // The four bin keys a message belongs to, in pattern_kind() order.
  static std::array<BinKey, 4> bin_keys(const Envelope& e);
  std::optional<IncomingMessage> remove(Node& node);

  NodePool<Node> pool_;
  KeptBins<BinKey, IntrusiveList<Node>, BinKeyHash> bins_;
  BinTable<RequestKey, IntrusiveList<Node>, RequestKeyHash> by_request_;
};

}  // namespace tagwire::matching
