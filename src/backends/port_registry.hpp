// SPDX-License-Identifier: Apache-2.0
// The live ports a process has open, shared by the specs that name the same
// port: an RX spec and a TX spec of one interface (as `gnio run` opens them)
// get one port, since a NIC queue takes one AF_XDP socket and a DPDK port
// one configuration. RX and TX of a queue already run on different engine
// threads. Each spec gets its own SharedPort, a Backend with its own
// rx_into() state; the port closes with the last of them.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "backends/backend.hpp"

namespace gnio::backend {

// One spec's view of a shared port. `Port` has the Backend calls a live
// port answers (caps, rx_memory, rx_burst, rx_release, tx_burst, and flush
// where it queues TX) without being a Backend itself.
template <class Port>
class SharedPort final : public Backend {
 public:
  explicit SharedPort(std::shared_ptr<Port> port) : port_(std::move(port)) {}
  const EthCaps& caps() const override { return port_->caps(); }
  std::optional<RxMemory> rx_memory(uint16_t queue) const override { return port_->rx_memory(queue); }
  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) override { return port_->rx_burst(queue, out); }
  void rx_release(uint16_t queue, std::span<const RxFrame> frames) override { port_->rx_release(queue, frames); }
  bool at_end(uint16_t) const override { return false; }  // a wire has no end
  Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) override {
    return port_->tx_burst(queue, frames);
  }
  Status flush() override {
    if constexpr (requires(Port& p) { p.flush(); }) return port_->flush();
    else return Status::ok();
  }

 private:
  std::shared_ptr<Port> port_;
};

template <class Port>
class PortRegistry {
 public:
  // A view of the open port the spec names (`names_port(port)`) where its
  // options let it share that port (`may_share(port)`: Status::ok(), or the
  // refusal that says why); else a view of a port `open()` opens
  // (Result<std::shared_ptr<Port>>). Opens run one at a time, so that two
  // specs naming one port never open it twice.
  template <class NamesPort, class MayShare, class Open>
  Result<std::unique_ptr<Backend>> share_or_open(NamesPort names_port, MayShare may_share, Open open) {
    std::lock_guard lock(mu_);
    std::erase_if(ports_, [](const std::weak_ptr<Port>& p) { return p.expired(); });
    for (const std::weak_ptr<Port>& p : ports_) {
      std::shared_ptr<Port> alive = p.lock();
      if (!alive || !names_port(*alive)) continue;  // closing right now, or another port
      GNIO_TRY(may_share(*alive));
      return std::unique_ptr<Backend>(std::make_unique<SharedPort<Port>>(std::move(alive)));
    }
    Result<std::shared_ptr<Port>> opened = open();
    if (!opened) return opened.status();
    ports_.push_back(*opened);
    return std::unique_ptr<Backend>(std::make_unique<SharedPort<Port>>(std::move(*opened)));
  }

 private:
  std::mutex mu_;
  std::vector<std::weak_ptr<Port>> ports_;
};

}  // namespace gnio::backend
