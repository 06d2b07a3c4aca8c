// SPDX-License-Identifier: Apache-2.0
// What the RX and TX queues (rxq.cpp, txq.cpp) and the device that creates
// them (device.cpp) share: the lifecycle rule that setters run before
// start(), and the checks of a value against the device's limits, each
// failing with a message that names the limit.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "engine/queue_state.hpp"
#include "gnio/gpu.hpp"
#include "gnio/status.hpp"

namespace gnio::eth {

std::string u(uint64_t v);

Status bad_state(const char* what, QueueState s);
Status check_pow2(const char* what, uint64_t v, uint64_t lo, uint64_t hi);
Status check_range(const char* what, uint64_t v, uint64_t lo, uint64_t hi);
Status check_gpu_open(const Gpu& gpu);

// Smallest Ethernet frame without FCS.
constexpr uint32_t kMinFrame = 60;

inline bool configurable(QueueState s) { return s == QueueState::Created || s == QueueState::Configured; }

template <typename Impl>
constexpr const char* kQueueKind = std::is_same_v<Impl, detail::RxqImpl> ? "RX" : "TX";

// A setter: runs `apply` on a live queue that has not started (under its
// lifecycle lock) and, when it accepts the value, marks the queue configured.
template <typename Impl, typename Apply>
Status configure(const std::shared_ptr<Impl>& impl, const char* setter, Apply&& apply) {
  if (!impl)
    return {Errc::BadState, Layer::Eth, std::string(setter) + " on a destroyed " + kQueueKind<Impl> + " queue"};
  std::lock_guard lock(impl->mu);
  if (!configurable(impl->state)) return bad_state(setter, impl->state);
  GNIO_TRY(apply(*impl));
  impl->state = QueueState::Configured;
  return Status::ok();
}

// The body of a setter whose value needs no check.
template <typename T, typename V>
Status assign(T& field, V&& value) {
  field = std::forward<V>(value);
  return Status::ok();
}

}  // namespace gnio::eth
