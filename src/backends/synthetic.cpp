// SPDX-License-Identifier: Apache-2.0
// synthetic:... — a deterministic generator of well-formed Ethernet
// IPv4/IPv6 UDP/TCP/ICMP-echo frames, spread over RX queues by RSS hash.
#include "backends/synthetic.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <string>

#include "backends/drivers.hpp"
#include "backends/spec.hpp"
#include "gnio/dev/headers.hpp"

namespace gnio::backend {

namespace {

using Proto = SyntheticOptions::Proto;
using Ip = SyntheticOptions::Ip;

constexpr uint32_t kMaxFlows = 1u << 20;  // the IPv6 flow label carries the flow id
constexpr uint16_t kMaxQueues = 64;
constexpr uint32_t kSeqBytes = 8;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A well-mixed 64-bit value for (seed, what, n): `what` keeps the streams of
// different uses apart.
uint64_t mix(uint64_t seed, uint64_t what, uint64_t n) {
  uint64_t s = seed ^ (what * 0xD6E8FEB86659FD93ull) ^ (n * 0x9E3779B97F4A7C15ull);
  splitmix64(s);
  return splitmix64(s);
}

struct FlowShape {
  bool v6;
  Proto proto;
};

// Mixed streams cycle through every combination within the first 6 flows.
FlowShape flow_shape(const SyntheticOptions& o, uint32_t flow) {
  bool v6 = o.ip == Ip::V6 || (o.ip == Ip::Mix && flow % 2 == 1);
  Proto p = o.proto != Proto::Mix ? o.proto : static_cast<Proto>((flow / 2) % 3);
  return {v6, p};
}

uint32_t header_size(FlowShape s) { return 14 + (s.v6 ? 40 : 20) + (s.proto == Proto::Tcp ? 20 : 8); }

uint32_t frame_size(const SyntheticOptions& o, uint64_t index) {
  if (o.size_min == o.size_max) return o.size_min;
  return o.size_min + static_cast<uint32_t>(mix(o.seed, 1, index) % (o.size_max - o.size_min + 1));
}

void put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void put32(uint8_t* p, uint32_t v) {
  put16(p, v >> 16);
  put16(p + 2, v);
}

// Writes frame `index` of `size` bytes (at least the flow's header size
// plus the sequence number) to `f`.
void build_frame(const SyntheticOptions& o, uint64_t index, uint32_t size, uint8_t* f) {
  uint32_t flow = static_cast<uint32_t>(index % o.flows);
  FlowShape shape = flow_shape(o, flow);
  uint64_t fh = mix(o.seed, 2, flow);
  uint32_t host = flow + 1;

  const uint8_t macs[12] = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01};
  std::copy(macs, macs + 12, f);
  uint8_t ip_proto = shape.proto == Proto::Udp ? 17 : shape.proto == Proto::Tcp ? 6 : shape.v6 ? 58 : 1;
  uint32_t l4 = 0;
  if (!shape.v6) {
    put16(f + 12, 0x0800);
    uint8_t* ip = f + 14;
    ip[0] = 0x45;
    ip[1] = 0;
    put16(ip + 2, size - 14);
    put16(ip + 4, static_cast<uint32_t>(index & 0xFFFF));
    put16(ip + 6, 0x4000);  // don't fragment
    ip[8] = 64;
    ip[9] = ip_proto;
    put16(ip + 10, 0);
    put32(ip + 12, (10u << 24) | (host & 0xFFFFFF));  // 10.x.y.z: one source per flow
    put32(ip + 16, (198u << 24) | (18u << 16) | 1);   // 198.18.0.1 (RFC 2544 benchmarking)
    l4 = 34;
  } else {
    put16(f + 12, 0x86DD);
    uint8_t* ip = f + 14;
    put32(ip, (6u << 28) | (host & 0xFFFFF));
    put16(ip + 4, size - 54);
    ip[6] = ip_proto;
    ip[7] = 64;
    const uint8_t src[12] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // fd00::<flow> (unique local)
    std::copy(src, src + 12, ip + 8);
    put32(ip + 20, host);
    const uint8_t dst[16] = {0x20, 0x01, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};  // 2001:2::1 (RFC 5180)
    std::copy(dst, dst + 16, ip + 24);
    l4 = 54;
  }

  uint8_t* h = f + l4;
  uint32_t sport = 1024 + static_cast<uint32_t>(fh % 60000);
  uint32_t dport = 1024 + static_cast<uint32_t>((fh >> 32) % 60000);
  uint32_t payload = 0;
  if (shape.proto == Proto::Udp) {
    put16(h, sport);
    put16(h + 2, dport);
    put16(h + 4, size - l4);
    put16(h + 6, 0);
    payload = l4 + 8;
  } else if (shape.proto == Proto::Tcp) {
    put16(h, sport);
    put16(h + 2, dport);
    put32(h + 4, static_cast<uint32_t>(index * 1000));
    put32(h + 8, 1);
    h[12] = 0x50;  // 20-byte header
    h[13] = 0x18;  // PSH|ACK
    put16(h + 14, 0xFFFF);
    put16(h + 16, 0);
    put16(h + 18, 0);
    payload = l4 + 20;
  } else {
    h[0] = shape.v6 ? 128 : 8;  // echo request
    h[1] = 0;
    put16(h + 2, 0);
    put16(h + 4, static_cast<uint32_t>(fh & 0xFFFF));
    put16(h + 6, static_cast<uint32_t>(index & 0xFFFF));
    payload = l4 + 8;
  }
  for (uint32_t i = 0; i < kSeqBytes; ++i) f[payload + i] = static_cast<uint8_t>(index >> (56 - 8 * i));
  uint64_t state = mix(o.seed, 3, index);
  for (uint32_t i = payload + kSeqBytes; i < size; i += 8) {
    uint64_t r = splitmix64(state);
    for (uint32_t k = 0; k < 8 && i + k < size; ++k) f[i + k] = static_cast<uint8_t>(r >> (8 * k));
  }
  dev::update_checksums(f, size);
}

class SyntheticBackend final : public Backend {
 public:
  explicit SyntheticBackend(const SyntheticOptions& o) : o_(o), queues_(o.queues) {
    caps_.driver = "synthetic";
    caps_.max_rx_queues = o.queues;
    caps_.max_tx_queues = 0;
    caps_.max_packet_size = kMaxFrameSize;
    caps_.tx_supported = false;
    caps_.tx_regular = false;
    caps_.tx_wait_on_time = false;
    caps_.drops_when_full = o.pps > 0;
    if (o.pps > 0) pacer_.emplace(o.pps);
    // Each flow goes to one queue, as a NIC's RSS indirection would send
    // it; the hash (of addresses and ports only, the same for every frame
    // of the flow) goes with each frame, so the engine need not hash again.
    std::vector<uint8_t> frame;
    flow_hash_.resize(o.flows);
    for (uint32_t flow = 0; flow < o.flows; ++flow) {
      frame.assign(header_size(flow_shape(o, flow)) + kSeqBytes, 0);
      build_frame(o, flow, static_cast<uint32_t>(frame.size()), frame.data());
      const RssSpread spread = rss_spread(frame.data(), static_cast<uint32_t>(frame.size()), o.queues);
      flow_hash_[flow] = spread.hash;
      queues_[spread.queue].flows.push_back(flow);
    }
  }

  // Builds each frame straight into the ring.
  Result<size_t> rx_into(uint16_t queue, RxSink& sink) override {
    if (queue >= queues_.size()) return bad_queue(queue);
    Queue& q = queues_[queue];
    const uint64_t due = pacer_ ? pacer_->due() : UINT64_MAX;
    const uint64_t now = realtime_ns();
    const uint32_t max = sink.max_frame();
    size_t offered = 0;
    for (; sink.room() > 0 && !at_end(queue); ++offered) {
      const uint64_t index = next_index(q);
      if (index >= due) break;
      const uint32_t size = frame_size(o_, index);
      const uint32_t len = std::min(size, max);
      uint8_t* dst = sink.claim(len);
      if (!dst && !caps_.drops_when_full) break;  // offered again at the next call
      if (!dst) {
        sink.drop(DropReason::RingFull);
      } else if (len == size) {
        build_frame(o_, index, size, dst);
        sink.commit_hashed(len, now, RxFrameRssHash, 0, flow_hash_[index % o_.flows]);
      } else {
        // Cut: the checksums cover the whole frame, so build it whole first.
        q.cut.resize(size);
        build_frame(o_, index, size, q.cut.data());
        std::memcpy(dst, q.cut.data(), len);
        sink.commit_hashed(len, now, RxFrameRssHash | RxFrameTruncated, size, flow_hash_[index % o_.flows]);
      }
      advance(q);
    }
    return offered;
  }

  const EthCaps& caps() const override { return caps_; }

  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) override {
    if (queue >= queues_.size()) return bad_queue(queue);
    Queue& q = queues_[queue];
    q.arena.clear();
    uint64_t due = pacer_ ? pacer_->due() : UINT64_MAX;
    uint64_t now = realtime_ns();
    size_t n = 0;
    for (; n < out.size() && !at_end(queue); ++n) {
      uint64_t index = next_index(q);
      if (index >= due) break;
      uint32_t size = frame_size(o_, index);
      size_t off = q.arena.append(size);
      build_frame(o_, index, size, q.arena.at(off));
      out[n] = {};
      out[n].len = size;
      out[n].timestamp_ns = now;
      out[n].flags = RxFrameRssHash;
      out[n].rss_hash = flow_hash_[index % o_.flows];
      advance(q);
    }
    q.arena.fix_pointers(out.first(n));
    return n;
  }

  bool at_end(uint16_t queue) const override {
    if (queue >= queues_.size()) return true;
    const Queue& q = queues_[queue];
    return q.flows.empty() || (o_.count != 0 && next_index(q) >= o_.count);
  }

  Result<size_t> tx_burst(uint16_t, std::span<const TxFrame>) override {
    return Status(Errc::NotSupported, Layer::Backend,
                  "synthetic: the generator is receive-only; to send frames use 'loop:', 'pcap-out:FILE' or "
                  "'pcapng-out:FILE'",
                  Axis::Nic);
  }

 private:
  struct Queue {
    std::vector<uint32_t> flows;  // flows of this queue, ascending
    uint64_t round = 0;           // next frame: index round * flows + flows[pos]
    size_t pos = 0;
    FrameArena arena;
    std::vector<uint8_t> cut;  // a frame longer than the ring takes, built whole
  };

  uint64_t next_index(const Queue& q) const { return q.round * o_.flows + q.flows[q.pos]; }
  void advance(Queue& q) const {
    if (++q.pos == q.flows.size()) {
      q.pos = 0;
      ++q.round;
    }
  }
  Status bad_queue(uint16_t queue) const {
    return Status(Errc::InvalidValue, Layer::Backend,
                  "synthetic: RX queue " + std::to_string(queue) + " does not exist; this generator has " +
                      std::to_string(queues_.size()) + " queue(s) (set queues=Q)");
  }

  SyntheticOptions o_;
  EthCaps caps_;
  std::optional<Pacer> pacer_;
  std::vector<Queue> queues_;
  std::vector<uint32_t> flow_hash_;  // RSS hash of each flow
};

}  // namespace

uint32_t synthetic_min_frame_size(const SyntheticOptions& o) {
  uint32_t need = 0;
  for (uint32_t flow = 0; flow < std::min<uint32_t>(o.flows, 6); ++flow) {
    need = std::max(need, header_size(flow_shape(o, flow)) + kSeqBytes);
  }
  return need;
}

std::vector<uint8_t> make_synthetic_frame(const SyntheticOptions& o, uint64_t index) {
  std::vector<uint8_t> f(frame_size(o, index));
  build_frame(o, index, static_cast<uint32_t>(f.size()), f.data());
  return f;
}

RssSpread rss_spread(const uint8_t* frame, uint32_t len, uint16_t queues) {
  const uint32_t hash = dev::rss_hash(frame, len);
  return {hash, static_cast<uint16_t>(queues > 1 ? hash % queues : 0)};
}

Result<SyntheticOptions> parse_synthetic_spec(std::string_view text) {
  auto spec = Spec::parse(text, ArgMode::None, {"count", "size", "flows", "seed", "proto", "ipv6", "pps", "queues"});
  if (!spec) return spec.status();
  SyntheticOptions o;
  auto count = spec->u64("count", o.count, 0, UINT64_MAX);
  if (!count) return count.status();
  auto flows = spec->u64("flows", o.flows, 1, kMaxFlows);
  if (!flows) return flows.status();
  auto seed = spec->u64("seed", o.seed, 0, UINT64_MAX);
  if (!seed) return seed.status();
  auto proto = spec->choice("proto", "udp", {"udp", "tcp", "icmp", "mix"});
  if (!proto) return proto.status();
  auto ipv6 = spec->choice("ipv6", "0", {"0", "1", "mix"});
  if (!ipv6) return ipv6.status();
  auto pps = spec->rate("pps", kMaxPps);
  if (!pps) return pps.status();
  auto queues = spec->u64("queues", o.queues, 1, kMaxQueues);
  if (!queues) return queues.status();
  o.count = *count;
  o.flows = static_cast<uint32_t>(*flows);
  o.seed = *seed;
  o.proto = *proto == "udp" ? Proto::Udp : *proto == "tcp" ? Proto::Tcp : *proto == "icmp" ? Proto::Icmp : Proto::Mix;
  o.ip = *ipv6 == "0" ? Ip::V4 : *ipv6 == "1" ? Ip::V6 : Ip::Mix;
  o.pps = *pps;
  o.queues = static_cast<uint16_t>(*queues);

  uint32_t min_size = synthetic_min_frame_size(o);
  std::string fix = "use size=N or size=MIN-MAX with " + std::to_string(min_size) + " <= N <= " +
                    std::to_string(kMaxFrameSize) + " (the smallest frame holds the headers and an 8-byte "
                    "sequence number for proto=" + *proto + ",ipv6=" + *ipv6 + ")";
  if (const std::string* size = spec->find("size")) {
    const char* end = size->data() + size->size();
    auto [dash, ec] = std::from_chars(size->data(), end, o.size_min);
    o.size_max = o.size_min;
    if (ec == std::errc() && dash != end && *dash == '-') {
      auto [last, ec2] = std::from_chars(dash + 1, end, o.size_max);
      dash = last;
      ec = ec2;
    }
    if (ec != std::errc() || dash != end) return spec->invalid("size", "is not a size or a MIN-MAX range", fix);
    if (o.size_min > o.size_max) return spec->invalid("size", "is a range whose MIN is above its MAX", fix);
    if (o.size_min < min_size || o.size_max > kMaxFrameSize) return spec->invalid("size", "is out of range", fix);
  }
  return o;
}

Result<std::unique_ptr<Backend>> open_synthetic(std::string_view text) {
  auto o = parse_synthetic_spec(text);
  if (!o) return o.status();
  return std::unique_ptr<Backend>(std::make_unique<SyntheticBackend>(*o));
}

}  // namespace gnio::backend
