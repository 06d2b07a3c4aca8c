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


// Launches the kernel: frames 0..n-1 in bursts of `burst` from `strides`
// (MemKind::Gpu, n * kSendStride bytes); every seventh frame is staged.
Result<PersistentKernel> launch_device_send(const Gpu& gpu, const LaunchConfig& cfg, dev::Txq txq, uint8_t* strides,
                                            uint32_t n, uint32_t burst);

}  // namespace gnio::tx_test
