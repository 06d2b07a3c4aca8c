// SPDX-License-Identifier: Apache-2.0
#include "core/log.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace gnio::logging {

namespace {
constexpr std::array<std::string_view, 5> kNames{"error", "warn", "info", "debug", "trace"};

Level level_from_environment() {
  const char* v = std::getenv("GNIO_LOG_LEVEL");
  if (!v || !*v) return Level::Warn;
  auto parsed = parse_level(v);
  if (parsed) return *parsed;
  std::fprintf(stderr, "gnio warn [log] %s; using warn\n", parsed.status().message().c_str());
  return Level::Warn;
}

std::atomic<int>& threshold() {
  static std::atomic<int> t{static_cast<int>(level_from_environment())};
  return t;
}

struct SinkSlot {
  std::mutex mu;
  Sink sink;
};
SinkSlot& slot() {
  static SinkSlot s;
  return s;
}
}  // namespace

std::string_view level_name(Level level) noexcept {
  const auto i = static_cast<size_t>(level);
  return i < kNames.size() ? kNames[i] : "?";
}

Result<Level> parse_level(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (name == kNames[i]) return static_cast<Level>(i);
  return Status(Errc::InvalidValue, Layer::App,
                "log level '" + std::string(name) + "' is not one of error, warn, info, debug, trace");
}

void set_level(Level level) noexcept { threshold().store(static_cast<int>(level), std::memory_order_relaxed); }
Level level() noexcept { return static_cast<Level>(threshold().load(std::memory_order_relaxed)); }
bool enabled(Level level) noexcept {
  return static_cast<int>(level) <= threshold().load(std::memory_order_relaxed);
}

void set_sink(Sink sink) {
  std::lock_guard lock(slot().mu);
  slot().sink = std::move(sink);
}

std::string format(const Event& e) {
  std::string line = "gnio ";
  line += level_name(e.level);
  line += " [";
  line += e.component;
  if (e.queue >= 0) line += " q=" + std::to_string(e.queue);
  line += "] ";
  line += e.message;
  return line;
}

void write(Level level, std::string_view component, int queue, std::string_view message) {
  if (!enabled(level)) return;
  const Event e{level, component, queue, message};
  std::lock_guard lock(slot().mu);
  if (slot().sink) {
    slot().sink(e);
    return;
  }
  const std::string line = format(e) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void RateLimit::write(Level level, std::string_view component, int queue, std::string_view message) {
  if (!enabled(level)) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t start = window_start_ns_.load(std::memory_order_relaxed);
  if (now - start >= 1'000'000'000 &&
      window_start_ns_.compare_exchange_strong(start, now, std::memory_order_relaxed))
    in_window_.store(0, std::memory_order_relaxed);
  if (in_window_.fetch_add(1, std::memory_order_relaxed) >= per_second_) {
    suppressed_pending_.fetch_add(1, std::memory_order_relaxed);
    suppressed_total_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const uint64_t skipped = suppressed_pending_.exchange(0, std::memory_order_relaxed);
  if (skipped == 0) {
    logging::write(level, component, queue, message);
    return;
  }
  logging::write(level, component, queue,
             std::string(message) + " (" + std::to_string(skipped) + " similar lines suppressed)");
}

}  // namespace gnio::logging
