// The cancel layer's own setting: who decides a send cancel.
#pragma once

#include "common/settings.h"

namespace tagwire::cancel {

// The receiver's agent on a CANCEL_REQUEST, or the sender alone with a
// remote compare-and-swap on the message's slot descriptor
// (docs/architecture.md §4, engine/slot_word.h). Every rank must agree.
enum class CancelMode { kAgent, kOneSided };

// TAGWIRE_CANCEL_MODE: agent onesided.
const SettingInfo& cancel_mode_setting();
SettingTable cancel_settings();
Result<CancelMode> read_cancel_mode(const Settings& settings);

}  // namespace tagwire::cancel
