// SPDX-License-Identifier: Apache-2.0
#include "backends/linktype.hpp"

#include <pcap/pcap.h>

#include <algorithm>
#include <cstring>

namespace gnio::backend {

namespace {

constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
constexpr uint16_t kMinEtherType = 0x0600;     // smaller type fields are 802.3 lengths
constexpr uint16_t kMax8023Length = 1500;
constexpr uint16_t kSllProtoNovell8023 = 0x0001;  // SLL protocol: an 802.3 frame without LLC
constexpr uint16_t kSllProto8022 = 0x0004;        // SLL protocol: an 802.2 LLC frame
constexpr uint16_t kArphrdNetlink = 824;          // SLL hatype of nlmon: kernel messages
constexpr uint8_t kSllBroadcast = 1;              // SLL packet types
constexpr uint8_t kSllMulticast = 2;

// Address families of NULL/LOOP headers: IPv4 everywhere; IPv6 differs by OS.
constexpr uint32_t kBsdAfInet = 2;
constexpr uint32_t kBsdAfInet6[] = {24, 28, 30};  // NetBSD/OpenBSD, FreeBSD, Darwin

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t be32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 | p[3];
}

// Why a capture of an unsupported link type usually exists, for the message.
const char* usual_cause(int dlt) {
  switch (dlt) {
    case DLT_IEEE802_11:
    case DLT_IEEE802_11_RADIO:
    case DLT_IEEE802_11_RADIO_AVS:
    case DLT_PRISM_HEADER:
    case DLT_PPI:
      return "a Wi-Fi capture in monitor mode (802.11 frames); capture without monitor mode, where the interface "
             "hands over Ethernet frames, or on the wired side";
    case DLT_USB_LINUX:
    case DLT_USB_LINUX_MMAPPED:
    case DLT_USBPCAP:
      return "a USB bus capture (usbmon, USBPcap): it holds USB transfers, not network frames; capture on the "
             "network interface instead";
    case DLT_NETLINK:
      return "a netlink monitor capture (nlmon): it holds kernel messages, not network frames";
    case DLT_PPP:
    case DLT_PPP_SERIAL:
    case DLT_PPP_ETHER:
    case DLT_PPP_WITH_DIR:
      return "a capture on a PPP link; capture on the Ethernet interface beneath it, or with 'tcpdump -i any' "
             "(Linux cooked capture, which gnio replays)";
    case DLT_CAN_SOCKETCAN:
      return "a CAN bus capture: it holds CAN frames, not network frames";
    case DLT_BLUETOOTH_HCI_H4:
    case DLT_BLUETOOTH_HCI_H4_WITH_PHDR:
    case DLT_BLUETOOTH_LE_LL:
    case DLT_BLUETOOTH_LINUX_MONITOR:
      return "a Bluetooth capture: it holds Bluetooth packets, not network frames";
    default:
      return "a link type gnio has no decoder for; capture on an Ethernet interface or with 'tcpdump -i any'";
  }
}

// SLL and SLL2 share their fields, in different places.
std::optional<SyntheticL2> cooked(uint16_t protocol, uint16_t hatype, uint8_t pkttype, uint8_t halen,
                                  const uint8_t* addr, uint32_t header_len, size_t record_len) {
  if (hatype == kArphrdNetlink) return std::nullopt;
  uint16_t type = protocol;
  if (protocol < kMinEtherType) {
    // 802.2 LLC and raw 802.3 frames become 802.3 frames: the type field
    // holds the payload length.
    size_t payload = record_len - header_len;
    if ((protocol != kSllProto8022 && protocol != kSllProtoNovell8023) || payload > kMax8023Length) return std::nullopt;
    type = static_cast<uint16_t>(payload);
  }
  SyntheticL2 l2{};
  l2.strip = header_len;
  if (pkttype == kSllBroadcast) std::memset(l2.eth, 0xFF, 6);
  if (pkttype == kSllMulticast) l2.eth[0] = 0x01;  // the group bit
  if (halen == 6) std::memcpy(l2.eth + 6, addr, 6);
  l2.eth[12] = static_cast<uint8_t>(type >> 8);
  l2.eth[13] = static_cast<uint8_t>(type);
  return l2;
}

std::optional<SyntheticL2> with_type(uint16_t type, uint32_t strip) {
  SyntheticL2 l2{};  // both addresses zero, as on Linux loopback
  l2.strip = strip;
  l2.eth[12] = static_cast<uint8_t>(type >> 8);
  l2.eth[13] = static_cast<uint8_t>(type);
  return l2;
}

}  // namespace

Result<LinkFraming> link_framing(int dlt, const std::string& path) {
  switch (dlt) {
    case DLT_EN10MB: return LinkFraming::Ethernet;
    case DLT_LINUX_SLL: return LinkFraming::Sll;
    case DLT_LINUX_SLL2: return LinkFraming::Sll2;
    case DLT_NULL: return LinkFraming::Null;
    case DLT_LOOP: return LinkFraming::Loop;
    case DLT_RAW: return LinkFraming::Raw;
    case DLT_IPV4: return LinkFraming::Ipv4;
    case DLT_IPV6: return LinkFraming::Ipv6;
    default: break;
  }
  const char* name = pcap_datalink_val_to_name(dlt);
  const char* desc = pcap_datalink_val_to_description(dlt);
  return Status(Errc::InvalidValue, Layer::Backend,
                "pcap: '" + path + "' has link type " + (name ? name : std::to_string(dlt)) + " (" +
                    (desc ? desc : "unknown") + "), " + usual_cause(dlt) +
                    ". gnio replays Ethernet (EN10MB), Linux cooked (LINUX_SLL, LINUX_SLL2), BSD loopback "
                    "(NULL, LOOP) and raw IP (RAW, IPV4, IPV6) captures");
}

uint32_t link_header_len(LinkFraming framing) {
  switch (framing) {
    case LinkFraming::Ethernet: return kEthHeaderLen;
    case LinkFraming::Sll: return 16;
    case LinkFraming::Sll2: return 20;
    case LinkFraming::Null:
    case LinkFraming::Loop: return 4;
    case LinkFraming::Raw:
    case LinkFraming::Ipv4:
    case LinkFraming::Ipv6: return 0;
  }
  return 0;
}

std::optional<SyntheticL2> synthetic_l2(LinkFraming framing, std::span<const uint8_t> record) {
  const uint32_t header = link_header_len(framing);
  if (record.size() < header || framing == LinkFraming::Ethernet) return std::nullopt;
  const uint8_t* p = record.data();
  switch (framing) {
    case LinkFraming::Sll:
      return cooked(be16(p + 14), be16(p + 2), static_cast<uint8_t>(be16(p)), static_cast<uint8_t>(be16(p + 4)),
                    p + 6, header, record.size());
    case LinkFraming::Sll2:
      return cooked(be16(p), be16(p + 8), p[10], p[11], p + 12, header, record.size());
    case LinkFraming::Null:
    case LinkFraming::Loop: {
      // NULL is in the writer's byte order, LOOP in network order; a family
      // is a small number, so a value above 16 bits is the other order.
      uint32_t family = be32(p);
      if (family > 0xFFFF) family = __builtin_bswap32(family);
      if (family == kBsdAfInet) return with_type(kEtherTypeIpv4, header);
      if (std::find(std::begin(kBsdAfInet6), std::end(kBsdAfInet6), family) != std::end(kBsdAfInet6))
        return with_type(kEtherTypeIpv6, header);
      return std::nullopt;
    }
    case LinkFraming::Raw:
    case LinkFraming::Ipv4:
    case LinkFraming::Ipv6: {
      if (record.empty()) return std::nullopt;
      const uint8_t version = p[0] >> 4;
      if (version == 4 && framing != LinkFraming::Ipv6) return with_type(kEtherTypeIpv4, header);
      if (version == 6 && framing != LinkFraming::Ipv4) return with_type(kEtherTypeIpv6, header);
      return std::nullopt;
    }
    case LinkFraming::Ethernet: break;
  }
  return std::nullopt;
}

uint32_t write_ethernet(const SyntheticL2& l2, std::span<const uint8_t> record, uint8_t* dst, uint32_t max) {
  const uint32_t head = std::min(kEthHeaderLen, max);
  std::memcpy(dst, l2.eth, head);
  const uint32_t body = std::min<uint32_t>(static_cast<uint32_t>(record.size() - l2.strip), max - head);
  std::memcpy(dst + head, record.data() + l2.strip, body);
  return head + body;
}

}  // namespace gnio::backend
