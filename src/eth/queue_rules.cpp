// SPDX-License-Identifier: Apache-2.0
// The queue states' names and the checks every queue setter makes (see
// queue_rules.hpp).
#include "eth/queue_rules.hpp"

#include "gnio/eth.hpp"

namespace gnio {

std::string_view queue_state_name(QueueState s) noexcept {
  switch (s) {
    case QueueState::Created: return "created";
    case QueueState::Configured: return "configured";
    case QueueState::Started: return "started";
    case QueueState::Stopped: return "stopped";
    case QueueState::Destroyed: return "destroyed";
  }
  return "unknown";
}

namespace eth {

std::string u(uint64_t v) { return std::to_string(v); }

Status bad_state(const char* what, QueueState s) {
  return {Errc::BadState, Layer::Eth,
          std::string(what) + " in state " + std::string(queue_state_name(s)) +
              "; configure queues before start(), and stop/destroy GPU handles first"};
}

Status check_pow2(const char* what, uint64_t v, uint64_t lo, uint64_t hi) {
  if (v < lo || v > hi || (v & (v - 1)) != 0)
    return {Errc::InvalidValue, Layer::Eth,
            std::string(what) + " " + u(v) + " is outside the device's limit: a power of two in [" + u(lo) + ", " +
                u(hi) + "]"};
  return Status::ok();
}

Status check_range(const char* what, uint64_t v, uint64_t lo, uint64_t hi) {
  if (v < lo || v > hi)
    return {Errc::InvalidValue, Layer::Eth,
            std::string(what) + " " + u(v) + " is outside the device's limit [" + u(lo) + ", " + u(hi) + "]"};
  return Status::ok();
}

Status check_gpu_open(const Gpu& gpu) {
  if (!gpu.impl()) return {Errc::InvalidValue, Layer::Eth, "set_gpu with a Gpu that is not open"};
  return Status::ok();
}

}  // namespace eth

}  // namespace gnio
