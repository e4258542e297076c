// The send-cancel layer as an engine is given it: the implementation
// TAGWIRE_CANCEL_MODE names (cancel/cancel_settings.h).
#pragma once

#include <memory>

#include "engine/engine_config.h"
#include "engine/send_cancel.h"

namespace tagwire::cancel {

// The agent's request / reply, or the one-sided slot descriptors.
Result<std::unique_ptr<engine::SendCancel>> create_send_cancel(const engine::Config& config,
                                                               engine::CancelSite& site);

// What every program hands Engine::create: create_send_cancel and the
// settings it reads.
extern const engine::SendCancelLayer kSendCancelLayer;

}  // namespace tagwire::cancel
