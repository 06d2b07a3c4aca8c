// Internal state of Ethernet devices and queues.
#pragma once

#include <atomic>
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

struct DeviceImpl {
  std::string spec;
  std::unique_ptr<backend::Backend> backend;
};

struct RxqCounters {
  std::atomic<uint64_t> packets{0}, bytes{0}, bursts{0}, rx_missed{0}, released{0}, errors{0}, copies{0}, publish_ns{0};
};

struct TxqCounters {
  std::atomic<uint64_t> packets{0}, bytes{0}, completions{0}, errors{0}, waited_on_time{0};
};

struct RxqImpl {
  std::shared_ptr<DeviceImpl> dev;
  uint16_t queue_id = 0;
  QueueState state = QueueState::Created;
  uint32_t num_strides = 4096;
  uint32_t stride_size = 2048;
  uint32_t max_packet_size = 2048;
  uint32_t burst_size = 64;
  RingMem ring_mem = RingMem::Gpu;
  std::shared_ptr<GpuImpl> gpu;
  std::optional<BufArr> pool;

  RxqCounters counters;
  std::atomic<int> gpu_handles{0};
  std::unique_ptr<RxEngine> engine;
  std::atomic<bool> host_path_end{false};
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
