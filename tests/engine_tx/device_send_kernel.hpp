// SPDX-License-Identifier: Apache-2.0
// The kernel of the TX-from-device-memory test: it writes frame i into
// stride i of a device-memory buffer and sends bursts from there. Its launch
// is compiled by nvcc in device_send_kernel.cu; the test is plain C++.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/txq.hpp"
#include "gnio/persistent_kernel.hpp"

namespace gnio::tx_test {

inline constexpr uint32_t kSendStride = 256;  // bytes between frames in device memory
GNIO_HD inline uint32_t frame_len(uint32_t i) { return 60 + (i * 37) % 190; }
GNIO_HD inline uint8_t frame_byte(uint32_t i, uint32_t j) {
  return j < 4 ? static_cast<uint8_t>(i >> (8 * j)) : static_cast<uint8_t>(i * 7 + j);
}

// The refusal kernel's batch, one descriptor per case: what the device
// accepts or refuses (TxBatch::set/stage), and what the engine then sends
// or drops, depending on the queue's max packet size and staging slot.
enum RefusalCase : uint32_t {
  kSmall,           // set(), 60 bytes
  kJumbo,           // set(), 9000 bytes
  kJumbo64K,        // set(), 65536 bytes
  kOverMax,         // set(), the queue's max + 1
  kStaged,          // stage(), 200 bytes
  kStagedOverSlot,  // stage(), the slot + 1
  kEmpty,           // set(), 0 bytes
  kUnregistered,    // set() of an address in no allocation: accepted, dropped by the engine
  kAtMax,           // set(), the queue's max: the longest frame it sends
  kRefusalCases,
};
// Holds a frame of the largest max packet size a backend has (pcap-out's 256 KiB).
inline constexpr uint32_t kRefusalBufferBytes = 262144 + 4096;
GNIO_HD inline uint8_t refusal_byte(uint32_t j) { return static_cast<uint8_t>(j * 7 + (j >> 8)); }

// Launches the refusal kernel: it writes refusal_byte(j) into `buffer`
// (MemKind::Gpu, kRefusalBufferBytes), fills one batch of kRefusalCases
// descriptors from it, stores each fill's status in statuses[case]
// (CpuGpu memory), commits and pushes the batch, then idles.
Result<PersistentKernel> launch_refusals(const Gpu& gpu, const LaunchConfig& cfg, dev::Txq txq, uint8_t* buffer,
                                         int32_t* statuses);

// Launches the kernel: frames 0..n-1 in bursts of `burst` from `strides`
// (MemKind::Gpu, n * kSendStride bytes); every seventh frame is staged.
Result<PersistentKernel> launch_device_send(const Gpu& gpu, const LaunchConfig& cfg, dev::Txq txq, uint8_t* strides,
                                            uint32_t n, uint32_t burst);

}  // namespace gnio::tx_test
