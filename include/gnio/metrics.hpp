// Metrics in the Prometheus text exposition format (version 0.0.4), served
// on /metrics by a small embedded HTTP server (cpp-httplib).
//
// The server owns no counters: on every scrape it calls the application's
// collector, which writes the current values (queue stats, kernel block
// counters, heartbeat ages) into a Writer. add_rxq/add_txq/add_kernel write
// the library's standard families.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gnio/eth.hpp"
#include "gnio/persistent_kernel.hpp"
#include "gnio/status.hpp"

namespace gnio::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

// Collects samples of one scrape, grouped by family (a family's samples come
// out together, after its # HELP and # TYPE lines, in first-written order).
class Writer {
 public:
  void counter(std::string_view name, std::string_view help, const Labels& labels, uint64_t value);
  // A counter of a fractional quantity (seconds).
  void counter_seconds(std::string_view name, std::string_view help, const Labels& labels, double value);
  void gauge(std::string_view name, std::string_view help, const Labels& labels, double value);
  std::string text() const;

 private:
  struct Family {
    std::string name, help, type, samples;
  };
  Family& family(std::string_view name, std::string_view help, std::string_view type);
  std::vector<Family> families_;
};

using Collector = std::function<void(Writer&)>;

// One scrape's text.
std::string render(const Collector& collect);

// The standard families. `base` holds the labels that place the sample
// (queue, gpu, backend); add_kernel adds block.
void add_rxq(Writer& w, const RxqStats& s, const Labels& base);
void add_txq(Writer& w, const TxqStats& s, const Labels& base);
void add_kernel(Writer& w, const std::vector<dev::BlockCounters>& counters, const std::vector<BlockHealth>& health,
                const Labels& base);

// An HTTP reply, independent of the server library (tested and fuzzed alone).
struct Reply {
  int status = 200;
  std::string content_type;
  std::string body;
};
// GET|HEAD /metrics: the exposition; GET /: a pointer to /metrics; other
// paths: 404; other methods: 405.
Reply handle_request(std::string_view method, std::string_view target, const Collector& collect);

// One sample read back from an exposition (gnio top, tests).
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
  std::string label(const std::string& key) const {
    auto it = labels.find(key);
    return it == labels.end() ? std::string() : it->second;
  }
};
// Parses exposition text; InvalidValue names the first bad line.
Result<std::vector<Sample>> parse(std::string_view text);

struct ServerOptions {
  // Binding to anything but a loopback address exposes the counters to the
  // network; it needs this explicit consent.
  bool allow_non_loopback = false;
};

class Server {
 public:
  // address: "HOST:PORT" (IPv4 literal, "localhost", or "[IPv6]"); port 0
  // picks a free one (see address()). InvalidValue before anything is bound
  // for a malformed address or a non-loopback host without consent.
  static Result<Server> start(std::string_view address, Collector collect, ServerOptions options = {});

  Server();
  Server(Server&&) noexcept;
  Server& operator=(Server&&) noexcept;
  ~Server();

  void stop();
  bool running() const;
  // The address it listens on, with the real port: "127.0.0.1:9400".
  std::string address() const;
  uint64_t scrapes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// GET of an http:// URL (a /metrics endpoint): the body of a 200 reply;
// IoError naming the URL otherwise.
Result<std::string> fetch(std::string_view url, std::chrono::milliseconds timeout = std::chrono::seconds(2));

struct Endpoint {
  std::string host;
  uint16_t port = 0;
  bool loopback = false;
};
// Parses "HOST:PORT" as Server::start does.
Result<Endpoint> parse_endpoint(std::string_view address);

}  // namespace gnio::metrics
