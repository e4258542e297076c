#include <gtest/gtest.h>

#include <cstdlib>

#include "common/config.h"

namespace tagwire {
namespace {

using Vars = std::map<std::string, std::string>;

TEST(Config, DefaultsWhenNothingIsSet) {
  auto config = Config::from_variables({{"PATH", "/bin"}, {"OMPI_X", "1"}});
  ASSERT_TRUE(config.is_ok()) << config.status().to_string();
  EXPECT_EQ(config->eager_threshold, 8192u);
  EXPECT_EQ(config->transport, TransportChoice::kAuto);
  EXPECT_EQ(config->nic_matching, NicMatchingChoice::kAuto);
  EXPECT_FALSE(config->progress_thread);
  EXPECT_TRUE(config->cancel_agent);
  EXPECT_EQ(config->cancel_mode, CancelMode::kAgent);
  EXPECT_TRUE(config->device.empty());
}

TEST(Config, ReadsEverySetting) {
  auto config = Config::from_variables({{"TAGWIRE_EAGER_THRESHOLD", "64K"},
                                        {"TAGWIRE_LOG_LEVEL", "debug"},
                                        {"TAGWIRE_TRANSPORT", "UCX"},
                                        {"TAGWIRE_TM", "off"},
                                        {"TAGWIRE_VERBS_CONNECT", "exchange"},
                                        {"TAGWIRE_RCACHE", "off"},
                                        {"TAGWIRE_VERBS_RING_BUDGET", "64M"},
                                        {"TAGWIRE_PROGRESS_THREAD", "yes"},
                                        {"TAGWIRE_CANCEL_AGENT", "no"},
                                        {"TAGWIRE_CANCEL_MODE", "onesided"},
                                        {"TAGWIRE_DEVICE", "rxe0"},
                                        {"TAGWIRE_PEER_TIMEOUT", "1500ms"}});
  ASSERT_TRUE(config.is_ok()) << config.status().to_string();
  EXPECT_EQ(config->eager_threshold, 65536u);
  EXPECT_EQ(config->log_level, log::Level::kDebug);
  EXPECT_EQ(config->transport, TransportChoice::kUcx);
  EXPECT_EQ(config->nic_matching, NicMatchingChoice::kOff);
  EXPECT_EQ(config->verbs_connect, VerbsConnectChoice::kExchange);
  EXPECT_FALSE(config->registration_cache);
  EXPECT_EQ(config->verbs_ring_budget, std::size_t{64} << 20);
  EXPECT_TRUE(config->progress_thread);
  EXPECT_FALSE(config->cancel_agent);
  EXPECT_EQ(config->cancel_mode, CancelMode::kOneSided);
  EXPECT_EQ(config->device, "rxe0");
  EXPECT_EQ(config->peer_timeout, std::chrono::milliseconds(1500));
  EXPECT_EQ(Config::setting_names().size(), 12u);
}

// value_text() writes each setting in its variable's syntax: reading every
// value back gives the same values (MPI_T's control variables show these).
TEST(Config, ValuesReadBackAsTheyWereWritten) {
  const Vars given{{"TAGWIRE_EAGER_THRESHOLD", "64K"},  {"TAGWIRE_LOG_LEVEL", "DEBUG"},
                   {"TAGWIRE_TRANSPORT", "verbs"},      {"TAGWIRE_TM", "off"},
                   {"TAGWIRE_VERBS_CONNECT", "cm"},     {"TAGWIRE_RCACHE", "no"},
                   {"TAGWIRE_VERBS_RING_BUDGET", "1G"}, {"TAGWIRE_PROGRESS_THREAD", "yes"},
                   {"TAGWIRE_CANCEL_AGENT", "off"},     {"TAGWIRE_CANCEL_MODE", "onesided"},
                   {"TAGWIRE_DEVICE", "mlx5_0"},        {"TAGWIRE_PEER_TIMEOUT", "2m"}};
  for (const Vars& vars : {given, Vars{}}) {
    auto config = Config::from_variables(vars);
    ASSERT_TRUE(config.is_ok()) << config.status().to_string();
    Vars written;
    for (auto name : Config::setting_names()) {
      EXPECT_FALSE(Config::setting_description(name).empty()) << name;
      std::string text = config->value_text(name);
      if (!text.empty()) written[std::string(name)] = text;  // an unset device is empty
    }
    auto again = Config::from_variables(written);
    ASSERT_TRUE(again.is_ok()) << again.status().to_string();
    for (auto name : Config::setting_names()) {
      EXPECT_EQ(again->value_text(name), config->value_text(name)) << name;
    }
  }
  auto config = Config::from_variables(given);
  ASSERT_TRUE(config.is_ok());
  EXPECT_EQ(config->value_text("TAGWIRE_EAGER_THRESHOLD"), "65536");
  EXPECT_EQ(config->value_text("TAGWIRE_LOG_LEVEL"), "debug");
  EXPECT_EQ(config->value_text("TAGWIRE_RCACHE"), "0");
  EXPECT_EQ(config->value_text("TAGWIRE_PEER_TIMEOUT"), "120000ms");
  EXPECT_EQ(config->value_text("TAGWIRE_NO_SUCH"), "");
  EXPECT_EQ(Config::setting_description("TAGWIRE_NO_SUCH"), "");
}

struct BadCase {
  const char* name;
  const char* value;
  const char* expected_text;  // must appear in the message
};

class ConfigRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigRejects, BadValueIsAnErrorNamingTheVariable) {
  const BadCase& c = GetParam();
  auto config = Config::from_variables({{c.name, c.value}});
  ASSERT_FALSE(config.is_ok()) << c.name << "=" << c.value << " was accepted";
  EXPECT_EQ(config.status().code(), ErrorCode::kConfig);
  EXPECT_NE(config.status().message().find(c.name), std::string::npos) << config.status().message();
  EXPECT_NE(config.status().message().find(c.expected_text), std::string::npos)
      << config.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    AllSettings, ConfigRejects,
    ::testing::Values(BadCase{"TAGWIRE_EAGER_THRESHOLD", "lots", "byte count"},
                      BadCase{"TAGWIRE_EAGER_THRESHOLD", "8T", "byte count"},
                      BadCase{"TAGWIRE_EAGER_THRESHOLD", "-1", "byte count"},
                      BadCase{"TAGWIRE_EAGER_THRESHOLD", "2G", "at most 1G"},
                      BadCase{"TAGWIRE_EAGER_THRESHOLD", "99999999999999999999", "byte count"},
                      BadCase{"TAGWIRE_LOG_LEVEL", "loud", "one of error warn"},
                      BadCase{"TAGWIRE_TRANSPORT", "tcp", "one of auto shm ucx verbs"},
                      BadCase{"TAGWIRE_CANCEL_MODE", "remote", "one of agent onesided"},
                      BadCase{"TAGWIRE_TM", "maybe", "one of auto on off"},
                      BadCase{"TAGWIRE_VERBS_CONNECT", "tcp", "one of auto cm exchange"},
                      BadCase{"TAGWIRE_PROGRESS_THREAD", "2", "one of 1 0"},
                      BadCase{"TAGWIRE_DEVICE", "", "device name"},
                      BadCase{"TAGWIRE_PEER_TIMEOUT", "0", "above zero"},
                      BadCase{"TAGWIRE_PEER_TIMEOUT", "5h", "duration"},
                      BadCase{"TAGWIRE_PEER_TIMEOUT", "9999999999999m", "at most a week"},
                      BadCase{"TAGWIRE_EAGER_TRESHOLD", "8K", "not a Tagwire setting"}));

TEST(Config, ReservedPrefixesBelongToTheirOwners) {
  auto config = Config::from_variables({{"TAGWIRE_BOOT_RANK", "3"}, {"TAGWIRE_TEST_SEED", "x"}});
  EXPECT_TRUE(config.is_ok()) << config.status().to_string();
}

TEST(Config, ReadsTheProcessEnvironment) {
  ::setenv("TAGWIRE_EAGER_THRESHOLD", "1M", 1);
  auto config = Config::from_environment();
  ::unsetenv("TAGWIRE_EAGER_THRESHOLD");
  ASSERT_TRUE(config.is_ok()) << config.status().to_string();
  EXPECT_EQ(config->eager_threshold, 1u << 20);
}

TEST(ConfigParsers, SizesBoolsAndDurations) {
  EXPECT_EQ(*parse_size("x", "0"), 0u);
  EXPECT_EQ(*parse_size("x", "3kib"), 3072u);
  EXPECT_EQ(*parse_size("x", "2G"), 2ull << 30);
  EXPECT_FALSE(parse_size("x", "").is_ok());
  EXPECT_FALSE(parse_size("x", "1 K").is_ok());
  EXPECT_TRUE(*parse_bool("x", "ON"));
  EXPECT_FALSE(*parse_bool("x", "0"));
  EXPECT_EQ(*parse_duration("x", "2m"), std::chrono::milliseconds(120000));
  EXPECT_EQ(*parse_duration("x", "7"), std::chrono::milliseconds(7000));
}

}  // namespace
}  // namespace tagwire
