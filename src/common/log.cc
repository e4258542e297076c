#include "common/log.h"

#include <atomic>
#include <cstdio>
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

void write(Level level, std::string_view component, std::string_view message) {
  std::string line = "[tagwire";
  if (int rank = g_rank.load(std::memory_order_relaxed); rank >= 0) {
    line += ' ';
    line += std::to_string(rank);
  }
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
