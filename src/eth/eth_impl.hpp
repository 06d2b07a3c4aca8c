// Internal state of Ethernet devices and queues.
#pragma once

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

struct RxqCounters {
  std::atomic<uint64_t> offered{0}, packets{0}, bytes{0}, bursts{0}, released{0}, errors{0}, copies{0},
      publish_ns{0}, truncated{0};
  std::array<std::atomic<uint64_t>, kDropReasons> dropped{};
  // Written by the queue's engine thread only.
  std::atomic<uint64_t> work_polls{0}, idle_polls{0}, busy_ns{0}, idle_ns{0};
};

struct TxqCounters {
  std::atomic<uint64_t> packets{0}, bytes{0}, completions{0}, errors{0}, waited_on_time{0};
  // Device-memory payloads read through the engine's arena (TxCopyStats).
  std::atomic<uint64_t> copy_payloads{0}, copies{0}, copy_bytes{0}, copy_waits{0};
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
  uint32_t max_packet_size = 2048;
  TxqType type = TxqType::Regular;
  std::shared_ptr<GpuImpl> gpu;

  TxqCounters counters;
  std::atomic<int> gpu_handles{0};
  std::unique_ptr<TxEngine> engine;
  mutable std::mutex mu;

  ~TxqImpl();
};

}  // namespace gnio::detail
