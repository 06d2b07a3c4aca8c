// SPDX-License-Identifier: Apache-2.0
// The refusal kernel (device_send_kernel.hpp) run on a TX queue of any
// backend, and what each of its cases must come to on that queue: the
// status the device sees, the frames the backend is handed (in ring order),
// and the drops by reason, so that sent + sum(dropped) == submitted is
// checked with exact counts per TX backend.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "device_send_kernel.hpp"
#include "gnio/drop_reason.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"

namespace gnio::tx_test {

using Bytes = std::vector<uint8_t>;
using RefusalStatuses = std::array<int32_t, kRefusalCases>;

/// What the refusal kernel's batch must come to on a queue.
struct RefusalExpectation {
  RefusalStatuses status{};  // dev::Status of each case's fill, as the kernel stored it
  std::vector<Bytes> sent;   // the frames the backend gets, in ring order
  TxDropCounts dropped{};    // by reason
};

/// The length each case asks for on a queue of max packet size `max`.
inline uint32_t refusal_len(RefusalCase c, uint32_t max, uint32_t slot) {
  switch (c) {
    case kSmall: return 60;
    case kJumbo: return 9000;
    case kJumbo64K: return 65536;
    case kOverMax: return max + 1;
    case kStaged: return 200;
    case kStagedOverSlot: return slot + 1;
    case kEmpty: return 0;
    case kUnregistered: return 64;
    case kAtMax: return max;
    case kRefusalCases: break;
  }
  return 0;
}

/// What the device accepts on a queue of max packet size `max` and staging
/// slot `slot`: any length 1..max with set(), 1..slot with stage(); the
/// engine alone finds the unregistered address (accepted, dropped as
/// not_registered). A refused non-empty fill is too_long, an empty one empty.
inline RefusalExpectation expect_refusals(uint32_t max, uint32_t slot) {
  RefusalExpectation e;
  for (uint32_t i = 0; i < kRefusalCases; ++i) {
    const auto c = static_cast<RefusalCase>(i);
    const uint32_t len = refusal_len(c, max, slot);
    const bool staged = c == kStaged || c == kStagedOverSlot;
    const bool accepted = len != 0 && len <= max && (!staged || len <= slot);
    e.status[i] = static_cast<int32_t>(accepted ? dev::Status::Success : dev::Status::InvalidValue);
    if (len == 0) {
      ++e.dropped[static_cast<size_t>(TxDropReason::Empty)];
    } else if (!accepted) {
      ++e.dropped[static_cast<size_t>(TxDropReason::TooLong)];
    } else if (c == kUnregistered) {
      ++e.dropped[static_cast<size_t>(TxDropReason::NotRegistered)];
    } else {
      Bytes b(len);
      for (uint32_t j = 0; j < len; ++j) b[j] = refusal_byte(j);
      e.sent.push_back(std::move(b));
    }
  }
  return e;
}

/// Runs the refusal kernel on `txq` (configured with a GPU, started, at least
/// kRefusalCases deep) until the engine completed its batch, then stops the
/// kernel and the queue: its stats are final.
/// @return the status of each case's fill; Timeout when the engine did not
/// complete the batch within 20 s
inline Result<RefusalStatuses> run_refusals(Gpu& gpu, EthTxq& txq) {
  auto h = GpuTxq::create(gpu, txq);
  if (!h) return h.status();
  auto buffer = gpu.alloc(kRefusalBufferBytes, MemKind::Gpu);
  if (!buffer) return buffer.status();
  auto statuses = gpu.alloc(kRefusalCases * sizeof(int32_t), MemKind::CpuGpu);
  if (!statuses) return statuses.status();
  auto* st = static_cast<int32_t*>(statuses->host_ptr());
  for (uint32_t c = 0; c < kRefusalCases; ++c) st[c] = -1;
  LaunchConfig one;
  one.grid = 1;
  one.block = 1;
  one.name = "tx-refusals";
  auto k = launch_refusals(gpu, one, h->handle(), static_cast<uint8_t*>(buffer->device_ptr()),
                           static_cast<int32_t*>(statuses->device_ptr()));
  if (!k) return k.status();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (txq.stats().completions < kRefusalCases && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  const uint64_t completed = txq.stats().completions;
  GNIO_TRY(k->stop());
  GNIO_TRY(h->destroy());
  GNIO_TRY(txq.stop());
  if (completed < kRefusalCases)
    return Status(Errc::Timeout, Layer::App,
                  "the TX engine completed " + std::to_string(completed) + " of the refusal kernel's " +
                      std::to_string(kRefusalCases) + " descriptors in 20 s");
  RefusalStatuses out;
  for (uint32_t c = 0; c < kRefusalCases; ++c) out[c] = st[c];
  return out;
}

/// Every descriptor of the batch sent or dropped for the expected reason,
/// and the device told of each refusal: sent + sum(dropped) == submitted.
inline void expect_accounted(const RefusalStatuses& got, const TxqStats& s, const RefusalExpectation& e,
                             uint32_t max, uint32_t slot) {
  for (uint32_t c = 0; c < kRefusalCases; ++c)
    EXPECT_EQ(got[c], e.status[c]) << "case " << c << ": " << refusal_len(static_cast<RefusalCase>(c), max, slot)
                                   << " bytes, max " << max << ", slot " << slot;
  EXPECT_EQ(s.submitted, kRefusalCases);
  EXPECT_EQ(s.completions, kRefusalCases);
  EXPECT_EQ(s.packets, e.sent.size());
  uint64_t all = 0;
  for (size_t r = 0; r < kTxDropReasons; ++r) {
    EXPECT_EQ(s.dropped[r], e.dropped[r]) << tx_drop_reason_name(static_cast<TxDropReason>(r));
    all += s.dropped[r];
  }
  EXPECT_EQ(s.errors, all);
  EXPECT_EQ(s.packets + all, s.submitted) << "a descriptor neither sent nor dropped for a reason";
}

/// The frames a backend's far end got are the expected ones, whole, in order.
inline void expect_frames(const std::vector<Bytes>& got, const RefusalExpectation& e) {
  ASSERT_EQ(got.size(), e.sent.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(got[i] == e.sent[i]) << "frame " << i << ": " << got[i].size() << " bytes, want " << e.sent[i].size();
}

}  // namespace gnio::tx_test
