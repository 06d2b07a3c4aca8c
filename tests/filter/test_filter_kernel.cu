// SPDX-License-Identifier: Apache-2.0
// The filter in a persistent kernel, on the device GNIO_TEST_GPU names (the
// emulated device by default): dev::ReceiveKernel with a FilterProgram over
// a capture counts, sums and fingerprints exactly the packets
// pcap_offline_filter() accepts, and matched + filtered is every packet
// the queue delivered and the kernel received.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../core/test_support.hpp"
#include "filter_frames.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "gnio/eth.hpp"
#include "gnio/filter.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"

using namespace gnio;
using gnio::test::eventually;

namespace {

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};

// What the kernel should find, by libpcap: every record read with
// pcap_next_ex() and decided by pcap_offline_filter().
struct Expected {
  dev::ReceiveTotals totals{};
  uint64_t records = 0;
};

Expected by_libpcap(const std::string& file, const std::string& expr) {
  Expected e;
  char err[PCAP_ERRBUF_SIZE] = {};
  std::unique_ptr<pcap_t, PcapCloser> p(pcap_open_offline(file.c_str(), err));
  EXPECT_TRUE(p) << err;
  if (!p) return e;
  bpf_program prog{};
  EXPECT_EQ(pcap_compile(p.get(), &prog, expr.c_str(), 1, PCAP_NETMASK_UNKNOWN), 0) << pcap_geterr(p.get());
  pcap_pkthdr* h = nullptr;
  const u_char* bytes = nullptr;
  while (pcap_next_ex(p.get(), &h, &bytes) == 1) {
    ++e.records;
    EXPECT_EQ(h->caplen, h->len) << file << ": a cut record; the ring carries no wire length";
    if (pcap_offline_filter(&prog, h, bytes) == 0) {
      ++e.totals.filtered;
      continue;
    }
    ++e.totals.packets;
    e.totals.bytes += h->caplen;
    e.totals.checksum += dev::fnv1a64(bytes, h->caplen);
  }
  pcap_freecode(&prog);
  return e;
}

struct Seen {
  dev::ReceiveTotals totals{};
  KernelTotals kernel{};
  RxqStats queue{};
};

// One ReceiveKernel run with the filter over a capture, until it drains.
void receive_filtered(Gpu& gpu, const std::string& file, const std::string& expr, Seen& seen) {
  auto dev = EthDevice::open("pcap:" + file);
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q.has_value());
  for (Status s : {q->set_num_strides(1024), q->set_stride_size(2048), q->set_gpu(gpu), q->start()})
    ASSERT_TRUE(s) << s.to_string();
  auto h = GpuRxq::create(gpu, *q);
  ASSERT_TRUE(h.has_value()) << h.status().to_string();
  auto filter = FilterProgram::compile(gpu, expr);
  ASSERT_TRUE(filter.has_value()) << filter.status().to_string();
  auto totals = gpu.alloc(sizeof(dev::ReceiveTotals), MemKind::GpuCpu);
  ASSERT_TRUE(totals.has_value());
  LaunchConfig cfg;
  cfg.grid = 1;
  cfg.block = gpu.emulated() ? 1 : 128;
  cfg.name = "filter";
  auto k = PersistentKernel::launch(
      gpu, cfg,
      dev::ReceiveKernel<Scope::Block>{dev::RxQueueSet::of(h->handle()),
                                       static_cast<dev::ReceiveTotals*>(totals->device_ptr()), 32, filter->handle()});
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  EXPECT_TRUE(eventually([&] { return q->at_end(); }, std::chrono::seconds(60)));
  ASSERT_TRUE(k->stop());
  seen.totals = *static_cast<const dev::ReceiveTotals*>(totals->host_ptr());
  seen.kernel = k->totals();
  seen.queue = q->stats();
  h->destroy();
  q->destroy();
}

TEST(FilterKernel, CountsWhatLibpcapMatchesAndFiltersTheRest) {
  GNIO_OPEN_TEST_GPU(gpu);
  uint64_t matched = 0, filtered = 0;
  for (const char* name : {"sample.pcap", "captures/vlan.pcap", "captures/dns.pcap"}) {
    const std::string file = std::string(GNIO_DATA_DIR) + "/" + name;
    for (const std::string& expr : filter_test::expressions()) {
      SCOPED_TRACE(std::string(name) + " '" + expr + "'");
      const Expected want = by_libpcap(file, expr);
      ASSERT_GT(want.records, 0u);
      Seen seen;
      receive_filtered(gpu, file, expr, seen);
      EXPECT_EQ(seen.totals.packets, want.totals.packets);
      EXPECT_EQ(seen.totals.filtered, want.totals.filtered);
      EXPECT_EQ(seen.totals.bytes, want.totals.bytes);
      EXPECT_EQ(seen.totals.checksum, want.totals.checksum);
      EXPECT_EQ(seen.totals.bad_release, 0u);
      EXPECT_EQ(seen.totals.packets + seen.totals.filtered, want.records);
      EXPECT_EQ(seen.totals.packets + seen.totals.filtered, seen.queue.packets);
      EXPECT_EQ(seen.kernel.packets, seen.queue.packets);
      EXPECT_EQ(seen.queue.truncated, 0u);
      matched += seen.totals.packets;
      filtered += seen.totals.filtered;
    }
  }
  EXPECT_GT(matched, 1000u);
  EXPECT_GT(filtered, 1000u);
}

}  // namespace
