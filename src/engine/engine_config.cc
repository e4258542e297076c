#include "engine/engine_config.h"

#include "engine/transport_list.h"

namespace tagwire::engine {

namespace {

constexpr EnumName<log::Level> kLevelNames[] = {{"error", log::Level::kError},
                                                {"warn", log::Level::kWarn},
                                                {"info", log::Level::kInfo},
                                                {"debug", log::Level::kDebug},
                                                {"trace", log::Level::kTrace}};

Result<std::size_t> parse_threshold(std::string_view name, std::string_view text) {
  auto size = parse_size(name, text);
  if (size && *size > (std::size_t{1} << 30))
    return bad_setting(name, text, "a size of at most 1G");
  return size;
}

constexpr EnumName<CollectiveShape> kShapeNames[] = {{"auto", CollectiveShape::kAuto},
                                                     {"tree", CollectiveShape::kTree},
                                                     {"flat", CollectiveShape::kFlat}};

Result<CollectiveShape> parse_shape(std::string_view name, std::string_view text) {
  return parse_enum(name, text, kShapeNames);
}

Result<log::Level> parse_level(std::string_view name, std::string_view text) {
  return parse_enum(name, text, kLevelNames);
}

// Which names exist is the registry's to say (choose_transport refuses an
// unknown one with the list the build has); here only that there is one.
Result<std::string> parse_transport(std::string_view name, std::string_view text) {
  if (text.empty()) return bad_setting(name, text, "auto or a transport's name");
  return lower_case(text);
}

constexpr SettingInfo kEagerThreshold{
    "TAGWIRE_EAGER_THRESHOLD", "largest message sent eagerly, in bytes (larger ones: rendezvous)",
    "8192", check_with<parse_threshold>};
constexpr SettingInfo kLogLevel{"TAGWIRE_LOG_LEVEL",
                                "what Tagwire logs: error warn info debug trace", "warn",
                                check_with<parse_level>};
constexpr SettingInfo kTransport{
    "TAGWIRE_TRANSPORT",
    "transport: auto (the preferred one that reaches every rank) or a built transport's name",
    "auto", check_with<parse_transport>};
constexpr SettingInfo kProgressThread{"TAGWIRE_PROGRESS_THREAD",
                                      "a progress thread drives the transport all the time (1 0)",
                                      "0", check_with<parse_bool>};
constexpr SettingInfo kCancelAgent{
    "TAGWIRE_CANCEL_AGENT", "a thread answers send cancels while the application is away (1 0)",
    "1", check_with<parse_bool>};
constexpr SettingInfo kUnexpectedLimit{
    "TAGWIRE_UNEXPECTED_LIMIT",
    "bytes of unexpected messages a helper thread takes in while the application is away; "
    "beyond it senders wait",
    "8M", check_with<parse_size>};
constexpr SettingInfo kCollectives{
    "TAGWIRE_COLLECTIVES",
    "rooted collectives' shape: auto (flat with more ranks than cores on one host, else a "
    "binomial tree) tree flat",
    "auto", check_with<parse_shape>};
constexpr SettingInfo kRmaAtomics{
    "TAGWIRE_RMA_ATOMICS",
    "one-sided accumulates of 8-byte integers (MPI_Fetch_and_op, MPI_Compare_and_swap, ...) word "
    "by word by atomics: the NIC's where every rank's device has them, the CPU's where every rank "
    "maps the window; 0: under a lock word (1 0)",
    "1", check_with<parse_bool>};
// (TAGWIRE_PEER_TIMEOUT was here, documented and checked but read by no
// code: removed, so that setting it fails MPI_Init instead of doing
// nothing. Dead peers are the launcher's notice or the transport's
// finding: docs/using-tagwire.md.)
constexpr const SettingInfo* kTable[] = {&kEagerThreshold, &kLogLevel,    &kTransport,
                                         &kProgressThread, &kCancelAgent, &kUnexpectedLimit,
                                         &kCollectives,    &kRmaAtomics};

}  // namespace

SettingTable Config::table() {
  return kTable;
}

Result<Config> Config::read(Settings settings) {
  Config c;
  TAGWIRE_RETURN_IF_ERROR(settings.read(kEagerThreshold, parse_threshold, &c.eager_threshold));
  c.eager_threshold_set = settings.is_set(kEagerThreshold.name);
  TAGWIRE_RETURN_IF_ERROR(settings.read(kLogLevel, parse_level, &c.log_level));
  TAGWIRE_RETURN_IF_ERROR(settings.read(kTransport, parse_transport, &c.transport));
  TAGWIRE_RETURN_IF_ERROR(settings.read(kProgressThread, parse_bool, &c.progress_thread));
  TAGWIRE_RETURN_IF_ERROR(settings.read(kCancelAgent, parse_bool, &c.cancel_agent));
  TAGWIRE_RETURN_IF_ERROR(settings.read(kUnexpectedLimit, parse_size, &c.unexpected_limit));
  TAGWIRE_RETURN_IF_ERROR(settings.read(kCollectives, parse_shape, &c.collective_shape));
  TAGWIRE_RETURN_IF_ERROR(settings.read(kRmaAtomics, parse_bool, &c.rma_atomics));
  c.settings = std::move(settings);
  return c;
}

Result<Config> Config::from_variables(const std::map<std::string, std::string>& variables,
                                      SettingTable upper) {
  const std::vector<SettingTable> known = known_settings(upper);
  auto settings = Settings::from_variables(variables, known);
  if (!settings) return settings.status();
  return read(std::move(settings).value());
}

Result<Config> Config::from_environment(SettingTable upper) {
  const std::vector<SettingTable> known = known_settings(upper);
  auto settings = Settings::from_environment(known);
  if (!settings) return settings.status();
  return read(std::move(settings).value());
}

void Config::resolve_eager_threshold(std::size_t bytes) {
  eager_threshold = bytes;
  // The text of a checked size: set() cannot refuse it.
  (void)settings.set(kEagerThreshold, std::to_string(bytes));
}

std::vector<SettingTable> known_settings(SettingTable upper) {
  std::vector<SettingTable> known{Config::table()};
  for (const transport::TransportEntry* entry : built_transports()) {
    if (!entry->settings.empty()) known.push_back(entry->settings);
  }
  if (!upper.empty()) known.push_back(upper);
  return known;
}

}  // namespace tagwire::engine
