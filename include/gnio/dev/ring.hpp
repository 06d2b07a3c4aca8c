// Memory layout shared by the NIC engine and the device API. Indices are
// free-running 64-bit counters; a slot is index & mask.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"

namespace gnio::dev {

// One received packet: `len` contiguous bytes at byte `offset` of the ring's
// data area. In a strided ring they occupy `nstrides` consecutive strides
// starting at offset >> stride_shift; where a backend owns the packet memory
// (AF_XDP UMEM, DPDK mbufs, a prebuilt pool) that memory is the data area
// and `offset` is wherever the NIC put the frame.
struct RxDesc {
  uint32_t len;
  uint32_t flags;     // PacketFlags (headers.hpp)
  uint32_t rss_hash;
  uint32_t nstrides;  // strides (or backend buffers) the packet holds until released
  uint64_t offset;    // bytes from RxRing::data
  uint64_t timestamp_ns;
};
static_assert(sizeof(RxDesc) == 32);

struct RxRing {
  uint8_t* data = nullptr;       // nstrides * stride bytes, in ring memory
  RxDesc* desc = nullptr;        // ndesc entries, in ring memory
  // Descriptors published by the engine (ring memory): released by
  // RxEngine::publish() (src/engine/rx_engine.cpp) after the bytes and
  // descriptors, acquired by Rxq::receive() and Rxq::published() (rxq.hpp).
  uint64_t* producer = nullptr;
  // Descriptors released by the kernel (pinned host): released by
  // Rxq::tell_engine(), acquired by RxEngine::reclaim().
  uint64_t* consumer = nullptr;
  uint64_t* claim = nullptr;  // next descriptor handed to a receiver (device)
  // Device: descriptors released; receivers wait on it to release in order
  // (release and acquire between receivers, in Rxq::release_one() and
  // Rxq::tell_engine()).
  uint64_t* released = nullptr;
  uint64_t* told = nullptr;  // device: told[0] the value last stored to `consumer`, told[8] a lock word
  uint32_t desc_mask = 0;
  uint32_t stride_shift = 0;
  // Releases store `consumer` (a system-scope release) when they cross a
  // multiple of this many descriptors; a receiver that finds the ring empty
  // stores it too. The engine sizes it to an eighth of what the ring holds.
  uint32_t release_step = 1;
};

enum TxFlags : uint32_t {
  TxStaged = 1u << 0,      // payload is in the TX staging slot of this descriptor
  TxWaitOnTime = 1u << 1,  // hold until send_time_ns
  // The device refused to fill it (TxBatch::set/stage/set_staged returned
  // InvalidValue; len is what was asked): the engine completes it unsent,
  // as dropped, so that descriptors still complete in ring order.
  TxRefused = 1u << 2,
};

struct TxDesc {
  uint64_t addr;          // device-visible address of the payload
  uint32_t len;
  uint32_t flags;         // TxFlags
  uint64_t send_time_ns;  // CLOCK_REALTIME ns; 0 = now
  uint64_t reserved;
};
static_assert(sizeof(TxDesc) == 32);

struct TxRing {
  TxDesc* desc = nullptr;         // pinned host: the engine polls it without CUDA calls
  uint8_t* staging = nullptr;     // pinned host: slot i at i * slot_size
  uint64_t* producer = nullptr;   // pinned host: descriptors pushed (the doorbell)
  uint64_t* completed = nullptr;  // pinned host: descriptors completed by the engine
  uint64_t* errors = nullptr;     // pinned host: completions with an error
  uint64_t* reserve = nullptr;    // device: next descriptor to hand out
  uint64_t* pushed = nullptr;     // device: the producer index last published
  uint32_t* push_lock = nullptr;  // device: serialises publications of the producer index
  uint64_t* ready = nullptr;      // device: ready[i & mask] == i + 1 once committed
  uint32_t desc_mask = 0;
  uint32_t slot_size = 0;  // bytes of a staging slot (a multiple of 64)
  uint32_t max_len = 0;    // the queue's max packet size: longer frames are refused
};

}  // namespace gnio::dev
