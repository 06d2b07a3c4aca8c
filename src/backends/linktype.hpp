// SPDX-License-Identifier: Apache-2.0
// Capture link types the pcap backend turns into Ethernet frames: Linux
// cooked capture (SLL, SLL2: what 'tcpdump -i any' writes), BSD loopback
// (NULL, LOOP) and raw IP (RAW, IPV4, IPV6). Such a record gets a made-up
// 14-byte Ethernet header in place of its own link-layer header; the frame's
// descriptor says so (RxFrameSyntheticL2).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "gnio/status.hpp"

namespace gnio::backend {

enum class LinkFraming : uint8_t {
  Ethernet,  // EN10MB: records are Ethernet frames already
  Sll,       // LINUX_SLL: 16-byte cooked header
  Sll2,      // LINUX_SLL2: 20-byte cooked header
  Null,      // NULL: 4-byte address family in the capturing host's byte order
  Loop,      // LOOP: 4-byte address family in network byte order
  Raw,       // RAW: an IPv4 or IPv6 packet, told apart by its version nibble
  Ipv4,      // IPV4: an IPv4 packet
  Ipv6,      // IPV6: an IPv6 packet
};

inline constexpr uint32_t kEthHeaderLen = 14;

// The framing of a capture of libpcap link type `dlt`, or an InvalidValue
// status that names the link type, its usual cause and what to do. `path`
// names the file in the message.
Result<LinkFraming> link_framing(int dlt, const std::string& path);

// Bytes of link-layer header a record of this framing starts with.
uint32_t link_header_len(LinkFraming framing);

// The longest Ethernet frame a record of `caplen` bytes can become (0 for
// a record shorter than its link-layer header).
inline uint32_t max_ethernet_len(LinkFraming framing, uint32_t caplen) {
  if (framing == LinkFraming::Ethernet) return caplen;
  const uint32_t header = link_header_len(framing);
  return caplen < header ? 0 : caplen - header + kEthHeaderLen;
}

// What replaces a record's link-layer header: `eth` goes in front of the
// record's bytes after `strip`.
struct SyntheticL2 {
  uint8_t eth[kEthHeaderLen];
  uint32_t strip;
};

// The Ethernet header for `record` (a record of a non-Ethernet framing), or
// nullopt when its link-layer header cannot become one: the record is
// shorter than its header, or carries something other than an EtherType
// protocol or 802.2 LLC (netlink, CAN), an unknown address family, or an IP
// version the link type does not allow.
std::optional<SyntheticL2> synthetic_l2(LinkFraming framing, std::span<const uint8_t> record);

// Writes the Ethernet frame of `record` (whose header is `l2`) to `dst`, cut
// to `max` bytes; returns the bytes written.
uint32_t write_ethernet(const SyntheticL2& l2, std::span<const uint8_t> record, uint8_t* dst, uint32_t max);

}  // namespace gnio::backend
