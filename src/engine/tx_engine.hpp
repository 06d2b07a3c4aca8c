// SPDX-License-Identifier: Apache-2.0
// The NIC engine of one TX queue: polls the producer index the kernel pushes
// (plain loads on pinned memory, no CUDA call), honours send times, hands
// packets to the backend and publishes completions.
//
// Payloads in mapped memory (the staging ring, pinned host, managed memory)
// are read where they are. Payloads in device memory are copied into a
// pinned arena once per burst: payloads that lie close together in one
// allocation (consecutive RX strides echoed in place) become one copy, and
// the burst waits once for all of its copies.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "backends/backend.hpp"
#include "gnio/dev/ring.hpp"
#include "gnio/drop_reason.hpp"
#include "gnio/mem.hpp"
#include "gnio/status.hpp"

#if GNIO_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gnio::detail {

struct TxqImpl;

// The copies that bring one burst's device-memory payloads into the arena.
// A payload joins the last copy when it lies in the same allocation at most
// max_gap bytes past it (or overlaps it): the gap is copied too, since one
// DMA of a few more bytes costs less than starting another.
class TxCopyPlan {
 public:
  struct Copy {
    uint64_t src = 0;     // device address
    size_t dst = 0;       // arena offset
    size_t len = 0;
    uint64_t region = 0;  // base of the allocation src lies in
  };

  TxCopyPlan(size_t arena_bytes, size_t max_gap) : arena_bytes_(arena_bytes), max_gap_(max_gap) {}

  // Arena offset where [addr, addr + len) of the allocation at `region`
  // will land, or nullopt when the arena has no room left for it (send the
  // burst so far; the payload goes in the next one).
  std::optional<size_t> add(uint64_t addr, uint32_t len, uint64_t region);
  std::span<const Copy> copies() const noexcept { return copies_; }
  size_t bytes() const noexcept { return used_; }
  bool empty() const noexcept { return copies_.empty(); }
  void clear() noexcept {
    copies_.clear();
    used_ = 0;
  }

 private:
  size_t arena_bytes_;
  size_t max_gap_;
  size_t used_ = 0;
  std::vector<Copy> copies_;
};

// What the engine did to read device-memory payloads, summed since start
// (the queue's counters; EthTxq::stats() has all but payloads).
struct TxCopyStats {
  uint64_t payloads = 0;  // device-memory payloads read through the arena
  uint64_t copies = 0;    // copies issued (cudaMemcpyAsync, or memcpy on the emulated device)
  uint64_t bytes = 0;     // bytes copied, gaps included
  uint64_t waits = 0;     // waits for a burst's copies (one per burst that had any)
};

class TxEngine {
 public:
  // own_thread: the engine polls on a thread of its own (the default);
  // otherwise whoever drives it calls poll() from a thread bound to the GPU.
  static Result<std::unique_ptr<TxEngine>> start(TxqImpl& q, bool own_thread = true);
  ~TxEngine();

  // Waits up to timeout_ms for every pushed descriptor to complete, then
  // stops the thread. Timeout if descriptors were still outstanding: those
  // complete as dropped(stopped), so that every pushed descriptor is sent or
  // dropped. An engine without a thread of its own is polled here by the
  // caller, after its driver stopped polling it.
  Status stop(uint32_t timeout_ms);

  // One step: sends up to one burst of pushed descriptors and publishes
  // their completions. Returns the descriptors completed (0: nothing to do,
  // or the next one waits for its send time, see hold_until_ns()).
  size_t poll();
  // Send time of the descriptor the last poll() stopped at, 0 if none.
  uint64_t hold_until_ns() const noexcept { return hold_until_ns_; }

  const dev::TxRing& device_ring() const noexcept { return dev_ring_; }
  uint64_t pushed() const noexcept;
  uint64_t completed() const noexcept;
  TxCopyStats copy_stats() const noexcept;

 private:
  explicit TxEngine(TxqImpl& q);
  Status allocate();
  void run();
  // Sleeps or spins until hold_until_ns() (or a stop request).
  void wait_for_send_time() const;
  // Points frames_ of device payloads into the arena once their copies
  // landed; on a failed copy those descriptors complete with an error.
  void land_copies();
  // Hands frames_ to the backend; Again (a short count) is retried.
  void send();
  // Counts n descriptors completed without being sent.
  void drop(TxDropReason why, uint64_t n);

  TxqImpl& q_;
  DeviceMemory desc_, staging_, host_idx_, dev_idx_, ready_, arena_;
  dev::TxRing dev_ring_{};
  uint64_t* producer_ = nullptr;
  uint64_t* completed_ = nullptr;
  uint64_t* errors_ = nullptr;
  uint32_t slot_size_ = 0;

  // poll() state: the thread that polls owns it.
  uint64_t ci_ = 0;            // next descriptor to send
  uint64_t error_count_ = 0;   // completions with an error
  uint64_t held_index_ = ~0ull;  // descriptor counted as waiting for its send time
  uint64_t hold_until_ns_ = 0;
  std::vector<backend::TxFrame> frames_;
  struct ArenaFrame {
    size_t frame;   // index in frames_
    size_t offset;  // arena offset of its bytes
  };
  std::vector<ArenaFrame> arena_frames_;
  TxCopyPlan plan_;

  std::atomic<bool> stop_{false};
  std::thread thread_;
#if GNIO_HAVE_CUDA
  cudaStream_t stream_ = nullptr;
#endif
};

}  // namespace gnio::detail
