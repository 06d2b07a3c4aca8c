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
  /// unix:PATH (a listening SOCK_STREAM socket). IoError naming the target,
  /// the reason and what to do when it cannot be opened.
  static Result<Sink> open(std::string target);

  Sink() = default;
  Sink(Sink&& other) noexcept;
  Sink& operator=(Sink&& other) noexcept;
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;
  ~Sink();

  /// @brief Appends `line` and a newline.
  void write_line(std::string_view line);
  /// @brief Closes and opens the target again (after a rotation moved the
  /// file away): the error of the open, else ok; lines written while the
  /// target cannot be opened are lost and counted.
  Status reopen();
  /// @brief Whether a target is open.
  bool is_open() const { return fd_ >= 0; }
  /// @brief The counts so far.
  const SinkStats& stats() const { return stats_; }
  /// @brief The target as given to open().
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
