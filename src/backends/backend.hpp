// The part of a "NIC" that moves frames on the host: the NIC engine pulls
// received frames from a backend and hands transmitted frames to it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "gnio/eth_caps.hpp"
#include "gnio/status.hpp"

namespace gnio::backend {

// One received frame. `data` stays valid until the next rx_burst() on the
// same queue.
struct RxFrame {
  const uint8_t* data = nullptr;
  uint32_t len = 0;
  uint64_t timestamp_ns = 0;  // capture/arrival time (CLOCK_REALTIME ns)
};

struct TxFrame {
  const uint8_t* data = nullptr;
  uint32_t len = 0;
  uint64_t timestamp_ns = 0;  // time the engine sent it (CLOCK_REALTIME ns)
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const EthCaps& caps() const = 0;

  // Fills up to out.size() frames from queue `queue`; returns how many.
  // 0 means nothing now (or, once at_end(queue), nothing ever again).
  // Errors are real failures (I/O, corrupt input) with file/offset context.
  virtual Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) = 0;

  // True once a finite source (a pcap file, a counted generator) is drained.
  virtual bool at_end(uint16_t queue) const = 0;

  // Sends frames on queue `queue`; returns how many were accepted (a short
  // count means "try the rest later"). Frames are copied before returning.
  virtual Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) = 0;

  // Makes everything sent so far durable/visible (pcap-out flushes).
  virtual Status flush() { return Status::ok(); }
};

// Opens a backend from a queue spec ("pcap:FILE,loop=2", "synthetic:count=10",
// "loop:", "pcap-out:FILE"). The driver name is the text before ':'.
// nrxq/ntxq: the number of queues the caller will use (checked against caps).
Result<std::unique_ptr<Backend>> open_backend(std::string_view spec);

}  // namespace gnio::backend
