// SPDX-License-Identifier: Apache-2.0
// The pcapng blocks pcapng-out writes (draft-ietf-opsawg-pcapng): Section
// Header, Interface Description, Enhanced Packet and Interface Statistics
// Blocks, each appended whole to a byte buffer. libpcap 1.10 (Debian 12)
// reads pcapng but only writes pcap, so these are encoded here. Values are
// in the host's byte order (the Section Header's byte-order magic tells a
// reader which); every block and option is padded to 32 bits and every
// option list ends with opt_endofopt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gnio::backend::pcapng {

// epb_flags bits 0-1, the direction: 2 is outbound.
inline constexpr uint32_t kFlagsOutbound = 2;

// One interface: its Interface Description Block. Ethernet, nanosecond
// timestamps (if_tsresol 9).
struct Interface {
  std::string_view name;         // if_name
  std::string_view description;  // if_description
  uint32_t snaplen = 0;          // the most bytes of a frame an Enhanced Packet Block holds
};

// One frame: its Enhanced Packet Block.
struct Packet {
  uint32_t interface = 0;  // the index of its Interface Description Block in the section
  uint64_t timestamp_ns = 0;
  const uint8_t* data = nullptr;
  uint32_t captured = 0;   // bytes at data that the block holds
  uint32_t original = 0;   // the frame's length
  uint32_t flags = 0;      // epb_flags
  uint64_t dropcount = 0;  // epb_dropcount: frames of the interface lost since its previous packet; 0 leaves it out
};

// One interface's counts since the capture started: its Interface
// Statistics Block (isb_starttime, isb_endtime, isb_ifrecv, isb_ifdrop,
// isb_usrdeliv), with an opt_comment that says what they count.
struct Statistics {
  uint32_t interface = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;  // also the block's timestamp
  uint64_t received = 0;
  uint64_t dropped = 0;
  uint64_t delivered = 0;
  std::string_view comment;
};

// A Section Header Block of unknown section length, naming the writer in
// shb_userappl.
void append_section_header(std::vector<uint8_t>& out, std::string_view application);
void append_interface(std::vector<uint8_t>& out, const Interface& interface);
void append_packet(std::vector<uint8_t>& out, const Packet& packet);
void append_statistics(std::vector<uint8_t>& out, const Statistics& statistics);

// Bytes of the Enhanced Packet Block append_packet() writes.
size_t packet_block_size(uint32_t captured, bool with_dropcount);

}  // namespace gnio::backend::pcapng
