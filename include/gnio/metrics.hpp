// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Metrics in the Prometheus text exposition format (version 0.0.4),
/// served on /metrics by a small embedded HTTP server (cpp-httplib).
///
/// The server owns no counters: on every scrape it calls the application's
/// collector, which writes the current values (queue stats, kernel block
/// counters, heartbeat ages) into a Writer. add_rxq(), add_txq() and
/// add_kernel() write the library's standard families. Host only.
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

/// @brief Prometheus metrics: the exposition writer, the /metrics server,
/// and a parser and client to read an exposition back.
namespace gnio::metrics {

/// @brief Label names and values of one sample, in the order they are written.
using Labels = std::vector<std::pair<std::string, std::string>>;

/// @brief Collects the samples of one scrape, grouped by family.
///
/// A family's samples come out together, after its `# HELP` and `# TYPE`
/// lines, families in first-written order; the help text and type of a
/// family's first sample are kept. Label values are written valid UTF-8
/// and escaped as the format requires. Not thread-safe: one Writer per
/// scrape.
class Writer {
 public:
  /// @brief Adds a sample of a counter family.
  /// @param name The family name, e.g. "gnio_rx_packets_total".
  /// @param help The family's help text (used for its first sample).
  /// @param labels The sample's labels.
  /// @param value The count.
  void counter(std::string_view name, std::string_view help, const Labels& labels, uint64_t value);
  /// @brief Adds a sample of a counter of a fractional quantity (seconds).
  /// @param name The family name, e.g. "gnio_rx_publish_seconds_total".
  /// @param help The family's help text.
  /// @param labels The sample's labels.
  /// @param value The quantity (NaN and infinities are written as the
  ///        format spells them).
  void counter_seconds(std::string_view name, std::string_view help, const Labels& labels, double value);
  /// @brief Adds a sample of a gauge family.
  /// @param name The family name.
  /// @param help The family's help text.
  /// @param labels The sample's labels.
  /// @param value The value.
  void gauge(std::string_view name, std::string_view help, const Labels& labels, double value);
  /// @brief The exposition text of everything written so far.
  /// @return Text in format 0.0.4; empty when nothing was written.
  std::string text() const;

 private:
  struct Family {
    std::string name, help, type, samples;
  };
  Family& family(std::string_view name, std::string_view help, std::string_view type);
  std::vector<Family> families_;
};

/// @brief Writes the current values of one scrape into a Writer. The
/// Server calls it on its own thread, one scrape at a time, so it need not
/// be reentrant but must be safe against the application's threads.
using Collector = std::function<void(Writer&)>;

/// @brief One scrape's text, without a server.
/// @param collect The collector; empty gives empty text.
/// @return The exposition.
std::string render(const Collector& collect);

/// @brief Writes the standard RX queue families (gnio_rx_*: offered,
///        packets, bytes, bursts, missed, dropped by reason, truncated,
///        released, errors, copies, engine polls and times).
/// @param w The writer.
/// @param s The queue's stats (EthRxq::stats()).
/// @param base The labels that place the samples (queue, gpu, backend);
///        gnio_rx_dropped_total adds reason.
void add_rxq(Writer& w, const RxqStats& s, const Labels& base);
/// @brief Writes the standard TX queue families (gnio_tx_*: packets, bytes,
///        completions, errors, submitted, dropped by reason, waited on
///        time, copies).
/// @param w The writer.
/// @param s The queue's stats (EthTxq::stats()).
/// @param base The labels that place the samples; gnio_tx_dropped_total
///        adds reason.
void add_txq(Writer& w, const TxqStats& s, const Labels& base);

/// @brief The queue counters of gnio/queue_counters.hpp as the markdown
/// table that docs/OBSERVABILITY.md holds: one row per counter with its
/// family, RxqStats/TxqStats field, unit and meaning.
/// @return The table, a header row and one line per counter.
std::string queue_counters_markdown();
/// @brief Writes the standard kernel families (gnio_kernel_*: packets,
///        bytes, bursts, tx_again, errors, heartbeat and exited per block;
///        heartbeat age, stage and hung per block from `health`).
/// @param w The writer.
/// @param counters PersistentKernel::counters().
/// @param health PersistentKernel::health().
/// @param base The labels that place the samples; each sample adds block
///        (and gnio_kernel_stage adds stage, its name).
void add_kernel(Writer& w, const std::vector<dev::BlockCounters>& counters, const std::vector<BlockHealth>& health,
                const Labels& base);

/// @brief An HTTP reply, independent of the server library (tested and
/// fuzzed alone).
struct Reply {
  int status = 200;          ///< HTTP status code.
  std::string content_type;  ///< Content-Type header value.
  std::string body;          ///< The body; empty for HEAD /metrics.
};
/// @brief Answers one request (the Server's handler, without the network).
/// @param method The HTTP method.
/// @param target The request target; a query string is ignored.
/// @param collect The collector a /metrics request runs.
/// @return GET or HEAD /metrics: 200 with the exposition (no body for
///         HEAD); GET or HEAD /: 200 with a pointer to /metrics; other
///         paths: 404; other methods: 405.
Reply handle_request(std::string_view method, std::string_view target, const Collector& collect);

/// @brief One sample read back from an exposition (`gnio top`, tests).
struct Sample {
  std::string name;                           ///< The metric name.
  std::map<std::string, std::string> labels;  ///< Labels, unescaped.
  double value = 0;                           ///< The value (NaN and infinities included).
  /// @brief The value of one label.
  /// @param key The label name.
  /// @return Its value; empty when the sample has no such label.
  std::string label(const std::string& key) const {
    auto it = labels.find(key);
    return it == labels.end() ? std::string() : it->second;
  }
};
/// @brief Parses exposition text.
///
/// Comment and empty lines are skipped; a timestamp after the value is ignored.
/// @param text Text in format 0.0.4.
/// @return The samples in text order, or InvalidValue naming the first bad
///         line and what is wrong with it.
Result<std::vector<Sample>> parse(std::string_view text);

/// @brief How a Server may bind.
struct ServerOptions {
  /// Binding to anything but a loopback address exposes the counters to
  /// the network; it needs this explicit consent.
  bool allow_non_loopback = false;
};

/// @brief The /metrics HTTP server: a listener thread that runs the
/// collector on each scrape.
///
/// Lifecycle: start() → (scrapes) → stop() (or destruction). Move-only;
/// the accessors are thread-safe.
class Server {
 public:
  /// @brief Binds the address and starts serving; returns once listening.
  /// @param address "HOST:PORT" (an IPv4 literal, "localhost", or
  ///        "[IPv6]:PORT"); port 0 picks a free one (see address()).
  /// @param collect Called on the server's thread for every GET /metrics,
  ///        one scrape at a time.
  /// @param options Binding consent.
  /// @return The running server, or: InvalidValue, before anything is
  ///         bound, for a malformed address or a non-loopback host without
  ///         `options.allow_non_loopback`; IoError when the port is taken or
  ///         the host is not an address of this machine.
  static Result<Server> start(std::string_view address, Collector collect, ServerOptions options = {});

  /// @brief No server: running() is false.
  Server();
  /// @brief Takes over the other server, which is left empty.
  Server(Server&&) noexcept;
  /// @brief Stops this server, then takes over the other.
  /// @return `*this`.
  Server& operator=(Server&&) noexcept;
  /// @brief Calls stop().
  ~Server();

  /// @brief Stops listening and joins the listener thread; a second call
  ///        (or one on an empty server) does nothing.
  void stop();
  /// @brief Whether the server is serving.
  /// @return True from start() until stop().
  bool running() const;
  /// @brief The address it listens on, with the real port.
  /// @return E.g. "127.0.0.1:9400" or "[::1]:9400"; empty for an empty server.
  std::string address() const;
  /// @brief How many /metrics requests were answered with 200.
  /// @return The count; 0 for an empty server.
  uint64_t scrapes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// @brief GET of an http:// URL (a /metrics endpoint).
/// @param url "http://HOST:PORT[/PATH]"; without a path, /metrics.
/// @param timeout Connection and read timeout each.
/// @return The body of a 200 reply, or: InvalidValue for a URL that does
///         not start with http://; IoError naming the URL when the
///         connection fails or the status is not 200.
Result<std::string> fetch(std::string_view url, std::chrono::milliseconds timeout = std::chrono::seconds(2));

/// @brief A parsed "HOST:PORT".
struct Endpoint {
  std::string host;       ///< The host, without the brackets of an IPv6 literal.
  uint16_t port = 0;      ///< The port; 0 asks for a free one.
  bool loopback = false;  ///< "localhost", "::1" or an address in 127.0.0.0/8.
};
/// @brief Parses "HOST:PORT" as Server::start() does.
/// @param address "HOST:PORT" or "[IPv6]:PORT", port 0..65535.
/// @return The endpoint, or InvalidValue saying what is missing or wrong.
Result<Endpoint> parse_endpoint(std::string_view address);

}  // namespace gnio::metrics
