// TAGWIRE_* settings: the machinery every layer reads its own through.
//
// common/ knows no setting by name. Each layer that has settings declares
// them (a SettingInfo each, with a check of its syntax) and reads them into
// its own struct: the engine its threshold and threads
// (engine/engine_config.h), each transport its own through its registry
// entry (verbs: verbs/verbs_settings.h), the cancel layer its mode
// (cancel/cancel_settings.h). Settings::from_variables checks every
// TAGWIRE_* variable against the tables it is given: a name no layer
// declares (a typo) or a value a setting's check refuses is an error naming
// the variable, never a silent default. Names under TAGWIRE_BOOT_ (launcher
// to rank) and TAGWIRE_TEST_ (test harnesses), and TAGWIRE_CC (the compiler
// wrapper's), belong to others and are not checked.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tagwire {

struct SettingInfo {
  std::string_view name;          // "TAGWIRE_TM"
  std::string_view description;   // what it is for, in a line
  std::string_view default_text;  // the default in the variable's syntax ("" : none to show)
  // Refuses a value its owner could not read, naming the variable.
  Status (*check)(std::string_view name, std::string_view text) = nullptr;
};

// One layer's settings.
using SettingTable = std::span<const SettingInfo* const>;

// The TAGWIRE_* variables of a process (or of a test), checked.
class Settings {
 public:
  Settings() = default;  // nothing set: every setting at its default

  // Only TAGWIRE_* names are looked at; each must be in one of `known`.
  static Result<Settings> from_variables(const std::map<std::string, std::string>& variables,
                                         std::span<const SettingTable> known);
  // The same over the process environment.
  static Result<Settings> from_environment(std::span<const SettingTable> known);

  // Sets a variable as a program that builds its settings in code would
  // (tests); the value is checked against `info`.
  Status set(const SettingInfo& info, std::string_view text);

  bool is_set(std::string_view name) const { return variables_.count(std::string(name)) != 0; }
  // The variable's text, or the setting's default when it is not set.
  std::string_view text(const SettingInfo& info) const;
  // Every variable that is set, by name.
  const std::map<std::string, std::string>& variables() const { return variables_; }

  bool operator==(const Settings&) const = default;

  // Reads `info` with `parse` into `*out`; unset, `*out` keeps its default.
  template <typename T>
  Status read(const SettingInfo& info, Result<T> (*parse)(std::string_view, std::string_view),
              T* out) const {
    auto found = variables_.find(std::string(info.name));
    if (found == variables_.end()) return Status::ok();
    auto parsed = parse(info.name, found->second);
    if (!parsed) return parsed.status();
    *out = std::move(parsed).value();
    return Status::ok();
  }

 private:
  std::map<std::string, std::string> variables_;
};

// The setting of that name among `tables`, or null.
const SettingInfo* find_setting(std::span<const SettingTable> tables, std::string_view name);

// A check made from a parser: the value is refused where the parser refuses it.
template <auto Parse>
Status check_with(std::string_view name, std::string_view text) {
  auto parsed = Parse(name, text);
  return parsed ? Status::ok() : parsed.status();
}

// "TAGWIRE_X='text' is not valid: expected <expected>" (kConfig).
Status bad_setting(std::string_view what, std::string_view text, std::string_view expected);

// Parsers shared by the layers and the command-line tools. Each names
// `what` in its error.
Result<std::size_t> parse_size(std::string_view what, std::string_view text);
Result<bool> parse_bool(std::string_view what, std::string_view text);

// A setting whose values are names ("auto on off"), case-insensitive.
template <typename Enum>
struct EnumName {
  std::string_view name;
  Enum value;
};

std::string lower_case(std::string_view text);

template <typename Enum, std::size_t N>
Result<Enum> parse_enum(std::string_view what, std::string_view text,
                        const EnumName<Enum> (&names)[N]) {
  const std::string wanted = lower_case(text);
  std::string expected = "one of";
  for (const auto& entry : names) {
    if (wanted == entry.name) return entry.value;
    expected += ' ';
    expected += entry.name;
  }
  return bad_setting(what, text, expected);
}

}  // namespace tagwire
