#include "ucx/ucx_settings.h"

namespace tagwire::ucx {

namespace {

constexpr EnumName<UcxConnectChoice> kConnectNames[] = {{"auto", UcxConnectChoice::kAuto},
                                                        {"eager", UcxConnectChoice::kEager},
                                                        {"lazy", UcxConnectChoice::kLazy}};

Result<UcxConnectChoice> parse_connect(std::string_view name, std::string_view text) {
  return parse_enum(name, text, kConnectNames);
}

constexpr SettingInfo kConnect{
    "TAGWIRE_UCX_CONNECT",
    "ucx: when endpoints connect: eager (every rank in MPI_Init), lazy (on first use), auto "
    "(eager up to 64 ranks)",
    "auto", check_with<parse_connect>};

constexpr const SettingInfo* kTable[] = {&kConnect};

}  // namespace

SettingTable UcxSettings::table() {
  return kTable;
}

Result<UcxSettings> UcxSettings::read(const Settings& settings) {
  UcxSettings u;
  TAGWIRE_RETURN_IF_ERROR(settings.read(kConnect, parse_connect, &u.connect));
  return u;
}

}  // namespace tagwire::ucx
