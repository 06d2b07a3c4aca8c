// SPDX-License-Identifier: Apache-2.0
// Frames into and out of a net_ring device's ring, for tests compiled
// without DPDK's headers (nvcc): the PMD hands the mbufs enqueued to gnio as
// they are, and enqueues the mbufs gnio sends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gnio::dpdktest {

// Copies `len` bytes into an mbuf of the test's own pool and enqueues it
// into the ring named `ring`. false: no such ring, or it (or the pool) is full.
bool inject_frame(const std::string& ring, const uint8_t* data, uint32_t len);

// Dequeues every mbuf in the ring named `ring` and returns the bytes of
// each (all its segments), in ring order, freeing the mbufs. Empty when there
// is no such ring.
std::vector<std::vector<uint8_t>> drain_frames(const std::string& ring);

}  // namespace gnio::dpdktest
