// SPDX-License-Identifier: Apache-2.0
// The flow table fed by warps whose packets are merged per flow
// (merge_flow_lanes, FlowTable::apply, count_outcome) against a reference
// kept in a std::map, and against the same packets added one at a time:
// per flow, packets, bytes and TCP flags each way and the first and last
// time stamps; per outcome, packets counted as if they came one by one.
// Then the same with a burst's warps gathered per block (block_flows_*),
// here a block of one thread.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "packet_processing/block_flows.hpp"
#include "packet_processing/warp_merge.hpp"

namespace {

using namespace gnio::dev::app;

constexpr uint32_t kWarp = 32;

FlowKey key_of(uint32_t flow) {
  FlowKey k{};
  k.a[0] = 10;
  k.a[3] = static_cast<uint8_t>(flow);
  k.b[0] = 192;
  k.b[1] = 168;
  k.b[3] = static_cast<uint8_t>(flow >> 8);
  k.port_a = static_cast<uint16_t>(1000 + flow);
  k.port_b = 53;
  k.proto = 17;
  k.version = 4;
  return k;
}

struct Packet {
  uint32_t flow;
  int direction;
  uint32_t len;
  uint64_t ts;
  uint32_t tcp_flags;
  bool tracked;  // false: a packet without a flow (not IP), or a lane without a packet
};

struct Expected {
  uint64_t packets[2] = {0, 0}, bytes[2] = {0, 0};
  uint32_t flags[2] = {0, 0};
  uint64_t first = ~0ull, last = 0;
};

struct Table {
  std::vector<FlowEntry> slots;
  FlowTable table;
  uint64_t outcomes[4] = {0, 0, 0, 0};
  uint64_t updates = 0;

  explicit Table(uint32_t n) : slots(n) {
    std::memset(static_cast<void*>(slots.data()), 0, n * sizeof(FlowEntry));
    table = {slots.data(), n - 1};
  }

  const FlowEntry* find(const FlowKey& k) const {
    const FlowEntry* found = nullptr;
    for (const FlowEntry& e : slots)
      if (e.tag != 0 && FlowTable::same(e.key, k)) {
        EXPECT_EQ(found, nullptr) << "a flow held by two slots";
        found = &e;
      }
    return found;
  }
};

// Packets [first, first + n) as one warp of lanes: merged, then each
// leader's key, hash and merged update handed to `apply`. `hash_of` gives
// each flow's hash (the real one, or a forced collision).
template <typename HashOf, typename Apply>
void merge_warp(const std::vector<Packet>& packets, size_t first, uint32_t n, HashOf hash_of, Apply apply) {
  FlowKey keys[kWarp]{};
  uint64_t hashes[kWarp]{};
  bool tracked[kWarp]{}, lead[kWarp]{};
  FlowDelta d[kWarp]{};
  for (uint32_t i = 0; i < n; ++i) {
    const Packet& p = packets[first + i];
    keys[i] = key_of(p.flow);
    hashes[i] = p.tracked ? hash_of(p.flow) : 0;
    tracked[i] = p.tracked;
    if (p.tracked) d[i] = FlowDelta::one(p.direction, p.len, p.ts, p.tcp_flags);
  }
  merge_flow_lanes(keys, hashes, tracked, d, lead, n);
  for (uint32_t i = 0; i < n; ++i)
    if (lead[i]) apply(keys[i], hashes[i], d[i]);
}

// The packets in warps of kWarp lanes: merged, then one update per leader.
template <typename HashOf>
void feed_merged(Table& t, const std::vector<Packet>& packets, HashOf hash_of) {
  for (size_t first = 0; first < packets.size(); first += kWarp)
    merge_warp(packets, first, static_cast<uint32_t>(std::min<size_t>(kWarp, packets.size() - first)), hash_of,
               [&](const FlowKey& key, uint64_t hash, const FlowDelta& d) {
                 count_outcome(t.outcomes, t.table.apply(key, hash, d), d.count());
                 ++t.updates;
               });
}

void feed_one_by_one(Table& t, const std::vector<Packet>& packets) {
  for (const Packet& p : packets)
    if (p.tracked) {
      ++t.outcomes[t.table.update(key_of(p.flow), p.direction, p.len, p.ts, p.tcp_flags)];
      ++t.updates;
    }
}

std::map<uint32_t, Expected> reference(const std::vector<Packet>& packets) {
  std::map<uint32_t, Expected> m;
  for (const Packet& p : packets) {
    if (!p.tracked) continue;
    Expected& e = m[p.flow];
    e.packets[p.direction] += 1;
    e.bytes[p.direction] += p.len;
    e.flags[p.direction] |= p.tcp_flags;
    e.first = std::min(e.first, p.ts);
    e.last = std::max(e.last, p.ts);
  }
  return m;
}

void expect_table_holds(const Table& t, const std::map<uint32_t, Expected>& ref, const char* what) {
  for (const auto& [flow, e] : ref) {
    const FlowEntry* f = t.find(key_of(flow));
    ASSERT_NE(f, nullptr) << what << ": flow " << flow << " not in the table";
    for (int d = 0; d < 2; ++d) {
      EXPECT_EQ(f->packets[d], e.packets[d]) << what << ": flow " << flow << " direction " << d;
      EXPECT_EQ(f->bytes[d], e.bytes[d]) << what << ": flow " << flow << " direction " << d;
      EXPECT_EQ(f->tcp_flags[d], e.flags[d]) << what << ": flow " << flow << " direction " << d;
    }
    EXPECT_EQ(f->first_ns, e.first) << what << ": flow " << flow;
    EXPECT_EQ(f->last_ns, e.last) << what << ": flow " << flow;
  }
}

// Flows whose hashes land in one slot of a table of `slots` slots.
std::vector<uint32_t> flows_in_one_bucket(uint32_t count, uint32_t slots) {
  std::map<uint64_t, std::vector<uint32_t>> by_bucket;
  for (uint32_t f = 0;; ++f) {
    auto& v = by_bucket[FlowTable::hash(key_of(f)) & (slots - 1)];
    v.push_back(f);
    if (v.size() == count) return v;
  }
}

std::vector<Packet> random_packets(const std::vector<uint32_t>& flows, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Packet> out;
  for (size_t i = 0; i < n; ++i) {
    Packet p;
    // Skewed: half the packets on the first flow, so warps hold runs of it.
    p.flow = rng() % 2 == 0 ? flows[0] : flows[rng() % flows.size()];
    p.direction = static_cast<int>(rng() % 2);
    p.len = 60 + rng() % 1440;
    p.ts = (uint64_t{1} << 32) * (1 + rng() % 3) + rng();  // high words differ too: the 64-bit min/max
    p.tcp_flags = 1u << (rng() % 8);
    p.tracked = rng() % 10 != 0;
    out.push_back(p);
  }
  return out;
}

TEST(FlowMerge, WarpsOfOneFlowAndFlowsOfOneBucketEqualTheReference) {
  constexpr uint32_t kSlots = 64;
  const std::vector<uint32_t> flows = flows_in_one_bucket(6, kSlots);
  const std::vector<Packet> packets = random_packets(flows, 4096, 7);
  const auto ref = reference(packets);
  ASSERT_EQ(ref.size(), flows.size());

  Table merged(kSlots), single(kSlots);
  feed_merged(merged, packets, [](uint32_t f) { return FlowTable::hash(key_of(f)); });
  feed_one_by_one(single, packets);
  expect_table_holds(merged, ref, "merged");
  expect_table_holds(single, ref, "one by one");

  uint64_t tracked = 0;
  for (const auto& [flow, e] : ref) tracked += e.packets[0] + e.packets[1];
  // Packets counted by outcome exactly as one by one: each flow new once,
  // every other packet a hit.
  for (int o = 0; o < 4; ++o) EXPECT_EQ(merged.outcomes[o], single.outcomes[o]) << "outcome " << o;
  EXPECT_EQ(merged.outcomes[kFlowNew], flows.size());
  EXPECT_EQ(merged.outcomes[kFlowHit], tracked - flows.size());
  EXPECT_EQ(merged.outcomes[kFlowEvicted] + merged.outcomes[kFlowUntracked], 0u);
  // At most one update per flow and warp.
  EXPECT_EQ(single.updates, tracked);
  EXPECT_LE(merged.updates, flows.size() * ((packets.size() + kWarp - 1) / kWarp));
  EXPECT_LT(merged.updates * 3, tracked);
}

TEST(FlowMerge, AWarpOfOneFlowIsOneUpdateByItsFirstLane) {
  std::vector<Packet> packets;
  for (uint32_t i = 0; i < kWarp; ++i)
    packets.push_back({5, static_cast<int>(i % 3 == 0), 100 + i, 1000 - i, i == 7 ? 0x02u : 0x10u, i != 0});
  FlowKey keys[kWarp];
  uint64_t hashes[kWarp];
  bool tracked[kWarp], lead[kWarp];
  FlowDelta d[kWarp];
  for (uint32_t i = 0; i < kWarp; ++i) {
    keys[i] = key_of(5);
    hashes[i] = i == 0 ? 0 : FlowTable::hash(keys[i]);
    tracked[i] = i != 0;
    if (tracked[i]) d[i] = FlowDelta::one(packets[i].direction, packets[i].len, packets[i].ts, packets[i].tcp_flags);
  }
  merge_flow_lanes(keys, hashes, tracked, d, lead, kWarp);
  for (uint32_t i = 0; i < kWarp; ++i) EXPECT_EQ(lead[i], i == 1) << "lane " << i;
  const Expected e = reference(packets).at(5);
  EXPECT_EQ(d[1].packets[0], e.packets[0]);
  EXPECT_EQ(d[1].packets[1], e.packets[1]);
  EXPECT_EQ(d[1].bytes[0], e.bytes[0]);
  EXPECT_EQ(d[1].bytes[1], e.bytes[1]);
  EXPECT_EQ(d[1].tcp_flags[0], e.flags[0]);
  EXPECT_EQ(d[1].tcp_flags[1], e.flags[1]);
  EXPECT_EQ(d[1].first_ns, 1000u - 31u);
  EXPECT_EQ(d[1].last_ns, 999u);
  EXPECT_EQ(d[1].count(), 31u);
}

TEST(FlowMerge, FlowsOfEqualHashButDifferentKeysStayApart) {
  // Every flow given the same hash: the merge must compare keys, and so
  // must the table (equal tags).
  constexpr uint32_t kSlots = 64;
  const std::vector<uint32_t> flows = {1, 2, 3, 4};
  const std::vector<Packet> packets = random_packets(flows, 2048, 11);
  const auto ref = reference(packets);
  Table merged(kSlots);
  feed_merged(merged, packets, [](uint32_t) { return uint64_t{0x1234567} | 1u; });
  expect_table_holds(merged, ref, "one hash");
  uint64_t tracked = 0;
  for (const auto& [flow, e] : ref) tracked += e.packets[0] + e.packets[1];
  EXPECT_EQ(merged.outcomes[kFlowNew], flows.size());
  EXPECT_EQ(merged.outcomes[kFlowHit], tracked - flows.size());
  // The first lane's flow merges; lanes of the other flows update alone.
  EXPECT_LT(merged.updates, tracked);
}

TEST(FlowMerge, EvictionsAndUntrackedCountEveryPacket) {
  // More flows in one bucket than the probe window: takeovers.
  constexpr uint32_t kSlots = 16;
  const std::vector<uint32_t> flows = flows_in_one_bucket(kFlowProbe + 8, kSlots);
  const std::vector<Packet> packets = random_packets(flows, 4096, 3);
  uint64_t tracked = 0;
  for (const Packet& p : packets) tracked += p.tracked;
  Table merged(kSlots);
  feed_merged(merged, packets, [](uint32_t f) { return FlowTable::hash(key_of(f)); });
  EXPECT_EQ(merged.outcomes[0] + merged.outcomes[1] + merged.outcomes[2] + merged.outcomes[3], tracked);
  EXPECT_GT(merged.outcomes[kFlowEvicted], 0u);
  EXPECT_EQ(merged.outcomes[kFlowNew], kSlots);  // every slot filled once, then taken over
  EXPECT_EQ(merged.outcomes[kFlowUntracked], 0u);  // one thread: no slot is ever busy
  uint64_t held = 0;
  for (const FlowEntry& e : merged.slots) held += e.packets[0] + e.packets[1];
  EXPECT_LE(held, tracked);
}

// The packets in bursts of `burst`: warps merged, their updates gathered
// in the block's slots (or applied directly when the window is full), the
// slots flushed to the table after each burst.
void feed_bursts(Table& t, const std::vector<Packet>& packets, size_t burst, uint64_t& direct) {
  std::vector<BlockFlowSlot> slots(kBlockFlowSlots);
  block_flows_clear(slots.data());
  for (size_t from = 0; from < packets.size(); from += burst) {
    const size_t to = std::min(packets.size(), from + burst);
    for (size_t first = from; first < to; first += kWarp)
      merge_warp(packets, first, static_cast<uint32_t>(std::min<size_t>(kWarp, to - first)),
                 [](uint32_t flow) { return FlowTable::hash(key_of(flow)); },
                 [&](const FlowKey& key, uint64_t hash, const FlowDelta& d) {
                   if (block_flows_add(slots.data(), key, hash, d)) return;
                   count_outcome(t.outcomes, t.table.apply(key, hash, d), d.count());
                   ++t.updates;
                   ++direct;
                 });
    block_flows_flush(slots.data(), t.table, t.outcomes, t.updates);
    for (const BlockFlowSlot& s : slots) ASSERT_EQ(s.tag, 0u) << "a slot left full after the flush";
  }
}

std::vector<uint32_t> first_flows(uint32_t n) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST(FlowMerge, BurstsGatheredPerBlockEqualTheReferenceInOneUpdatePerFlowAndBurst) {
  constexpr size_t kBurst = 256;
  const std::vector<uint32_t> flows = first_flows(33);
  const std::vector<Packet> packets = random_packets(flows, 40 * kBurst, 5);
  const auto ref = reference(packets);
  Table gathered(65536), single(65536);
  uint64_t direct = 0;
  feed_bursts(gathered, packets, kBurst, direct);
  feed_one_by_one(single, packets);
  expect_table_holds(gathered, ref, "gathered per burst");
  for (int o = 0; o < 4; ++o) EXPECT_EQ(gathered.outcomes[o], single.outcomes[o]) << "outcome " << o;
  EXPECT_EQ(gathered.outcomes[kFlowNew], flows.size());
  EXPECT_EQ(direct, 0u) << "33 flows fit the block's slots";
  // Exactly one update per flow present in each burst.
  uint64_t want = 0;
  for (size_t from = 0; from < packets.size(); from += kBurst) {
    std::map<uint32_t, bool> present;
    for (size_t i = from; i < std::min(packets.size(), from + kBurst); ++i)
      if (packets[i].tracked) present[packets[i].flow] = true;
    want += present.size();
  }
  EXPECT_EQ(gathered.updates, want);
  EXPECT_LE(gathered.updates, flows.size() * (packets.size() / kBurst));
}

TEST(FlowMerge, ABurstOfMoreFlowsThanBlockSlotsAppliesTheRestDirectlyAndStaysExact) {
  // Every packet its own flow, more flows per burst than slots: some
  // windows fill up, and those updates go straight to the table.
  const size_t burst = kBlockFlowSlots * 4;
  const std::vector<uint32_t> flows = first_flows(static_cast<uint32_t>(burst * 3));
  std::vector<Packet> packets;
  std::mt19937 rng(17);
  for (uint32_t round = 0; round < 2; ++round)
    for (uint32_t f : flows)
      packets.push_back({f, static_cast<int>(rng() % 2), static_cast<uint32_t>(60 + rng() % 1440),
                         (uint64_t{1} << 32) + rng(), 1u << (rng() % 8), true});
  const auto ref = reference(packets);
  Table gathered(1u << 16);
  uint64_t direct = 0;
  feed_bursts(gathered, packets, burst, direct);
  expect_table_holds(gathered, ref, "gathered, windows full");
  EXPECT_GT(direct, 0u) << "no window filled: the test does not reach the direct path";
  EXPECT_EQ(gathered.outcomes[kFlowNew], flows.size());
  EXPECT_EQ(gathered.outcomes[kFlowHit], flows.size());
  EXPECT_EQ(gathered.outcomes[kFlowEvicted] + gathered.outcomes[kFlowUntracked], 0u);
}

TEST(FlowMerge, WarpClaimOnOneLaneIsOneIncrement) {
  // The emulated device's warp is one lane: each call claims the next index.
  uint64_t counter = 5;
  EXPECT_EQ(warp_claim(&counter, true), 5u);
  EXPECT_EQ(warp_claim(&counter, false), 0u);
  EXPECT_EQ(warp_claim(&counter, true), 6u);
  EXPECT_EQ(counter, 7u);
}

}  // namespace
