#include "core/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace gnio::log {

namespace {
Level configured_level() {
  const char* v = std::getenv("GNIO_LOG_LEVEL");
  if (!v) return Level::Warn;
  if (!std::strcmp(v, "error")) return Level::Error;
  if (!std::strcmp(v, "info")) return Level::Info;
  if (!std::strcmp(v, "debug")) return Level::Debug;
  return Level::Warn;
}
constexpr const char* kNames[] = {"error", "warn", "info", "debug"};
}  // namespace

bool enabled(Level level) noexcept {
  static const Level threshold = configured_level();
  return static_cast<int>(level) <= static_cast<int>(threshold);
}

void write(Level level, std::string_view component, std::string_view message) {
  if (!enabled(level)) return;
  static std::mutex mu;
  std::lock_guard lock(mu);
  std::fprintf(stderr, "gnio %s [%.*s] %.*s\n", kNames[static_cast<int>(level)], static_cast<int>(component.size()),
               component.data(), static_cast<int>(message.size()), message.data());
}

}  // namespace gnio::log
