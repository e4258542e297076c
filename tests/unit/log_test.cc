#include <gtest/gtest.h>

#include <unistd.h>

#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"

namespace tagwire {
namespace {

std::mutex g_lines_mutex;
std::vector<std::string> g_lines;

void capture(std::string_view line) {
  std::lock_guard lock(g_lines_mutex);
  g_lines.emplace_back(line);
}

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_lines.clear();
    log::set_sink(&capture);
    saved_ = log::level();
  }
  void TearDown() override {
    log::set_sink(nullptr);
    log::set_level(saved_);
    log::set_rank(-1);
  }
  log::Level saved_{};
};

TEST_F(LogTest, LevelsFilterAndMessagesAreOneLineEach) {
  log::set_level(log::Level::kInfo);
  int evaluated = 0;
  TW_DEBUG("test", "hidden " << ++evaluated);
  TW_INFO("test", "shown " << 42);
  TW_ERROR("test", "also shown");
  EXPECT_EQ(evaluated, 0) << "a disabled message must not be built";
  ASSERT_EQ(g_lines.size(), 2u);
  EXPECT_NE(g_lines[0].find("] info test: shown 42\n"), std::string::npos) << g_lines[0];
  EXPECT_NE(g_lines[1].find("] error test: also shown\n"), std::string::npos) << g_lines[1];
}

// Every line says where and when: host and pid (a log gathered from many
// nodes, a forked child), and the time of day to the microsecond.
TEST_F(LogTest, LinesCarryHostPidAndTime) {
  TW_ERROR("test", "x");
  ASSERT_EQ(g_lines.size(), 1u);
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  std::string short_host(host);
  short_host = short_host.substr(0, short_host.find('.'));
  const std::regex shape(
      R"(\[tagwire ([^ :]+):(\d+) (\d\d):(\d\d):(\d\d)\.(\d{6})\] error test: x\n)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(g_lines[0], m, shape)) << g_lines[0];
  EXPECT_EQ(m[1], short_host);
  EXPECT_EQ(std::stoi(m[2]), static_cast<int>(::getpid()));
  EXPECT_LT(std::stoi(m[3]), 24);
  EXPECT_LT(std::stoi(m[4]), 60);
}

TEST_F(LogTest, RankAppearsOnceKnown) {
  log::set_rank(3);
  TW_WARN("engine", "x");
  ASSERT_EQ(g_lines.size(), 1u);
  EXPECT_EQ(g_lines[0].rfind("[tagwire 3 ", 0), 0u) << g_lines[0];
  EXPECT_NE(g_lines[0].find("] warn engine: x\n"), std::string::npos) << g_lines[0];
}

TEST_F(LogTest, LevelNamesRoundTrip) {
  for (auto l : {log::Level::kError, log::Level::kWarn, log::Level::kInfo, log::Level::kDebug,
                 log::Level::kTrace}) {
    EXPECT_EQ(log::parse_level(log::level_name(l)), l);
  }
  EXPECT_FALSE(log::parse_level("verbose").has_value());
}

// Runs under TSan in CI: lines from many threads stay whole and none is lost.
TEST_F(LogTest, ConcurrentWritersKeepLinesWhole) {
  log::set_level(log::Level::kInfo);
  constexpr int kThreads = 4;
  constexpr int kLines = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kLines; ++i) {
        if (i == kLines / 2) log::set_level(log::Level::kInfo);  // concurrent level writes too
        TW_INFO("thread", t << ":" << i);
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(g_lines.size(), static_cast<std::size_t>(kThreads * kLines));
  for (const auto& line : g_lines) {
    EXPECT_NE(line.find("] info thread: "), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  }
}

}  // namespace
}  // namespace tagwire
