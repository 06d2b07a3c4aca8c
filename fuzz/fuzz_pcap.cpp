// SPDX-License-Identifier: Apache-2.0
// The capture reader path: pcap and pcapng files of arbitrary bytes opened
// as an RX source and drained. Errors are fine; crashes and hangs are not.
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <string>

#include "backends/backend.hpp"

static volatile uint8_t touched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = ::memfd_create("fuzz.pcap", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (::write(fd, data, size) != static_cast<ssize_t>(size)) {
    ::close(fd);
    return 0;
  }
  const std::string spec = "pcap:/proc/self/fd/" + std::to_string(fd);
  auto be = gnio::backend::open_backend(spec);
  if (be) {
    std::array<gnio::backend::RxFrame, 32> frames;
    for (int burst = 0; burst < 10000 && !(*be)->at_end(0); ++burst) {
      auto got = (*be)->rx_burst(0, frames);
      if (!got) break;
      // Touch both ends of every frame: a bad length shows up as an overread.
      for (size_t i = 0; i < *got; ++i)
        if (frames[i].len) touched = static_cast<uint8_t>(touched ^ frames[i].data[0] ^ frames[i].data[frames[i].len - 1]);
    }
  }
  ::close(fd);
  return 0;
}
