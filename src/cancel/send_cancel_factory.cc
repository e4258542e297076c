#include "cancel/send_cancel_factory.h"

#include "cancel/agent_send_cancel.h"
#include "cancel/cancel_settings.h"
#include "cancel/one_sided_send_cancel.h"

namespace tagwire::cancel {

Result<std::unique_ptr<engine::SendCancel>> create_send_cancel(const engine::Config& config,
                                                               engine::CancelSite& site) {
  auto mode = read_cancel_mode(config.settings);
  if (!mode) return mode.status();
  if (*mode == CancelMode::kOneSided) {
    return std::unique_ptr<engine::SendCancel>(std::make_unique<OneSidedSendCancel>(site));
  }
  return std::unique_ptr<engine::SendCancel>(std::make_unique<AgentSendCancel>(site));
}

const engine::SendCancelLayer kSendCancelLayer{create_send_cancel, cancel_settings()};

}  // namespace tagwire::cancel
