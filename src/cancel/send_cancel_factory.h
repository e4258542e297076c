// The send-cancel layer as an engine is given it: the implementation
// TAGWIRE_CANCEL_MODE names (Config::cancel_mode).
#pragma once

#include <memory>

#include "common/config.h"
#include "engine/send_cancel.h"

namespace tagwire::cancel {

// An engine::SendCancelFactory: the agent's request / reply, or the
// one-sided slot descriptors.
std::unique_ptr<engine::SendCancel> create_send_cancel(const Config& config,
                                                       engine::CancelSite& site);

}  // namespace tagwire::cancel
