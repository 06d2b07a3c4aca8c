// SPDX-License-Identifier: Apache-2.0
// gnio top: a live terminal view of a run's /metrics endpoint: rates per
// queue and per kernel block, drops, each block's heartbeat age and the
// hang verdict. 'q' quits.
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "commands.hpp"
#include "options.hpp"
#include "gnio/metrics.hpp"

namespace gnio::cli {

namespace {

struct TopOptions {
  std::string url = "http://127.0.0.1:9400/metrics";
  double interval_s = 1.0;
  bool once = false;
};

// The values of one scrape, keyed by family and then by queue or block.
struct Frame {
  std::chrono::steady_clock::time_point at;
  std::map<std::string, std::map<std::string, double>> by_queue, by_block;
  std::map<std::string, std::string> stage;  // block -> stage name
};

Frame to_frame(const std::vector<metrics::Sample>& samples) {
  Frame f;
  f.at = std::chrono::steady_clock::now();
  for (const metrics::Sample& s : samples) {
    const std::string block = s.label("block");
    if (!block.empty()) {
      f.by_block[s.name][block] += s.value;
      if (s.name == "gnio_kernel_stage") f.stage[block] = s.label("stage");
    } else if (s.labels.count("queue")) {
      f.by_queue[s.name][s.label("queue")] += s.value;
    }
  }
  return f;
}

double value(const std::map<std::string, std::map<std::string, double>>& m, const std::string& name,
             const std::string& key) {
  auto f = m.find(name);
  if (f == m.end()) return 0;
  auto v = f->second.find(key);
  return v == f->second.end() ? 0 : v->second;
}

std::string render(const TopOptions& o, const Frame& now, const Frame* before) {
  const double dt = before ? std::chrono::duration<double>(now.at - before->at).count() : 0;
  auto rate = [&](const auto& m_now, const auto& m_before, const std::string& name, const std::string& key) {
    if (!before || dt <= 0) return 0.0;
    return (value(m_now, name, key) - value(m_before, name, key)) / dt;
  };
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "gnio top  %s  every %.1f s  (q quits)\n\n", o.url.c_str(), o.interval_s);
  out += line;
  std::snprintf(line, sizeof line, "%-6s %12s %12s %14s %12s %12s %12s\n", "queue", "rx pps", "rx Mbit/s",
                "delivered", "dropped", "rx_missed", "unreleased");
  out += line;
  auto queues = now.by_queue.find("gnio_rx_packets_total");
  if (queues != now.by_queue.end())
    for (const auto& [q, delivered] : queues->second) {
      std::snprintf(line, sizeof line, "%-6s %12.0f %12.1f %14.0f %12.0f %12.0f %12.0f\n", q.c_str(),
                    rate(now.by_queue, before ? before->by_queue : now.by_queue, "gnio_rx_packets_total", q),
                    rate(now.by_queue, before ? before->by_queue : now.by_queue, "gnio_rx_bytes_total", q) * 8 / 1e6,
                    delivered, value(now.by_queue, "gnio_rx_dropped_total", q),
                    value(now.by_queue, "gnio_rx_missed_total", q),
                    delivered - value(now.by_queue, "gnio_rx_released_total", q));
      out += line;
    }
  out += "\n";
  std::snprintf(line, sizeof line, "%-6s %12s %14s %12s %-8s %s\n", "block", "pkts/s", "packets", "beat age s",
                "verdict", "stage");
  out += line;
  auto blocks = now.by_block.find("gnio_kernel_packets_total");
  int hung = 0;
  if (blocks != now.by_block.end())
    for (const auto& [b, packets] : blocks->second) {
      const bool is_hung = value(now.by_block, "gnio_kernel_hung", b) > 0;
      const bool exited = value(now.by_block, "gnio_kernel_exited", b) > 0;
      hung += is_hung;
      auto st = now.stage.find(b);
      std::snprintf(line, sizeof line, "%-6s %12.0f %14.0f %12.2f %-8s %s\n", b.c_str(),
                    rate(now.by_block, before ? before->by_block : now.by_block, "gnio_kernel_packets_total", b),
                    packets, value(now.by_block, "gnio_kernel_heartbeat_age_seconds", b),
                    is_hung ? "HUNG" : exited ? "exited" : "ok", st == now.stage.end() ? "-" : st->second.c_str());
      out += line;
    }
  out += "\n";
  out += hung ? std::to_string(hung) + " block(s) HUNG: heartbeat stalled with packets waiting\n"
              : std::string("no hung block\n");
  return out;
}

// Raw keyboard input while the view runs, restored at exit.
class RawTerminal {
 public:
  RawTerminal() {
    if (!::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  // Waits up to `ms` for a key; true when it was q (or stdin closed).
  bool quit_within(int ms) const {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return false;
    char c = 0;
    const ssize_t n = ::read(STDIN_FILENO, &c, 1);
    return n == 0 || c == 'q' || c == 'Q';
  }

 private:
  termios saved_{};
  bool active_ = false;
};

void run_top(const TopOptions& o) {
  const int interval_ms = static_cast<int>(o.interval_s * 1000);
  std::optional<Frame> before;
  RawTerminal term;
  for (;;) {
    std::string screen;
    auto body = metrics::fetch(o.url);
    std::optional<Frame> now;
    if (!body) {
      screen = "gnio top  " + o.url + "\n\n" + body.status().to_string() + "\n";
    } else if (auto samples = metrics::parse(*body); !samples) {
      screen = "gnio top  " + o.url + "\n\n" + samples.status().to_string() + "\n";
    } else {
      now = to_frame(*samples);
      screen = render(o, *now, before ? &*before : nullptr);
    }
    if (o.once) {
      if (!now) {
        std::cerr << screen;
        exit_with(1);
      }
      if (!before) {  // rates need two scrapes
        before = now;
        ::usleep(static_cast<useconds_t>(interval_ms) * 1000);
        continue;
      }
      std::cout << screen;
      return;
    }
    std::cout << "\x1b[H\x1b[2J" << screen << std::flush;
    if (now) before = now;
    if (term.quit_within(interval_ms)) return;
  }
}

}  // namespace

void add_top_command(CLI::App& app) {
  auto o = std::make_shared<TopOptions>();
  CLI::App* cmd = app.add_subcommand(
      "top", "Live view of a run's metrics: rates per queue and block, drops, heartbeat ages, hung blocks");
  cmd->add_option("--url", o->url, "The run's metrics endpoint (gnio run --metrics HOST:PORT)")->capture_default_str();
  cmd->add_option("--interval", o->interval_s, "Seconds between scrapes")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_flag("--once", o->once, "Print one view (after two scrapes, for the rates) and exit");
  cmd->footer("Example:\n  gnio run ... --metrics 127.0.0.1:9400 &\n  gnio top --url http://127.0.0.1:9400/metrics");
  cmd->callback([o] { run_top(*o); });
}

}  // namespace gnio::cli
