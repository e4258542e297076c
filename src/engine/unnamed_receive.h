// UnnamedReceive: the one blocking receive that waits without a request
// (Engine::receive, blocking_receive.cc).
//
// A blocking ping-pong's receive made a request, posted it to the matcher,
// found it again by id when the message came, unlinked it and released it:
// about 500 of the 1,280 instructions an iteration spent outside its polls.
// While the posted queue is empty, a blocking receive is the only receive
// an arriving message could match, so the arrival can test its pattern and
// copy an eager payload straight into the caller's buffer. Anything the
// direct path does not take (a rendezvous, a payload that does not fit) is
// queued as unexpected as usual and the receive falls back to a request,
// which finds it there first: order is kept either way.
//
// A small collective's exchange (Engine::exchange) receives this way too,
// on the communicator's collective context: a collective step fails with
// any member's death, not only its source's (whole_group).
#pragma once

#include <cstddef>

#include "engine/communicator.h"
#include "engine/request.h"
#include "engine/wire.h"
#include "matching/envelope.h"

namespace tagwire::engine {

struct UnnamedReceive {
  enum class State : unsigned char {
    kIdle,      // no blocking receive waits this way
    kArmed,     // waiting: an arrival that matches `pattern` is for it
    kDone,      // received (or failed: status->error), *status filled
    kFallBack,  // a matching message it cannot take went to the unexpected queue
  };
  State state = State::kIdle;
  matching::ReceivePattern pattern;    // its source a rank of `comm`
  const Communicator* comm = nullptr;  // an intracommunicator
  bool whole_group = false;            // a collective step's: fails with any member
  void* buffer = nullptr;
  std::size_t bytes = 0;
  MessageStatus* status = nullptr;  // the waiting caller's

  bool armed_for(const Header& h) const {
    return state == State::kArmed && pattern.matches({h.context, h.source, h.tag});
  }
  // Whether the death of world rank `dead` ends it (the request path's
  // rule, peer_failure.cc: a wildcard or a collective step fails with any
  // member's death, a named receive with its source's).
  bool fails_with(int dead) const {
    if (state != State::kArmed) return false;
    if (pattern.source != matching::kAnySource && !whole_group) {
      return comm->peer_world_rank(pattern.source, true) == dead;
    }
    for (int w : comm->peer_group(true)) {
      if (w == dead) return true;
    }
    return false;
  }
};

}  // namespace tagwire::engine
