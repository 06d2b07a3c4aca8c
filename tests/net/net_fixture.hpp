// SPDX-License-Identifier: Apache-2.0
// A veth pair between two fresh namespaces: "dut" (gx0, 10.77.0.1), where
// the test opens gnio, and "peer" (gx1, 10.77.0.2), where the kernel stack
// sends and receives. Peer traffic comes from sockets opened on a thread
// inside the peer namespace; frames gnio sends are built here.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gnio/eth.hpp"
#include "netns_util.hpp"

namespace gnio::nettest {

inline constexpr const char* kDutIf = "gx0";
inline constexpr const char* kPeerIf = "gx1";
inline constexpr const char* kDutIp = "10.77.0.1";
inline constexpr const char* kPeerIp = "10.77.0.2";

struct VethPair {
  NetNs dut;
  NetNs peer;
  Mac dut_mac{};
  Mac peer_mac{};
};

// Builds the pair; the calling thread stays where it was.
Result<std::unique_ptr<VethPair>> make_veth_pair(uint32_t queues);

// A test fixture on its own veth pair, the test's thread in the dut
// namespace. Base is ::testing::Test or a ::testing::TestWithParam<>.
template <class Base>
class VethFixture : public Base {
 protected:
  // Makes the pair and enters the dut namespace. Skips where the kernel
  // refuses network namespaces; any other error is a fatal failure.
  void make_veth(uint32_t queues) {
    auto v = make_veth_pair(queues);
    if (!v) {
      if (v.status().message().find("Operation not permitted") != std::string::npos)
        GTEST_SKIP() << "the kernel refuses network namespaces here: " << v.status().to_string();
      FAIL() << v.status().to_string();
    }
    veth_ = std::move(*v);
    enter_ = std::make_unique<EnterNs>(veth_->dut);
    ASSERT_TRUE(enter_->status().is_ok()) << enter_->status().to_string();
  }

  // Back to the test's own namespace; the pair and its namespaces go.
  void TearDown() override {
    enter_.reset();
    veth_.reset();
  }

  std::unique_ptr<VethPair> veth_;
  std::unique_ptr<EnterNs> enter_;
};

// Why the kernel refuses AF_XDP sockets here (a reason to skip), or nullopt.
std::optional<std::string> xdp_sockets_refused();

// An Ethernet/IPv4/UDP frame from the dut to the peer.
std::vector<uint8_t> udp_frame(const VethPair& v, uint16_t sport, uint16_t dport, const std::vector<uint8_t>& payload);

// The UDP payload of a frame if it is IPv4 UDP to `dport` (else nullopt).
std::optional<std::vector<uint8_t>> udp_payload(const uint8_t* f, uint32_t len, uint16_t dport, uint16_t* sport = nullptr);

// Turns an ICMP echo request frame into its reply in place; false when the
// frame is not an echo request.
bool icmp_echo_to_reply(uint8_t* f, uint32_t len);

// The payload of datagram `seq` (`size` bytes, the sequence number first).
std::vector<uint8_t> test_payload(uint32_t seq, uint32_t size);

// Sends `count` UDP datagrams, test_payload(i, 18 + (i * 131) % 1450), from
// the peer to the dut's `port`, keeping at most 64 of them unreleased by
// `rxq`'s consumer: a wire has no flow control, and a busy test machine must
// not overrun the ring. Adds each frame's length (payload + 42) to
// `frame_bytes`; a consumer that releases nothing for 2 s is a Timeout.
Status send_peer_udp_paced(const VethPair& v, uint16_t port, uint32_t count, const EthRxq& rxq,
                           uint64_t& frame_bytes);

// The peer's connected UDP socket sends `count` datagrams,
// test_payload(i, 18 + (i * 131) % 1450), to the dut's `port`, never more
// than `window` ahead of the echoes it got back, and counts the echoes in
// `echoed` (those not byte for byte the datagram due, in `wrong` too). A
// second without an echo ends it with what came.
Status echo_peer_udp(const VethPair& v, uint16_t port, uint32_t count, uint32_t window, uint32_t& echoed,
                     uint32_t& wrong);

// Network-namespace descriptors this process holds (to prove none leak).
int open_netns_fds();

}  // namespace gnio::nettest
