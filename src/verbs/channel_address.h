// ChannelAddress: what a peer needs to connect to this rank's two QPs for
// it when the NIC matches tags (verbs/verbs_nic_matching.h): a QP attached to
// a tag-matching SRQ gives up its send queue to the NIC, so each pair of
// ranks talks over a send QP on one side and a tagged QP on the other.
#pragma once

#include "verbs/rc_queue_pair.h"

namespace tagwire::verbs {

struct ChannelAddress {
  QpAddress send;    // connects to the peer's tagged QP
  QpAddress tagged;  // connects to the peer's send QP
};

}  // namespace tagwire::verbs
