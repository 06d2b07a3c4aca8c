// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief A sink of event lines (JSON, one object a line) for a log shipper:
/// a file, appended to and reopened on request (log rotation), or a Unix
/// stream socket (`unix:PATH`) that a local shipper listens on. Writing never
/// blocks the caller: a line the socket does not take at once is counted as
/// lost, and a socket that went away is connected again at the next reopen().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gnio/status.hpp"

namespace gnio::events {

/// @brief What a sink did since it opened.
struct SinkStats {
  uint64_t lines = 0;     ///< Lines written whole.
  uint64_t lost = 0;      ///< Lines not written (socket full or gone, write error).
  uint64_t reopens = 0;   ///< reopen() calls that opened the target again.
};

/// @brief One event sink. Not thread-safe.
class Sink {
 public:
  /// @brief Opens `target`: a file path (created or appended to) or
  /// unix:PATH (a listening SOCK_STREAM socket, connected here and then
  /// written without blocking).
  /// @param target A file path, or "unix:" followed by a socket path.
  /// @return The open sink; or IoError naming the target, the reason and
  ///   what to do when the file cannot be opened or the socket cannot be
  ///   connected; InvalidValue when the socket path is empty or too long
  ///   for a Unix socket address.
  static Result<Sink> open(std::string target);

  /// @brief A sink that is not open: its lines are counted as lost.
  Sink() = default;
  /// @brief Takes over another sink's descriptor, target, half-written line
  /// and counts.
  /// @param other The sink to move from; it is left not open.
  Sink(Sink&& other) noexcept;
  /// @brief Closes this sink's descriptor, then takes over another sink's
  /// descriptor, target, half-written line and counts (nothing on self-move).
  /// @param other The sink to move from; it is left not open.
  /// @return This sink.
  Sink& operator=(Sink&& other) noexcept;
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;
  ~Sink();

  /// @brief Appends `line` and a newline, without blocking. A file gets one
  /// write() per line. On a socket, the rest of a line written in part goes
  /// first; when that rest does not go whole, or the socket takes none of
  /// this line, the line is lost (counted in SinkStats::lost). A sink that
  /// is not open counts the line as lost.
  /// @param line One event (a JSON object), without its newline.
  void write_line(std::string_view line);
  /// @brief Closes and opens the target again (after a rotation moved the
  /// file away); a socket's half-written line is dropped. Lines written
  /// while the target cannot be opened are lost and counted.
  /// @return Ok when the target opened again (SinkStats::reopens counts it);
  ///   else the error open() would return (IoError, or InvalidValue for a
  ///   bad socket path), the sink left not open.
  Status reopen();
  /// @brief Whether a target is open.
  /// @return True when a file or socket descriptor is open.
  bool is_open() const { return fd_ >= 0; }
  /// @brief The counts so far.
  /// @return The stats, counted since open(); the reference stays valid
  ///   while the sink lives and is not moved.
  const SinkStats& stats() const { return stats_; }
  /// @brief The target as given to open().
  /// @return The target text, "unix:" prefix included for a socket.
  const std::string& target() const { return target_; }

 private:
  Status open_target();
  std::string target_;
  bool socket_ = false;
  int fd_ = -1;
  std::string pending_;  // a socket's line written in part: its rest goes first
  SinkStats stats_;
};

}  // namespace gnio::events
