// SPDX-License-Identifier: Apache-2.0
// nic_bench's sending window: the sender in the peer namespace for
// --seconds around a started receiver, the drain of what is in flight, and
// the drops counted outside the receiver (its sockets, the veth).
#include <chrono>
#include <csignal>
#include <thread>

#include "bench.hpp"
#include "../common/clock.hpp"

using namespace gnio;
using bench::Clock;
using bench::secs_since;

namespace nic_bench {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) { g_interrupted = 1; }

// Sleeps `seconds`, or less after SIGINT/SIGTERM.
void sleep_for(double seconds) {
  const auto start = Clock::now();
  while (!g_interrupted && secs_since(start) < seconds) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// Waits until `count` stops moving (the frames in flight arrived) or reaches `goal`.
void drain(const std::function<uint64_t()>& count, uint64_t goal) {
  const auto start = Clock::now();
  uint64_t last = count();
  auto since = Clock::now();
  while (secs_since(start) < 3.0 && last < goal) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const uint64_t c = count();
    if (c != last) {
      last = c;
      since = Clock::now();
    } else if (secs_since(since) > 0.3) {
      break;
    }
  }
}

}  // namespace

void catch_interrupts() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

bool interrupted() { return g_interrupted != 0; }

Status Bench::send_window(Row& r, const std::function<uint64_t()>& count) {
  nicbench::Sender sender;
  // The receive sockets' drops from here on: reading AF_PACKET statistics
  // resets them, AF_XDP ones are subtracted (sockets a PMD keeps open from
  // an earlier row count only what they dropped in this one).
  const nicbench::SocketDrops sockets_before = nicbench::socket_drops();
  const uint64_t before = count();
  uint64_t veth_dropped = 0;
  {
    nettest::EnterNs in_peer(peer);
    GNIO_TRY(in_peer.status());
    auto d = nicbench::tx_dropped(kPeerIf);
    if (!d) return d.status();
    veth_dropped = *d;
    GNIO_TRY(sender.start(kPeerIf, nicbench::udp_frames(peer_mac, dut_mac, r.size, 64), senders));
  }
  sleep_for(o.seconds);
  auto sent = sender.stop();
  r.window_received = count() - before;
  if (!sent) return sent.status();
  r.send = *sent;
  {
    nettest::EnterNs in_peer(peer);
    GNIO_TRY(in_peer.status());
    auto d = nicbench::tx_dropped(kPeerIf);
    if (!d) return d.status();
    veth_dropped = *d - veth_dropped;
  }
  drain(count, r.send.sent);
  r.kernel = nicbench::socket_drops();
  r.kernel.xsk_no_fill_frame -= sockets_before.xsk_no_fill_frame;
  r.kernel.xsk_rx_ring_full -= sockets_before.xsk_rx_ring_full;
  // A drop the sender was told of (ENOBUFS) is a refusal, not a loss.
  r.veth_silent_drops = veth_dropped > r.send.refused ? veth_dropped - r.send.refused : 0;
  return Status::ok();
}

}  // namespace nic_bench
