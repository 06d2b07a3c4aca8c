// SPDX-License-Identifier: Apache-2.0
// compile_filter() and FilterProgram: libpcap's own program and its own
// error message, the link type and snap length it compiles for, no Linux
// extensions in offline Ethernet code, what the device interpreter refuses
// of libpcap's output (protochain's loop), and the program in device memory.
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <memory>
#include <string>

#include "filter_frames.hpp"
#include "gnio/filter.hpp"

using namespace gnio;

namespace {

// libpcap's message for an expression on a dead handle; empty when it compiles.
std::string libpcap_error(const std::string& expr, int linktype = DLT_EN10MB) {
  std::unique_ptr<pcap_t, void (*)(pcap_t*)> dead(pcap_open_dead(linktype, 262144), pcap_close);
  bpf_program prog{};
  if (pcap_compile(dead.get(), &prog, expr.c_str(), 1, PCAP_NETMASK_UNKNOWN) == 0) {
    pcap_freecode(&prog);
    return "";
  }
  return pcap_geterr(dead.get());
}

TEST(FilterCompile, BadSyntaxIsRefusedWithLibpcapsMessage) {
  for (const std::string expr : {"udp prot 53", "host 999.1.1.1", "tcp[tcpflags] &", "port 70000", "net 10.0.0.1/33",
                                 "(udp", "ether host 02:00:00", "portrange 1024-"}) {
    const std::string want = libpcap_error(expr);
    ASSERT_FALSE(want.empty()) << expr << " compiles in libpcap";
    auto r = compile_filter(expr);
    ASSERT_FALSE(r.has_value()) << expr;
    const Status s = r.status();
    EXPECT_EQ(s.code(), Errc::InvalidValue);
    EXPECT_EQ(s.layer(), Layer::App);
    EXPECT_NE(s.message().find("filter expression '" + expr + "' (link type 1 EN10MB)"), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("libpcap refused it: " + want), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("pcap-filter(7)"), std::string::npos);
    EXPECT_NE(s.to_string().find("see: gnio diagnose INVALID_VALUE"), std::string::npos);
  }
}

TEST(FilterCompile, LinkTypeDecidesWhatCompiles) {
  // Raw IP has no Ethernet header: libpcap refuses `ether` and `vlan` there.
  for (const std::string expr : {"ether host 02:00:00:00:00:01", "vlan"}) {
    const std::string want = libpcap_error(expr, DLT_RAW);
    ASSERT_FALSE(want.empty()) << expr;
    auto r = compile_filter(expr, {DLT_RAW, 262144, true});
    ASSERT_FALSE(r.has_value()) << expr;
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("link type 12 RAW"), std::string::npos) << r.status().message();
  }
  // Over raw IP the IP header is at 0, over Ethernet at 14.
  auto raw = compile_filter("ip[9] = 17", {DLT_RAW, 262144, true});
  auto eth = compile_filter("ip[9] = 17");
  ASSERT_TRUE(raw.has_value() && eth.has_value());
  const filter_test::Bytes f = filter_test::hand_built_frames().front();  // IPv4 UDP
  const auto len = static_cast<uint32_t>(f.size());
  EXPECT_NE(dev::FilterRef(eth->data(), static_cast<uint32_t>(eth->size())).run(f.data(), len, len), 0u);
  EXPECT_NE(dev::FilterRef(raw->data(), static_cast<uint32_t>(raw->size())).run(f.data() + 14, len - 14, len - 14),
            0u);
  auto unknown = compile_filter("ip", {9999, 262144, true});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.status().message().find(libpcap_error("ip", 9999)), std::string::npos)
      << unknown.status().message();
}

TEST(FilterCompile, SnapLengthIsWhatAMatchReturns) {
  for (uint32_t snap : {1u, 96u, 65535u, 262144u}) {
    auto r = compile_filter("", {DLT_EN10MB, snap, true});
    ASSERT_TRUE(r.has_value()) << r.status().to_string();
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ((*r)[0].code, BPF_RET | BPF_K);
    EXPECT_EQ((*r)[0].k, snap);
  }
  for (uint32_t snap : {0u, 262145u}) {
    auto r = compile_filter("udp", {DLT_EN10MB, snap, true});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.status().code(), Errc::InvalidValue);
    EXPECT_NE(r.status().message().find("snap length " + std::to_string(snap) + " is outside 1..262144"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(FilterCompile, OptimiserOffGivesALongerProgramThatDecidesTheSame) {
  auto opt = compile_filter("udp port 53 or tcp port 80");
  auto plain = compile_filter("udp port 53 or tcp port 80", {DLT_EN10MB, 262144, false});
  ASSERT_TRUE(opt.has_value() && plain.has_value());
  EXPECT_GT(plain->size(), opt->size());
  const dev::FilterRef a(opt->data(), static_cast<uint32_t>(opt->size()));
  const dev::FilterRef b(plain->data(), static_cast<uint32_t>(plain->size()));
  for (const auto& f : filter_test::hand_built_frames()) {
    const auto len = static_cast<uint32_t>(f.size());
    EXPECT_EQ(a.run(f.data(), len, len), b.run(f.data(), len, len));
  }
}

TEST(FilterCompile, OfflineEthernetCodeUsesNoLinuxExtensions) {
  for (const std::string& expr : filter_test::expressions()) {
    auto r = compile_filter(expr);
    ASSERT_TRUE(r.has_value()) << expr << ": " << r.status().to_string();
    for (const dev::BpfInsn& in : *r) {
      const bool packet_load = (in.code & 0x07) == BPF_LD && ((in.code & 0xe0) == BPF_ABS || (in.code & 0xe0) == BPF_IND);
      EXPECT_FALSE(packet_load && in.k >= 0xffe00000u) << expr << " loads at " << in.k;
    }
  }
}

TEST(FilterCompile, ProtochainsLoopIsRefusedAsABackwardJump) {
  auto r = compile_filter("ip6 protochain 6");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), Errc::InvalidValue);
  const std::string m = r.status().message();
  EXPECT_NE(m.find("filter expression 'ip6 protochain 6' (link type 1 EN10MB) compiles to a program the device "
                   "interpreter refuses: filter program: instruction "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("jumps back by"), std::string::npos) << m;
}

TEST(FilterCompile, FilterProgramHoldsTheProgramInDeviceMemory) {
  auto gpu = Gpu::open("cpu");
  ASSERT_TRUE(gpu.has_value()) << gpu.status().to_string();
  auto p = FilterProgram::compile(*gpu, "udp port 53");
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  auto want = compile_filter("udp port 53");
  ASSERT_TRUE(want.has_value());
  EXPECT_EQ(p->expression(), "udp port 53");
  EXPECT_EQ(p->memory_kind(), MemKind::GpuCpu);
  const dev::FilterRef dev_view = p->handle();
  ASSERT_EQ(dev_view.size(), want->size());
  EXPECT_NE(dev_view.insns(), p->host_handle().insns());  // its own copy
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ(dev_view.insns()[i].code, (*want)[i].code);
    EXPECT_EQ(dev_view.insns()[i].k, (*want)[i].k);
  }
  static_assert(std::is_trivially_copyable_v<dev::FilterRef>);
  const FilterProgram none;
  const uint8_t pkt[1] = {};
  EXPECT_EQ(none.handle().size(), 0u);
  EXPECT_EQ(none.handle().run(pkt, 0, 0), 0xffffffffu);  // no program accepts all, as bpf_filter(NULL, ...)
  auto bad = FilterProgram::compile(*gpu, "udp prot 53");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find(libpcap_error("udp prot 53")), std::string::npos);
}

}  // namespace
