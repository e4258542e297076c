// Leveled logging to stderr, one line per call, safe from any thread.
// Each line: "[tagwire RANK HOST:PID HH:MM:SS.micro] level component: text".
//
// Messages are built only when their level is enabled, so a disabled
// TW_LOG in a hot path costs one relaxed atomic load. What each level says:
//   error, warn  something failed or will not work as asked (default: warn)
//   info         once per process: what was chosen (transport, device,
//                threads, tag matching) and end-of-run summaries
//   debug        per connection and per protocol event that is not per
//                message: connections made, cancels asked and answered,
//                peers found dead
//   trace        per message: each send's protocol (eager, rendezvous),
//                each arrival (matched, unexpected), each rendezvous read
#pragma once

#include <atomic>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace tagwire::log {

enum class Level : int { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

std::string_view level_name(Level level);
std::optional<Level> parse_level(std::string_view text);

void set_level(Level level);
Level level();
inline bool enabled(Level l);

// Rank shown in every line once known ("[tagwire 3 ...] ..."); -1 hides it.
void set_rank(int rank);

// Where lines go; defaults to stderr. Tests capture output through this.
using Sink = void (*)(std::string_view line);
void set_sink(Sink sink);

void write(Level level, std::string_view component, std::string_view message);

namespace detail {
extern std::atomic<int> current_level;
}

inline bool enabled(Level l) {
  return static_cast<int>(l) <= detail::current_level.load(std::memory_order_relaxed);
}

}  // namespace tagwire::log

#define TW_LOG(level, component, stream_expr)                        \
  do {                                                               \
    if (::tagwire::log::enabled(level)) {                            \
      std::ostringstream tw_log_os_;                                 \
      tw_log_os_ << stream_expr;                                     \
      ::tagwire::log::write((level), (component), tw_log_os_.str()); \
    }                                                                \
  } while (0)

#define TW_ERROR(component, expr) TW_LOG(::tagwire::log::Level::kError, component, expr)
#define TW_WARN(component, expr) TW_LOG(::tagwire::log::Level::kWarn, component, expr)
#define TW_INFO(component, expr) TW_LOG(::tagwire::log::Level::kInfo, component, expr)
#define TW_DEBUG(component, expr) TW_LOG(::tagwire::log::Level::kDebug, component, expr)
#define TW_TRACE(component, expr) TW_LOG(::tagwire::log::Level::kTrace, component, expr)
