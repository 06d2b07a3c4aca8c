// SPDX-License-Identifier: Apache-2.0
// null:[queues=N] — a transmit sink that accepts every frame at once and
// keeps nothing, like DPDK's net_null: what a TX benchmark sends to when the
// backend must not be the bound. It receives nothing. Each queue reads the
// first and the last byte of every frame, so that a frame whose memory is
// not readable from the host fails here as it would at a NIC.
#include <string>
#include <vector>

#include "backends/drivers.hpp"
#include "backends/spec.hpp"

namespace gnio::backend {

namespace {

constexpr uint64_t kMaxQueues = 64;

class NullBackend final : public Backend {
 public:
  explicit NullBackend(uint16_t queues) : sums_(queues) {
    caps_.driver = "null";
    caps_.max_rx_queues = 0;
    caps_.max_tx_queues = queues;
    caps_.max_packet_size = kMaxFrameSize;
    caps_.rx_supported = false;
    caps_.rx_cyclic = false;
    caps_.rx_checksum_state = false;
    caps_.rx_timestamp = false;
    caps_.rx_rss_hash = false;
  }

  const EthCaps& caps() const override { return caps_; }

  Result<size_t> rx_burst(uint16_t, std::span<RxFrame>) override {
    return Status(Errc::NotSupported, Layer::Backend,
                  "null: is transmit-only; to receive generated frames use 'synthetic:' or 'mem:'", Axis::Nic);
  }

  bool at_end(uint16_t) const override { return true; }

  Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) override {
    if (queue >= sums_.size())
      return Status(Errc::InvalidValue, Layer::Backend,
                    "null: has " + std::to_string(sums_.size()) + " TX queue(s); queue " + std::to_string(queue) +
                        " does not exist (open null:queues=" + std::to_string(queue + 1) + " or more)");
    uint64_t sum = 0;
    for (const TxFrame& f : frames)
      if (f.len > 0) sum += f.data[0] + f.data[f.len - 1];
    sums_[queue].value += sum;
    return frames.size();
  }

 private:
  // One line per queue: each is written by its own engine thread.
  struct alignas(64) Sum {
    uint64_t value = 0;
  };
  std::vector<Sum> sums_;
  EthCaps caps_;
};

}  // namespace

Result<std::unique_ptr<Backend>> open_null(std::string_view text) {
  auto spec = Spec::parse(text, ArgMode::None, {"queues"});
  if (!spec) return spec.status();
  auto queues = spec->u64("queues", 1, 1, kMaxQueues);
  if (!queues) return queues.status();
  return std::unique_ptr<Backend>(std::make_unique<NullBackend>(static_cast<uint16_t>(*queues)));
}

}  // namespace gnio::backend
