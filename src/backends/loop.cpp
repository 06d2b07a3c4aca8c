// SPDX-License-Identifier: Apache-2.0
// loop: and loop:NAME — lossless in-process wires. "loop:" wires each TX
// queue to the RX queue of the same index on the same device; "loop:NAME"
// is one end of a named cable whose other end is the next open of NAME.
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "backends/drivers.hpp"
#include "backends/spec.hpp"

namespace gnio::backend {

namespace {

struct WireFrame {
  std::vector<uint8_t> bytes;
  uint64_t timestamp_ns = 0;
};

// One direction of one queue: a bounded FIFO. Buffers of frames already
// received come back as spares so a steady stream does not allocate.
struct WireQueue {
  std::mutex mu;
  std::deque<WireFrame> frames;
  std::vector<std::vector<uint8_t>> spares;
};

// A cable: dir[0] carries end A's TX to end B's RX, dir[1] the other way.
// An unnamed loop uses dir[0] only, for both its TX and its RX.
struct Wire {
  Wire(uint16_t queues, uint32_t depth) : queues(queues), depth(depth) {
    for (auto& d : dir) {
      for (uint16_t q = 0; q < queues; ++q) d.push_back(std::make_unique<WireQueue>());
    }
  }
  uint16_t queues;
  uint32_t depth;
  std::vector<std::unique_ptr<WireQueue>> dir[2];
};

// Named cables and which of their ends are open.
struct Registry {
  struct Entry {
    std::shared_ptr<Wire> wire;
    bool open[2] = {false, false};
  };
  std::mutex mu;
  std::map<std::string, Entry> cables;
};

Registry& registry() {
  static Registry r;
  return r;
}

class LoopBackend final : public Backend {
 public:
  LoopBackend(std::string name, int end, std::shared_ptr<Wire> wire)
      : name_(std::move(name)), end_(end), wire_(std::move(wire)), held_(wire_->queues) {
    caps_.driver = "loop";
    caps_.max_rx_queues = wire_->queues;
    caps_.max_tx_queues = wire_->queues;
    caps_.max_packet_size = kMaxFrameSize;
    caps_.drops_when_full = false;
  }

  ~LoopBackend() override {
    if (name_.empty()) return;
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    auto it = r.cables.find(name_);
    it->second.open[end_] = false;
    if (!it->second.open[0] && !it->second.open[1]) r.cables.erase(it);
  }
  LoopBackend(const LoopBackend&) = delete;
  LoopBackend& operator=(const LoopBackend&) = delete;

  const EthCaps& caps() const override { return caps_; }

  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) override {
    if (queue >= wire_->queues) return bad_queue("RX", queue);
    WireQueue& wq = *wire_->dir[name_.empty() ? 0 : 1 - end_][queue];
    std::vector<WireFrame>& held = held_[queue];
    std::lock_guard lock(wq.mu);
    for (WireFrame& f : held) wq.spares.push_back(std::move(f.bytes));
    held.clear();
    size_t n = std::min(out.size(), wq.frames.size());
    for (size_t i = 0; i < n; ++i) {
      held.push_back(std::move(wq.frames.front()));
      wq.frames.pop_front();
      out[i].data = held.back().bytes.data();
      out[i].len = static_cast<uint32_t>(held.back().bytes.size());
      out[i].timestamp_ns = held.back().timestamp_ns;
    }
    return n;
  }

  // Copies each waiting frame straight into the ring; a frame that finds no
  // room stays first on the wire (lossless).
  Result<size_t> rx_into(uint16_t queue, RxSink& sink) override {
    if (queue >= wire_->queues) return bad_queue("RX", queue);
    WireQueue& wq = *wire_->dir[name_.empty() ? 0 : 1 - end_][queue];
    const uint32_t max = sink.max_frame();
    std::lock_guard lock(wq.mu);
    size_t offered = 0;
    while (sink.room() > 0 && !wq.frames.empty()) {
      WireFrame& f = wq.frames.front();
      const uint32_t size = static_cast<uint32_t>(f.bytes.size());
      if (size == 0) {
        sink.drop(DropReason::Empty);
      } else {
        const uint32_t len = std::min(size, max);
        uint8_t* dst = sink.claim(len);
        if (!dst) break;
        std::memcpy(dst, f.bytes.data(), len);
        sink.commit(len, f.timestamp_ns, len < size ? RxFrameTruncated : 0u, len < size ? size : 0u);
      }
      wq.spares.push_back(std::move(f.bytes));
      wq.frames.pop_front();
      ++offered;
    }
    return offered;
  }

  bool at_end(uint16_t) const override { return false; }

  Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) override {
    if (queue >= wire_->queues) return bad_queue("TX", queue);
    for (size_t i = 0; i < frames.size(); ++i) {
      if (frames[i].len > caps_.max_packet_size) {
        return Status(Errc::InvalidValue, Layer::Backend,
                      label() + ": frame " + std::to_string(i) + " of the burst has " +
                          std::to_string(frames[i].len) + " bytes, more than max_packet_size " +
                          std::to_string(caps_.max_packet_size) + "; nothing of this burst was sent");
      }
    }
    WireQueue& wq = *wire_->dir[name_.empty() ? 0 : end_][queue];
    uint64_t now = realtime_ns();
    std::lock_guard lock(wq.mu);
    // Backpressure: a full queue takes part of the burst; the rest waits.
    size_t n = std::min(frames.size(), wire_->depth - wq.frames.size());
    for (size_t i = 0; i < n; ++i) {
      WireFrame f;
      if (!wq.spares.empty()) {
        f.bytes = std::move(wq.spares.back());
        wq.spares.pop_back();
      }
      f.bytes.assign(frames[i].data, frames[i].data + frames[i].len);
      f.timestamp_ns = frames[i].timestamp_ns != 0 ? frames[i].timestamp_ns : now;
      wq.frames.push_back(std::move(f));
    }
    return n;
  }

 private:
  std::string label() const { return name_.empty() ? "loop:" : "loop:" + name_ + " end " + (end_ == 0 ? "A" : "B"); }

  Status bad_queue(const char* dir, uint16_t queue) const {
    return Status(Errc::InvalidValue, Layer::Backend,
                  label() + ": " + dir + " queue " + std::to_string(queue) + " does not exist; the wire has " +
                      std::to_string(wire_->queues) + " queue(s) (set queues=Q)");
  }

  std::string name_;  // empty for the unnamed loop
  int end_;           // 0 = A, 1 = B
  std::shared_ptr<Wire> wire_;
  EthCaps caps_;
  std::vector<std::vector<WireFrame>> held_;  // frames of the last rx burst, per queue
};

}  // namespace

Result<std::unique_ptr<Backend>> open_loop(std::string_view text) {
  auto spec = Spec::parse(text, ArgMode::Optional, {"queues", "depth"});
  if (!spec) return spec.status();
  auto queues = spec->u64("queues", 1, 1, 64);
  if (!queues) return queues.status();
  auto depth = spec->u64("depth", 4096, 1, 1u << 20);
  if (!depth) return depth.status();
  const std::string& name = spec->arg();
  if (name.empty()) {
    auto wire = std::make_shared<Wire>(static_cast<uint16_t>(*queues), static_cast<uint32_t>(*depth));
    return std::unique_ptr<Backend>(std::make_unique<LoopBackend>("", 0, std::move(wire)));
  }

  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto [it, created] = r.cables.try_emplace(name);
  Registry::Entry& e = it->second;
  if (created) {
    e.wire = std::make_shared<Wire>(static_cast<uint16_t>(*queues), static_cast<uint32_t>(*depth));
  } else if (e.open[0] && e.open[1]) {
    return Status(Errc::BadState, Layer::Backend,
                  "queue spec '" + std::string(text) + "': both ends (A and B) of loop:" + name +
                      " are already open; close one of them first, or use another name");
  } else {
    // The second end takes the wire as the first end made it; options it
    // states must agree.
    if (spec->has("queues") && *queues != e.wire->queues) {
      return spec->invalid("queues", "differs from the other end of loop:" + name,
                           "that end has queues=" + std::to_string(e.wire->queues) + "; give the same or leave it out");
    }
    if (spec->has("depth") && *depth != e.wire->depth) {
      return spec->invalid("depth", "differs from the other end of loop:" + name,
                           "that end has depth=" + std::to_string(e.wire->depth) + "; give the same or leave it out");
    }
  }
  int end = e.open[0] ? 1 : 0;
  e.open[end] = true;
  return std::unique_ptr<Backend>(std::make_unique<LoopBackend>(name, end, e.wire));
}

}  // namespace gnio::backend
