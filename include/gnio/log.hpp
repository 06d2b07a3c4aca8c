// Library logging: one line per event, with its level, component and (where
// there is one) queue id. The level comes from GNIO_LOG_LEVEL
// (error|warn|info|debug|trace, default warn) or set_level(); the line goes
// to stderr unless the application installs its own sink.
// (Not gnio::log: with `using namespace gnio` a namespace named log would
// make ::log ambiguous in the code nvcc generates.)
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "gnio/status.hpp"

namespace gnio::logging {

enum class Level : int { Error = 0, Warn = 1, Info = 2, Debug = 3, Trace = 4 };

// One event as a sink receives it. queue is -1 when the event concerns no queue.
struct Event {
  Level level;
  std::string_view component;  // "rx-engine", "kernel", "metrics", ...
  int queue;
  std::string_view message;
};
using Sink = std::function<void(const Event&)>;

std::string_view level_name(Level level) noexcept;
// "error".."trace"; InvalidValue naming the accepted names otherwise.
Result<Level> parse_level(std::string_view name);

// Overrides GNIO_LOG_LEVEL for the whole process.
void set_level(Level level) noexcept;
Level level() noexcept;
bool enabled(Level level) noexcept;

// Replaces the stderr sink (an empty Sink restores it). The sink is called
// under the logger's lock: it must not log itself.
void set_sink(Sink sink);

// The line the default sink writes: "gnio LEVEL [component q=N] message".
std::string format(const Event& event);

void write(Level level, std::string_view component, int queue, std::string_view message);
inline void write(Level level, std::string_view component, std::string_view message) {
  write(level, component, -1, message);
}

inline void error(std::string_view c, std::string_view m) { write(Level::Error, c, m); }
inline void warn(std::string_view c, std::string_view m) { write(Level::Warn, c, m); }
inline void info(std::string_view c, std::string_view m) { write(Level::Info, c, m); }
inline void debug(std::string_view c, std::string_view m) { write(Level::Debug, c, m); }
inline void trace(std::string_view c, std::string_view m) { write(Level::Trace, c, m); }

// For events that can happen once per packet: at most `per_second` lines
// per second pass; the next line that passes says how many were suppressed.
// Thread-safe; keep one per event site (e.g. a static in the function).
class RateLimit {
 public:
  explicit RateLimit(uint32_t per_second = 10) : per_second_(per_second) {}
  void write(Level level, std::string_view component, int queue, std::string_view message);
  uint64_t suppressed() const noexcept { return suppressed_total_.load(std::memory_order_relaxed); }

 private:
  uint32_t per_second_;
  std::atomic<int64_t> window_start_ns_{0};
  std::atomic<uint32_t> in_window_{0};
  std::atomic<uint64_t> suppressed_pending_{0};
  std::atomic<uint64_t> suppressed_total_{0};
};

}  // namespace gnio::logging
