// SPDX-License-Identifier: Apache-2.0
// Collector addresses (udp://HOST:PORT, tcp://HOST:PORT) and the names of
// the reasons a record is lost.
#include <charconv>
#include <string>

#include "gnio/ipfix.hpp"

namespace gnio::ipfix {

std::string Collector::text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return std::string(transport == Transport::Udp ? "udp://" : "tcp://") + (v6 ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

Result<Collector> parse_collector(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return Status(Errc::InvalidValue, Layer::App,
                  "IPFIX collector '" + std::string(url) + "' " + why +
                      ": give udp://HOST:PORT or tcp://HOST:PORT, e.g. udp://127.0.0.1:4739");
  };
  Collector c;
  std::string_view rest;
  if (url.rfind("udp://", 0) == 0) {
    c.transport = Collector::Transport::Udp;
  } else if (url.rfind("tcp://", 0) == 0) {
    c.transport = Collector::Transport::Tcp;
  } else {
    return bad("names no transport");
  }
  rest = url.substr(6);
  size_t colon;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
      return bad("has an IPv6 address without ']:PORT'");
    c.host = std::string(rest.substr(1, close - 1));
    colon = close + 1;
  } else {
    colon = rest.rfind(':');
    if (colon == std::string_view::npos) return bad("has no port");
    c.host = std::string(rest.substr(0, colon));
  }
  const std::string_view port = rest.substr(colon + 1);
  unsigned v = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
  if (ec != std::errc() || end != port.data() + port.size() || v == 0 || v > 65535)
    return bad("has a port that is not 1..65535");
  if (c.host.empty()) return bad("has no host");
  c.port = static_cast<uint16_t>(v);
  return c;
}

std::string_view loss_reason_name(LossReason r) {
  switch (r) {
    case LossReason::CollectorDown: return "collector_down";
    case LossReason::SocketBufferFull: return "socket_buffer_full";
    case LossReason::QueueFull: return "queue_full";
  }
  return "unknown";
}

}  // namespace gnio::ipfix
