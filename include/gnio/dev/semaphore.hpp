// A GPU<->CPU semaphore in pinned host memory: a ring of items, each with a
// status word and a fixed-size user payload (e.g. per-batch results the host
// collects while the persistent kernel keeps running).
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"

namespace gnio::dev {

enum class SemStatus : uint32_t { Free = 0, Ready = 1, Hold = 2, Done = 3, Error = 4, Exit = 5 };

class Semaphore {
 public:
  Semaphore() = default;
  GNIO_HD Semaphore(uint32_t* status, uint8_t* payload, uint32_t count, uint32_t payload_size)
      : status_(status), payload_(payload), count_(count), payload_size_(payload_size) {}

  GNIO_HD uint32_t count() const { return count_; }
  GNIO_HD uint32_t payload_size() const { return payload_size_; }

  // Payload of item i; write it before set_status(i, Ready).
  GNIO_HD uint8_t* payload(uint32_t i) const {
    return payload_ + static_cast<uint64_t>(i % count_) * payload_size_;
  }
  // Release store: the payload written before is visible to whoever sees s.
  GNIO_HD void set_status(uint32_t i, SemStatus s) const {
    store_release(&status_[i % count_], static_cast<uint32_t>(s));
  }
  GNIO_HD SemStatus get_status(uint32_t i) const {
    return static_cast<SemStatus>(load_acquire(&status_[i % count_]));
  }

 private:
  uint32_t* status_ = nullptr;
  uint8_t* payload_ = nullptr;
  uint32_t count_ = 0;
  uint32_t payload_size_ = 0;
};

}  // namespace gnio::dev
