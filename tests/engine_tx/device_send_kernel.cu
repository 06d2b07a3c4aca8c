// SPDX-License-Identifier: Apache-2.0
// The TX-from-device-memory test's kernel and its launch (see
// device_send_kernel.hpp).
#include "device_send_kernel.hpp"

namespace gnio::tx_test {
namespace {

// Writes frame i into stride i of a device-memory buffer and sends bursts
// from there, as an echo of RX strides in place does; every seventh frame
// the kernel copies into its staging slot instead (TxBatch::stage).
struct DeviceSendKernel {
  dev::Txq txq;
  uint8_t* strides;  // MemKind::Gpu, n * kSendStride bytes
  uint32_t n, burst;
  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    for (uint32_t first = 0; first < n && ctx.running(); first += burst) {
      const uint32_t count = n - first < burst ? n - first : burst;
      dev::TxBatch b = txq.reserve<Scope::Thread>(count);
      while (b.status() == dev::Status::Again && ctx.running()) {
        ctx.count_again();
        txq.wait_completions(txq.completed() + 1, 100000);
        b = txq.reserve<Scope::Thread>(count);
      }
      if (b.status() != dev::Status::Success) return;
      for (uint32_t k = 0; k < count; ++k) {
        const uint32_t i = first + k;
        uint8_t* p = strides + static_cast<uint64_t>(i) * kSendStride;
        for (uint32_t j = 0; j < frame_len(i); ++j) p[j] = frame_byte(i, j);
        if (i % 7 == 3)
          b.stage(k, p, frame_len(i));
        else
          b.set(k, p, frame_len(i));
      }
      txq.commit<Scope::Thread>(b);
      txq.push();
      ctx.count_packets(count, 0);
    }
    while (ctx.running()) ctx.heartbeat();
  }
};

struct RefusalKernel {
  dev::Txq txq;
  uint8_t* buffer;
  int32_t* statuses;
  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    for (uint32_t j = 0; j < kRefusalBufferBytes; ++j) buffer[j] = refusal_byte(j);
    dev::TxBatch b = txq.reserve<Scope::Thread>(kRefusalCases);
    while (b.status() == dev::Status::Again && ctx.running()) b = txq.reserve<Scope::Thread>(kRefusalCases);
    if (b.status() != dev::Status::Success) return;
    dev::Status st[kRefusalCases];
    st[kSmall] = b.set(kSmall, buffer, 60);
    st[kJumbo] = b.set(kJumbo, buffer, 9000);
    st[kJumbo64K] = b.set(kJumbo64K, buffer, 65536);
    st[kOverMax] = b.set(kOverMax, buffer, txq.max_len() + 1);  // refused before any byte is read
    st[kStaged] = b.stage(kStaged, buffer, 200);
    st[kStagedOverSlot] = b.stage(kStagedOverSlot, buffer, b.slot_size() + 1);
    st[kEmpty] = b.set(kEmpty, buffer, 0);
    st[kUnregistered] = b.set(kUnregistered, reinterpret_cast<const void*>(uintptr_t{4096}), 64);
    st[kAtMax] = b.set(kAtMax, buffer, txq.max_len());
    for (uint32_t c = 0; c < kRefusalCases; ++c) statuses[c] = static_cast<int32_t>(st[c]);
    txq.commit<Scope::Thread>(b);
    txq.push();
    ctx.count_packets(kRefusalCases, 0);
    while (ctx.running()) ctx.heartbeat();
  }
};

}  // namespace

Result<PersistentKernel> launch_refusals(const Gpu& gpu, const LaunchConfig& cfg, dev::Txq txq, uint8_t* buffer,
                                         int32_t* statuses) {
  return PersistentKernel::launch(gpu, cfg, RefusalKernel{txq, buffer, statuses});
}

Result<PersistentKernel> launch_device_send(const Gpu& gpu, const LaunchConfig& cfg, dev::Txq txq, uint8_t* strides,
                                            uint32_t n, uint32_t burst) {
  return PersistentKernel::launch(gpu, cfg, DeviceSendKernel{txq, strides, n, burst});
}

}  // namespace gnio::tx_test
