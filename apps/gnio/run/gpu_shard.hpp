// SPDX-License-Identifier: Apache-2.0
// One GPU's part of `gnio run packet-processing`: the RX queues mapped to it,
// their GPU handles, its TX queue, the kernel's counters, flow table and
// record ring in its memory, and its persistent kernel. A run has one per
// GPU; their counts add up to the run's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gnio/eth.hpp"
#include "gnio/filter.hpp"
#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "packet_processing/pp_kernel.hpp"
#include "packet_processing/records.hpp"

namespace gnio::cli {

// The records a kernel made ready since the last call, in order, printed
// as asked.
struct RecordReader {
  app::RecordConsumer ring;
  bool print_dns = false, print_http = false, print_tls = false;

  void drain(std::vector<dev::app::Record>& out);
};

// Which RX queues each GPU serves: `map` as --gpu-map gives it
// ("0-3:GPU,4-7:GPU", each GPU named as in --gpu), or empty for contiguous
// runs of queues, as even as the counts allow. Every queue goes to exactly
// one GPU and every GPU gets at least one queue.
Result<std::vector<std::vector<uint32_t>>> map_queues(uint32_t queues, const std::vector<std::string>& gpu_names,
                                                      const std::vector<std::string>& gpu_ids, const std::string& map);

struct ShardConfig {
  uint32_t record_items = 0;
  uint32_t flow_slots = 0;
  uint32_t burst = 0;
  uint32_t blocks = 0;  // 0: one per queue
  uint32_t block = 0;
  std::string filter;
  double hang_timeout_s = 0;
  uint32_t eviction_items = 0;  // a power of two; 0: evicted flows counted only
  app::PpArgs base;  // replies and TX flag
};

struct GpuShard {
  Gpu gpu;
  std::vector<uint32_t> queues;  // ids of the RX queues it serves
  std::vector<GpuRxq> grxqs;     // in the order of `queues`
  std::optional<EthTxq> txq;
  std::optional<GpuTxq> gtxq;
  std::optional<EthTxq> capture_txq;  // --capture: the queue its kernel records matched packets to
  std::optional<GpuTxq> capture_gtxq;
  std::optional<GpuSemaphore> records;
  DeviceMemory counters, flows, claim, consumed;
  FilterProgram filter;
  app::PpArgs args;
  PersistentKernel kernel;
  RecordReader reader;
  uint32_t flow_slots = 0;
  // With eviction_items: the entries the table evicted, read on the host.
  DeviceMemory evicted_items, evicted_next;
  dev::app::EvictionLog evicted_host;  // host pointers of args.flows.evicted
  dev::app::EvictionReader evictions;

  // The GPU handles of its queues (started, in `rxqs` by id), its memory
  // and the kernel's arguments; `txq` and `capture_txq` set by the caller
  // first, if any.
  Status prepare(std::vector<EthRxq>& rxqs, const ShardConfig& c);
  // Launches the kernel; its blocks serve `queues` round robin.
  Status launch(const std::vector<EthRxq>& rxqs, const ShardConfig& c);
  const uint64_t* live_counters() const { return static_cast<const uint64_t*>(counters.host_ptr()); }
  // The flow table now: the table itself where the host addresses it (the
  // emulated device), else a copy in `buffer`; a running kernel's updates
  // may be seen half-done (FlowEntry's tag says which slots to trust).
  Result<std::span<const dev::app::FlowEntry>> flows_now(std::vector<dev::app::FlowEntry>& buffer) const;
  // Releases the handles in the order the layers need (records, TX, RX).
  Status release_handles();
};

// TX queue i of `dev` for shards[i], `depth` descriptors deep (staging slots
// of `staging_slot` bytes where not 0), started on that shard's GPU and kept
// in its `member` (GpuShard::txq or GpuShard::capture_txq).
Status start_txq_per_gpu(EthDevice& dev, std::vector<GpuShard>& shards, uint32_t depth, uint32_t staging_slot,
                         std::optional<EthTxq> GpuShard::*member);

}  // namespace gnio::cli
