// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Library logging: one line per event, with its level, component
/// and (where there is one) queue id.
///
/// The level comes from the environment variable GNIO_LOG_LEVEL
/// (error|warn|info|debug|trace, default warn; read at the first use) or
/// set_level(); the line goes to stderr unless the application installs its
/// own sink. Every function is thread-safe. (The namespace is not gnio\::log:
/// with `using namespace gnio` a namespace named log would make \::log
/// ambiguous in the code nvcc generates.)
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "gnio/status.hpp"

/// @brief Library logging (levels, sink, rate limiting).
namespace gnio::logging {

/// @brief Severity; a level passes when it is at most the process's
/// threshold (level()).
enum class Level : int {
  Error = 0,  ///< A failure the application should see.
  Warn = 1,   ///< Something unexpected that gnio worked around (the default threshold).
  Info = 2,   ///< Lifecycle events: contexts opened, kernels launched, servers started.
  Debug = 3,  ///< Details for debugging gnio itself.
  Trace = 4,  ///< Everything, including per-burst events.
};

/// @brief One event as a sink receives it. The views are valid only during
/// the sink call.
struct Event {
  Level level;                 ///< Severity.
  std::string_view component;  ///< Who logs: "rx-engine", "kernel", "metrics", ...
  int queue;                   ///< The queue id; -1 when the event concerns no queue.
  std::string_view message;    ///< The text, without a trailing newline.
};
/// @brief A log sink: receives every event that passes the level.
using Sink = std::function<void(const Event&)>;

/// @brief The lower-case name of a level.
/// @param level The level.
/// @return "error", "warn", "info", "debug" or "trace"; "?" outside the enumeration.
std::string_view level_name(Level level) noexcept;
/// @brief The level a name stands for, the inverse of level_name().
/// @param name "error", "warn", "info", "debug" or "trace" (lower case).
/// @return The level, or InvalidValue naming the accepted names.
Result<Level> parse_level(std::string_view name);

/// @brief Sets the threshold for the whole process, overriding GNIO_LOG_LEVEL.
/// @param level The most verbose level that passes.
void set_level(Level level) noexcept;
/// @brief The threshold.
/// @return The most verbose level that passes.
Level level() noexcept;
/// @brief Whether events of a level pass, to skip building a message that
///        would be dropped.
/// @param level The level.
/// @return True when `level` is at most level().
bool enabled(Level level) noexcept;

/// @brief Replaces the stderr sink for the whole process.
///
/// The sink is called under the logger's lock, on whichever thread logs:
/// it must not log itself, and should be quick.
/// @param sink The new sink; an empty Sink restores the stderr one.
void set_sink(Sink sink);

/// @brief The line the default sink writes.
/// @param event The event.
/// @return "gnio LEVEL [component q=N] message" (" q=N" only with a queue),
///         without a newline.
std::string format(const Event& event);

/// @brief Logs one event about a queue, if its level passes.
/// @param level Severity.
/// @param component Who logs, e.g. "rx-engine".
/// @param queue The queue id; -1 for none.
/// @param message The text.
void write(Level level, std::string_view component, int queue, std::string_view message);
/// @brief Logs one event that concerns no queue, if its level passes.
/// @param level Severity.
/// @param component Who logs.
/// @param message The text.
inline void write(Level level, std::string_view component, std::string_view message) {
  write(level, component, -1, message);
}

/// @brief Logs at Level::Error.
/// @param c The component.
/// @param m The message.
inline void error(std::string_view c, std::string_view m) { write(Level::Error, c, m); }
/// @brief Logs at Level::Warn.
/// @param c The component.
/// @param m The message.
inline void warn(std::string_view c, std::string_view m) { write(Level::Warn, c, m); }
/// @brief Logs at Level::Info.
/// @param c The component.
/// @param m The message.
inline void info(std::string_view c, std::string_view m) { write(Level::Info, c, m); }
/// @brief Logs at Level::Debug.
/// @param c The component.
/// @param m The message.
inline void debug(std::string_view c, std::string_view m) { write(Level::Debug, c, m); }
/// @brief Logs at Level::Trace.
/// @param c The component.
/// @param m The message.
inline void trace(std::string_view c, std::string_view m) { write(Level::Trace, c, m); }

/// @brief A rate limit for events that can happen once per packet: at most
/// `per_second` lines per one-second window pass; the next line that passes
/// says how many were suppressed.
///
/// Thread-safe; keep one per event site (e.g. a static in the function).
class RateLimit {
 public:
  /// @brief A limit of `per_second` lines per second.
  /// @param per_second Lines that pass per one-second window.
  explicit RateLimit(uint32_t per_second = 10) : per_second_(per_second) {}
  /// @brief Logs like logging::write() unless the window's lines are used
  ///        up; events below the threshold are neither written nor counted.
  /// @param level Severity.
  /// @param component Who logs.
  /// @param queue The queue id; -1 for none.
  /// @param message The text; " (N similar lines suppressed)" is appended
  ///        when lines were suppressed since the last one that passed.
  void write(Level level, std::string_view component, int queue, std::string_view message);
  /// @brief Lines suppressed since construction.
  /// @return The count.
  uint64_t suppressed() const noexcept { return suppressed_total_.load(std::memory_order_relaxed); }

 private:
  uint32_t per_second_;
  std::atomic<int64_t> window_start_ns_{0};
  std::atomic<uint32_t> in_window_{0};
  std::atomic<uint64_t> suppressed_pending_{0};
  std::atomic<uint64_t> suppressed_total_{0};
};

}  // namespace gnio::logging
