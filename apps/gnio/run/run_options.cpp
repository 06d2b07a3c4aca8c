// SPDX-License-Identifier: Apache-2.0
// The command line of `gnio run packet-processing`.
#include <arpa/inet.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "../commands.hpp"
#include "../options.hpp"
#include "packet_processing/pp_kernel.hpp"
#include "run_options.hpp"

namespace gnio::cli {

std::optional<std::string> check_run_options(const RunOptions& o) {
  if (o.rx.empty()) return "--rx SPEC is required, e.g. --rx pcap:data/captures/ping.pcap";
  if (o.queues == 0 || o.queues > app::PpArgs::kMaxQueues)
    return "--queues " + std::to_string(o.queues) + " is out of range 1.." +
           std::to_string(app::PpArgs::kMaxQueues);
  if (o.burst == 0 || o.burst > o.strides / 2)
    return "--burst " + std::to_string(o.burst) + " is out of range 1.." + std::to_string(o.strides / 2) +
           " (half of --strides " + std::to_string(o.strides) + ")";
  if (o.flow_slots == 0 || (o.flow_slots & (o.flow_slots - 1)) != 0)
    return "--flow-slots " + std::to_string(o.flow_slots) + " must be a power of two";
  if (o.mem != "gpu" && o.mem != "host") return "--mem must be gpu or host (got " + o.mem + ")";
  if (!o.capture.empty() && o.capture.rfind("pcapng-out:", 0) != 0)
    return "--capture " + o.capture + " is not a pcapng-out: spec; write it as --capture "
           "pcapng-out:FILE[,rotate=SIZE|DURATION] (the file records each packet's RX queue, time and flags)";
  if (o.capture_depth < 2 || (o.capture_depth & (o.capture_depth - 1)) != 0)
    return "--capture-depth " + std::to_string(o.capture_depth) + " must be a power of two, 2 or more";
  if (o.hang_timeout_s < 0) return "--hang-timeout " + std::to_string(o.hang_timeout_s) + " must be >= 0 (0: off)";
  return std::nullopt;
}

namespace {

bool parse_mac(const std::string& s, uint8_t (&mac)[6]) {
  unsigned v[6];
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6) return false;
  for (int i = 0; i < 6; ++i) {
    if (v[i] > 255) return false;
    mac[i] = static_cast<uint8_t>(v[i]);
  }
  return true;
}

}  // namespace

std::optional<std::string> parse_replies(const RunOptions& o, dev::app::ReplyConfig& c) {
  for (const std::string& ip : o.ips) {
    if (c.ipv4_count < c.kMaxAddrs && inet_pton(AF_INET, ip.c_str(), c.ipv4[c.ipv4_count]) == 1) {
      ++c.ipv4_count;
    } else if (c.ipv6_count < c.kMaxAddrs && inet_pton(AF_INET6, ip.c_str(), c.ipv6[c.ipv6_count]) == 1) {
      ++c.ipv6_count;
    } else {
      return "--ip " + ip + " is not an IPv4 or IPv6 address (or more than 4 of a family were given)";
    }
  }
  if (!o.mac.empty()) {
    if (!parse_mac(o.mac, c.mac)) return "--mac " + o.mac + " is not a MAC address like 02:00:00:00:00:01";
    c.has_mac = true;
  }
  c.udp_echo_port = o.udp_echo;
  return std::nullopt;
}

void add_run_command(CLI::App& app) {
  CLI::App* run = app.add_subcommand("run", "Run an application on the GPU datapath");
  run->require_subcommand(1);
  auto o = std::make_shared<RunOptions>();
  CLI::App* pp = run->add_subcommand(
      "packet-processing",
      "The reference application: classify every packet on the GPU (L2-L4, DNS, HTTP, TLS SNI, checksums, "
      "malformed by reason), track flows in GPU memory, hand DNS/HTTP/TLS records to the host, answer "
      "ICMP/ICMPv6 echo, ARP, neighbour solicitations and UDP echo zero-copy from the RX buffer");
  pp->add_option("--rx", o->rx, "RX spec: pcap:FILE[,loop=N][,pps=R], synthetic:..., loop:NAME")->required();
  pp->add_option("--tx", o->tx, "TX spec for replies, e.g. pcap-out:FILE or loop:NAME (no replies without it)");
  pp->add_option("--gpu", o->gpu,
                 "auto (first CUDA GPU, else the emulated device), a PCIe bus id, cpu:N (emulated device N; cpu is "
                 "cpu:0), a comma-separated list of these (one context and one kernel per GPU), or all")
      ->capture_default_str();
  pp->add_option("--gpu-map", o->gpu_map,
                 "which RX queues each GPU serves, e.g. 0-3:0000:06:00.0,4-7:0000:07:00.0 (default: contiguous "
                 "runs of queues spread evenly)")
      ->type_name("QUEUES:GPU,...");
  pp->add_option("--queues", o->queues, "RX queues, one kernel block each (RSS spreads flows)")->capture_default_str();
  pp->add_option("--duration", o->duration_s, "stop after S seconds (default: at the end of the input or on SIGINT)");
  pp->add_option("--count", o->count, "stop after about N packets");
  pp->add_option("--json", o->json_out, "write the full report (schema versioned) to FILE")->type_name("FILE");
  pp->add_option("--flows-out", o->flows_out, "write the flow table to FILE: CSV if it ends in .csv, else JSON lines")
      ->type_name("FILE");
  pp->add_option("--flows-interval", o->flows_interval_s, "also export the flow table every S seconds");
  pp->add_option("--top", o->top, "flows in the summary and the report")->capture_default_str();
  pp->add_option("--ip", o->ips, "an address of ours (IPv4 or IPv6; repeat): echo, ARP and ND answer only these");
  pp->add_option("--mac", o->mac, "our MAC: the source of replies; needed for ARP replies and neighbour adverts");
  pp->add_option("--udp-echo", o->udp_echo, "answer UDP datagrams to this port with the same payload (0: off)");
  pp->add_option("--print", o->print, "print records as they arrive: dns,http,tls");
  pp->add_option("--filter", o->filter,
                 "analyse only the packets a tcpdump expression matches (pcap-filter(7), compiled by libpcap, run "
                 "on the GPU); the others are counted as filtered and released")
      ->type_name("EXPR");
  pp->add_option("--capture", o->capture,
                 "write the packets --filter matched (all without it) to pcapng, recorded on the GPU: "
           "pcapng-out:FILE[,snaplen=N][,rotate=SIZE|DURATION][,files=N]; an interface per RX queue (rxq0...), "
                 "each packet with its RX timestamp (ns), epb_flags inbound with the checksum state, and its whole "
                 "length (frames over 2048 bytes are kept cut); the kernel never waits for the writer: packets it "
                 "cannot hand over are counted (capture ring_full), as are those the writer fails (report, "
                 "/metrics). May be given with --tx")
      ->type_name("pcapng-out:FILE[,...]");
  pp->add_option("--capture-depth", o->capture_depth,
                 "descriptors of each GPU's capture ring (power of two): how far the writer may fall behind")
      ->capture_default_str();
  pp->add_option("--decap", o->decap,
                 "tunnels whose inner packet is classified (flows keyed by the inner 5-tuple and the tunnel id): "
                 "none, all, or a list of mpls, gre, ipip, vxlan, geneve, gtpu; others by their outer headers")
      ->type_name("none|all|LIST")
      ->capture_default_str();
  pp->add_option("--mem", o->mem, "RX ring memory: gpu or host")->capture_default_str();
  pp->add_option("--block", o->block, "threads per block (1 on the emulated device)")->capture_default_str();
  pp->add_option("--blocks", o->blocks,
                 "kernel blocks per GPU, at least its queues (block b serves its queue b % queues); 0: one per queue")
      ->capture_default_str();
  pp->add_option("--burst", o->burst,
                 "packets a block receives at a time, a thread each (more than --block: threads take several); up "
                 "to half of --strides, whatever the backend's own burst")
      ->capture_default_str();
  pp->add_option("--strides", o->strides, "RX ring strides (2048 bytes each)")->capture_default_str();
  pp->add_option("--flow-slots", o->flow_slots, "flow table slots (power of two)")->capture_default_str();
  pp->add_flag("--require-gpu", o->require_gpu, "with --gpu auto (alone or in a list): exit 77 (skip) when there is no CUDA GPU");
  pp->add_flag("--quiet", o->quiet, "no live progress line");
  pp->add_option("--log-level", o->log_level,
                 "library log level: error|warn|info|debug|trace (overrides GNIO_LOG_LEVEL; default warn)")
      ->check(CLI::IsMember({"error", "warn", "info", "debug", "trace"}));
  pp->add_option("--metrics", o->metrics,
                 "serve Prometheus metrics on http://ADDR:PORT/metrics while the run goes (queues, TX queue, kernel "
                 "blocks, protocol counts; labels queue/gpu/backend/block); port 0 picks a free one, the address "
                 "bound is printed once (\"metrics http://...\") and logged at info")
      ->type_name("ADDR:PORT");
  pp->add_flag("--metrics-allow-remote", o->metrics_allow_remote,
               "allow --metrics on a non-loopback address (exposes the counters to the network)");
  pp->add_option("--hang-timeout", o->hang_timeout_s,
                 "seconds a block's heartbeat may stand still while its queue has packets waiting before it is "
                 "reported hung (logged at warn, gnio_kernel_hung in the metrics, HUNG in gnio top); 0: off")
      ->capture_default_str();
  pp->add_option("--snapshot-dir", o->snapshot_dir,
                 "save the capability snapshot of the run's NIC spec and GPU at start to "
                 "DIR/caps-<UTC time>-<gpu>.json (printed as \"snapshot FILE\"); compare later with "
                 "gnio caps --diff FILE")
      ->type_name("DIR");
  add_export_options(*pp, *o);
  pp->footer(
      "Examples:\n"
      "  gnio run packet-processing --rx pcap:data/captures/dns.pcap --print dns --json report.json\n"
      "  gnio run packet-processing --rx pcap:data/captures/ping.pcap --tx pcap-out:replies.pcap \\\n"
      "      --ip 10.77.0.1 --ip fd77::1 --mac 02:00:00:00:00:01\n"
      "  gnio run packet-processing --rx synthetic:count=1000000,proto=mix --flows-out flows.csv\n"
      "  gnio run packet-processing --rx pcap:data/captures/dns.pcap --filter 'udp port 53' \\\n"
      "      --capture pcapng-out:dns.pcapng,rotate=100M\n"
      "  gnio run packet-processing --rx synthetic:count=0,pps=100000 --metrics 127.0.0.1:9400 &\n"
      "      gnio top --url http://127.0.0.1:9400/metrics\n\n"
      "Signals: the first SIGINT or SIGTERM stops the kernel (after it finishes the burst it holds), flushes\n"
      "the TX output, prints the summary (offered = delivered + dropped) and exits 0; a second SIGINT exits\n"
      "at once with status 130.");
  pp->callback([o] { exit_with(run_packet_processing(*o)); });
}

}  // namespace gnio::cli
