#include "cancel/cancel_settings.h"

namespace tagwire::cancel {

namespace {

constexpr EnumName<CancelMode> kModeNames[] = {{"agent", CancelMode::kAgent},
                                               {"onesided", CancelMode::kOneSided}};

Result<CancelMode> parse_mode(std::string_view name, std::string_view text) {
  return parse_enum(name, text, kModeNames);
}

constexpr SettingInfo kMode{"TAGWIRE_CANCEL_MODE", "who decides a send cancel: agent onesided",
                            "agent", check_with<parse_mode>};
constexpr const SettingInfo* kTable[] = {&kMode};

}  // namespace

const SettingInfo& cancel_mode_setting() {
  return kMode;
}

SettingTable cancel_settings() {
  return kTable;
}

Result<CancelMode> read_cancel_mode(const Settings& settings) {
  CancelMode mode = CancelMode::kAgent;
  TAGWIRE_RETURN_IF_ERROR(settings.read(kMode, parse_mode, &mode));
  return mode;
}

}  // namespace tagwire::cancel
