// SPDX-License-Identifier: Apache-2.0
// The dpdk backend on DPDK's virtual devices, which need no NIC, no root and
// no hugepages: net_ring (a loopback of rte_rings: frames the test enqueues
// are what gnio receives, frames gnio sends land in the same ring) and
// net_null (endless 64-byte frames, TX swallowed). Each test is its own
// process under ctest, so each initialises the EAL once.
#include <gtest/gtest.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstring>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/dpdk/caps.hpp"

namespace gnio::backend {
namespace {

constexpr const char* kLoopRing = "ETH_RXTX0_net_ring0";  // net_ring0's queue 0 ring (RX and TX)

std::unique_ptr<Backend> open_ok(const std::string& spec) {
  auto b = open_backend(spec);
  EXPECT_TRUE(b.has_value()) << spec << ": " << b.status().to_string();
  return b ? std::move(*b) : nullptr;
}

// Frame i: 60..1514 bytes, every byte a function of (i, offset).
std::vector<uint8_t> test_frame(uint32_t i) {
  std::vector<uint8_t> f(60 + (i * 97) % 1455);
  for (size_t k = 0; k < f.size(); ++k) f[k] = static_cast<uint8_t>(i * 31 + k * 7 + (k >> 8));
  return f;
}

// A pool of the test's own (the net_ring PMD hands these mbufs to gnio as they are).
rte_mempool* test_pool() {
  static rte_mempool* p = rte_pktmbuf_pool_create("gt_pool", 2048, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  return p;
}

void enqueue_frames(rte_ring* ring, uint32_t first, uint32_t n) {
  for (uint32_t i = first; i < first + n; ++i) {
    rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
    ASSERT_NE(m, nullptr);
    std::vector<uint8_t> f = test_frame(i);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
    ASSERT_EQ(rte_ring_enqueue(ring, m), 0);
  }
}

bool inside(const RxFrame& f, const RxMemory& m) { return f.data >= m.base && f.data + f.len <= m.base + m.bytes; }

TEST(DpdkRing, ReceivesInjectedFramesExactlyInOrderInsideItsMemory) {
  auto b = open_ok("dpdk:net_ring0");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->caps().driver, "dpdk");
  auto mem = b->rx_memory(0);
  ASSERT_TRUE(mem.has_value());
  ASSERT_NE(mem->base, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(mem->base) % 4096, 0u) << "the region is registered with the GPU: page-aligned";
  rte_ring* ring = rte_ring_lookup(kLoopRing);
  ASSERT_NE(ring, nullptr) << "net_ring0 made no ring " << kLoopRing;

  constexpr uint32_t kFrames = 1000;
  std::vector<RxFrame> burst(64);
  uint32_t seen = 0;
  for (uint32_t sent = 0; sent < kFrames || seen < kFrames;) {
    if (sent < kFrames) {
      const uint32_t n = std::min<uint32_t>(100, kFrames - sent);
      enqueue_frames(ring, sent, n);
      sent += n;
    }
    auto got = b->rx_burst(0, burst);
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    if (*got == 0 && sent == kFrames) break;
    for (size_t i = 0; i < *got; ++i) {
      const std::vector<uint8_t> want = test_frame(seen);
      ASSERT_EQ(burst[i].len, want.size()) << "frame " << seen;
      ASSERT_EQ(std::memcmp(burst[i].data, want.data(), want.size()), 0) << "frame " << seen << " bytes differ";
      EXPECT_TRUE(inside(burst[i], *mem)) << "frame " << seen << " is outside rx_memory(0)";
      EXPECT_NE(burst[i].cookie, 0u);
      EXPECT_EQ(burst[i].flags & RxFrameTruncated, 0u);
      ++seen;
    }
    b->rx_release(0, std::span<const RxFrame>(burst.data(), *got));
  }
  EXPECT_EQ(seen, kFrames);
  EXPECT_EQ(rte_ring_count(ring), 0u);
}

TEST(DpdkRing, SentFramesComeOutOfTheRingExactly) {
  auto b = open_ok("dpdk:net_ring0");
  ASSERT_TRUE(b);
  rte_ring* ring = rte_ring_lookup(kLoopRing);
  ASSERT_NE(ring, nullptr);
  constexpr uint32_t kFrames = 300;
  std::vector<std::vector<uint8_t>> frames;
  std::vector<TxFrame> tx;
  for (uint32_t i = 0; i < kFrames; ++i) frames.push_back(test_frame(i + 5000));
  for (auto& f : frames) tx.push_back(TxFrame{f.data(), static_cast<uint32_t>(f.size()), 0});
  uint32_t out = 0;
  for (uint32_t sent = 0; sent < kFrames;) {
    auto n = b->tx_burst(0, std::span<const TxFrame>(tx.data() + sent, std::min<uint32_t>(64, kFrames - sent)));
    ASSERT_TRUE(n.has_value()) << n.status().to_string();
    sent += static_cast<uint32_t>(*n);
    void* m[64];
    const unsigned k = rte_ring_dequeue_burst(ring, m, 64, nullptr);
    for (unsigned i = 0; i < k; ++i, ++out) {
      rte_mbuf* mb = static_cast<rte_mbuf*>(m[i]);
      ASSERT_EQ(mb->pkt_len, frames[out].size()) << "frame " << out;
      ASSERT_EQ(std::memcmp(rte_pktmbuf_mtod(mb, void*), frames[out].data(), frames[out].size()), 0)
          << "frame " << out << " bytes differ";
      rte_pktmbuf_free(mb);
    }
  }
  void* m[64];
  for (unsigned k; (k = rte_ring_dequeue_burst(ring, m, 64, nullptr)) > 0;)
    for (unsigned i = 0; i < k; ++i, ++out) {
      rte_mbuf* mb = static_cast<rte_mbuf*>(m[i]);
      ASSERT_EQ(mb->pkt_len, frames[out].size()) << "frame " << out;
      ASSERT_EQ(std::memcmp(rte_pktmbuf_mtod(mb, void*), frames[out].data(), frames[out].size()), 0);
      rte_pktmbuf_free(mb);
    }
  EXPECT_EQ(out, kFrames);
}

TEST(DpdkRing, TooLongFrameToSendIsRefusedWithTheLimit) {
  auto b = open_ok("dpdk:net_ring0,frame=1024");
  ASSERT_TRUE(b);
  std::vector<uint8_t> big(1500, 0xab);
  TxFrame f{big.data(), 1500, 0};
  auto n = b->tx_burst(0, std::span<const TxFrame>(&f, 1));
  ASSERT_FALSE(n.has_value());
  EXPECT_EQ(n.status().code(), Errc::InvalidValue);
  EXPECT_NE(n.status().message().find("1500"), std::string::npos) << n.status().message();
  EXPECT_NE(n.status().message().find("1024"), std::string::npos) << n.status().message();
}

TEST(DpdkRing, LongFrameIsCutToTheDataRoomWithItsWireLength) {
  auto b = open_ok("dpdk:net_ring0,frame=512");
  ASSERT_TRUE(b);
  rte_ring* ring = rte_ring_lookup(kLoopRing);
  ASSERT_NE(ring, nullptr);
  rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
  ASSERT_NE(m, nullptr);
  std::vector<uint8_t> f = test_frame(14);  // 60 + 14*97 = 1418 bytes
  std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
  ASSERT_EQ(rte_ring_enqueue(ring, m), 0);
  std::vector<RxFrame> burst(4);
  auto got = b->rx_burst(0, burst);
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(*got, 1u);
  EXPECT_EQ(burst[0].len, 512u);
  EXPECT_EQ(burst[0].wire_len, f.size());
  EXPECT_NE(burst[0].flags & RxFrameTruncated, 0u);
  EXPECT_EQ(std::memcmp(burst[0].data, f.data(), 512), 0);
  b->rx_release(0, std::span<const RxFrame>(burst.data(), 1));
}

TEST(DpdkNull, EndlessFramesFromGnioPoolsAndReleasedMbufsComeBack) {
  // 8192 mbufs per queue: 50000 frames only arrive if rx_release frees them.
  auto b = open_ok("dpdk:net_null0,queues=2,mbufs=1024,rxd=512");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->caps().max_rx_queues, 2);
  auto m0 = b->rx_memory(0), m1 = b->rx_memory(1);
  ASSERT_TRUE(m0 && m1);
  EXPECT_NE(m0->base, m1->base) << "each RX queue has its own region";
  std::vector<RxFrame> burst(64);
  for (uint16_t q = 0; q < 2; ++q) {
    const RxMemory mem = q ? *m1 : *m0;
    uint64_t n = 0;
    for (int round = 0; round < 100000 && n < 50000; ++round) {
      auto got = b->rx_burst(q, burst);
      ASSERT_TRUE(got.has_value());
      for (size_t i = 0; i < *got; ++i) {
        ASSERT_EQ(burst[i].len, 64u);  // net_null's default frame size
        ASSERT_TRUE(inside(burst[i], mem)) << "queue " << q << " frame " << n + i;
      }
      n += *got;
      b->rx_release(q, std::span<const RxFrame>(burst.data(), *got));
    }
    EXPECT_GE(n, 50000u) << "queue " << q;
  }
  std::vector<uint8_t> f(100, 1);
  std::vector<TxFrame> tx(32, TxFrame{f.data(), 100, 0});
  auto sent = b->tx_burst(1, tx);
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(*sent, 32u);
}

TEST(DpdkSpec, MbufMemGpuOnAVirtualDeviceIsNotSupportedOnTheNicAxis) {
  const unsigned lcores_before = rte_lcore_count();  // 0 under ctest: one process per test
  auto b = open_backend("dpdk:net_ring0,mbuf_mem=gpu");
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.status().code(), Errc::NotSupported);
  EXPECT_EQ(b.status().axis(), Axis::Nic);
  EXPECT_NE(b.status().message().find("mbuf_mem=host"), std::string::npos) << b.status().message();
  // Refused before anything started: the EAL is still down.
  EXPECT_EQ(rte_lcore_count(), lcores_before) << "the EAL was initialised for a refused spec";
}

TEST(DpdkSpec, UnknownKeyIsInvalidValueNamingTheAcceptedKeys) {
  auto b = open_backend("dpdk:net_null0,bogus=1");
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.status().code(), Errc::InvalidValue);
  for (const char* key : {"bogus", "queues", "eal", "mbuf_mem"})
    EXPECT_NE(b.status().message().find(key), std::string::npos) << key << " missing from: " << b.status().message();
}

TEST(DpdkSpec, BadMbufMemValueNamesTheAllowedValues) {
  auto b = open_backend("dpdk:net_null0,mbuf_mem=disk");
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.status().code(), Errc::InvalidValue);
  EXPECT_NE(b.status().message().find("host"), std::string::npos) << b.status().message();
  EXPECT_NE(b.status().message().find("gpu"), std::string::npos) << b.status().message();
}

TEST(DpdkSpec, MoreQueuesThanThePortHasIsInvalidValueWithItsLimit) {
  // net_ring makes 16 rings per device.
  auto b = open_backend("dpdk:net_ring0,queues=17");
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.status().code(), Errc::InvalidValue);
  EXPECT_EQ(b.status().axis(), Axis::Nic);
  EXPECT_NE(b.status().message().find("queues=1..16"), std::string::npos) << b.status().message();
}

TEST(DpdkSpec, UnknownDeviceIsNotFound) {
  auto b = open_backend("dpdk:net_nosuchpmd0");
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.status().code(), Errc::NotFound);
  EXPECT_NE(b.status().message().find("net_nosuchpmd0"), std::string::npos) << b.status().message();
}

TEST(DpdkEal, InitialisedOnceLaterEalArgumentsAreNotApplied) {
  auto a = open_ok("dpdk:net_null0");
  ASSERT_TRUE(a);
  EXPECT_EQ(rte_lcore_count(), 1u) << "gnio's EAL runs on one lcore (-l 0)";
  // Arguments the EAL would refuse: they are not used a second time.
  auto b = open_ok("dpdk:net_null1,eal=\"--no-such-eal-option\"");
  ASSERT_TRUE(b);
  char arg0[] = "again";
  char* argv[] = {arg0, nullptr};
  EXPECT_LT(rte_eal_init(1, argv), 0);
  EXPECT_EQ(rte_errno, EALREADY);
}

TEST(DpdkPort, RxAndTxSpecsShareAPortOtherOptionsAreRefused) {
  auto rx = open_ok("dpdk:net_ring0");
  ASSERT_TRUE(rx);
  auto tx = open_ok("dpdk:net_ring0");
  ASSERT_TRUE(tx);
  EXPECT_EQ(rx->rx_memory(0)->base, tx->rx_memory(0)->base);
  auto other = open_backend("dpdk:net_ring0,queues=2");
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.status().code(), Errc::BadState);
  EXPECT_NE(other.status().message().find("queues=1"), std::string::npos) << other.status().message();
}

TEST(DpdkPort, ClosedPortOpensAgain) {
  for (int i = 0; i < 3; ++i) {
    auto b = open_ok("dpdk:net_ring0,queues=2");
    ASSERT_TRUE(b) << "open " << i;
    EXPECT_TRUE(b->rx_memory(1).has_value());
  }
}

TEST(DpdkCaps, PortReportSaysWhatDpdkSaysOfThePort) {
  EXPECT_FALSE(caps::dpdk_port_report("pcap:x.pcap").has_value()) << "only dpdk specs have a port report";
  auto r = caps::dpdk_port_report("dpdk:net_ring0");
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->text.find("PMD net_ring on bus vdev"), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("queues: 16 RX, 16 TX"), std::string::npos) << r->text;
  EXPECT_NE(r->json.find("\"pmd\":\"net_ring\""), std::string::npos) << r->json;
  EXPECT_NE(r->json.find("\"max_rx_queues\":16"), std::string::npos) << r->json;
  auto bad = caps::dpdk_port_report("dpdk:net_nosuchpmd0");
  ASSERT_TRUE(bad.has_value());
  EXPECT_NE(bad->json.find("\"error\""), std::string::npos) << bad->json;
  EXPECT_NE(bad->text.find("net_nosuchpmd0"), std::string::npos) << bad->text;
}

}  // namespace
}  // namespace gnio::backend
