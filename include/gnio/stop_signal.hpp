// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief SIGINT/SIGTERM as a stop request: the first one asks the
/// application to stop cleanly (set the kernels' exit flag, drain, flush,
/// print the summary); a second SIGINT while it does so exits at once with
/// status 130.
#pragma once

#include <chrono>

namespace gnio {

/// @brief The process-wide stop request (static members only).
///
/// Async-signal-safe where it must be: the handlers only set flags and
/// write one byte to a pipe. Thread-safe.
class StopSignal {
 public:
  /// @brief Installs the handlers for SIGINT and SIGTERM; later calls do
  ///        nothing. Call it before waiting with wait_for().
  static void install();
  /// @brief Whether a stop was requested (by a signal or request()).
  /// @return True once requested; it stays true.
  static bool requested() noexcept;
  /// @brief The signal that asked to stop.
  /// @return SIGINT or SIGTERM; 0 when no signal did (none yet, or request()).
  static int signal_number() noexcept;
  /// @brief Waits until a stop is requested or `timeout` passed.
  ///
  /// Wakes at once on a request when install() was called; otherwise it
  /// sleeps the whole timeout and then looks.
  /// @param timeout The longest wait.
  /// @return True when a stop was requested.
  static bool wait_for(std::chrono::milliseconds timeout);
  /// @brief Asks to stop as a signal would (e.g. the source ended); a second
  ///        call does nothing, and none exits the process.
  static void request() noexcept;
};

}  // namespace gnio
