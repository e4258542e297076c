// CmConnector: RC connections made through rdma_cm on first use.
//
// Every rank listens on its device's IPv4 address (the one its RoCEv2 GID
// maps) at a port the kernel picks, and publishes address and port through
// the bootstrap. A rank that first needs a peer resolves the peer's address
// and route, makes a QP, and connects with its rank in the private data;
// the peer makes a QP of its own and accepts. The QPs are the transport's
// (its PD, its CQ), not rdma_cm's: their numbers travel in the connection
// parameters and their transitions take rdma_init_qp_attr's attributes, so
// the route (GID index, MTU, hop limit) is the one the IP stack resolved.
//
// Each side's private data also carries a card from its transport (the
// verbs transport: where its eager ring for that peer lies and its key),
// so what a connection needs is made only for the peers a rank talks to.
//
// Two ranks may start towards each other at once. The lower rank's attempt
// wins: the lower rank rejects the higher's request while it has an attempt
// of its own under way, and the higher rank accepts the lower's and drops
// its own. Each pair ends up with exactly one QP, whoever asked first.
//
// Non-blocking throughout: poll() handles whatever events are pending and
// hands back the connections that are ready.
#pragma once

#include <rdma/rdma_cma.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/status.h"
#include "verbs/rc_queue_pair.h"
#include "verbs/verbs_handles.h"

namespace tagwire::verbs {

// Where a rank listens: IPv4 address and port, both in network byte order.
struct CmEndpoint {
  std::uint32_t ipv4 = 0;
  std::uint16_t port = 0;
};

// What the transport tells a peer it connects to (16 bytes of the private
// data, both ways).
struct CmCard {
  std::uint64_t address = 0;
  std::uint32_t key = 0;
  std::uint32_t reserved = 0;
};

class CmConnector {
 public:
  // Makes the QP for a connection to `peer`, in INIT, with its receives
  // posted (a peer may send the moment it is connected), and fills in the
  // card that goes to the peer.
  using MakeQp = std::function<Result<std::unique_ptr<RcQueuePair>>(int peer, CmCard* card)>;

  struct Connected {
    int peer = -1;
    std::unique_ptr<RcQueuePair> qp;
    bool accepted = false;  // the peer asked
    CmCard card;            // the peer's
  };
  struct Failed {
    int peer = -1;
    Status why;
  };

  static Result<std::unique_ptr<CmConnector>> listen(std::uint32_t ipv4, int rank, MakeQp make_qp);
  ~CmConnector();

  CmEndpoint endpoint() const { return local_; }

  // Starts connecting to `peer`; nothing if an attempt (either way) is
  // under way or the pair is connected.
  Status connect(int peer, CmEndpoint at);
  // Handles pending events: connections made and attempts given up.
  void poll(std::vector<Connected>* connected, std::vector<Failed>* failed);
  bool busy() const { return !attempts_.empty(); }

 private:
  struct Attempt {
    int peer = -1;
    bool active = true;    // we asked; false: we are accepting the peer's request
    bool dropped = false;  // superseded by the peer's attempt: destroy on its next event
    CmIdPtr id;
    std::unique_ptr<RcQueuePair> qp;
    CmEndpoint at;
    int tries = 0;
    CmCard mine;    // what goes to the peer with our request or accept
    CmCard theirs;  // what came with the peer's
  };

  CmConnector() = default;
  Status start(Attempt& a);
  Status handle(rdma_cm_event& event, std::vector<Connected>* connected,
                std::vector<Failed>* failed);
  Status accept(rdma_cm_event& event);
  Status to_rts(Attempt& a);
  Attempt* find(rdma_cm_id* id);
  Attempt* live_attempt(int peer);
  void erase(rdma_cm_id* id);

  EventChannelPtr channel_;
  CmIdPtr listener_;
  CmEndpoint local_;
  int rank_ = 0;
  MakeQp make_qp_;
  std::vector<std::unique_ptr<Attempt>> attempts_;
  std::vector<bool> connected_;    // by peer
  std::vector<CmIdPtr> finished_;  // ids of made connections, kept while they are used
};

}  // namespace tagwire::verbs
