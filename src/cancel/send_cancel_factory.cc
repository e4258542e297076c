#include "cancel/send_cancel_factory.h"

#include "cancel/agent_send_cancel.h"
#include "cancel/one_sided_send_cancel.h"

namespace tagwire::cancel {

std::unique_ptr<engine::SendCancel> create_send_cancel(const Config& config,
                                                       engine::CancelSite& site) {
  if (config.cancel_mode == CancelMode::kOneSided) {
    return std::make_unique<OneSidedSendCancel>(site);
  }
  return std::make_unique<AgentSendCancel>(site);
}

}  // namespace tagwire::cancel
