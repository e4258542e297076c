// The settings machinery in common/, over a table of its own: common/
// knows no setting by name (engine_config_test.cc reads the real ones).
#include <gtest/gtest.h>

#include <cstdlib>

#include "common/settings.h"

namespace tagwire {
namespace {

Result<std::size_t> parse_small(std::string_view name, std::string_view text) {
  auto size = parse_size(name, text);
  if (size && *size > 100) return bad_setting(name, text, "at most 100");
  return size;
}

constexpr SettingInfo kSmall{"TAGWIRE_SMALL", "a size of at most 100", "10",
                             check_with<parse_small>};
constexpr SettingInfo kFlag{"TAGWIRE_FLAG", "a flag", "0", check_with<parse_bool>};
constexpr const SettingInfo* kLayerA[] = {&kSmall};
constexpr const SettingInfo* kLayerB[] = {&kFlag};
const SettingTable kKnown[] = {kLayerA, kLayerB};

TEST(Settings, OnlyTagwireNamesAreLookedAtAndEachLayersAreKnown) {
  auto s = Settings::from_variables(
      {{"PATH", "/bin"}, {"OMPI_X", "1"}, {"TAGWIRE_SMALL", "64"}, {"TAGWIRE_FLAG", "yes"}},
      kKnown);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->variables().size(), 2u);
  EXPECT_TRUE(s->is_set("TAGWIRE_FLAG"));
  EXPECT_EQ(s->text(kSmall), "64");
  std::size_t small = 10;
  ASSERT_TRUE(s->read(kSmall, parse_small, &small).is_ok());
  EXPECT_EQ(small, 64u);
}

TEST(Settings, AnUnsetSettingShowsItsDefaultAndKeepsTheFieldsValue) {
  const Settings none;
  EXPECT_FALSE(none.is_set("TAGWIRE_SMALL"));
  EXPECT_EQ(none.text(kSmall), "10");
  std::size_t small = 33;
  ASSERT_TRUE(none.read(kSmall, parse_small, &small).is_ok());
  EXPECT_EQ(small, 33u);
}

TEST(Settings, ANameNoLayerDeclaresIsAnErrorListingTheKnownOnes) {
  auto s = Settings::from_variables({{"TAGWIRE_SMAL", "1"}}, kKnown);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), ErrorCode::kConfig);
  EXPECT_NE(s.status().message().find("TAGWIRE_SMAL is not a Tagwire setting"), std::string::npos);
  EXPECT_NE(s.status().message().find("TAGWIRE_SMALL TAGWIRE_FLAG"), std::string::npos)
      << s.status().message();
  // A table the process was not given does not count.
  const SettingTable only_a[] = {kLayerA};
  EXPECT_FALSE(Settings::from_variables({{"TAGWIRE_FLAG", "1"}}, only_a).is_ok());
}

TEST(Settings, AValueTheSettingsCheckRefusesIsAnErrorNamingTheVariable) {
  auto s = Settings::from_variables({{"TAGWIRE_SMALL", "101"}}, kKnown);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), ErrorCode::kConfig);
  EXPECT_NE(s.status().message().find("TAGWIRE_SMALL='101'"), std::string::npos);
  EXPECT_NE(s.status().message().find("at most 100"), std::string::npos);
  Settings built;
  EXPECT_FALSE(built.set(kFlag, "maybe").is_ok());
  EXPECT_FALSE(built.is_set("TAGWIRE_FLAG"));
  EXPECT_TRUE(built.set(kFlag, "1").is_ok());
  EXPECT_EQ(built.text(kFlag), "1");
}

// The launcher's, the test harnesses' and the compiler wrapper's
// variables ride in a job's environment and are theirs to check.
TEST(Settings, NamesOfOtherOwnersAreLeftAlone) {
  auto s = Settings::from_variables(
      {{"TAGWIRE_BOOT_RANK", "3"}, {"TAGWIRE_TEST_SEED", "x"}, {"TAGWIRE_CC", "gcc"}}, kKnown);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_TRUE(s->variables().empty());
}

TEST(Settings, ReadsTheProcessEnvironment) {
  ::setenv("TAGWIRE_SMALL", "7", 1);
  auto s = Settings::from_environment(kKnown);
  ::unsetenv("TAGWIRE_SMALL");
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->text(kSmall), "7");
}

TEST(SettingParsers, SizesBoolsDurationsAndNames) {
  EXPECT_EQ(*parse_size("x", "0"), 0u);
  EXPECT_EQ(*parse_size("x", "3kib"), 3072u);
  EXPECT_EQ(*parse_size("x", "2G"), 2ull << 30);
  EXPECT_FALSE(parse_size("x", "").is_ok());
  EXPECT_FALSE(parse_size("x", "1 K").is_ok());
  EXPECT_FALSE(parse_size("x", "8T").is_ok());
  EXPECT_FALSE(parse_size("x", "-1").is_ok());
  EXPECT_FALSE(parse_size("x", "99999999999999999999").is_ok());
  EXPECT_TRUE(*parse_bool("x", "ON"));
  EXPECT_FALSE(*parse_bool("x", "0"));
  EXPECT_FALSE(parse_bool("x", "2").is_ok());
  enum class Color { kRed, kBlue };
  constexpr EnumName<Color> kColors[] = {{"red", Color::kRed}, {"blue", Color::kBlue}};
  EXPECT_EQ(*parse_enum("x", "BLUE", kColors), Color::kBlue);
  auto bad = parse_enum("TAGWIRE_COLOR", "green", kColors);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("one of red blue"), std::string::npos);
}

}  // namespace
}  // namespace tagwire
