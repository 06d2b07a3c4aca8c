// SPDX-License-Identifier: Apache-2.0
// The packet-processing persistent kernel: each block serves one RX queue;
// each thread analyses its packets of a burst in place, updates the flow
// table (a burst's packets of one flow in one update: merged per warp, then
// per block in shared memory), hands DNS/HTTP/TLS
// records to the host through a semaphore (claimed once per warp), and
// turns requests it answers into replies in the RX buffer, sent zero-copy.
// With --capture, the matched packets of each round are recorded to the
// capture queue together (dev/capture.hpp): copied into staging slots with
// what the kernel knew of them, never waiting for the writer.
#include "gnio/dev/kernel.hpp"
#include "gnio/dev/thread.hpp"
#include "packet_processing/block_flows.hpp"
#include "packet_processing/pp_kernel.hpp"
#include "packet_processing/records.hpp"
#include "packet_processing/warp_merge.hpp"

namespace gnio::app {

namespace {

using namespace gnio::dev::app;

constexpr uint64_t kPollNs = 200000;     // a stop request is seen within this
constexpr uint64_t kFlushEvery = 256;    // packets a thread counts locally before adding them to the totals

struct PacketProcessingKernel {
  PpArgs a;

  GNIO_HD void flush(uint64_t* local) const {
    for (uint32_t i = 0; i < counter::kCount; ++i) {
      if (local[i] != 0) dev::fetch_add_relaxed(&a.counters[i], local[i]);
      local[i] = 0;
    }
  }

  // A whole echo request (not a later fragment, not in a tunnel) that
  // build_reply() would refuse: cut, malformed, or behind an IPv6 routing header.
  GNIO_HD static uint64_t echo_refused(const uint8_t* p, const Analysis& an) {
    const bool v6 = an.has(kIcmpv6);
    if (an.tunnel != kTunnelNone) return 0;
    if (!(v6 || an.has(kIcmp)) || dev::has_flag(an.flags, dev::PacketFlags::Fragment)) return 0;
    if (an.pp.payload_offset <= an.pp.l4_offset || p[an.pp.l4_offset] != (v6 ? 128 : 8)) return 0;
    constexpr uint32_t kCut = bit(dev::PacketFlags::Truncated) | bit(dev::PacketFlags::Malformed);
    return an.reason != kReasonNone || (an.flags & kCut) != 0 || an.pp.routing_offset != 0 ? 1 : 0;
  }

  // Hands the record of a packet to the host in item `k` of the ring
  // (claimed with warp_claim()); waits while the host is a full ring behind,
  // unless the kernel is stopping. `room`: this thread's last look at the
  // host's progress (claims below it have a free item), so that the host's
  // index is read over the bus only when a claim reaches it. `waited`:
  // whether it had to wait.
  GNIO_HD bool hand_off(const dev::KernelCtx& ctx, uint64_t k, const uint8_t* p, const Analysis& an, uint16_t queue,
                        uint64_t index, uint64_t timestamp, uint64_t& room, bool& waited) const {
    waited = false;
    for (uint32_t spins = 0; k >= room; ++spins) {
      room = dev::load_acquire(const_cast<uint64_t*>(a.record_consumed)) + a.records.count();
      if (k < room) break;
      waited = true;
      if (!ctx.running()) return false;
      dev::backoff(spins);
    }
    // Built here, then written to the host's ring as 8-byte words, only
    // those that carry fields or text (store_record()): the ring is pinned
    // host memory, where every store is a bus write.
    Record r{};
    fill_record(p, an, r);
    r.queue = queue;
    r.packet = index;
    r.timestamp_ns = timestamp;
    const uint32_t item = static_cast<uint32_t>(k % a.records.count());
    store_record(r, reinterpret_cast<Record*>(a.records.payload(item)));
    a.records.set_status(item, dev::SemStatus::Ready);
    return true;
  }

  // The epb_flags of a captured packet: inbound, and the checksum and cut
  // state the kernel found (pcapng has no bit for a wrong checksum: such a
  // packet is neither valid nor not ready).
  GNIO_HD static uint32_t capture_flags(const Analysis& an, uint32_t rx_flags) {
    uint32_t f = dev::epb::kInbound;
    const bool l3_ok = an.csum_l3 == kCsumGood || an.csum_l3 == kCsumNotChecked;
    const bool any_good = an.csum_l3 == kCsumGood || an.csum_l4 == kCsumGood;
    if (an.csum_l4 == kCsumPartial) f |= dev::epb::kChecksumNotReady;
    else if (l3_ok && any_good && (an.csum_l4 == kCsumGood || an.csum_l4 == kCsumNotChecked)) f |= dev::epb::kChecksumValid;
    if (dev::has_flag(rx_flags, dev::PacketFlags::FrameTruncated)) f |= dev::epb::kPacketTooLong;
    return f;
  }

  // Sends one reply; drains completions while the ring is full. Returns
  // the descriptor count to wait for, or 0 when it was not sent: stopping,
  // or refused by the queue (longer than it sends; the descriptor is still
  // committed, and the engine counts it as dropped(too_long)).
  GNIO_HD uint64_t send(const dev::KernelCtx& ctx, const uint8_t* data, uint32_t len) const {
    dev::TxBatch t = a.txq.reserve<Scope::Thread>(1);
    while (t.status() == dev::Status::Again) {
      ctx.count_again();
      if (!ctx.running()) return 0;
      a.txq.wait_completions(a.txq.completed() + 1, kPollNs);
      t = a.txq.reserve<Scope::Thread>(1);
    }
    if (t.status() != dev::Status::Success) return 0;
    const dev::Status filled = t.set(0, data, len);
    a.txq.commit<Scope::Thread>(t);
    a.txq.push();
    return filled == dev::Status::Success ? t.first() + 1 : 0;
  }

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    const uint16_t queue = static_cast<uint16_t>(dev::block_index() % a.queues);
    const dev::Rxq& rxq = a.rxq[queue];
    uint64_t local[counter::kCount] = {};
    uint64_t pending = 0;
    uint64_t record_room = 0;  // hand_off()'s view of the host's progress
#if GNIO_DEVICE_PASS
    __shared__ BlockFlowSlot burst_flows[kBlockFlowSlots];
#else
    BlockFlowSlot burst_flows[kBlockFlowSlots];
#endif
    block_flows_clear(burst_flows);
    dev::sync_block();
    constexpr Scope S = Scope::Block;
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      ctx.set_stage(stage::kReceive);
      dev::RxBurst b = rxq.receive<S>(a.burst, kPollNs);
      if (b.count() == 0) {
        if (pending != 0) flush(local);
        pending = 0;
        continue;
      }
      ctx.set_stage(stage::kProcess);
      uint64_t wait_for = 0, mine = 0, my_bytes = 0;
      // Every thread goes round as often as the first (analyze_warp() needs
      // the whole warp); one without a packet this round skips the rest.
      for (uint32_t first = 0; first < b.count(); first += dev::scope_size<S>()) {
        const uint32_t i = first + dev::scope_rank<S>();
        uint8_t* p = nullptr;
        uint32_t len = 0;
        uint64_t timestamp_ns = 0;
        uint32_t rx_flags = 0;
        if (i < b.count()) {
          const dev::Packet pk = b[i];
          if (a.filter.run(pk.data(), pk.size(), pk.size()) != 0) {
            p = pk.data();
            len = pk.size();
            timestamp_ns = pk.timestamp_ns();
            rx_flags = pk.flags();
          } else {
            local[counter::kFiltered] += 1;  // this lane takes no packet this round
          }
        }
        const Analysis an = analyze_warp(p, len, a.decap);
        // The warp's flow updates and record claims, every lane taking part.
        const bool has = p != nullptr;
        const bool tracked = has && an.key.version != 0;
        FlowDelta delta;
        uint64_t h = 0;
        if (tracked) {
          const bool tcp =
              dev::has_flag(an.pp.flags, dev::PacketFlags::L4Tcp) && an.pp.payload_offset > an.pp.l4_offset;
          delta = FlowDelta::one(an.direction, len, timestamp_ns, tcp ? p[an.inner_at + an.pp.l4_offset + 13] : 0u);
          h = FlowTable::hash(an.key);
        }
        if (warp_merge_flow(an.key, h, tracked, delta) && !block_flows_add(burst_flows, an.key, h, delta)) {
          count_outcome(local + counter::kFlow, a.flows.apply(an.key, h, delta), delta.count());
          local[counter::kFlowUpdates] += 1;
        }
        const bool has_record = has && an.record != kRecordNone;
        const uint64_t record_item = warp_claim(a.record_claim, has_record);
        // Before replies rewrite the packet in place; every thread takes part.
        if (a.capture.enabled()) {
          const dev::CaptureOutcome c = a.capture.offer<S>(has, p, len, a.rxq_id[queue], timestamp_ns,
                                                           has ? capture_flags(an, rx_flags) : 0u);
          if (c != dev::CaptureOutcome::None) local[counter::kCapture + static_cast<uint32_t>(c) - 1] += 1;
        }
        if (!has) continue;
        ++mine;
        my_bytes += len;
        local[counter::kPackets] += 1;
        local[counter::kBytes] += len;
        for (uint32_t k = 0; k < kProtoCount; ++k) local[counter::kProto + k] += (an.protocols >> k) & 1u;
        if (an.has(kIpv4)) local[counter::kCsum + uint32_t{kCsumIpv4} * kCsumCount + an.csum_l3] += 1;
        if (an.csum_l4_layer < kCsumLayerCount) local[counter::kCsum + an.csum_l4_layer * kCsumCount + an.csum_l4] += 1;
        local[counter::kReason + an.reason] += 1;
        local[counter::kTunnel + an.tunnel] += 1;
        local[counter::kEchoRefused] += echo_refused(p, an);
        if (has_record) {
          bool waited = false;
          const bool handed = hand_off(ctx, record_item, p, an, queue, b.first() + i, timestamp_ns,
                                       record_room, waited);
          local[handed ? counter::kRecords : counter::kRecordsDropped] += 1;
          local[counter::kRecordWaits] += waited ? 1 : 0;
        }
        if (a.tx) {
          uint32_t reply_len = len;
          const ReplyKind kind = build_reply(p, reply_len, an, a.replies);
          if (kind != kReplyNone) {
            const uint64_t upto = send(ctx, p, reply_len);
            local[counter::kReply + (upto != 0 ? kind : kReplyNone)] += 1;
            if (upto > wait_for) wait_for = upto;
          }
        }
      }
      // The burst's flows, one table update each.
      dev::sync_block();
      block_flows_flush(burst_flows, a.flows, local + counter::kFlow, local[counter::kFlowUpdates]);
      dev::sync_block();
      // The engine reads replies from the RX ring: release only after they left.
      if (wait_for != 0) {
        ctx.set_stage(stage::kReplyWait);
        while (a.txq.wait_completions(wait_for, kPollNs) == dev::Status::Timeout && ctx.running()) {
        }
      }
      ctx.set_stage(stage::kRelease);
      rxq.release<S>(b);
      ctx.count_packets(mine, my_bytes);
      ctx.count_burst<S>();
      pending += mine;
      if (pending >= kFlushEvery) {
        flush(local);
        pending = 0;
      }
    }
    flush(local);
  }
};

}  // namespace

Result<PersistentKernel> launch_packet_processing(const Gpu& gpu, const LaunchConfig& cfg, const PpArgs& args) {
  return PersistentKernel::launch(gpu, cfg, PacketProcessingKernel{args});
}

}  // namespace gnio::app
