// SPDX-License-Identifier: Apache-2.0
// A host thread that runs the NIC engines of one or more RX queues in turn,
// like a DPDK lcore: N queues need not cost N threads. It may be pinned to
// a core, and it either spins when idle or backs off.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gnio/status.hpp"

namespace gnio::detail {

class RxEngine;
struct RxqImpl;

class EngineThread {
 public:
  // core: the CPU to pin to (-1: any). The thread starts with its first engine.
  EngineThread(int core, bool busy_poll) : core_(core), busy_poll_(busy_poll) {}
  ~EngineThread();
  EngineThread(const EngineThread&) = delete;
  EngineThread& operator=(const EngineThread&) = delete;

  int core() const noexcept { return core_; }
  bool busy_poll() const noexcept { return busy_poll_; }

  // Starts polling `e` (and the thread, if this is its first engine).
  Status attach(RxEngine* e);
  // Stops polling `e`; once it returns the thread no longer touches it.
  void detach(RxEngine* e);

 private:
  void run();

  const int core_;
  const bool busy_poll_;
  std::mutex mu_;  // held by the thread for a round over its engines
  std::vector<RxEngine*> engines_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The engine thread that serves `q`, by the queue's placement or else its
// device's, shared with the device's other queues placed on it; an error
// when one of them asked for another core or poll mode.
Result<std::shared_ptr<EngineThread>> thread_for_queue(RxqImpl& q);

}  // namespace gnio::detail
