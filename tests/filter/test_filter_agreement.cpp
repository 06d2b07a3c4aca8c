// SPDX-License-Identifier: Apache-2.0
// The device interpreter (dev::FilterRef::run(), run here on the host from
// the same header) decides every packet as libpcap's pcap_offline_filter()
// does, verdict for verdict: every bundled capture under data/ in its own
// link type, hand-built frames whole and cut at every header boundary, and
// the synthetic source's frames, for each expression of the table.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "filter_frames.hpp"
#include "gnio/filter.hpp"
#include "gnio/host_reference.hpp"

using namespace gnio;
using namespace gnio::filter_test;

namespace {

struct Record {
  pcap_pkthdr hdr;
  Bytes data;
};

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};
using PcapHandle = std::unique_ptr<pcap_t, PcapCloser>;

// A program compiled by libpcap directly on `handle` (a capture, as
// `tcpdump -r` compiles, or a dead handle).
struct LibpcapProgram {
  LibpcapProgram(pcap_t* handle, const std::string& expr) {
    ok = pcap_compile(handle, &prog, expr.c_str(), 1, PCAP_NETMASK_UNKNOWN) == 0;
    if (!ok) error = pcap_geterr(handle);
  }
  ~LibpcapProgram() {
    if (ok) pcap_freecode(&prog);
  }
  LibpcapProgram(const LibpcapProgram&) = delete;
  LibpcapProgram& operator=(const LibpcapProgram&) = delete;
  bpf_program prog{};
  bool ok = false;
  std::string error;
};

std::vector<dev::BpfInsn> insns_of(const bpf_program& p) {
  std::vector<dev::BpfInsn> v;
  for (u_int i = 0; i < p.bf_len; ++i) v.push_back({p.bf_insns[i].code, p.bf_insns[i].jt, p.bf_insns[i].jf, p.bf_insns[i].k});
  return v;
}

bool same_program(const std::vector<dev::BpfInsn>& ours, const bpf_program& theirs) {
  const auto t = insns_of(theirs);
  return std::equal(ours.begin(), ours.end(), t.begin(), t.end(), [](const dev::BpfInsn& a, const dev::BpfInsn& b) {
    return a.code == b.code && a.jt == b.jt && a.jf == b.jf && a.k == b.k;
  });
}

// A program of ours as libpcap takes it.
struct AsLibpcap {
  explicit AsLibpcap(const std::vector<dev::BpfInsn>& insns) {
    for (const auto& i : insns) v.push_back({i.code, i.jt, i.jf, i.k});
    prog.bf_len = static_cast<u_int>(v.size());
    prog.bf_insns = v.data();
  }
  std::vector<bpf_insn> v;
  bpf_program prog{};
};

// Decides every packet of `packets` both ways; counts agreement and
// verdicts; the first few differences become test failures.
struct Tally {
  uint64_t decided = 0, matched = 0, rejected = 0, differed = 0;
};

template <typename Packets>
void compare(const std::vector<dev::BpfInsn>& insns, const bpf_program& ref, const Packets& packets,
             const std::string& where, Tally& t) {
  const dev::FilterRef f(insns.data(), static_cast<uint32_t>(insns.size()));
  for (size_t i = 0; i < packets.size(); ++i) {
    const auto& [data, caplen, wirelen] = packets[i];
    const uint32_t want = pcap_verdict(ref, data, caplen, wirelen);
    const uint32_t got = f.run(data, caplen, wirelen);
    ++t.decided;
    (want ? t.matched : t.rejected) += 1;
    if (got != want && ++t.differed <= 5)
      ADD_FAILURE() << where << ": packet " << i << " (caplen " << caplen << ", wirelen " << wirelen
                    << "): libpcap " << want << ", device interpreter " << got;
  }
}

struct Packet {
  const uint8_t* data;
  uint32_t caplen;
  uint32_t wirelen;
};

std::vector<std::filesystem::path> bundled_captures() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(GNIO_DATA_DIR)) {
    const auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".pcap" || ext == ".pcapng")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Each capture's own program is the one `tcpdump -r` runs (pcap_compile()
// on the capture); compile_filter() compiles on pcap_open_dead(), which
// gives the same program for every link type but BSD loopback (DLT_NULL,
// DLT_LOOP): there libpcap compiles a capture for every BSD's AF_INET6
// value (in the file's byte order for DLT_NULL), a dead handle for this
// host's. The interpreter runs both and
// agrees with pcap_offline_filter() on each.
TEST(FilterAgreement, EveryBundledCaptureInItsLinkType) {
  size_t opened = 0, refused_files = 0, too_long = 0;
  std::set<int> compiled_otherwise;
  std::map<std::string, Tally> by_expr;
  std::map<std::string, uint64_t> matched_in;  // "file|expr" -> matches
  for (const auto& path : bundled_captures()) {
    char err[PCAP_ERRBUF_SIZE] = {};
    PcapHandle p(pcap_open_offline(path.c_str(), err));
    if (!p) {  // data/corrupt/ holds files libpcap refuses to open
      ++refused_files;
      EXPECT_NE(path.string().find("corrupt"), std::string::npos) << path << ": " << err;
      continue;
    }
    ++opened;
    std::vector<Record> records;
    pcap_pkthdr* h = nullptr;
    const u_char* bytes = nullptr;
    while (pcap_next_ex(p.get(), &h, &bytes) == 1) records.push_back({*h, Bytes(bytes, bytes + h->caplen)});
    std::vector<Packet> packets;
    for (const auto& r : records) packets.push_back({r.data.data(), r.hdr.caplen, r.hdr.len});
    const int linktype = pcap_datalink(p.get());
    const FilterOptions opt{linktype, static_cast<uint32_t>(pcap_snapshot(p.get())), true};
    for (const std::string& expr : expressions()) {
      const std::string where = path.filename().string() + " '" + expr + "'";
      LibpcapProgram ref(p.get(), expr);
      auto ours = compile_filter(expr, opt);
      if (!ref.ok) {
        ASSERT_FALSE(ours.has_value()) << where << " compiled, libpcap said: " << ref.error;
        EXPECT_EQ(ours.status().code(), Errc::InvalidValue);
        EXPECT_NE(ours.status().message().find(ref.error), std::string::npos) << ours.status().message();
        continue;
      }
      const auto theirs = insns_of(ref.prog);
      if (theirs.size() > dev::bpf::kMaxInsns) {
        ++too_long;
        ASSERT_FALSE(ours.has_value()) << where;
        EXPECT_NE(ours.status().message().find("instructions is longer than the 4096"), std::string::npos)
            << ours.status().message();
        continue;
      }
      ASSERT_TRUE(ours.has_value()) << where << ": " << ours.status().to_string();
      ASSERT_TRUE(validate_filter(theirs)) << where << ": " << validate_filter(theirs).to_string();
      Tally t;
      compare(theirs, ref.prog, packets, where, t);
      if (!same_program(*ours, ref.prog)) {
        compiled_otherwise.insert(linktype);
        AsLibpcap dead(*ours);
        Tally d;
        compare(*ours, dead.prog, packets, where + " (pcap_open_dead's program)", d);
        EXPECT_EQ(d.differed, 0u) << where;
      }
      EXPECT_EQ(t.differed, 0u) << where;
      EXPECT_EQ(t.decided, records.size());
      by_expr[expr].matched += t.matched;
      by_expr[expr].decided += t.decided;
      matched_in[path.filename().string() + "|" + expr] = t.matched;
    }
  }
  EXPECT_GE(opened, 25u);
  EXPECT_EQ(refused_files, 2u);  // corrupt/bad_magic.pcap, corrupt/short_header.pcap
  EXPECT_EQ(compiled_otherwise, (std::set<int>{DLT_NULL, DLT_LOOP}));
  EXPECT_GE(too_long, 1u);  // the long OR over radiotap's 802.11 headers
  // The captures hold what the expressions look for: each expression
  // matched something (no capture holds 192.168/16 addresses; the
  // hand-built frames do) and, but the empty one, not everything.
  for (const auto& [expr, t] : by_expr) {
    if (expr != "net 192.168.0.0/16") {
      EXPECT_GT(t.matched, 0u) << "'" << expr << "' matched no packet of any capture";
    }
    if (!expr.empty()) {
      EXPECT_LT(t.matched, t.decided) << "'" << expr << "' matched every packet";
    }
  }
  EXPECT_EQ(matched_in["vlan.pcap|vlan"], 69u);  // every frame, re-tagged
  EXPECT_EQ(matched_in["vlan.pcap|vlan 100"], 35u);  // every other frame: 802.1Q 100, QinQ 200/300 between
  EXPECT_GT(matched_in["dns.pcap|udp port 53"], 10u);
  EXPECT_GT(matched_in["arp.pcap|arp"], 0u);
  EXPECT_EQ(matched_in["sample.pcap|icmp"], 32u);  // data/README.md's counts
  EXPECT_EQ(matched_in["sample.pcap|tcp"], 72u);   // 46 over IPv4, 26 over IPv6
}

TEST(FilterAgreement, HandBuiltFramesWholeAndCutAtEveryHeaderBoundary) {
  const std::vector<Bytes> frames = hand_built_frames();
  ASSERT_GT(frames.size(), 200u);
  std::vector<Packet> whole, cut;
  size_t tagged = 0;
  for (const Bytes& f : frames) {
    const auto len = static_cast<uint32_t>(f.size());
    whole.push_back({f.data(), len, len});
    const uint16_t type = static_cast<uint16_t>(f[12] << 8 | f[13]);
    tagged += type == 0x8100 || type == 0x88a8 ? 1 : 0;
    for (uint32_t c : {0u, 1u, 6u, 12u, 13u, 14u, 15u, 16u, 17u, 18u, 19u, 20u, 21u, 22u, 23u, 24u, 26u, 27u, 28u, 30u,
                       31u, 32u, 34u, 35u, 36u, 38u, 40u, 41u, 42u, 44u, 46u, 47u, 50u, 54u, 55u, 58u, 60u, 62u, 66u,
                       70u, 74u})
      if (c < len) cut.push_back({f.data(), c, len});
  }
  PcapHandle dead(pcap_open_dead(DLT_EN10MB, 262144));
  for (const std::string& expr : expressions()) {
    LibpcapProgram ref(dead.get(), expr);
    ASSERT_TRUE(ref.ok) << expr << ": " << ref.error;
    auto ours = compile_filter(expr);
    ASSERT_TRUE(ours.has_value()) << ours.status().to_string();
    EXPECT_TRUE(same_program(*ours, ref.prog)) << expr;
    Tally w, c;
    compare(*ours, ref.prog, whole, "whole frames '" + expr + "'", w);
    compare(*ours, ref.prog, cut, "cut frames '" + expr + "'", c);
    EXPECT_EQ(w.differed + c.differed, 0u) << expr;
    EXPECT_GT(w.matched, 0u) << "'" << expr << "' matched no hand-built frame";
    if (!expr.empty()) {
      EXPECT_GT(w.rejected, 0u) << "'" << expr << "' matched every hand-built frame";
    }
    if (!expr.empty()) {
      EXPECT_GT(c.rejected, 0u) << "'" << expr << "': no cut frame was rejected";
    }
    if (expr == "vlan") {
      EXPECT_EQ(w.matched, tagged);
    }
    if (expr.empty()) {
      EXPECT_EQ(w.matched + c.matched, whole.size() + cut.size());
    }
  }
}

TEST(FilterAgreement, WireLengthIsWhatLenComparesNotTheCapturedBytes) {
  const Bytes f = hand_built_frames().front();
  auto prog = compile_filter("len > 100");
  ASSERT_TRUE(prog.has_value());
  const dev::FilterRef r(prog->data(), static_cast<uint32_t>(prog->size()));
  EXPECT_EQ(r.run(f.data(), 60, 1500), 262144u);  // cut to 60 bytes, 1500 on the wire
  EXPECT_EQ(r.run(f.data(), 60, 60), 0u);
  auto port = compile_filter("udp port 53", {1, 96, true});
  ASSERT_TRUE(port.has_value());
  const dev::FilterRef p(port->data(), static_cast<uint32_t>(port->size()));
  EXPECT_EQ(p.run(f.data(), static_cast<uint32_t>(f.size()), static_cast<uint32_t>(f.size())), 96u);  // the snap length
  EXPECT_EQ(p.run(f.data(), 35, static_cast<uint32_t>(f.size())), 0u);  // the port lies past a 35-byte capture
}

TEST(FilterAgreement, SyntheticSourceFrames) {
  const std::string spec = "synthetic:count=3000,size=96-1500,flows=97,proto=mix,ipv6=mix,seed=21";
  std::vector<Bytes> frames;
  const Status read = for_each_host_frame(spec, [&](const std::vector<uint8_t>& f) { frames.push_back(f); });
  ASSERT_TRUE(read) << read.to_string();
  ASSERT_EQ(frames.size(), 3000u);
  std::vector<Packet> packets;
  for (const Bytes& f : frames)
    packets.push_back({f.data(), static_cast<uint32_t>(f.size()), static_cast<uint32_t>(f.size())});
  PcapHandle dead(pcap_open_dead(DLT_EN10MB, 262144));
  std::map<std::string, uint64_t> matched;
  for (const std::string& expr : expressions()) {
    LibpcapProgram ref(dead.get(), expr);
    ASSERT_TRUE(ref.ok) << ref.error;
    auto ours = compile_filter(expr);
    ASSERT_TRUE(ours.has_value()) << ours.status().to_string();
    Tally t;
    compare(*ours, ref.prog, packets, spec + " '" + expr + "'", t);
    EXPECT_EQ(t.differed, 0u) << expr;
    matched[expr] = t.matched;
  }
  for (const char* e : {"tcp", "icmp", "icmp6", "ip6 and udp", "greater 64", "len > 100", "not arp"})
    EXPECT_GT(matched[e], 0u) << e;
  EXPECT_EQ(matched["not arp"], 3000u);
  EXPECT_EQ(matched["vlan"], 0u);
}

}  // namespace
