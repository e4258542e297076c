#include "common/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <limits>

extern char** environ;

namespace tagwire {

namespace {

constexpr std::string_view kPrefix = "TAGWIRE_";
constexpr std::string_view kReservedPrefixes[] = {"TAGWIRE_BOOT_", "TAGWIRE_TEST_"};

Status bad_value(std::string_view what, std::string_view text, std::string_view expected) {
  std::string message(what);
  message += "='";
  message += text;
  message += "' is not valid: expected ";
  message += expected;
  return {ErrorCode::kConfig, std::move(message)};
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Parses a decimal unsigned number followed by an optional suffix; returns
// the suffix through `suffix`.
Result<unsigned long long> parse_number(std::string_view what, std::string_view text,
                                        std::string_view expected, std::string_view* suffix) {
  unsigned long long value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) return bad_value(what, text, expected);
  *suffix = std::string_view(ptr, static_cast<std::size_t>(end - ptr));
  return value;
}

template <typename Enum>
struct EnumName {
  std::string_view name;
  Enum value;
};

template <typename Enum, std::size_t N>
Result<Enum> parse_enum(std::string_view what, std::string_view text,
                        const EnumName<Enum> (&names)[N]) {
  std::string wanted = lower(text);
  std::string expected = "one of";
  for (const auto& entry : names) {
    if (wanted == entry.name) return entry.value;
    expected += ' ';
    expected += entry.name;
  }
  return bad_value(what, text, expected);
}

constexpr EnumName<TransportChoice> kTransportNames[] = {{"auto", TransportChoice::kAuto},
                                                         {"shm", TransportChoice::kShm},
                                                         {"ucx", TransportChoice::kUcx},
                                                         {"verbs", TransportChoice::kVerbs}};
constexpr EnumName<NicMatchingChoice> kNicMatchingNames[] = {{"auto", NicMatchingChoice::kAuto},
                                                             {"on", NicMatchingChoice::kOn},
                                                             {"off", NicMatchingChoice::kOff}};
constexpr EnumName<VerbsConnectChoice> kVerbsConnectNames[] = {
    {"auto", VerbsConnectChoice::kAuto},
    {"cm", VerbsConnectChoice::kCm},
    {"exchange", VerbsConnectChoice::kExchange}};
constexpr EnumName<CancelMode> kCancelModeNames[] = {{"agent", CancelMode::kAgent},
                                                     {"onesided", CancelMode::kOneSided}};
constexpr EnumName<log::Level> kLevelNames[] = {{"error", log::Level::kError},
                                                {"warn", log::Level::kWarn},
                                                {"info", log::Level::kInfo},
                                                {"debug", log::Level::kDebug},
                                                {"trace", log::Level::kTrace}};

// One setting: its variable name, what it is for, how to store a parsed
// value, and how to write the value back in the variable's own syntax.
struct Setting {
  std::string_view name;
  std::string_view description;
  Status (*apply)(Config& config, std::string_view name, std::string_view text);
  std::string (*show)(const Config& config);
};

template <typename Enum, std::size_t N>
std::string enum_name(Enum value, const EnumName<Enum> (&names)[N]) {
  for (const auto& entry : names) {
    if (entry.value == value) return std::string(entry.name);
  }
  return "?";
}

std::string bool_text(bool b) {
  return b ? "1" : "0";
}

template <typename T>
Status store(T& field, Result<T> parsed) {
  if (!parsed) return parsed.status();
  field = std::move(parsed).value();
  return Status::ok();
}

const Setting kSettings[] = {
    {"TAGWIRE_EAGER_THRESHOLD", "largest message sent eagerly, in bytes (larger ones: rendezvous)",
     [](Config& c, std::string_view n, std::string_view t) {
       auto size = parse_size(n, t);
       if (size && *size > (std::size_t{1} << 30)) {
         return bad_value(n, t, "a size of at most 1G");
       }
       c.eager_threshold_set = true;
       return store(c.eager_threshold, std::move(size));
     },
     [](const Config& c) { return std::to_string(c.eager_threshold); }},
    {"TAGWIRE_LOG_LEVEL", "what Tagwire logs: error warn info debug trace",
     [](Config& c, std::string_view n, std::string_view t) {
       return store(c.log_level, parse_enum(n, t, kLevelNames));
     },
     [](const Config& c) { return enum_name(c.log_level, kLevelNames); }},
    {"TAGWIRE_TRANSPORT",
     "transport: auto (shm when every rank is on this host, else ucx) shm ucx verbs",
     [](Config& c, std::string_view n, std::string_view t) {
       return store(c.transport, parse_enum(n, t, kTransportNames));
     },
     [](const Config& c) { return enum_name(c.transport, kTransportNames); }},
    {"TAGWIRE_TM", "hardware tag matching: auto on off",
     [](Config& c, std::string_view n, std::string_view t) {
       return store(c.nic_matching, parse_enum(n, t, kNicMatchingNames));
     },
     [](const Config& c) { return enum_name(c.nic_matching, kNicMatchingNames); }},
    {"TAGWIRE_VERBS_CONNECT", "verbs: how RC QPs connect: auto cm exchange",
     [](Config& c, std::string_view n, std::string_view t) {
       return store(c.verbs_connect, parse_enum(n, t, kVerbsConnectNames));
     },
     [](const Config& c) { return enum_name(c.verbs_connect, kVerbsConnectNames); }},
    {"TAGWIRE_RCACHE", "verbs: keep user buffers registered between operations (1 0)",
     [](Config& c, std::string_view n, std::string_view t) {
       return store(c.registration_cache, parse_bool(n, t));
     },
     [](const Config& c) { return bool_text(c.registration_cache); }},
    {"TAGWIRE_VERBS_RING_BUDGET", "verbs: bytes the eager rings of all peers may take together",
     [](Config& c, std::string_view n, std::string_view t) {
       return store(c.verbs_ring_budget, parse_size(n, t));
     },
     [](const Config& c) { return std::to_string(c.verbs_ring_budget); }},
    {"TAGWIRE_PROGRESS_THREAD", "a progress thread drives the transport all the time (1 0)",
     [](Config& c, std::string_view n, std::string_view t) {
       return store(c.progress_thread, parse_bool(n, t));
     },
     [](const Config& c) { return bool_text(c.progress_thread); }},
    {"TAGWIRE_CANCEL_AGENT", "a thread answers send cancels while the application is away (1 0)",
     [](Config& c, std::string_view n, std::string_view t) {
       return store(c.cancel_agent, parse_bool(n, t));
     },
     [](const Config& c) { return bool_text(c.cancel_agent); }},
    {"TAGWIRE_CANCEL_MODE", "who decides a send cancel: agent onesided",
     [](Config& c, std::string_view n, std::string_view t) {
       return store(c.cancel_mode, parse_enum(n, t, kCancelModeNames));
     },
     [](const Config& c) { return enum_name(c.cancel_mode, kCancelModeNames); }},
    {"TAGWIRE_DEVICE", "RDMA device (empty: the nearest one)",
     [](Config& c, std::string_view n, std::string_view t) {
       if (t.empty()) return bad_value(n, t, "a device name such as mlx5_0 or rxe0");
       c.device = std::string(t);
       return Status::ok();
     },
     [](const Config& c) { return c.device; }},
    {"TAGWIRE_PEER_TIMEOUT", "how long an operation may wait for a silent peer",
     [](Config& c, std::string_view n, std::string_view t) {
       auto d = parse_duration(n, t);
       if (d && d->count() == 0) return bad_value(n, t, "a duration above zero");
       return store(c.peer_timeout, std::move(d));
     },
     [](const Config& c) { return std::to_string(c.peer_timeout.count()) + "ms"; }},
};

const Setting* find_setting(std::string_view name) {
  for (const auto& s : kSettings) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool is_reserved(std::string_view name) {
  return std::any_of(std::begin(kReservedPrefixes), std::end(kReservedPrefixes),
                     [&](std::string_view p) { return name.starts_with(p); });
}

}  // namespace

Result<std::size_t> parse_size(std::string_view what, std::string_view text) {
  constexpr std::string_view kExpected = "a byte count such as 8192, 64K, 1M or 1G";
  std::string_view suffix;
  auto number = parse_number(what, text, kExpected, &suffix);
  if (!number) return number.status();
  unsigned long long scale = 1;
  std::string s = lower(suffix);
  if (s.empty() || s == "b") {
    scale = 1;
  } else if (s == "k" || s == "kb" || s == "kib") {
    scale = 1ull << 10;
  } else if (s == "m" || s == "mb" || s == "mib") {
    scale = 1ull << 20;
  } else if (s == "g" || s == "gb" || s == "gib") {
    scale = 1ull << 30;
  } else {
    return bad_value(what, text, kExpected);
  }
  if (*number > std::numeric_limits<std::size_t>::max() / scale) {
    return bad_value(what, text, "a size that fits in 64 bits");
  }
  return static_cast<std::size_t>(*number * scale);
}

Result<bool> parse_bool(std::string_view what, std::string_view text) {
  std::string s = lower(text);
  if (s == "1" || s == "yes" || s == "on" || s == "true" || s == "y") return true;
  if (s == "0" || s == "no" || s == "off" || s == "false" || s == "n") return false;
  return bad_value(what, text, "one of 1 0 yes no on off true false");
}

Result<std::chrono::milliseconds> parse_duration(std::string_view what, std::string_view text) {
  constexpr std::string_view kExpected =
      "a duration such as 500ms, 10s or 2m (bare number: seconds)";
  std::string_view suffix;
  auto number = parse_number(what, text, kExpected, &suffix);
  if (!number) return number.status();
  std::string s = lower(suffix);
  unsigned long long ms_per_unit = 0;
  if (s.empty() || s == "s") {
    ms_per_unit = 1000;
  } else if (s == "ms") {
    ms_per_unit = 1;
  } else if (s == "m" || s == "min") {
    ms_per_unit = 60'000;
  } else {
    return bad_value(what, text, kExpected);
  }
  constexpr unsigned long long kMax = 7ull * 24 * 3600 * 1000;  // a week is plenty
  if (*number > kMax / ms_per_unit) return bad_value(what, text, "a duration of at most a week");
  return std::chrono::milliseconds(static_cast<long long>(*number * ms_per_unit));
}

const std::vector<std::string_view>& Config::setting_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const auto& s : kSettings) out.push_back(s.name);
    return out;
  }();
  return names;
}

std::string_view Config::setting_description(std::string_view name) {
  const Setting* s = find_setting(name);
  return s != nullptr ? s->description : std::string_view{};
}

std::string Config::value_text(std::string_view name) const {
  const Setting* s = find_setting(name);
  return s != nullptr ? s->show(*this) : std::string{};
}

Result<Config> Config::from_variables(const std::map<std::string, std::string>& variables) {
  Config config;
  for (const auto& [name, value] : variables) {
    if (!std::string_view(name).starts_with(kPrefix) || is_reserved(name)) continue;
    const Setting* setting = find_setting(name);
    if (setting == nullptr) {
      std::string message = name + " is not a Tagwire setting; known settings:";
      for (auto known : setting_names()) {
        message += ' ';
        message += known;
      }
      return Status(ErrorCode::kConfig, std::move(message));
    }
    TAGWIRE_RETURN_IF_ERROR(setting->apply(config, name, value));
  }
  return config;
}

Result<Config> Config::from_environment() {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (!text.starts_with(kPrefix)) continue;
    auto eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    variables.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return from_variables(variables);
}

}  // namespace tagwire
