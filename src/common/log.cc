#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace tagwire::log {

namespace detail {
std::atomic<int> current_level{static_cast<int>(Level::kWarn)};
}

namespace {
std::atomic<int> g_rank{-1};
std::atomic<Sink> g_sink{nullptr};
std::mutex g_write_mutex;  // keeps lines from different threads whole

void stderr_sink(std::string_view line) {
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// The host's short name, read once (it does not change under a job).
const std::string& host_name() {
  static const std::string name = [] {
    char buf[256] = {};
    if (::gethostname(buf, sizeof(buf) - 1) != 0) return std::string("?");
    std::string n(buf);
    return n.substr(0, n.find('.'));
  }();
  return name;
}

// "17:55:01.123456", local wall-clock time: lines of several ranks and
// hosts (and the launcher's, and Slurm's) can be put in one order.
std::string time_of_day() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  tm local{};
  ::localtime_r(&now.tv_sec, &local);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%02d:%02d:%02d.%06ld", local.tm_hour, local.tm_min, local.tm_sec,
                now.tv_nsec / 1000);
  return buf;
}
}  // namespace

std::string_view level_name(Level level) {
  switch (level) {
    case Level::kError:
      return "error";
    case Level::kWarn:
      return "warn";
    case Level::kInfo:
      return "info";
    case Level::kDebug:
      return "debug";
    case Level::kTrace:
      return "trace";
  }
  return "?";
}

std::optional<Level> parse_level(std::string_view text) {
  for (int i = 0; i <= static_cast<int>(Level::kTrace); ++i) {
    auto l = static_cast<Level>(i);
    if (text == level_name(l)) return l;
  }
  return std::nullopt;
}

void set_level(Level level) {
  detail::current_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

Level level() {
  return static_cast<Level>(detail::current_level.load(std::memory_order_relaxed));
}

void set_rank(int rank) {
  g_rank.store(rank, std::memory_order_relaxed);
}

void set_sink(Sink sink) {
  g_sink.store(sink, std::memory_order_release);
}

// "[tagwire 3 node7:41213 17:55:01.123456] warn engine: ...": the rank
// (once known), where (host and pid: a log gathered from a cluster, a
// forked child), and when.
void write(Level level, std::string_view component, std::string_view message) {
  std::string line = "[tagwire";
  if (int rank = g_rank.load(std::memory_order_relaxed); rank >= 0) {
    line += ' ';
    line += std::to_string(rank);
  }
  line += ' ';
  line += host_name();
  line += ':';
  line += std::to_string(::getpid());
  line += ' ';
  line += time_of_day();
  line += "] ";
  line += level_name(level);
  line += ' ';
  line += component;
  line += ": ";
  line += message;
  line += '\n';
  Sink sink = g_sink.load(std::memory_order_acquire);
  std::lock_guard lock(g_write_mutex);
  (sink ? sink : stderr_sink)(line);
}

}  // namespace tagwire::log
