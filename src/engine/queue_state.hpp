// SPDX-License-Identifier: Apache-2.0
// The state of Ethernet devices and queues that the layers of the data path
// share: the Ethernet layer (src/eth) owns it and drives its lifecycle, the
// engines (src/engine) move frames and count on it, the GPU handles
// (src/gpu_queue) read its rings. It lives with the engines, the lowest of
// the three, so that every include between them points down.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "backends/backend.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/queue_counters.hpp"

namespace gnio::detail {

struct GpuImpl;
class RxEngine;
class TxEngine;
class EngineThread;

// How a device's RX queues map onto engine threads, from the spec
// ("threads=T", "cores=A-B" or "cores=A:B:C", "poll=busy|backoff").
struct EnginePlacement {
  uint16_t threads = 0;    // 0: one thread per queue
  std::vector<int> cores;  // thread i runs on cores[i % size]; empty: not pinned
  bool busy_poll = false;
};

struct DeviceImpl {
  std::string spec;
  std::unique_ptr<backend::Backend> backend;
  EnginePlacement placement;
  // Engine threads of this device's RX queues, by thread index.
  std::mutex engine_mu;
  std::map<uint16_t, std::weak_ptr<EngineThread>> engine_threads;
};

// The counters of gnio/queue_counters.hpp as atomics: the engine thread
// and host_receive()/host_send() add, stats() and the metrics read.
struct RxqCounters {
#define GNIO_RXQ_COUNTER(field, metric, unit, help) std::atomic<uint64_t> field{0};
  GNIO_RXQ_COUNTERS(GNIO_RXQ_COUNTER)
#undef GNIO_RXQ_COUNTER
  std::array<std::atomic<uint64_t>, kDropReasons> dropped{};
};

struct TxqCounters {
#define GNIO_TXQ_COUNTER(field, metric, unit, help) std::atomic<uint64_t> field{0};
  GNIO_TXQ_COUNTERS(GNIO_TXQ_COUNTER)
#undef GNIO_TXQ_COUNTER
  std::array<std::atomic<uint64_t>, kTxDropReasons> dropped{};
};

struct RxqImpl {
  std::shared_ptr<DeviceImpl> dev;
  uint16_t queue_id = 0;
  QueueState state = QueueState::Created;
  uint32_t num_strides = 4096;
  uint32_t stride_size = 2048;
  uint32_t max_packet_size = 0;  // 0 until set: what the backend delivers, within half the ring
  uint32_t burst_size = 64;
  RingMem ring_mem = RingMem::Gpu;
  RxOffloads offloads;
  int engine_thread = -1;  // -1: from the device's placement
  int engine_core = -2;    // -2: from the device's placement, -1: not pinned
  int busy_poll = -1;      // -1: from the device's placement
  std::shared_ptr<GpuImpl> gpu;
  std::optional<BufArr> pool;

  RxqCounters counters;
  std::atomic<int> gpu_handles{0};
  std::unique_ptr<RxEngine> engine;
  std::atomic<bool> host_path_end{false};
  std::atomic<bool> host_source_stopped{false};  // stop_source() on the host path
  mutable std::mutex mu;  // lifecycle transitions

  ~RxqImpl();
};

struct TxqImpl {
  std::shared_ptr<DeviceImpl> dev;
  uint16_t queue_id = 0;
  QueueState state = QueueState::Created;
  uint32_t depth = 1024;
  uint32_t max_packet_size = 0;     // set by create_txq: what the backend can send
  uint32_t staging_slot_size = 0;   // 0: kDefaultTxStagingSlot (staging_slot_bytes())
  TxqType type = TxqType::Regular;
  std::shared_ptr<GpuImpl> gpu;

  TxqCounters counters;
  std::atomic<int> gpu_handles{0};
  std::unique_ptr<TxEngine> engine;
  mutable std::mutex mu;

  ~TxqImpl();
};

// The staging slot the TX engine allocates per descriptor: a multiple of
// 64 bytes (slots stay 64-byte aligned for TxBatch::stage()'s wide copies),
// no larger than the max packet size needs. Bounded, not the max packet
// size, because the ring is depth x slot bytes of pinned host memory.
inline uint32_t staging_slot_bytes(const TxqImpl& q) {
  const uint32_t want = q.staging_slot_size != 0 ? q.staging_slot_size : kDefaultTxStagingSlot;
  return (std::min(want, q.max_packet_size) + 63u) & ~63u;
}

}  // namespace gnio::detail
