// SPDX-License-Identifier: Apache-2.0
// Network namespaces and veth pairs for the net tests, over rtnetlink only
// (no iproute2, no libnl): a namespace lives as long as its NetNs object
// holds its descriptor, so links and namespaces vanish with the process,
// whatever way it ends.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "gnio/status.hpp"

namespace gnio::nettest {

using Mac = std::array<uint8_t, 6>;

// A fresh network namespace, held by a descriptor.
class NetNs {
 public:
  NetNs() = default;
  static Result<NetNs> create();
  NetNs(NetNs&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  NetNs& operator=(NetNs&& o) noexcept;
  NetNs(const NetNs&) = delete;
  NetNs& operator=(const NetNs&) = delete;
  ~NetNs();
  int fd() const { return fd_; }
  // Runs fn on a thread inside this namespace and returns its status.
  Status run(const std::function<Status()>& fn) const;

 private:
  explicit NetNs(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Moves the calling thread into a namespace until destroyed.
class EnterNs {
 public:
  explicit EnterNs(const NetNs& ns);
  ~EnterNs();
  EnterNs(const EnterNs&) = delete;
  EnterNs& operator=(const EnterNs&) = delete;
  const Status& status() const { return status_; }

 private:
  int home_ = -1;
  Status status_;
};

// The following act in the calling thread's namespace.
// A veth pair: `name` here, `peer` moved into `peer_ns`; `queues` RX and TX
// queues on each end.
Status add_veth(const std::string& name, const std::string& peer, const NetNs& peer_ns, uint32_t queues);
Status link_up(const std::string& name);
Status set_mtu(const std::string& name, uint32_t mtu);
Status add_ipv4(const std::string& name, const std::string& addr, uint8_t prefix);
// A permanent neighbour entry: addr is at mac behind interface `name`.
Status add_neighbor(const std::string& name, const std::string& addr, const Mac& mac);
Result<Mac> mac_of(const std::string& name);
// Turns TX checksum offload of an interface off (ethtool -K NAME tx off):
// a veth otherwise hands frames on with the L4 checksum still to be filled
// in, which AF_XDP receives as it is.
Status disable_tx_checksum(const std::string& name);
// Whether an interface of that name exists in this namespace.
bool link_exists(const std::string& name);

}  // namespace gnio::nettest
