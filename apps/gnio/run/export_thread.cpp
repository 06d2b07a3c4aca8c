// SPDX-License-Identifier: Apache-2.0
#include "export_thread.hpp"

#include "gnio/log.hpp"

namespace gnio::cli {

void ExportThread::start(RunExport& x, Snapshot snapshot, std::chrono::milliseconds scan_every) {
  x_ = &x;
  snapshot_ = std::move(snapshot);
  scan_every_ = scan_every;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void ExportThread::hand(const dev::app::Record* r, size_t n) {
  if (n == 0) return;
  {
    std::lock_guard lock(mu_);
    records_.insert(records_.end(), r, r + n);
  }
  wake_.notify_one();
}

void ExportThread::hand_evicted(const dev::app::FlowEntry& e) {
  {
    std::lock_guard lock(mu_);
    evicted_.push_back(e);
  }
  wake_.notify_one();
}

void ExportThread::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void ExportThread::run() {
  std::vector<dev::app::Record> records;
  std::vector<dev::app::FlowEntry> evicted;
  std::vector<std::vector<dev::app::FlowEntry>> buffers;
  auto last_scan = std::chrono::steady_clock::now();
  bool warned = false;
  for (bool last = false; !last;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, std::chrono::milliseconds(1),
                     [&] { return stopping_ || !records_.empty() || !evicted_.empty(); });
      records.swap(records_);
      evicted.swap(evicted_);
      last = stopping_;
    }
    // Records and evictions in the order the kernel made them, as the
    // polling thread drained them.
    x_->add_records(records.data(), records.size());
    for (const dev::app::FlowEntry& e : evicted) x_->add_evicted(e);
    records.clear();
    evicted.clear();
    const auto now = std::chrono::steady_clock::now();
    if (!last && now - last_scan >= scan_every_) {
      auto tables = snapshot_(buffers);
      if (tables) {
        x_->scan(*tables, false);
      } else if (!warned) {
        logging::warn("export", "reading the flow tables for the timeout scan failed, flows are exported at the end "
                                "only: " + tables.status().to_string());
        warned = true;
      }
      last_scan = now;
    }
    x_->poll();
  }
}

}  // namespace gnio::cli
