// SPDX-License-Identifier: Apache-2.0
#include "gnio/stop_signal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace gnio {

namespace {
std::atomic<int> g_signal{0};
std::atomic<bool> g_requested{false};
int g_pipe[2] = {-1, -1};  // written once per request: wakes wait_for()

void wake() {
  if (g_pipe[1] < 0) return;
  const char byte = 1;
  [[maybe_unused]] ssize_t n = ::write(g_pipe[1], &byte, 1);
}

extern "C" void on_stop_signal(int sig) {
  if (g_requested.exchange(true)) {
    if (sig != SIGINT) return;
    static const char msg[] = "gnio: second interrupt, exiting without cleanup\n";
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(130);
  }
  g_signal.store(sig);
  wake();
}
}  // namespace

void StopSignal::install() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
  });
}

bool StopSignal::requested() noexcept { return g_requested.load(); }
int StopSignal::signal_number() noexcept { return g_signal.load(); }

void StopSignal::request() noexcept {
  if (!g_requested.exchange(true)) wake();
}

bool StopSignal::wait_for(std::chrono::milliseconds timeout) {
  if (requested()) return true;
  if (g_pipe[0] < 0) {
    ::usleep(static_cast<useconds_t>(timeout.count()) * 1000);
    return requested();
  }
  pollfd p{g_pipe[0], POLLIN, 0};
  ::poll(&p, 1, static_cast<int>(timeout.count()));
  return requested();
}

}  // namespace gnio
