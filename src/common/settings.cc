#include "common/settings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

extern char** environ;

namespace tagwire {

namespace {

constexpr std::string_view kPrefix = "TAGWIRE_";
constexpr std::string_view kReservedPrefixes[] = {"TAGWIRE_BOOT_", "TAGWIRE_TEST_"};
// Read by tagwire-cc (the compiler it wraps), which a job's environment
// carries when it was built in the same shell.
constexpr std::string_view kOthersNames[] = {"TAGWIRE_CC"};

bool belongs_to_others(std::string_view name) {
  return std::any_of(std::begin(kReservedPrefixes), std::end(kReservedPrefixes),
                     [&](std::string_view p) { return name.starts_with(p); }) ||
         std::find(std::begin(kOthersNames), std::end(kOthersNames), name) !=
             std::end(kOthersNames);
}

// Parses a decimal unsigned number followed by an optional suffix; returns
// the suffix through `suffix`.
Result<unsigned long long> parse_number(std::string_view what, std::string_view text,
                                        std::string_view expected, std::string_view* suffix) {
  unsigned long long value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) return bad_setting(what, text, expected);
  *suffix = std::string_view(ptr, static_cast<std::size_t>(end - ptr));
  return value;
}

}  // namespace

Status bad_setting(std::string_view what, std::string_view text, std::string_view expected) {
  std::string message(what);
  message += "='";
  message += text;
  message += "' is not valid: expected ";
  message += expected;
  return {ErrorCode::kConfig, std::move(message)};
}

std::string lower_case(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

Result<std::size_t> parse_size(std::string_view what, std::string_view text) {
  constexpr std::string_view kExpected = "a byte count such as 8192, 64K, 1M or 1G";
  std::string_view suffix;
  auto number = parse_number(what, text, kExpected, &suffix);
  if (!number) return number.status();
  unsigned long long scale = 1;
  std::string s = lower_case(suffix);
  if (s.empty() || s == "b") {
    scale = 1;
  } else if (s == "k" || s == "kb" || s == "kib") {
    scale = 1ull << 10;
  } else if (s == "m" || s == "mb" || s == "mib") {
    scale = 1ull << 20;
  } else if (s == "g" || s == "gb" || s == "gib") {
    scale = 1ull << 30;
  } else {
    return bad_setting(what, text, kExpected);
  }
  if (*number > std::numeric_limits<std::size_t>::max() / scale) {
    return bad_setting(what, text, "a size that fits in 64 bits");
  }
  return static_cast<std::size_t>(*number * scale);
}

Result<bool> parse_bool(std::string_view what, std::string_view text) {
  std::string s = lower_case(text);
  if (s == "1" || s == "yes" || s == "on" || s == "true" || s == "y") return true;
  if (s == "0" || s == "no" || s == "off" || s == "false" || s == "n") return false;
  return bad_setting(what, text, "one of 1 0 yes no on off true false");
}

const SettingInfo* find_setting(std::span<const SettingTable> tables, std::string_view name) {
  for (SettingTable table : tables) {
    for (const SettingInfo* s : table) {
      if (s->name == name) return s;
    }
  }
  return nullptr;
}

Result<Settings> Settings::from_variables(const std::map<std::string, std::string>& variables,
                                          std::span<const SettingTable> known) {
  Settings settings;
  for (const auto& [name, value] : variables) {
    if (!std::string_view(name).starts_with(kPrefix) || belongs_to_others(name)) continue;
    const SettingInfo* setting = find_setting(known, name);
    if (setting == nullptr) {
      std::string message = name + " is not a Tagwire setting; known settings:";
      for (SettingTable table : known) {
        for (const SettingInfo* s : table) {
          message += ' ';
          message += s->name;
        }
      }
      return Status(ErrorCode::kConfig, std::move(message));
    }
    TAGWIRE_RETURN_IF_ERROR(settings.set(*setting, value));
  }
  return settings;
}

Result<Settings> Settings::from_environment(std::span<const SettingTable> known) {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (!text.starts_with(kPrefix)) continue;
    auto eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    variables.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return from_variables(variables, known);
}

Status Settings::set(const SettingInfo& info, std::string_view text) {
  if (info.check != nullptr) TAGWIRE_RETURN_IF_ERROR(info.check(info.name, text));
  variables_[std::string(info.name)] = std::string(text);
  return Status::ok();
}

std::string_view Settings::text(const SettingInfo& info) const {
  auto found = variables_.find(std::string(info.name));
  return found != variables_.end() ? std::string_view(found->second) : info.default_text;
}

}  // namespace tagwire
