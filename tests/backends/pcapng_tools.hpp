// SPDX-License-Identifier: Apache-2.0
// What the pcapng-out tests read their files with: Wireshark's tools, not
// gnio's code. tshark gives each frame (bytes, lengths, time, interface,
// epb_flags, epb_dropcount); tshark's file-format reader ("MIME Files
// Format") gives every block and option as Wireshark decodes them, ISBs
// included; capinfos -M gives the file's summary. Frames of the inputs are
// read with libpcap.
#pragma once

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gnio::backend::pcapng_test {

struct Output {
  int status = -1;
  std::string text;  // standard output
};

inline Output run(const std::string& cmd) {
  Output o;
  FILE* p = ::popen((cmd + " 2>/dev/null").c_str(), "r");
  if (p == nullptr) return o;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) o.text.append(buf, n);
  o.status = ::pclose(p);
  return o;
}

inline std::string quoted(const std::string& path) { return "'" + path + "'"; }

// Why the tests that read files back cannot run here; empty when they can.
inline std::string missing_tools() {
  for (const char* tool : {"tshark", "capinfos"})
    if (run(std::string("command -v ") + tool).status != 0)
      return std::string(tool) +
             " is not installed (Debian: tshark, wireshark-common; scripts/bootstrap.sh test installs both)";
  return "";
}

// Skips the test when the tools are missing; the others read the files.
#define GNIO_NEED_TOOLS()                                      \
  if (const std::string why = missing_tools(); !why.empty()) { \
    GTEST_SKIP() << why;                                       \
  }

// One frame of a capture file.
struct Frame {
  std::string hex;  // the captured bytes, lower-case hex
  uint64_t time_ns = 0;
  uint32_t len = 0, cap_len = 0;
  uint32_t interface_id = 0;
  std::string interface_name;
  std::string direction;  // epb_flags' direction as tshark gives it ("0x00000002": outbound); empty if absent
  uint64_t drop_count = 0;  // epb_dropcount; 0 if absent
  bool operator==(const Frame&) const = default;
};

inline std::string to_hex(const uint8_t* data, size_t len) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < len; ++i) {
    s += digits[data[i] >> 4];
    s += digits[data[i] & 15];
  }
  return s;
}

// "1796234182.176858364" as nanoseconds.
inline uint64_t epoch_ns(const std::string& t) {
  const size_t dot = t.find('.');
  uint64_t ns = std::stoull(t.substr(0, dot)) * 1000000000ull;
  if (dot != std::string::npos) {
    std::string frac = t.substr(dot + 1, 9);
    frac.resize(9, '0');
    ns += std::stoull(frac);
  }
  return ns;
}

// The first value of `key` anywhere in `j`, or "".
inline std::string find_key(const nlohmann::json& j, const std::string& key) {
  if (j.is_object()) {
    if (auto it = j.find(key); it != j.end() && it->is_string()) return it->get<std::string>();
    for (const auto& [k, v] : j.items()) {
      std::string s = find_key(v, key);
      if (!s.empty()) return s;
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      std::string s = find_key(v, key);
      if (!s.empty()) return s;
    }
  }
  return "";
}

// Every frame of `file` as tshark reads it; a failure of tshark fails the test.
inline std::vector<Frame> tshark_frames(const std::string& file) {
  std::vector<Frame> frames;
  const Output o = run("tshark -r " + quoted(file) + " -T json -x -J frame --no-duplicate-keys");
  EXPECT_EQ(o.status, 0) << "tshark cannot read " << file;
  if (o.status != 0) return frames;
  const nlohmann::json all = nlohmann::json::parse(o.text, nullptr, false);
  EXPECT_TRUE(all.is_array()) << file << ": tshark's JSON does not parse";
  if (!all.is_array()) return frames;
  for (const auto& p : all) {
    const nlohmann::json& layers = p["_source"]["layers"];
    Frame f;
    f.hex = layers["frame_raw"][0].get<std::string>();
    f.time_ns = epoch_ns(find_key(layers, "frame.time_epoch"));
    f.len = static_cast<uint32_t>(std::stoul(find_key(layers, "frame.len")));
    f.cap_len = static_cast<uint32_t>(std::stoul(find_key(layers, "frame.cap_len")));
    const std::string id = find_key(layers, "frame.interface_id");
    f.interface_id = id.empty() ? 0 : static_cast<uint32_t>(std::stoul(id));
    f.interface_name = find_key(layers, "frame.interface_name");
    f.direction = find_key(layers, "frame.packet_flags_direction");
    const std::string drops = find_key(layers, "frame.drop_count");
    f.drop_count = drops.empty() ? 0 : std::stoull(drops);
    frames.push_back(std::move(f));
  }
  return frames;
}

// One block of a pcapng file: each field Wireshark's file-format dissector
// shows in it (pcapng.block.type, pcapng.options.option.data...), with
// every value it has in that block, in order.
using Block = std::map<std::string, std::vector<std::string>>;

inline void flatten(const nlohmann::json& j, Block& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (v.is_string())
        out[k].push_back(v.get<std::string>());
      else
        flatten(v, out);
    }
  } else if (j.is_array()) {
    for (const auto& v : j) flatten(v, out);
  }
}

inline std::vector<Block> pcapng_blocks(const std::string& file) {
  std::vector<Block> blocks;
  const Output o = run("tshark -r " + quoted(file) +
                       " -X read_format:'MIME Files Format' -T json --no-duplicate-keys");
  EXPECT_EQ(o.status, 0) << "tshark's file-format reader cannot read " << file;
  if (o.status != 0) return blocks;
  const nlohmann::json all = nlohmann::json::parse(o.text, nullptr, false);
  EXPECT_TRUE(all.is_array() && all.size() == 1) << file << ": not one file-format record";
  if (!all.is_array() || all.size() != 1) return blocks;
  const nlohmann::json& layers = all[0]["_source"]["layers"];
  EXPECT_FALSE(layers.contains("_ws.malformed")) << file << ": " << layers.dump();
  const nlohmann::json& list = layers["file-pcapng"]["pcapng.block"];
  for (const auto& b : list.is_array() ? list : nlohmann::json::array({list})) {
    Block block;
    flatten(b, block);
    blocks.push_back(std::move(block));
  }
  return blocks;
}

// The value of `field` in a block, or "" (the first of several).
inline std::string field(const Block& b, const std::string& name) {
  auto it = b.find(name);
  return it == b.end() || it->second.empty() ? "" : it->second.front();
}

// The blocks of one type ("0x0a0d0d0a" SHB, "0x00000001" IDB, "0x00000005"
// ISB, "0x00000006" EPB).
inline std::vector<Block> of_type(const std::vector<Block>& blocks, const std::string& type) {
  std::vector<Block> out;
  for (const Block& b : blocks)
    if (field(b, "pcapng.block.type") == type) out.push_back(b);
  return out;
}

// capinfos -M's text for `file`; a failure of capinfos fails the test.
inline std::string capinfos(const std::string& file) {
  const Output o = run("capinfos -M " + quoted(file));
  EXPECT_EQ(o.status, 0) << "capinfos cannot read " << file;
  return o.text;
}

// The frames of a capture as libpcap reads them (nanosecond timestamps).
struct Input {
  std::vector<std::vector<uint8_t>> bytes;  // what the record holds
  std::vector<uint64_t> time_ns;
  std::vector<uint32_t> wire_len;  // the frame's length before the capture cut it
};

inline Input read_capture(const std::string& path) {
  Input in;
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  EXPECT_NE(p, nullptr) << path << ": " << err;
  if (p == nullptr) return in;
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(p, &h, &data) == 1) {
    in.bytes.emplace_back(data, data + h->caplen);
    in.time_ns.push_back(static_cast<uint64_t>(h->ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(h->ts.tv_usec));
    in.wire_len.push_back(h->len);
  }
  pcap_close(p);
  return in;
}

// The frames tshark should read back from `in` sent on interface `id`.
inline std::vector<Frame> expected(const Input& in, uint32_t id, const std::string& name) {
  std::vector<Frame> out;
  for (size_t i = 0; i < in.bytes.size(); ++i) {
    const auto len = static_cast<uint32_t>(in.bytes[i].size());
    out.push_back({to_hex(in.bytes[i].data(), len), in.time_ns[i], len, len, id, name, "0x00000002", 0});
  }
  return out;
}

}  // namespace gnio::backend::pcapng_test
