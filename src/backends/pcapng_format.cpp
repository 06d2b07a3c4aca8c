// SPDX-License-Identifier: Apache-2.0
#include "backends/pcapng_format.hpp"

#include <algorithm>
#include <cstring>

namespace gnio::backend::pcapng {

namespace {

// Block types and option codes of draft-ietf-opsawg-pcapng.
constexpr uint32_t kSectionHeaderBlock = 0x0A0D0D0A;
constexpr uint32_t kInterfaceDescriptionBlock = 1;
constexpr uint32_t kInterfaceStatisticsBlock = 5;
constexpr uint32_t kEnhancedPacketBlock = 6;
constexpr uint32_t kByteOrderMagic = 0x1A2B3C4D;
constexpr uint16_t kLinktypeEthernet = 1;
constexpr uint8_t kNanoseconds = 9;  // if_tsresol: 10^-9 s

constexpr uint16_t kOptEndOfOpt = 0, kOptComment = 1;
constexpr uint16_t kShbUserAppl = 4;
constexpr uint16_t kIfName = 2, kIfDescription = 3, kIfTsresol = 9;
constexpr uint16_t kEpbFlags = 2, kEpbDropcount = 4;
constexpr uint16_t kIsbStartTime = 2, kIsbEndTime = 3, kIsbIfRecv = 4, kIsbIfDrop = 5, kIsbUsrDeliv = 8;

// Block header, fixed part and trailer of an Enhanced Packet Block.
constexpr size_t kPacketBlockFixed = 4 * 7 + 4;

constexpr size_t padded(size_t n) { return (n + 3) & ~size_t{3}; }

template <class T>
void put(std::vector<uint8_t>& out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.insert(out.end(), b, b + sizeof(T));
}

void put_bytes(std::vector<uint8_t>& out, const void* data, size_t len) {
  const auto* p = static_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + len);
  out.resize(out.size() + padded(len) - len, 0);
}

// A timestamp in if_tsresol units as blocks and isb_*time options store
// it: the upper 32 bits first.
void put_timestamp(std::vector<uint8_t>& out, uint64_t ns) {
  put(out, static_cast<uint32_t>(ns >> 32));
  put(out, static_cast<uint32_t>(ns));
}

void option(std::vector<uint8_t>& out, uint16_t code, const void* value, size_t len) {
  put(out, code);
  put(out, static_cast<uint16_t>(len));
  put_bytes(out, value, len);
}

void option_text(std::vector<uint8_t>& out, uint16_t code, std::string_view text) {
  option(out, code, text.data(), std::min<size_t>(text.size(), 0xFFFC));
}

void option_u64(std::vector<uint8_t>& out, uint16_t code, uint64_t value) { option(out, code, &value, 8); }

void option_time(std::vector<uint8_t>& out, uint16_t code, uint64_t ns) {
  put(out, code);
  put(out, uint16_t{8});
  put_timestamp(out, ns);
}

// Starts a block: its type and a length that end_block() fills in.
size_t begin_block(std::vector<uint8_t>& out, uint32_t type) {
  const size_t at = out.size();
  put(out, type);
  put(out, uint32_t{0});
  return at;
}

// Ends the block's options with opt_endofopt and writes its total length
// at both ends.
void end_block(std::vector<uint8_t>& out, size_t at) {
  put(out, kOptEndOfOpt);
  put(out, uint16_t{0});
  const auto total = static_cast<uint32_t>(out.size() - at + 4);
  std::memcpy(out.data() + at + 4, &total, 4);
  put(out, total);
}

}  // namespace

void append_section_header(std::vector<uint8_t>& out, std::string_view application) {
  const size_t at = begin_block(out, kSectionHeaderBlock);
  put(out, kByteOrderMagic);
  put(out, uint16_t{1});  // version 1.0
  put(out, uint16_t{0});
  put(out, ~uint64_t{0});  // section length not given: the file is written as it goes
  option_text(out, kShbUserAppl, application);
  end_block(out, at);
}

void append_interface(std::vector<uint8_t>& out, const Interface& interface) {
  const size_t at = begin_block(out, kInterfaceDescriptionBlock);
  put(out, kLinktypeEthernet);
  put(out, uint16_t{0});
  put(out, interface.snaplen);
  option_text(out, kIfName, interface.name);
  option_text(out, kIfDescription, interface.description);
  option(out, kIfTsresol, &kNanoseconds, 1);
  end_block(out, at);
}

void append_packet(std::vector<uint8_t>& out, const Packet& packet) {
  const size_t at = begin_block(out, kEnhancedPacketBlock);
  put(out, packet.interface);
  put_timestamp(out, packet.timestamp_ns);
  put(out, packet.captured);
  put(out, packet.original);
  put_bytes(out, packet.data, packet.captured);
  option(out, kEpbFlags, &packet.flags, 4);
  if (packet.dropcount != 0) option_u64(out, kEpbDropcount, packet.dropcount);
  end_block(out, at);
}

void append_statistics(std::vector<uint8_t>& out, const Statistics& s) {
  const size_t at = begin_block(out, kInterfaceStatisticsBlock);
  put(out, s.interface);
  put_timestamp(out, s.end_ns);
  option_time(out, kIsbStartTime, s.start_ns);
  option_time(out, kIsbEndTime, s.end_ns);
  option_u64(out, kIsbIfRecv, s.received);
  option_u64(out, kIsbIfDrop, s.dropped);
  option_u64(out, kIsbUsrDeliv, s.delivered);
  if (!s.comment.empty()) option_text(out, kOptComment, s.comment);
  end_block(out, at);
}

size_t packet_block_size(uint32_t captured, bool with_dropcount) {
  // The packet's bytes, epb_flags (4 + 4), epb_dropcount (4 + 8), opt_endofopt (4).
  return kPacketBlockFixed + padded(captured) + 8 + (with_dropcount ? 12 : 0) + 4;
}

}  // namespace gnio::backend::pcapng
