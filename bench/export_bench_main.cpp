// SPDX-License-Identifier: Apache-2.0
// export_bench: what IPFIX export costs. Rows: encoding flow records into
// messages alone (the baseline), encoding and sending them from one host
// thread to a local UDP socket that another thread drains, and `gnio run
// packet-processing` on the same synthetic traffic without and with
// --ipfix (every flow exported every second), its packet rate as a ratio to
// the run without, measured in the same invocation.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/machine.hpp"
#include "common/table.hpp"
#include "gnio/gpu.hpp"
#include "gnio/ipfix.hpp"
#include "udp_sink.hpp"

namespace {

using namespace gnio;
using Clock = std::chrono::steady_clock;

// The v4 biflow template of `gnio run` (apps/gnio/run/run_export.cpp).
ipfix::Template flow_template() {
  return {256,
          {{8, 4, 0}, {12, 4, 0}, {7, 2, 0}, {11, 2, 0}, {4, 1, 0}, {152, 8, 0}, {153, 8, 0}, {2, 8, 0}, {1, 8, 0},
           {6, 2, 0}, {2, 8, ipfix::kReversePen}, {1, 8, ipfix::kReversePen}, {6, 2, ipfix::kReversePen}, {136, 1, 0}}};
}

void encode(ipfix::RecordWriter& r, uint64_t i) {
  r.clear();
  r.u32(0x0a000000u | static_cast<uint32_t>(i & 0xffffff));
  r.u32(0xc6120001u);
  r.u16(static_cast<uint16_t>(i));
  r.u16(443);
  r.u8(6);
  r.u64(1700000000000ull + i);
  r.u64(1700000000100ull + i);
  r.u64(10);
  r.u64(1500);
  r.u16(0x1b);
  r.u64(8);
  r.u64(900);
  r.u16(0x1b);
  r.u8(4);
}

struct Row {
  double records_per_s = 0;
  uint64_t sent = 0, lost = 0, received = 0;
};

Row encode_only(uint64_t n) {
  ipfix::MessageWriter w;
  ipfix::RecordWriter r;
  const auto t0 = Clock::now();
  uint64_t bytes = 0;
  w.begin(0, 0, 1);
  w.begin_set(256);
  for (uint64_t i = 0; i < n; ++i) {
    encode(r, i);
    if (w.size() + r.data().size() > 1400) {
      bytes += w.finish().size();
      w.begin(0, 0, 1);
      w.begin_set(256);
    }
    w.bytes(r.data());
  }
  bytes += w.finish().size();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  Row row;
  row.records_per_s = n / s;
  row.sent = n;
  if (bytes == 0) row.sent = 0;
  return row;
}

Row encode_and_send(uint64_t n) {
  test::UdpDrain drain;
  auto e = ipfix::Exporter::open(*ipfix::parse_collector(drain.url()),
                                 {flow_template()}, {});
  Row row;
  if (!e) {
    std::fprintf(stderr, "export_bench: %s\n", e.status().to_string().c_str());
  } else {
    ipfix::RecordWriter r;
    const auto t0 = Clock::now();
    for (uint64_t i = 0; i < n; ++i) {
      encode(r, i);
      e->add(256, r.data());
    }
    e->flush();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    row.records_per_s = n / s;
    row.sent = e->stats().records_sent;
    row.lost = e->stats().lost_total();
  }
  row.received = drain.stop();
  return row;
}

// The packet rate of a `gnio run packet-processing` (its summary's first line).
double run_mpps(const std::string& gnio, const std::string& gpu, const std::string& args) {
  const std::string cmd = gnio + " run packet-processing --gpu " + gpu + " --quiet " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  if (!p) return 0;
  char line[512];
  double mpps = 0;
  while (std::fgets(line, sizeof line, p.get())) {
    double s = 0, m = 0;
    unsigned long long pk = 0, by = 0;
    if (std::sscanf(line, "%llu packets, %llu bytes in %lf s: %lf Mpps", &pk, &by, &s, &m) == 4) mpps = m;
  }
  return mpps;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"export_bench: the cost of IPFIX export (encoding, sending, and on gnio run's packet rate)"};
  uint64_t records = 1000000;
  std::string gnio = GNIO_CLI_PATH;
  std::string rx = "synthetic:count=4000000,flows=1000000,proto=mix,size=100-300,seed=9";
  uint32_t flow_slots = 1u << 21;
  std::string gpu_name = "cpu";
  app.add_option("--records", records, "flow records to encode and send")->capture_default_str();
  app.add_option("--gnio", gnio, "the gnio CLI for the run rows (empty: no run rows)")->capture_default_str();
  app.add_option("--rx", rx, "the run rows' traffic")->capture_default_str();
  app.add_option("--flow-slots", flow_slots, "the run rows' flow table")->capture_default_str();
  app.add_option("--gpu", gpu_name, "the run rows' --gpu: cpu (the emulated device), auto or a PCIe bus id")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  // The machine line; the run rows open the GPU themselves, after this one is closed.
  std::string device, run_gpu;
  {
    auto gpu = Gpu::open(gpu_name);
    if (!gpu) {
      std::fprintf(stderr, "export_bench: --gpu %s: %s\n", gpu_name.c_str(), gpu.status().to_string().c_str());
      return 2;
    }
    std::printf("machine: %s\n\n", bench::machine(*gpu).c_str());
    device = gpu->emulated() ? "emulated device" : gpu->info().name;
    run_gpu = gpu->bus_id();
  }
  const Row base = encode_only(records);
  const Row sent = encode_and_send(records);
  bench::print_header({"row", "flow records/s", "ratio to encode only", "sent", "lost (counted)", "datagrams received"},
                      "lrrrrr");
  bench::print_row({"encode into messages (baseline)", bench::fmt("%.3f M", base.records_per_s / 1e6), "1.00",
                    std::to_string(base.sent), "0", "-"});
  bench::print_row({"encode + send, one thread, local UDP", bench::fmt("%.3f M", sent.records_per_s / 1e6),
                    bench::fmt("%.2f", bench::ratio(sent.records_per_s, base.records_per_s)), std::to_string(sent.sent),
                    std::to_string(sent.lost), std::to_string(sent.received)});
  if (gnio.empty()) return 0;
  // The run rows: a UDP sink drains what --ipfix sends.
  test::UdpDrain sink;
  const std::string common = "--rx " + rx + " --flow-slots " + std::to_string(flow_slots);
  const double without = run_mpps(gnio, run_gpu, common);
  const double with = run_mpps(gnio, run_gpu, common + " --ipfix " + sink.url() +
                                         " --flow-active-timeout 1 --flow-idle-timeout 1");
  sink.stop();
  std::printf("\n");
  bench::print_header({"gnio run packet-processing (" + device + ")", "Mpps", "ratio to without export"}, "lrr");
  bench::print_row({"without --ipfix (baseline)", bench::fmt("%.3f", without), "1.00"});
  bench::print_row({"--ipfix udp, every flow exported every second", bench::fmt("%.3f", with),
                    bench::fmt("%.3f", bench::ratio(with, without))});
  return 0;
}
