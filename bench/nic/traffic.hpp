// SPDX-License-Identifier: Apache-2.0
// Traffic of the veth benchmark that does not go through gnio: the sender
// (AF_PACKET, several threads, sendmmsg straight to the driver), the
// baseline receiver (an AF_PACKET socket that only counts) and the kernel's
// drop counters of this process's AF_XDP sockets.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gnio/status.hpp"

namespace gnio::nicbench {

// An IoError: what failed, the system's reason for `err`, and the fix.
Status os_error(const std::string& what, int err, const std::string& fix);

using Mac = std::array<uint8_t, 6>;

// Ethernet/IPv4/UDP frames of exactly `size` bytes (no FCS) from `src` to
// `dst`, UDP destination port kPort, `flows` source ports.
inline constexpr uint16_t kPort = 9;
std::vector<std::vector<uint8_t>> udp_frames(const Mac& src, const Mac& dst, uint32_t size, uint32_t flows);

struct SendTotals {
  uint64_t sent = 0;     // frames the driver took
  uint64_t bytes = 0;
  uint64_t refused = 0;  // sends the driver refused (ENOBUFS/EAGAIN: its queue was full), each retried
  double seconds = 0;    // from the first thread's start to the last thread's end
};

// Sends from `threads` threads, each in the calling thread's network
// namespace, on interface `ifname`, until stop().
class Sender {
 public:
  Sender() = default;
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;
  ~Sender();
  Status start(const std::string& ifname, std::vector<std::vector<uint8_t>> frames, uint32_t threads);
  // Stops every thread and returns what they sent; the first error of a thread, if any.
  Result<SendTotals> stop();
  uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }

 private:
  void run(int fd, uint32_t first);
  std::vector<std::vector<uint8_t>> frames_;
  std::vector<std::thread> threads_;
  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sent_{0}, bytes_{0}, refused_{0};
  std::string error_;
  std::atomic<bool> failed_{false};
  int64_t started_ns_ = 0;
};

struct SinkTotals {
  uint64_t packets = 0;
  uint64_t bytes = 0;
  uint64_t dropped = 0;  // the socket's receive queue was full (PACKET_STATISTICS tp_drops)
};

// The baseline receiver: one AF_PACKET socket on `ifname` (calling thread's
// namespace), recvmmsg in batches, counts frames and bytes and nothing else.
class PacketSink {
 public:
  PacketSink() = default;
  PacketSink(const PacketSink&) = delete;
  PacketSink& operator=(const PacketSink&) = delete;
  ~PacketSink();
  Status start(const std::string& ifname);
  uint64_t packets() const { return packets_.load(std::memory_order_relaxed); }
  Result<SinkTotals> stop();

 private:
  void run();
  int fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> packets_{0}, bytes_{0};
};

// Frames the kernel dropped on the way into this process's receive sockets:
// AF_XDP (XDP_STATISTICS: no free fill-ring frame, full RX ring) and
// AF_PACKET, as a PMD opens them (PACKET_STATISTICS: full ring or queue;
// reading them resets them, so read once, at the end of a row).
struct SocketDrops {
  uint64_t xsk_no_fill_frame = 0;  // rx_dropped
  uint64_t xsk_rx_ring_full = 0;   // rx_ring_full
  uint64_t packet_ring_full = 0;   // tp_drops
  uint32_t xsk_sockets = 0;
  uint32_t packet_sockets = 0;
};
SocketDrops socket_drops();
// The same for the sockets of another process (copies of its descriptors,
// pidfd_getfd: root, kernel 5.6 or later). Its AF_PACKET statistics reset
// on the read as well.
Result<SocketDrops> socket_drops_of(pid_t pid);

// The veth's count of frames it dropped on transmit (IFLA_STATS64
// tx_dropped of `ifname`, calling thread's namespace). Kernels that drop on
// a full veth queue without telling the sender count them only here.
Result<uint64_t> tx_dropped(const std::string& ifname);

int64_t now_ns();

}  // namespace gnio::nicbench
