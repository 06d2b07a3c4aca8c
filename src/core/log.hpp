// Minimal leveled logger for the library: GNIO_LOG_LEVEL=error|warn|info|debug
// (default warn), written to stderr with a component tag.
#pragma once

#include <string_view>

namespace gnio::log {

enum class Level : int { Error = 0, Warn = 1, Info = 2, Debug = 3 };

bool enabled(Level level) noexcept;
void write(Level level, std::string_view component, std::string_view message);

inline void error(std::string_view c, std::string_view m) { write(Level::Error, c, m); }
inline void warn(std::string_view c, std::string_view m) { write(Level::Warn, c, m); }
inline void info(std::string_view c, std::string_view m) { write(Level::Info, c, m); }
inline void debug(std::string_view c, std::string_view m) { write(Level::Debug, c, m); }

}  // namespace gnio::log
