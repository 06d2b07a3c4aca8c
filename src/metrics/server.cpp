// SPDX-License-Identifier: Apache-2.0
// The /metrics endpoint on cpp-httplib: a maintained, Debian-packaged HTTP
// server with a C++ API and its own thread pool (libmicrohttpd would need a
// C callback layer for the same).
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "core/log.hpp"
#include "gnio/metrics.hpp"

namespace gnio::metrics {

struct Server::Impl {
  httplib::Server http;
  Collector collect;
  std::mutex collect_mu;  // one scrape at a time: collectors need not be reentrant
  std::thread thread;
  std::string address;
  std::atomic<uint64_t> scrapes{0};
  std::atomic<bool> running{false};

  void serve(const httplib::Request& req, httplib::Response& res) {
    Reply r;
    {
      std::lock_guard lock(collect_mu);
      r = handle_request(req.method, req.path, collect);
    }
    if (r.status == 200 && req.path == "/metrics") scrapes.fetch_add(1, std::memory_order_relaxed);
    res.status = r.status;
    if (r.status == 405) res.set_header("Allow", "GET, HEAD");
    res.set_content(std::move(r.body), r.content_type.c_str());
  }
};

Result<Server> Server::start(std::string_view address, Collector collect, ServerOptions options) {
  auto ep = parse_endpoint(address);
  if (!ep) return ep.status();
  if (!ep->loopback && !options.allow_non_loopback)
    return Status(Errc::InvalidValue, Layer::App,
                  "metrics address '" + std::string(address) + "' is not a loopback address: serving it exposes "
                  "the counters to the network; bind 127.0.0.1 or allow it explicitly (--metrics-allow-remote)");
  Server s;
  s.impl_ = std::make_unique<Impl>();
  Impl& impl = *s.impl_;
  impl.collect = std::move(collect);
  auto handler = [&impl](const httplib::Request& req, httplib::Response& res) { impl.serve(req, res); };
  impl.http.Get(".*", handler);
  impl.http.Post(".*", handler);
  impl.http.Put(".*", handler);
  impl.http.Patch(".*", handler);
  impl.http.Delete(".*", handler);
  impl.http.Options(".*", handler);
  // SO_REUSEADDR only: httplib's default SO_REUSEPORT would let a second
  // run share the port silently and answer half of the scrapes.
  impl.http.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  impl.http.set_keep_alive_max_count(10);
  impl.http.set_read_timeout(5, 0);
  int port = ep->port;
  if (port == 0) {
    port = impl.http.bind_to_any_port(ep->host.c_str());
    if (port < 0) port = 0;
  } else if (!impl.http.bind_to_port(ep->host.c_str(), port)) {
    port = 0;
  }
  if (port == 0)
    return Status(Errc::IoError, Layer::App,
                  "cannot listen on metrics address '" + std::string(address) +
                      "': the port is taken or the host is not an address of this machine; pick another "
                      "(port 0 picks a free one)");
  const bool v6 = ep->host.find(':') != std::string::npos;
  impl.address = (v6 ? "[" + ep->host + "]" : ep->host) + ":" + std::to_string(port);
  impl.running = true;
  impl.thread = std::thread([&impl] { impl.http.listen_after_bind(); });
  // stop() before the listener runs would leave it listening: wait for it.
  while (!impl.http.is_running()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  log::info("metrics", "serving http://" + impl.address + "/metrics");
  return s;
}

Server::Server() = default;
Server::Server(Server&&) noexcept = default;
Server& Server::operator=(Server&& o) noexcept {
  if (this != &o) {
    stop();
    impl_ = std::move(o.impl_);
  }
  return *this;
}
Server::~Server() { stop(); }

void Server::stop() {
  if (!impl_ || !impl_->running.exchange(false)) return;
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

bool Server::running() const { return impl_ && impl_->running; }
std::string Server::address() const { return impl_ ? impl_->address : std::string(); }
uint64_t Server::scrapes() const { return impl_ ? impl_->scrapes.load() : 0; }

Result<std::string> fetch(std::string_view url, std::chrono::milliseconds timeout) {
  auto fail = [&](const std::string& why) {
    return Status(Errc::IoError, Layer::App,
                  "scraping " + std::string(url) + ": " + why + "; is the run serving metrics there (--metrics)?");
  };
  constexpr std::string_view scheme = "http://";
  if (url.substr(0, scheme.size()) != scheme)
    return Status(Errc::InvalidValue, Layer::App,
                  "metrics URL '" + std::string(url) + "' must start with http:// (e.g. http://127.0.0.1:9400/metrics)");
  const std::string_view rest = url.substr(scheme.size());
  const size_t slash = rest.find('/');
  const std::string host_port(rest.substr(0, slash));
  const std::string path = slash == std::string_view::npos ? "/metrics" : std::string(rest.substr(slash));
  httplib::Client client("http://" + host_port);
  const auto sec = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(timeout - sec);
  client.set_connection_timeout(sec.count(), usec.count());
  client.set_read_timeout(sec.count(), usec.count());
  auto res = client.Get(path.c_str());
  if (!res) return fail(httplib::to_string(res.error()));
  if (res->status != 200) return fail("HTTP status " + std::to_string(res->status));
  return res->body;
}

}  // namespace gnio::metrics
