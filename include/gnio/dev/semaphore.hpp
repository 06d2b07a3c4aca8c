// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief A GPU↔CPU semaphore in pinned host memory: a ring of items, each
/// with a status word and a fixed-size user payload (e.g. per-batch results
/// the host collects while the persistent kernel keeps running).
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"

namespace gnio::dev {

/// @brief The status word of a semaphore item.
///
/// The values are a convention between kernel and host; gnio gives them
/// no meaning beyond Free being every item's initial status.
enum class SemStatus : uint32_t {
  Free = 0,   ///< Nobody holds the item: the writer may fill its payload (the initial status).
  Ready = 1,  ///< The payload is written and waits for the reader.
  Hold = 2,   ///< The reader is working on the item.
  Done = 3,   ///< The reader has finished with the item.
  Error = 4,  ///< The writer or reader reports a failure for the item.
  Exit = 5,   ///< One side asks the other to stop.
};

/// @brief The semaphore as either side sees it: status words and payloads
/// by item index.
///
/// gnio::GpuSemaphore::handle() gives the device view (device addresses);
/// the host view is inside GpuSemaphore. Trivially copyable: pass it to a
/// kernel by value. Item indices wrap modulo count(). Host and device.
class Semaphore {
 public:
  /// @brief An empty semaphore; not usable.
  Semaphore() = default;
  /// @brief A view over memory the caller owns (gnio::GpuSemaphore makes these).
  /// @param status `count` status words.
  /// @param payload `count` payloads of `payload_size` bytes, contiguous.
  /// @param count Items, at least 1.
  /// @param payload_size Bytes of each payload.
  GNIO_HD Semaphore(uint32_t* status, uint8_t* payload, uint32_t count, uint32_t payload_size)
      : status_(status), payload_(payload), count_(count), payload_size_(payload_size) {}

  /// @brief The number of items.
  /// @return Items; 0 for an empty semaphore.
  GNIO_HD uint32_t count() const { return count_; }
  /// @brief The size of each item's payload.
  /// @return Bytes.
  GNIO_HD uint32_t payload_size() const { return payload_size_; }

  /// @brief The payload of an item; write it before set_status(i, Ready).
  /// @param i The item, taken modulo count().
  /// @return payload_size() bytes.
  GNIO_HD uint8_t* payload(uint32_t i) const {
    return payload_ + static_cast<uint64_t>(i % count_) * payload_size_;
  }
  /// @brief Sets an item's status with a release store at system scope: the
  ///        payload written before is visible to whoever sees `s`.
  /// @param i The item, taken modulo count().
  /// @param s The new status.
  GNIO_HD void set_status(uint32_t i, SemStatus s) const {
    store_release(&status_[i % count_], static_cast<uint32_t>(s));
  }
  /// @brief Reads an item's status with an acquire load at system scope:
  ///        the payload written before that status was set is visible.
  /// @param i The item, taken modulo count().
  /// @return The status.
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
