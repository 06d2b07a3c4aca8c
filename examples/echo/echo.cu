// SPDX-License-Identifier: Apache-2.0
// echo: a persistent kernel swaps the L2/L3/L4 addresses of every packet in
// place and sends it back, zero-copy from the RX ring.
//   --mode loop: the host sends frames from --source into one end of an
//     in-process wire, the kernel echoes on the other end, and the host
//     checks that every frame came back exactly once, transformed. Order is
//     kept within a burst; independent receivers (thread or warp scope with
//     several of them) may interleave bursts.
//   --mode pcap: RX from --in, TX to --out (a capture file); --verify then
//     compares the written capture with the transform computed on the host.
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <deque>
#include <map>

#include "../common/example.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "options.hpp"
#include "gnio/gpu_queue.hpp"

using namespace gnio;

namespace {

using echo::Options;

std::vector<uint8_t> transformed(std::vector<uint8_t> f) {
  dev::swap_addresses(f.data(), static_cast<uint32_t>(f.size()));
  return f;
}

struct Pipeline {
  EthRxq rxq;
  EthTxq txq;
  GpuRxq grxq;
  GpuTxq gtxq;
  PersistentKernel kernel;
};

Status build(const Options& o, Gpu& gpu, EthDevice& rx_dev, EthDevice& tx_dev, RingMem mem, Scope scope,
             Pipeline& p) {
  auto rxq = rx_dev.create_rxq(0);
  if (!rxq) return rxq.status();
  p.rxq = std::move(*rxq);
  for (Status s : {p.rxq.set_num_strides(o.strides), p.rxq.set_stride_size(o.stride),
                   p.rxq.set_burst_size(o.burst), p.rxq.set_ring_mem(mem), p.rxq.set_gpu(gpu), p.rxq.start()})
    GNIO_TRY(s);
  auto txq = tx_dev.create_txq(0);
  if (!txq) return txq.status();
  p.txq = std::move(*txq);
  for (Status s : {p.txq.set_depth(o.txq_depth), p.txq.set_gpu(gpu), p.txq.start()}) GNIO_TRY(s);
  auto g_rx = GpuRxq::create(gpu, p.rxq);
  if (!g_rx) return g_rx.status();
  p.grxq = std::move(*g_rx);
  auto g_tx = GpuTxq::create(gpu, p.txq);
  if (!g_tx) return g_tx.status();
  p.gtxq = std::move(*g_tx);
  LaunchConfig cfg;
  cfg.block = gpu.emulated() ? 1u : o.block;
  cfg.name = "echo";
  auto k = with_scope(scope, [&]<Scope S>() {
    return PersistentKernel::launch(gpu, cfg, dev::EchoKernel<S>{p.grxq.handle(), p.gtxq.handle(), o.burst});
  });
  if (!k) return k.status();
  p.kernel = std::move(*k);
  return Status::ok();
}

Status teardown(Pipeline& p) {
  Status s = p.kernel.stop();
  for (Status t : {p.gtxq.destroy(), p.grxq.destroy(), p.txq.destroy(), p.rxq.destroy()})
    if (s && !t) s = t;
  return s;
}

void print_stats(const Pipeline& p) {
  auto k = p.kernel.totals();
  auto r = p.rxq.stats();
  auto t = p.txq.stats();
  std::printf("kernel: packets=%llu bursts=%llu again=%llu errors=%llu | rx: packets=%llu rx_missed=%llu | "
              "tx: packets=%llu completions=%llu errors=%llu\n",
              (unsigned long long)k.packets, (unsigned long long)k.bursts, (unsigned long long)k.again,
              (unsigned long long)k.errors, (unsigned long long)r.packets, (unsigned long long)r.rx_missed,
              (unsigned long long)t.packets, (unsigned long long)t.completions, (unsigned long long)t.errors);
  std::printf("tx: %s\n", examples::tx_stats_line(t).c_str());
}

int run_loop(const Options& o, Gpu& gpu, RingMem mem, Scope scope) {
  const std::string wire = "loop:echo-" + std::to_string(getpid());
  auto kernel_end = EthDevice::open(wire);
  if (!kernel_end) return examples::fail(kernel_end.status());
  auto host_end = EthDevice::open(wire);
  if (!host_end) return examples::fail(host_end.status());
  Pipeline p;
  if (Status s = build(o, gpu, *kernel_end, *kernel_end, mem, scope, p); !s) return examples::fail(s);

  auto src_dev = EthDevice::open(o.source);
  if (!src_dev) return examples::fail(src_dev.status());
  auto src = src_dev->create_rxq(0);
  auto host_tx = host_end->create_txq(0);
  auto host_rx = host_end->create_rxq(0);
  if (!src || !host_tx || !host_rx) return examples::fail(!src ? src.status() : !host_tx ? host_tx.status() : host_rx.status());
  for (Status s : {src->start(), host_tx->start(), host_rx->start()})
    if (!s) return examples::fail(s);

  std::map<std::vector<uint8_t>, uint32_t> expected;  // sent, not yet echoed
  size_t in_flight = 0;
  uint64_t sent = 0, echoed = 0, mismatched = 0;
  std::deque<std::vector<uint8_t>> to_send;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
  while (true) {
    if (to_send.empty() && !src->at_end()) {
      auto frames = src->host_receive(256);
      if (!frames) return examples::fail(frames.status());
      for (auto& f : *frames) to_send.push_back(std::move(f.data));
    }
    while (!to_send.empty() && in_flight < o.window) {
      std::span<const uint8_t> one(to_send.front());
      auto n = host_tx->host_send(std::span(&one, 1));
      if (!n) return examples::fail(n.status());
      if (*n == 0) break;
      ++expected[transformed(std::move(to_send.front()))];
      to_send.pop_front();
      ++in_flight;
      ++sent;
    }
    auto back = host_rx->host_receive(256);
    if (!back) return examples::fail(back.status());
    for (auto& f : *back) {
      auto it = expected.find(f.data);
      if (it == expected.end()) {
        ++mismatched;  // never sent, or echoed twice
      } else {
        if (--it->second == 0) expected.erase(it);
        --in_flight;
      }
      ++echoed;
    }
    if (to_send.empty() && src->at_end() && in_flight == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "FAIL: timeout with %zu frames not echoed\n", in_flight);
      print_stats(p);
      return 1;
    }
    // Nothing back: the next echo is usually microseconds away, so give the
    // core to the engines and the kernel without sleeping through it.
    if (back->empty()) std::this_thread::yield();
  }
  print_stats(p);
  if (Status s = teardown(p); !s) return examples::fail(s);
  std::printf("echo loop: sent=%llu echoed=%llu mismatched=%llu -> %s\n", (unsigned long long)sent,
              (unsigned long long)echoed, (unsigned long long)mismatched,
              sent == echoed && mismatched == 0 ? "EXACTLY-ONCE" : "FAIL");
  return sent == echoed && mismatched == 0 ? 0 : 1;
}

Result<std::vector<std::vector<uint8_t>>> read_all(const std::string& spec) {
  std::vector<std::vector<uint8_t>> all;
  GNIO_TRY(for_each_host_frame(spec, [&](std::vector<uint8_t>& f) { all.push_back(std::move(f)); }));
  return all;
}

int run_pcap(const Options& o, Gpu& gpu, RingMem mem, Scope scope) {
  auto rx_dev = EthDevice::open(o.in);
  if (!rx_dev) return examples::fail(rx_dev.status());
  auto tx_dev = EthDevice::open(o.out);
  if (!tx_dev) return examples::fail(tx_dev.status());
  Pipeline p;
  if (Status s = build(o, gpu, *rx_dev, *tx_dev, mem, scope, p); !s) return examples::fail(s);
  Status waited = examples::wait_until(
      [&] { return p.rxq.at_end() && p.txq.stats().completions == p.rxq.stats().packets; },
      std::chrono::seconds(o.timeout_s), "echoing every packet", p.kernel);
  print_stats(p);
  if (!waited) return examples::fail(waited);
  if (Status s = teardown(p); !s) return examples::fail(s);
  if (Status s = p.rxq.source_status(); !s) return examples::fail(s);
  if (!o.verify) return 0;

  const std::string out_file = o.out.substr(o.out.find(':') + 1);
  auto in = read_all(o.in);
  auto out = read_all("pcap:" + out_file);
  if (!in) return examples::fail(in.status());
  if (!out) return examples::fail(out.status());
  // Compared as multisets: independent receivers may interleave bursts.
  std::vector<std::vector<uint8_t>> want;
  for (const auto& f : *in) want.push_back(transformed(f));
  uint64_t in_order = 0;
  for (size_t i = 0; i < std::min(want.size(), out->size()); ++i) in_order += want[i] == (*out)[i];
  std::sort(want.begin(), want.end());
  std::sort(out->begin(), out->end());
  const bool ok = want == *out;
  std::printf("pcap round trip: in=%zu out=%zu in-order=%llu -> %s\n", in->size(), out->size(),
              (unsigned long long)in_order, ok ? "MATCH" : "MISMATCH");
  return ok ? 0 : 1;
}

}  // namespace

int echo::run(const Options& o) {
  auto setup = examples::setup(o.scope, o.mem, o.gpu, o.require_gpu);
  if (const int* rc = std::get_if<int>(&setup)) return *rc;
  auto& [scope, mem, gpu] = std::get<examples::Setup>(setup);
  return o.mode == "loop" ? run_loop(o, gpu, mem, scope) : run_pcap(o, gpu, mem, scope);
}
