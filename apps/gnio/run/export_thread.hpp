// SPDX-License-Identifier: Apache-2.0
// The thread that runs `gnio run`'s export while the run goes. The polling
// thread only hands it what it drained (records, evicted flows; copies,
// under a lock) and goes on draining the kernel's record ring, which the
// kernel waits on when it is full; this thread encodes and sends them,
// polls the transports and, once a second, scans a snapshot of the flow
// tables (a scan of a large table takes far longer than a drain).
//
// Lifecycle: start(), then hand()/hand_evicted() from one thread, then
// stop(), which processes everything handed before it returns. Between
// start() and stop() only this thread calls the RunExport (its summary()
// and write_metrics() excepted, which are safe from any thread); after
// stop() the caller may call it again.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "gnio/status.hpp"
#include "packet_processing/flow_table.hpp"
#include "packet_processing/records.hpp"
#include "run_export.hpp"

namespace gnio::cli {

class ExportThread {
 public:
  // The flow tables now, one span per GPU, each valid until the next call;
  // `buffers` (one per GPU, kept by the thread) hold copies where needed.
  using Snapshot = std::function<Result<std::vector<std::span<const dev::app::FlowEntry>>>(
      std::vector<std::vector<dev::app::FlowEntry>>& buffers)>;

  ExportThread() = default;
  ExportThread(const ExportThread&) = delete;
  ExportThread& operator=(const ExportThread&) = delete;
  ~ExportThread() { stop(); }

  // Starts the thread: it scans every `scan_every` and polls every 1 ms.
  void start(RunExport& x, Snapshot snapshot, std::chrono::milliseconds scan_every);
  void hand(const dev::app::Record* r, size_t n);
  void hand_evicted(const dev::app::FlowEntry& e);
  // Processes what was handed, then joins; a no-op when not started.
  void stop();

 private:
  void run();

  RunExport* x_ = nullptr;
  Snapshot snapshot_;
  std::chrono::milliseconds scan_every_{1000};
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;                         // guarded by mu_
  std::vector<dev::app::Record> records_;         // guarded by mu_
  std::vector<dev::app::FlowEntry> evicted_;      // guarded by mu_
};

}  // namespace gnio::cli
