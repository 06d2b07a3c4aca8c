// SPDX-License-Identifier: Apache-2.0
// A backend that owns its frame memory (mode 2 of backend.hpp), for the
// engine tests: a pool of fixed-size buffers in one host region, handed out
// in a cycle. It generates frame i as the synthetic generator would (so the
// host path is the reference), except that chosen frames are empty or
// longer than the queue takes, and it checks what comes back: every frame
// exactly once, in the order it was handed out.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/backend.hpp"
#include "backends/synthetic.hpp"
#include "gnio/eth.hpp"
#include "engine/queue_state.hpp"

namespace gnio::test {

struct OwnedOptions {
  uint64_t count = 5000;
  uint32_t buffers = 512;        // buffers in the pool
  uint32_t buffer_size = 16384;  // bytes per buffer
  uint32_t empty_every = 0;      // frame i is empty when i % empty_every == empty_every - 1
  uint32_t long_every = 0;       // frame i has long_size bytes when i % long_every == long_every - 1
  uint32_t long_size = 12000;
  bool wire = false;             // drops_when_full: frames arriving at a full ring are lost
  const char* spec = "synthetic:size=96-1500,proto=mix,ipv6=mix,seed=21";
};

class OwnedBackend final : public backend::Backend {
 public:
  explicit OwnedBackend(const OwnedOptions& o) : o_(o) {
    caps_.driver = "owned-test";
    caps_.tx_supported = false;
    caps_.max_packet_size = 1u << 17;
    caps_.drops_when_full = o.wire;
    auto s = backend::parse_synthetic_spec(o.spec);
    synth_ = *s;
    synth_.count = 0;
    pool_bytes_ = static_cast<size_t>(o.buffers) * o.buffer_size;
    pool_ = static_cast<uint8_t*>(std::aligned_alloc(4096, pool_bytes_));
    std::memset(pool_, 0, pool_bytes_);
  }
  ~OwnedBackend() override { std::free(pool_); }
  OwnedBackend(const OwnedBackend&) = delete;
  OwnedBackend& operator=(const OwnedBackend&) = delete;

  // Frame `i` as this backend delivers it.
  static std::vector<uint8_t> frame(const OwnedOptions& o, const backend::SyntheticOptions& synth, uint64_t i) {
    if (o.empty_every && i % o.empty_every == o.empty_every - 1) return {};
    backend::SyntheticOptions s = synth;
    if (o.long_every && i % o.long_every == o.long_every - 1) s.size_min = s.size_max = o.long_size;
    return backend::make_synthetic_frame(s, i);
  }
  std::vector<uint8_t> frame(uint64_t i) const { return frame(o_, synth_, i); }

  const EthCaps& caps() const override { return caps_; }

  std::optional<backend::RxMemory> rx_memory(uint16_t) const override { return backend::RxMemory{pool_, pool_bytes_}; }

  Result<size_t> rx_burst(uint16_t, std::span<backend::RxFrame> out) override {
    std::lock_guard lock(mu_);
    size_t n = 0;
    while (n < out.size() && next_ < o_.count && lent_.size() < o_.buffers) {
      const uint32_t buf = static_cast<uint32_t>(next_ % o_.buffers);
      uint8_t* p = pool_ + static_cast<size_t>(buf) * o_.buffer_size;
      std::vector<uint8_t> f = frame(next_);
      if (!f.empty()) std::memcpy(p, f.data(), f.size());  // an empty frame has no data pointer
      backend::RxFrame& r = out[n++];
      r = {};
      r.data = p;
      r.len = static_cast<uint32_t>(f.size());
      r.timestamp_ns = next_ + 1;
      r.cookie = next_;
      lent_.push_back(next_);
      ++next_;
    }
    return n;
  }

  void rx_release(uint16_t, std::span<const backend::RxFrame> frames) override {
    std::lock_guard lock(mu_);
    for (const backend::RxFrame& f : frames) {
      if (lent_.empty() || lent_.front() != f.cookie) {
        ++out_of_order_;
      } else {
        lent_.pop_front();
      }
      ++released_;
    }
  }

  bool at_end(uint16_t) const override {
    std::lock_guard lock(mu_);
    return next_ >= o_.count;
  }

  Result<size_t> tx_burst(uint16_t, std::span<const backend::TxFrame>) override {
    return Status(Errc::NotSupported, Layer::Backend, "owned-test: receive only");
  }

  uint8_t* pool() const { return pool_; }
  uint64_t released() const {
    std::lock_guard lock(mu_);
    return released_;
  }
  uint64_t out_of_order() const {
    std::lock_guard lock(mu_);
    return out_of_order_;
  }
  size_t outstanding() const {
    std::lock_guard lock(mu_);
    return lent_.size();
  }

 private:
  OwnedOptions o_;
  EthCaps caps_;
  backend::SyntheticOptions synth_;
  uint8_t* pool_ = nullptr;
  size_t pool_bytes_ = 0;
  mutable std::mutex mu_;
  uint64_t next_ = 0;
  std::deque<uint64_t> lent_;  // cookies handed out and not yet back
  uint64_t released_ = 0, out_of_order_ = 0;
};

// An Ethernet device over an OwnedBackend; `backend` points at it.
inline EthDevice owned_device(const OwnedOptions& o, OwnedBackend*& backend) {
  auto impl = std::make_shared<detail::DeviceImpl>();
  auto be = std::make_unique<OwnedBackend>(o);
  backend = be.get();
  impl->spec = "owned-test:";
  impl->backend = std::move(be);
  return EthDevice::adopt(std::move(impl));
}

}  // namespace gnio::test
