// SPDX-License-Identifier: Apache-2.0
// What the pcapng-out tests assert on a file they read back with the tools
// of pcapng_tools.hpp: the frames, capinfos' summary, the layout of the
// blocks (lengths, options, order) and each interface's statistics; and the
// temporary folder each test writes in.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "pcapng_tools.hpp"
#include "test_dir.hpp"

namespace gnio::backend::pcapng_test {

inline const std::string kShb = "0x0a0d0d0a", kIdb = "0x00000001", kIsb = "0x00000005", kEpb = "0x00000006";

// A fresh folder per test, removed after it.
class PcapngDir : public gnio::test::TestDir {
 protected:
  PcapngDir() : TestDir("gnio-pcapng-") {}
};

inline std::vector<TxFrame> as_tx(const Input& in) {
  std::vector<TxFrame> tx;
  for (size_t i = 0; i < in.bytes.size(); ++i)
    tx.push_back({in.bytes[i].data(), static_cast<uint32_t>(in.bytes[i].size()), in.time_ns[i]});
  return tx;
}

// Sends `tx` on `queue` in bursts of 1, 2, 3, ... frames, as an engine's
// uneven bursts; fails the test on an error or a short count.
inline void send_in_bursts(Backend& b, uint16_t queue, const std::vector<TxFrame>& tx) {
  size_t burst = 1;
  for (size_t i = 0; i < tx.size(); i += burst++) {
    std::span<const TxFrame> s(tx.data() + i, std::min(burst, tx.size() - i));
    auto n = b.tx_burst(queue, s);
    ASSERT_TRUE(n) << n.status().to_string();
    ASSERT_EQ(*n, s.size());
  }
}

inline void expect_frames(const std::vector<Frame>& got, const std::vector<Frame>& want) {
  ASSERT_EQ(got.size(), want.size()) << "frames read back";
  int failures = 0;
  for (size_t i = 0; i < want.size() && failures < 5; ++i) {
    const Frame &g = got[i], &w = want[i];
    if (g == w) continue;
    ++failures;
    EXPECT_EQ(g.hex, w.hex) << "frame " << i << ": bytes";
    EXPECT_EQ(g.time_ns, w.time_ns) << "frame " << i << ": timestamp (ns)";
    EXPECT_EQ(g.len, w.len) << "frame " << i << ": length";
    EXPECT_EQ(g.cap_len, w.cap_len) << "frame " << i << ": captured length";
    EXPECT_EQ(g.interface_id, w.interface_id) << "frame " << i << ": interface";
    EXPECT_EQ(g.interface_name, w.interface_name) << "frame " << i << ": interface name";
    EXPECT_EQ(g.direction, w.direction) << "frame " << i << ": epb_flags direction";
    EXPECT_EQ(g.drop_count, w.drop_count) << "frame " << i << ": epb_dropcount";
  }
}

// The text after "key" on the first line of capinfos' output that has it.
inline std::string capinfos_line(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find(key);
    if (at == std::string::npos) continue;
    std::string v = line.substr(at + key.size());
    v.erase(0, v.find_first_not_of(' '));
    return v;
  }
  return "";
}

inline void expect_capinfos(const std::string& file, size_t packets, const std::vector<std::string>& names) {
  const std::string text = capinfos(file);
  EXPECT_EQ(capinfos_line(text, "File type:"), "pcapng") << text;
  EXPECT_EQ(capinfos_line(text, "Capture application:"), "gnio pcapng-out") << text;
  EXPECT_EQ(capinfos_line(text, "Number of packets:"), std::to_string(packets)) << text;
  EXPECT_EQ(capinfos_line(text, "File timestamp precision:"), "nanoseconds (9)") << text;
  EXPECT_EQ(capinfos_line(text, "Number of interfaces in file:"), std::to_string(names.size())) << text;
  for (size_t q = 0; q < names.size(); ++q) {
    const std::string one = text.substr(text.find("Interface #" + std::to_string(q) + " info:"));
    EXPECT_EQ(capinfos_line(one, "Name = "), names[q]) << one;
    EXPECT_EQ(capinfos_line(one, "Encapsulation = "), "Ethernet (1 - ether)") << one;
    EXPECT_EQ(capinfos_line(one, "Time precision = "), "nanoseconds (9)") << one;
    EXPECT_EQ(capinfos_line(one, "Number of stat entries = "), "1") << one;
  }
}

// SHB, one IDB per interface, the EPBs, one ISB per interface: every block
// a multiple of 32 bits with equal lengths at both ends, every option list
// ended by opt_endofopt.
inline void expect_layout(const std::vector<Block>& blocks, size_t interfaces, size_t packets) {
  ASSERT_EQ(blocks.size(), 1 + 2 * interfaces + packets);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    const std::string& type = field(b, "pcapng.block.type");
    const bool idb = i >= 1 && i <= interfaces, isb = i + interfaces >= blocks.size();
    EXPECT_EQ(type, i == 0 ? kShb : idb ? kIdb : isb ? kIsb : kEpb) << "block " << i;
    const std::string len = field(b, "pcapng.block.length");
    EXPECT_EQ(std::stoul(len) % 4, 0u) << "block " << i;
    EXPECT_EQ(field(b, "pcapng.block.length_trailer"), len) << "block " << i;
    const auto codes = b.find("pcapng.options.option.code");
    ASSERT_NE(codes, b.end()) << "block " << i << " has options";
    EXPECT_EQ(codes->second.back(), "0") << "block " << i << ": its options end with opt_endofopt";
    if (i == 0) {
      EXPECT_EQ(field(b, "pcapng.section_header.version.major"), "1");
      EXPECT_EQ(field(b, "pcapng.section_header.version.minor"), "0");
      EXPECT_EQ(field(b, "pcapng.section_header.section_length"), "-1");
      EXPECT_EQ(field(b, "pcapng.options.option.data.user_application"), "gnio pcapng-out");
    } else if (idb) {
      const std::string q = std::to_string(i - 1);
      EXPECT_EQ(field(b, "pcapng.interface_description.link_type"), "1") << "Ethernet";
      EXPECT_EQ(field(b, "pcapng.options.option.data.interface.name"), "txq" + q);
      EXPECT_EQ(field(b, "pcapng.options.option.data.interface.description").rfind("gnio TX queue " + q + " of pcapng-out:", 0),
                0u);
      EXPECT_EQ(field(b, "pcapng.options.option.data.interface.timestamp_resolution.value"), "9");
    } else if (!isb) {
      EXPECT_EQ(field(b, "pcapng.options.option.data.packet.flags.direction"), "0x0002") << "block " << i << ": outbound";
    }
  }
}

struct Counts {
  uint64_t received, dropped, delivered;
};

// The statistics block of interface `id`: its counts, its start and end
// times (Wireshark 4.0 shows their option codes and lengths, not their
// values), the comment that says what TX counts.
inline void expect_statistics(const std::vector<Block>& blocks, uint32_t id, const Counts& want) {
  std::vector<Block> isbs;
  for (const Block& b : of_type(blocks, kIsb))
    if (field(b, "pcapng.interface_id") == std::to_string(id)) isbs.push_back(b);
  ASSERT_EQ(isbs.size(), 1u) << "one statistics block for interface " << id;
  const Block& b = isbs[0];
  EXPECT_EQ(field(b, "pcapng.options.option.data.interface.received"), std::to_string(want.received)) << id;
  EXPECT_EQ(field(b, "pcapng.options.option.data.interface.dropped"), std::to_string(want.dropped)) << id;
  EXPECT_EQ(field(b, "pcapng.options.option.data.interface.delivered_to_user"), std::to_string(want.delivered))
      << id;
  const std::vector<std::string>& codes = b.at("pcapng.options.option.code");
  const std::vector<std::string>& lengths = b.at("pcapng.options.option.length");
  ASSERT_GE(codes.size(), 2u);
  EXPECT_EQ(codes[0], "2") << "isb_starttime";
  EXPECT_EQ(codes[1], "3") << "isb_endtime";
  EXPECT_EQ(lengths[0], "8");
  EXPECT_EQ(lengths[1], "8");
  EXPECT_EQ(field(b, "pcapng.options.option.data.comment").rfind("TX queue: ifrecv = frames handed to", 0), 0u);
}

}  // namespace gnio::backend::pcapng_test
