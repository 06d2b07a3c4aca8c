// SPDX-License-Identifier: Apache-2.0
// BatchReceiver with BatchLayout::Flat on the emulated device: every frame
// of a source is in exactly one batch, whole (bytes equal to the host path's
// reading of the same spec, at data + offsets[j]), batches end when their
// count or their bytes run out, and a frame longer than a whole buffer is
// counted as flat_oversize.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "../core/test_support.hpp"
#include "gnio/batch.hpp"
#include "gnio/dev/batch.hpp"
#include "host_frames.hpp"

using namespace gnio;

namespace {

constexpr uint32_t kWhole = UINT32_MAX;
using test::host_frames;

BatchConfig flat(const std::string& spec, uint32_t batch, uint64_t flat_bytes, uint32_t queues = 1) {
  BatchConfig cfg;
  cfg.spec = spec;
  cfg.gpu = "cpu";
  cfg.layout = BatchLayout::Flat;
  cfg.batch = batch;
  cfg.flat_bytes = flat_bytes;
  cfg.queues = queues;
  cfg.timeout = std::chrono::microseconds(200);
  return cfg;
}

uint64_t dropped(const BatchQueueStats& q, BatchDropReason r) { return q.dropped[static_cast<size_t>(r)]; }

// What a run delivered, for checks beyond the bytes.
struct Delivery {
  std::vector<BatchRef> batches;
  // Per batch: the length of the packet of its queue that came next, 0 after the last.
  std::vector<uint32_t> next_len;
  BatchStats stats;
};

// Takes every batch until the end and checks each packet whole against
// `want` (the frames expected, per queue, in order); returns the batches.
Delivery receive_all_and_compare(const BatchConfig& cfg, const std::map<uint16_t, std::vector<test::Frame>>& want) {
  Delivery run;
  auto rx = BatchReceiver::open(cfg);
  EXPECT_TRUE(rx) << rx.status().to_string();
  if (!rx) return run;
  const uint64_t flat_bytes = rx->config().flat_bytes;
  std::map<uint16_t, size_t> seen;
  std::vector<std::pair<uint16_t, size_t>> ends;  // per batch: its queue and the index after its last packet
  for (;;) {
    auto n = rx->next(std::chrono::seconds(10));
    EXPECT_TRUE(n) << n.status().to_string();
    if (!n) return run;
    EXPECT_NE(n->what, BatchNext::What::Timeout) << "no batch within 10 s";
    if (n->what != BatchNext::What::Batch) break;
    const BatchRef& b = n->batch;
    EXPECT_GE(b.count, 1u);
    EXPECT_LE(b.count, cfg.batch);
    EXPECT_LE(b.bytes, flat_bytes) << "a batch holds at most flat_bytes";
    const BatchArrays a = rx->arrays(b.buffer);
    const auto* data = static_cast<const uint8_t*>(a.data);
    const auto* offsets = static_cast<const uint32_t*>(a.offsets);
    const auto* lengths = static_cast<const uint32_t*>(a.lengths);
    const auto* qids = static_cast<const uint16_t*>(a.queue);
    EXPECT_NE(offsets, nullptr);
    if (!offsets) return run;
    EXPECT_EQ(offsets[0], 0u);
    EXPECT_EQ(offsets[b.count], b.bytes) << "the last offset is the bytes used";
    const auto& w = want.at(b.queue);
    for (uint32_t j = 0; j < b.count; ++j) {
      EXPECT_EQ(qids[j], b.queue);
      const size_t idx = seen[b.queue]++;
      if (idx >= w.size()) {
        ADD_FAILURE() << "more packets than the source has on queue " << b.queue;
        return run;
      }
      EXPECT_EQ(lengths[j], w[idx].len) << "queue " << b.queue << " packet " << idx;
      EXPECT_EQ(offsets[j + 1] - offsets[j], w[idx].len) << "queue " << b.queue << " packet " << idx;
      if (offsets[j + 1] - offsets[j] != w[idx].len) return run;
      EXPECT_EQ(0, std::memcmp(data + offsets[j], w[idx].bytes.data(), w[idx].len))
          << "queue " << b.queue << " packet " << idx << " bytes";
    }
    run.batches.push_back(b);
    ends.emplace_back(b.queue, seen[b.queue]);
    EXPECT_TRUE(rx->release(b.buffer));
  }
  EXPECT_TRUE(rx->close());
  for (const auto& [q, end] : ends) {
    const auto& w = want.at(q);
    run.next_len.push_back(end < w.size() ? w[end].len : 0);
  }
  for (const auto& [q, frames] : want) EXPECT_EQ(seen[q], frames.size()) << "queue " << q << ": every packet once";
  run.stats = rx->stats();
  EXPECT_EQ(run.stats.total.batches, run.batches.size());
  EXPECT_EQ(run.stats.total.in_flight, 0u);
  uint64_t accounted = run.stats.total.delivered;
  for (uint64_t d : run.stats.total.dropped) accounted += d;
  EXPECT_EQ(run.stats.total.offered, accounted) << "offered == delivered + sum(dropped)";
  return run;
}

// Every drop reason but `except` is 0.
void expect_no_drops(const BatchStats& s, BatchDropReason except = BatchDropReason::Count) {
  for (size_t d = 0; d < kBatchDropReasons; ++d)
    if (d != static_cast<size_t>(except)) {
      EXPECT_EQ(s.total.dropped[d], 0u) << batch_drop_reason_name(static_cast<BatchDropReason>(d));
    }
}

}  // namespace

TEST(BatchFlat, EveryPacketOfEveryCaptureWholeOnce) {
  size_t captures = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GNIO_DATA_DIR) + "/captures")) {
    if (e.path().extension() != ".pcap") continue;
    ++captures;
    const std::string spec = "pcap:" + e.path().string();
    SCOPED_TRACE(spec);
    const auto want = host_frames(spec, 1, kWhole);
    const Delivery run = receive_all_and_compare(flat(spec, 8, 0), want);
    const uint64_t frames = want.count(0) ? want.at(0).size() : 0;
    EXPECT_EQ(run.stats.total.delivered, frames);
    EXPECT_EQ(run.stats.total.offered, frames);
    expect_no_drops(run.stats);
    std::printf("%s: %llu whole packets in %zu batches\n", e.path().filename().c_str(), (unsigned long long)frames,
                run.batches.size());
  }
  EXPECT_GE(captures, 5u);
}

// 64 KiB a batch of frames up to 1500 bytes: most batches end on their bytes.
TEST(BatchFlat, SyntheticSourceOnFourQueues) {
  const std::string spec = "synthetic:count=20000,size=64-1500,proto=mix,seed=4,queues=4";
  const auto want = host_frames(spec, 4, kWhole);
  const Delivery run = receive_all_and_compare(flat(spec, 256, 65536, 4), want);
  EXPECT_EQ(run.stats.total.delivered, 20000u);
  expect_no_drops(run.stats);
  size_t bytes_full = 0;
  for (size_t i = 0; i < run.batches.size(); ++i) {
    const BatchRef& b = run.batches[i];
    if (!(b.flags & dev::BatchBytesFull)) continue;
    ++bytes_full;
    ASSERT_GT(run.next_len[i], 0u);
    EXPECT_GT(b.bytes + run.next_len[i], 65536u) << "handed over for its bytes, yet the next packet fits";
  }
  EXPECT_GT(bytes_full, run.batches.size() / 2);
  std::printf("%zu batches, %zu of them ended by their bytes\n", run.batches.size(), bytes_full);
}

// 1000-byte frames, 3500 bytes a batch: three frames each, the fourth
// starts the next batch; none is cut and none lost.
TEST(BatchFlat, BatchEndsWhenItsBytesRunOut) {
  const std::string spec = "synthetic:count=100,size=1000";
  BatchConfig cfg = flat(spec, 64, 3500);
  cfg.timeout = std::chrono::milliseconds(300);  // no batch ends by time before its bytes
  const Delivery run = receive_all_and_compare(cfg, host_frames(spec, 1, kWhole));
  ASSERT_EQ(run.batches.size(), 34u);
  for (size_t i = 0; i + 1 < run.batches.size(); ++i) {
    EXPECT_EQ(run.batches[i].count, 3u) << "batch " << i;
    EXPECT_EQ(run.batches[i].bytes, 3000u) << "batch " << i;
    EXPECT_EQ(run.batches[i].flags, uint32_t{dev::BatchBytesFull}) << "batch " << i;
  }
  EXPECT_EQ(run.batches.back().count, 1u);
  EXPECT_EQ(run.stats.total.delivered, 100u);
  expect_no_drops(run.stats);
}

// One buffer and small batches: bursts span batch boundaries and the
// kernel holds the rest of a burst until the buffer comes back.
TEST(BatchFlat, BurstSpanningBatchesWaitsForTheBuffer) {
  const std::string spec = "synthetic:count=3000,size=64-1500,seed=5";
  BatchConfig cfg = flat(spec, 64, 8000);
  cfg.buffers = 1;
  const Delivery run = receive_all_and_compare(cfg, host_frames(spec, 1, kWhole));
  EXPECT_EQ(run.stats.total.delivered, 3000u);
  expect_no_drops(run.stats);
  for (size_t i = 0; i < run.batches.size(); ++i) EXPECT_EQ(run.batches[i].seq, i) << "in order";
}

// Frames longer than the whole buffer are counted, the others delivered whole in order.
TEST(BatchFlat, FrameLongerThanTheBufferIsCountedFlatOversize) {
  const std::string spec = "synthetic:count=2000,size=64-1500,seed=3";
  const auto all = host_frames(spec, 1, kWhole);
  std::map<uint16_t, std::vector<test::Frame>> fit;
  uint64_t too_long = 0;
  for (const test::Frame& f : all.at(0)) {
    if (f.len > 1200) ++too_long;
    else fit[0].push_back(f);
  }
  ASSERT_GT(too_long, 0u);
  const Delivery run = receive_all_and_compare(flat(spec, 32, 1200), fit);
  EXPECT_EQ(dropped(run.stats.total, BatchDropReason::FlatOversize), too_long);
  EXPECT_EQ(run.stats.total.delivered, 2000u - too_long);
  EXPECT_EQ(run.stats.total.offered, 2000u);
  expect_no_drops(run.stats, BatchDropReason::FlatOversize);
  std::printf("%llu of 2000 frames longer than 1200 bytes counted as flat_oversize\n", (unsigned long long)too_long);
}

// The consumer holds both buffers: the rest is counted as pool_full.
TEST(BatchFlat, HeldBuffersCountPoolFull) {
  BatchConfig cfg = flat("synthetic:count=5000,size=64", 100, 6400);
  cfg.buffers = 2;
  cfg.when_full = WhenFull::Drop;
  auto rx = BatchReceiver::open(cfg);
  ASSERT_TRUE(rx) << rx.status().to_string();
  std::vector<BatchRef> held;
  while (held.size() < 2) {
    auto n = rx->next(std::chrono::seconds(10));
    ASSERT_TRUE(n);
    ASSERT_EQ(n->what, BatchNext::What::Batch);
    held.push_back(n->batch);
  }
  BatchStats s;
  test::eventually([&] {
    s = rx->stats();
    return s.total.delivered + dropped(s.total, BatchDropReason::PoolFull) == 5000;
  });
  EXPECT_EQ(s.total.delivered, 200u);
  EXPECT_EQ(dropped(s.total, BatchDropReason::PoolFull), 4800u);
  ASSERT_TRUE(rx->close());
  s = rx->stats();
  uint64_t all_dropped = 0;
  for (uint64_t d : s.total.dropped) all_dropped += d;
  EXPECT_EQ(s.total.offered, s.total.delivered + all_dropped);
  EXPECT_EQ(s.total.in_flight, 0u);
  const auto* offsets = static_cast<const uint32_t*>(rx->arrays(held[0].buffer).offsets);
  EXPECT_EQ(offsets[held[0].count], 6400u);
  for (const BatchRef& b : held) EXPECT_TRUE(rx->release(b.buffer));
}

TEST(BatchFlat, BadArgumentsAreInvalidValue) {
  BatchConfig cfg = flat("synthetic:count=10", 64, uint64_t{1} << 32);
  auto rx = BatchReceiver::open(cfg);
  ASSERT_FALSE(rx);
  EXPECT_EQ(rx.status().code(), Errc::InvalidValue);
  EXPECT_NE(rx.status().message().find("flat_bytes=4294967296"), std::string::npos) << rx.status().message();
  cfg.layout = BatchLayout::Padded;
  cfg.flat_bytes = 4096;
  auto rx2 = BatchReceiver::open(cfg);
  ASSERT_FALSE(rx2);
  EXPECT_EQ(rx2.status().code(), Errc::InvalidValue);
  EXPECT_NE(rx2.status().message().find("flat_bytes=4096"), std::string::npos) << rx2.status().message();
}

TEST(BatchFlat, DefaultBytesHoldAFullBatchOfLargestFrames) {
  auto rx = BatchReceiver::open(flat("synthetic:count=10", 64, 0));
  ASSERT_TRUE(rx) << rx.status().to_string();
  EXPECT_GE(rx->config().flat_bytes, 64u * 1536);
  EXPECT_EQ(rx->config().snap, 256u) << "snap stays as given; the flat layout ignores it";
  EXPECT_NE(rx->arrays(0).offsets, nullptr);
  EXPECT_TRUE(rx->close());
}
