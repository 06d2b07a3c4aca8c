// SPDX-License-Identifier: Apache-2.0
// The Exporter's transports: a connected UDP socket, or a TCP connection
// with a bounded queue of whole messages behind it. Neither blocks; each
// counts what it sent and what it lost in the Exporter's stats.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include <sys/socket.h>

#include "gnio/ipfix.hpp"

namespace gnio::ipfix {

class Transport {
 public:
  virtual ~Transport() = default;
  // Hands one whole message of `records` data records over; true when it
  // was sent or queued, false when it was lost (counted by reason in stats).
  virtual bool send(std::span<const uint8_t> message, uint64_t records, ExporterStats& stats) = 0;
  // Connects, writes what is queued; never waits.
  virtual void poll(ExporterStats& stats) = 0;
  virtual bool up() const = 0;
  // UDP: the collector refused a message since the last call (ICMP port
  // unreachable), so the templates go out again before the next data.
  virtual bool take_refused() { return false; }
  virtual size_t max_message() const = 0;
  // Whether messages wait to be written.
  virtual bool pending() const { return false; }
  // Gives up what waits to be written, counted as lost (QueueFull).
  virtual void drop_pending(ExporterStats&) {}
};

// A resolved address of c.host:c.port, or IoError naming the collector.
struct SocketAddress {
  int family = 0;
  socklen_t length = 0;
  sockaddr_storage storage{};
};
Result<SocketAddress> resolve(const Collector& c);

Result<std::unique_ptr<Transport>> open_udp(const Collector& c, const ExporterOptions& o);
// `greeting` builds the templates message sent first on every connection.
Result<std::unique_ptr<Transport>> open_tcp(const Collector& c, const ExporterOptions& o,
                                            std::function<std::vector<uint8_t>()> greeting, ExporterStats& stats);

}  // namespace gnio::ipfix
