#include "verbs/verbs_settings.h"

namespace tagwire::verbs {

namespace {

constexpr EnumName<NicMatchingChoice> kNicMatchingNames[] = {{"auto", NicMatchingChoice::kAuto},
                                                             {"on", NicMatchingChoice::kOn},
                                                             {"off", NicMatchingChoice::kOff}};
constexpr EnumName<VerbsConnectChoice> kConnectNames[] = {
    {"auto", VerbsConnectChoice::kAuto},
    {"cm", VerbsConnectChoice::kCm},
    {"exchange", VerbsConnectChoice::kExchange}};

Result<std::string> parse_device(std::string_view name, std::string_view text) {
  if (text.empty()) return bad_setting(name, text, "a device name such as mlx5_0 or rxe0");
  return std::string(text);
}
Result<NicMatchingChoice> parse_nic_matching(std::string_view name, std::string_view text) {
  return parse_enum(name, text, kNicMatchingNames);
}
Result<VerbsConnectChoice> parse_connect(std::string_view name, std::string_view text) {
  return parse_enum(name, text, kConnectNames);
}

constexpr SettingInfo kDevice{"TAGWIRE_DEVICE", "verbs: RDMA device (unset: the nearest one)", "",
                              check_with<parse_device>};
constexpr SettingInfo kTm{"TAGWIRE_TM", "verbs: tag matching in the NIC: auto on off", "auto",
                          check_with<parse_nic_matching>};
constexpr SettingInfo kConnect{"TAGWIRE_VERBS_CONNECT",
                               "verbs: how RC QPs connect: auto cm exchange", "auto",
                               check_with<parse_connect>};
constexpr SettingInfo kRcache{"TAGWIRE_RCACHE",
                              "verbs: keep user buffers registered between operations (1 0)", "1",
                              check_with<parse_bool>};
constexpr SettingInfo kRingBudget{"TAGWIRE_VERBS_RING_BUDGET",
                                  "verbs: bytes the eager rings of all peers may take together",
                                  "256M", check_with<parse_size>};

constexpr SettingInfo kGatherFrom{
    "TAGWIRE_VERBS_GATHER_FROM",
    "verbs: eager payloads of this many bytes or more leave from the user's buffer, not a copy "
    "(0: never)",
    "12K", check_with<parse_size>};

constexpr const SettingInfo* kTable[] = {&kDevice, &kTm,         &kConnect,
                                         &kRcache, &kRingBudget, &kGatherFrom};

}  // namespace

SettingTable VerbsSettings::table() {
  return kTable;
}

Result<VerbsSettings> VerbsSettings::read(const Settings& settings) {
  VerbsSettings v;
  TAGWIRE_RETURN_IF_ERROR(settings.read(kDevice, parse_device, &v.device));
  TAGWIRE_RETURN_IF_ERROR(settings.read(kTm, parse_nic_matching, &v.nic_matching));
  TAGWIRE_RETURN_IF_ERROR(settings.read(kConnect, parse_connect, &v.connect));
  TAGWIRE_RETURN_IF_ERROR(settings.read(kRcache, parse_bool, &v.registration_cache));
  TAGWIRE_RETURN_IF_ERROR(settings.read(kRingBudget, parse_size, &v.ring_budget));
  TAGWIRE_RETURN_IF_ERROR(settings.read(kGatherFrom, parse_size, &v.gather_from));
  return v;
}

}  // namespace tagwire::verbs
