// SIGINT/SIGTERM as a stop request: the first one asks the application to
// stop cleanly (set the kernels' exit flag, drain, flush, print the summary);
// a second SIGINT while it does so exits at once with status 130.
#pragma once

#include <chrono>

namespace gnio {

class StopSignal {
 public:
  // Installs the handlers for SIGINT and SIGTERM (idempotent).
  static void install();
  static bool requested() noexcept;
  // The signal that asked to stop (0: none yet).
  static int signal_number() noexcept;
  // Waits until a stop is requested or `timeout` passed; true when requested.
  static bool wait_for(std::chrono::milliseconds timeout);
  // Asks to stop as a signal would (e.g. the source ended).
  static void request() noexcept;
};

}  // namespace gnio
