// Frames into a net_ring device's ring, for tests compiled without DPDK's
// headers (nvcc): the PMD hands these mbufs to gnio as they are.
#pragma once

#include <cstdint>
#include <string>

namespace gnio::dpdktest {

// Copies `len` bytes into an mbuf of the test's own pool and enqueues it
// into the ring named `ring`. false: no such ring, or it (or the pool) is full.
bool inject_frame(const std::string& ring, const uint8_t* data, uint32_t len);

}  // namespace gnio::dpdktest
