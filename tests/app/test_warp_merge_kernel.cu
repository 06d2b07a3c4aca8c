// SPDX-License-Identifier: Apache-2.0
// warp_merge_flow() and warp_claim() in a kernel, against merge_flow_lanes()
// and the ranks of the claiming lanes computed on the host. On a GPU a
// warp is 32 lanes (the __match_any_sync and warp-reduction path); on the
// emulated device one (the path the packet-processing kernel takes there).
// On a GPU also the warp-wide checksum sum against the host's. Then bursts
// of blocks through warp_merge_flow() and the block's slots
// (block_flows_*) into a flow table, against a host reference.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "../core/test_support.hpp"
#include "gnio/dev/kernel.hpp"
#include "gnio/dev/thread.hpp"
#include "gnio/persistent_kernel.hpp"
#include "packet_processing/analyze.hpp"
#include "packet_processing/block_flows.hpp"
#include "packet_processing/warp_merge.hpp"

namespace {

using namespace gnio;
using namespace gnio::dev::app;

constexpr uint32_t kWarp = 32;

struct Lane {
  FlowKey key;
  uint64_t hash;
  FlowDelta delta;  // this lane's one packet
  uint32_t tracked;
  uint32_t wants_record;
};

struct Out {
  FlowDelta delta;
  uint64_t claimed;
  uint32_t lead;
};

struct MergeKernel {
  const Lane* in;  // sets * kWarp, GpuCpu
  Out* out;
  uint64_t* claim;  // GpuCpu
  uint32_t sets;

  GNIO_HD void operator()(const dev::KernelCtx&) const {
    const uint32_t lane = dev::thread_index();
    for (uint32_t s = 0; s < sets; ++s) {
      const Lane& l = in[s * kWarp + lane];
      FlowDelta d = l.delta;
      const bool lead = warp_merge_flow(l.key, l.hash, l.tracked != 0, d);
      const uint64_t claimed = warp_claim(claim, l.wants_record != 0);
      Out& o = out[s * kWarp + lane];
      o.delta = d;
      o.claimed = claimed;
      o.lead = lead ? 1u : 0u;
    }
  }
};

// Each lane sums its region of `bytes` (offset and length per lane and set).
struct SumKernel {
  const uint8_t* bytes;    // sets * kWarp slots of kSlot bytes
  const uint32_t* offset;  // per lane and set
  const uint32_t* length;  // 0: no region
  uint16_t* sum;
  uint32_t sets;
  static constexpr uint32_t kSlot = 2048;

  GNIO_HD void operator()(const dev::KernelCtx&) const {
    const uint32_t lane = dev::thread_index();
    for (uint32_t s = 0; s < sets; ++s) {
      const uint32_t i = s * kWarp + lane;
      const uint8_t* region = bytes + size_t{i} * kSlot + offset[i];
#if GNIO_DEVICE_PASS
      sum[i] = warp_ones_complement_sum(length[i] != 0 ? region : nullptr, length[i]);
#else
      sum[i] = dev::ones_complement_sum(region, length[i]);
#endif
    }
  }
};

struct FlowPacket {
  FlowKey key;
  uint64_t ts;
  uint32_t len;
  uint32_t tcp_flags;
  int32_t direction;
  uint32_t tracked;
};

// Each block takes `bursts` bursts of `burst` packets of its own, as the
// packet-processing kernel does: merged per warp, gathered in the block's
// slots (or applied directly), flushed to the table after each burst.
struct BlockFlowsKernel {
  const FlowPacket* in;  // grid * bursts * burst, GpuCpu
  FlowTable table;       // GpuCpu
  uint64_t* counts;      // 4 outcomes, then updates; GpuCpu
  uint32_t bursts;
  uint32_t burst;

  GNIO_HD void operator()(const dev::KernelCtx&) const {
#if GNIO_DEVICE_PASS
    __shared__ BlockFlowSlot slots[kBlockFlowSlots];
#else
    BlockFlowSlot slots[kBlockFlowSlots];
#endif
    block_flows_clear(slots);
    dev::sync_block();
    uint64_t local[5] = {0, 0, 0, 0, 0};
    for (uint32_t b = 0; b < bursts; ++b) {
      const FlowPacket* ps = in + (size_t{dev::block_index()} * bursts + b) * burst;
      for (uint32_t first = 0; first < burst; first += dev::block_dim()) {
        const uint32_t i = first + dev::thread_index();
        const FlowPacket& p = ps[i < burst ? i : 0];
        const bool tracked = i < burst && p.tracked != 0;
        FlowDelta d;
        uint64_t h = 0;
        if (tracked) {
          d = FlowDelta::one(p.direction, p.len, p.ts, p.tcp_flags);
          h = FlowTable::hash(p.key);
        }
        if (warp_merge_flow(p.key, h, tracked, d) && !block_flows_add(slots, p.key, h, d)) {
          count_outcome(local, table.apply(p.key, h, d), d.count());
          local[4] += 1;
        }
      }
      dev::sync_block();
      block_flows_flush(slots, table, local, local[4]);
      dev::sync_block();
    }
    for (uint32_t k = 0; k < 5; ++k)
      if (local[k] != 0) dev::fetch_add_relaxed(&counts[k], local[k]);
  }
};

FlowKey key_of(uint32_t flow) {
  FlowKey k{};
  k.a[0] = 10;
  k.a[3] = static_cast<uint8_t>(flow);
  k.b[0] = 172;
  k.port_a = static_cast<uint16_t>(2000 + flow);
  k.port_b = 443;
  k.proto = 6;
  k.version = 4;
  return k;
}

// Sets of a warp's lanes: all one flow, a few flows, an equal hash for
// different keys, all different, then random ones.
std::vector<Lane> make_sets(uint32_t sets) {
  std::mt19937 rng(19);
  std::vector<Lane> lanes(sets * kWarp);
  for (uint32_t s = 0; s < sets; ++s)
    for (uint32_t i = 0; i < kWarp; ++i) {
      Lane& l = lanes[s * kWarp + i];
      const uint32_t flow = s == 0 ? 7 : s == 3 ? i : rng() % 4;
      l.key = key_of(flow);
      l.tracked = s == 0 || rng() % 8 != 0;
      l.hash = !l.tracked ? 0 : s == 2 ? uint64_t{0xabcdef} | 1u : FlowTable::hash(l.key);
      // Time stamps on both sides of a 2^32 boundary: the 64-bit min/max.
      const uint64_t ts = (uint64_t{1} << 32) * (rng() % 2 + 1) + rng() % 1000;
      l.delta = l.tracked ? FlowDelta::one(static_cast<int>(rng() % 2), 64 + rng() % 9000, ts, 1u << (rng() % 8))
                          : FlowDelta{};
      l.wants_record = rng() % 3 == 0;
    }
  return lanes;
}

TEST(WarpMerge, KernelMergesAndClaimsAsTheHostReference) {
  GNIO_OPEN_TEST_GPU(gpu);
  if (test::test_gpu_id() == "auto" && gpu.emulated()) GTEST_SKIP() << "no CUDA device: auto opened the emulated device";
  constexpr uint32_t kSets = 12;
  const uint32_t width = gpu.emulated() ? 1u : kWarp;
  const std::vector<Lane> lanes = make_sets(kSets);
  auto in = gpu.alloc(lanes.size() * sizeof(Lane), MemKind::GpuCpu);
  auto out = gpu.alloc(lanes.size() * sizeof(Out), MemKind::GpuCpu);
  auto claim = gpu.alloc(sizeof(uint64_t), MemKind::GpuCpu);
  ASSERT_TRUE(in && out && claim);
  std::memcpy(in->host_ptr(), lanes.data(), lanes.size() * sizeof(Lane));
  std::memset(out->host_ptr(), 0xff, out->size());
  std::memset(claim->host_ptr(), 0, claim->size());
  LaunchConfig cfg;
  cfg.grid = 1;
  cfg.block = width;
  cfg.name = "warp-merge";
  auto k = PersistentKernel::launch(gpu, cfg,
                                    MergeKernel{static_cast<const Lane*>(in->device_ptr()),
                                                static_cast<Out*>(out->device_ptr()),
                                                static_cast<uint64_t*>(claim->device_ptr()), kSets});
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  ASSERT_TRUE(k->stop());
  const auto* got = static_cast<const Out*>(out->host_ptr());

  uint64_t next_claim = 0;
  uint32_t leaders = 0, merged = 0;
  for (uint32_t s = 0; s < kSets; ++s) {
    FlowKey keys[kWarp];
    uint64_t hashes[kWarp];
    bool tracked[kWarp], lead[kWarp];
    FlowDelta d[kWarp];
    for (uint32_t i = 0; i < width; ++i) {
      const Lane& l = lanes[s * kWarp + i];
      keys[i] = l.key;
      hashes[i] = l.hash;
      tracked[i] = l.tracked != 0;
      d[i] = l.delta;
    }
    merge_flow_lanes(keys, hashes, tracked, d, lead, width);
    for (uint32_t i = 0; i < width; ++i) {
      const Out& o = got[s * kWarp + i];
      const std::string where = "set " + std::to_string(s) + " lane " + std::to_string(i);
      ASSERT_EQ(o.lead != 0, lead[i]) << where;
      if (lead[i]) {
        ++leaders;
        merged += d[i].count() > 1;
        for (int dir = 0; dir < 2; ++dir) {
          EXPECT_EQ(o.delta.packets[dir], d[i].packets[dir]) << where << " direction " << dir;
          EXPECT_EQ(o.delta.bytes[dir], d[i].bytes[dir]) << where << " direction " << dir;
          EXPECT_EQ(o.delta.tcp_flags[dir], d[i].tcp_flags[dir]) << where << " direction " << dir;
        }
        EXPECT_EQ(o.delta.first_ns, d[i].first_ns) << where;
        EXPECT_EQ(o.delta.last_ns, d[i].last_ns) << where;
      }
      // Claims in lane order within the warp, warps one after the other.
      if (lanes[s * kWarp + i].wants_record) {
        EXPECT_EQ(o.claimed, next_claim++) << where;
      }
    }
  }
  EXPECT_EQ(*static_cast<const uint64_t*>(claim->host_ptr()), next_claim);
  EXPECT_GT(leaders, 0u);
  if (width == kWarp) {
    EXPECT_GT(merged, kSets / 2) << "the sets hold packets of one flow in most warps";
  }
}

TEST(WarpMerge, BlocksGatherTheirBurstsFlowsIntoOneUpdatePerFlowAndBurstAsTheHostReference) {
  GNIO_OPEN_TEST_GPU(gpu);
  if (test::test_gpu_id() == "auto" && gpu.emulated()) GTEST_SKIP() << "no CUDA device: auto opened the emulated device";
  constexpr uint32_t kBlocks = 4, kBursts = 24, kBurst = 256, kFlows = 33, kSlots = 1u << 16;
  const uint32_t threads = gpu.emulated() ? 1u : 256u;
  std::mt19937 rng(29);
  std::vector<FlowPacket> packets(size_t{kBlocks} * kBursts * kBurst);
  std::vector<uint32_t> flow_of(packets.size());
  for (size_t i = 0; i < packets.size(); ++i) {
    // Runs of one flow as a replayed capture has them, with strays.
    const uint32_t flow = rng() % 4 == 0 ? rng() % kFlows : static_cast<uint32_t>(i / 40) % kFlows;
    FlowPacket& p = packets[i];
    p.key = key_of(flow);
    p.ts = (uint64_t{1} << 32) * (1 + rng() % 3) + rng();
    p.len = 60 + rng() % 1440;
    p.tcp_flags = 1u << (rng() % 8);
    p.direction = static_cast<int32_t>(rng() % 2);
    p.tracked = rng() % 10 != 0;
    flow_of[i] = flow;
  }
  auto in = gpu.alloc(packets.size() * sizeof(FlowPacket), MemKind::GpuCpu);
  auto slots = gpu.alloc(size_t{kSlots} * sizeof(FlowEntry), MemKind::GpuCpu);
  auto counts = gpu.alloc(5 * sizeof(uint64_t), MemKind::GpuCpu);
  ASSERT_TRUE(in && slots && counts);
  std::memcpy(in->host_ptr(), packets.data(), in->size());
  std::memset(slots->host_ptr(), 0, slots->size());
  std::memset(counts->host_ptr(), 0, counts->size());
  LaunchConfig cfg;
  cfg.grid = kBlocks;
  cfg.block = threads;
  cfg.name = "block-flows";
  auto k = PersistentKernel::launch(
      gpu, cfg,
      BlockFlowsKernel{static_cast<const FlowPacket*>(in->device_ptr()),
                       FlowTable{static_cast<FlowEntry*>(slots->device_ptr()), kSlots - 1},
                       static_cast<uint64_t*>(counts->device_ptr()), kBursts, kBurst});
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  ASSERT_TRUE(k->stop());

  struct Expected {
    uint64_t packets[2] = {0, 0}, bytes[2] = {0, 0};
    uint32_t flags[2] = {0, 0};
    uint64_t first = ~0ull, last = 0;
  };
  std::map<uint32_t, Expected> ref;
  uint64_t tracked = 0, flow_bursts = 0;
  for (size_t from = 0; from < packets.size(); from += kBurst) {
    std::map<uint32_t, bool> present;
    for (size_t i = from; i < from + kBurst; ++i) {
      const FlowPacket& p = packets[i];
      if (!p.tracked) continue;
      Expected& e = ref[flow_of[i]];
      e.packets[p.direction] += 1;
      e.bytes[p.direction] += p.len;
      e.flags[p.direction] |= p.tcp_flags;
      e.first = std::min(e.first, p.ts);
      e.last = std::max(e.last, p.ts);
      present[flow_of[i]] = true;
      ++tracked;
    }
    flow_bursts += present.size();
  }
  const auto* table = static_cast<const FlowEntry*>(slots->host_ptr());
  for (const auto& [flow, e] : ref) {
    const FlowKey key = key_of(flow);
    const FlowEntry* f = nullptr;
    for (uint32_t s = 0; s < kSlots; ++s)
      if (table[s].tag != 0 && FlowTable::same(table[s].key, key)) {
        ASSERT_EQ(f, nullptr) << "flow " << flow << " in two slots";
        f = &table[s];
      }
    ASSERT_NE(f, nullptr) << "flow " << flow << " not in the table";
    for (int d = 0; d < 2; ++d) {
      EXPECT_EQ(f->packets[d], e.packets[d]) << "flow " << flow << " direction " << d;
      EXPECT_EQ(f->bytes[d], e.bytes[d]) << "flow " << flow << " direction " << d;
      EXPECT_EQ(f->tcp_flags[d], e.flags[d]) << "flow " << flow << " direction " << d;
    }
    EXPECT_EQ(f->first_ns, e.first) << "flow " << flow;
    EXPECT_EQ(f->last_ns, e.last) << "flow " << flow;
  }
  const auto* c = static_cast<const uint64_t*>(counts->host_ptr());
  EXPECT_EQ(c[kFlowNew], kFlows);
  EXPECT_EQ(c[kFlowHit], tracked - kFlows);
  EXPECT_EQ(c[kFlowEvicted] + c[kFlowUntracked], 0u);
  // One table update per flow present in a burst: the block's slots held them all.
  EXPECT_EQ(c[4], flow_bursts);
}

TEST(WarpMerge, WarpChecksumSumEqualsTheHostSum) {
  GNIO_OPEN_TEST_GPU(gpu);
  if (gpu.emulated()) GTEST_SKIP() << "no CUDA device: the warp-wide sum runs on a GPU only";
  constexpr uint32_t kSets = 16, kLanes = kSets * kWarp;
  std::mt19937 rng(23);
  std::vector<uint8_t> bytes(size_t{kLanes} * SumKernel::kSlot);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  std::vector<uint32_t> offset(kLanes), length(kLanes);
  for (uint32_t i = 0; i < kLanes; ++i) {
    // Every start and end parity and alignment; lengths 0..1600, some short.
    offset[i] = rng() % 64;
    length[i] = i % 7 == 0 ? rng() % 24 : rng() % 1601;
    if (i % 11 == 0) length[i] = 0;
  }
  auto dbytes = gpu.alloc(bytes.size(), MemKind::GpuCpu);
  auto doff = gpu.alloc(kLanes * sizeof(uint32_t), MemKind::GpuCpu);
  auto dlen = gpu.alloc(kLanes * sizeof(uint32_t), MemKind::GpuCpu);
  auto dsum = gpu.alloc(kLanes * sizeof(uint16_t), MemKind::GpuCpu);
  ASSERT_TRUE(dbytes && doff && dlen && dsum);
  std::memcpy(dbytes->host_ptr(), bytes.data(), bytes.size());
  std::memcpy(doff->host_ptr(), offset.data(), kLanes * sizeof(uint32_t));
  std::memcpy(dlen->host_ptr(), length.data(), kLanes * sizeof(uint32_t));
  std::memset(dsum->host_ptr(), 0xee, dsum->size());
  LaunchConfig cfg;
  cfg.grid = 1;
  cfg.block = kWarp;
  cfg.name = "warp-sum";
  auto k = PersistentKernel::launch(
      gpu, cfg,
      SumKernel{static_cast<const uint8_t*>(dbytes->device_ptr()), static_cast<const uint32_t*>(doff->device_ptr()),
                static_cast<const uint32_t*>(dlen->device_ptr()), static_cast<uint16_t*>(dsum->device_ptr()), kSets});
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  ASSERT_TRUE(k->stop());
  const auto* got = static_cast<const uint16_t*>(dsum->host_ptr());
  for (uint32_t i = 0; i < kLanes; ++i) {
    const uint16_t want =
        length[i] == 0 ? 0 : dev::ones_complement_sum(bytes.data() + size_t{i} * SumKernel::kSlot + offset[i], length[i]);
    EXPECT_EQ(got[i], want) << "lane " << i % kWarp << " set " << i / kWarp << ": offset " << offset[i] << ", "
                            << length[i] << " bytes";
  }
}

}  // namespace
