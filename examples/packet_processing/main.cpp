// SPDX-License-Identifier: Apache-2.0
// packet_processing's command line. CLI11 is parsed in this host-only file
// so that nvcc never compiles it.
#include <CLI/CLI.hpp>

#include "options.hpp"

int main(int argc, char** argv) {
  packet_processing::Options o;
  CLI::App app{
      "packet_processing: the reference gnio application. A persistent kernel classifies every packet in place\n"
      "and answers ICMP echo requests zero-copy from the RX ring."};
  app.add_option("--nic", o.nic, "RX spec: pcap:FILE[,loop=N][,pps=R], synthetic:..., loop:NAME")
      ->capture_default_str();
  app.add_option("--reply-out", o.reply_out, "TX spec for echo replies, e.g. pcap-out:replies.pcap (off when empty)");
  app.add_option("--gpu", o.gpu, "PCIe bus id, auto (first CUDA device, else the emulated device) or cpu")
      ->capture_default_str();
  app.add_option("--mem", o.mem, "RX ring memory: gpu (device, staged copies) or host (pinned, mapped)")
      ->capture_default_str();
  app.add_option("--scope", o.scope, "receive scope: thread, warp or block")->capture_default_str();
  app.add_option("--block", o.block, "threads per block")->capture_default_str();
  app.add_option("--burst", o.burst, "packets per receive")->capture_default_str();
  app.add_option("--strides", o.strides, "RX ring strides")->capture_default_str();
  app.add_option("--stride-size", o.stride, "bytes per stride")->capture_default_str();
  app.add_option("--timeout", o.timeout_s, "seconds to wait for the source to drain")->capture_default_str();
  app.add_flag("--verify", o.verify, "recount on the host and fail on any difference");
  app.add_flag("--quiet", o.quiet, "no progress lines");
  app.add_flag("--require-gpu", o.require_gpu, "with --gpu auto: exit 77 (skip) instead of falling back to cpu");
  app.footer("Example: packet_processing --nic pcap:data/sample.pcap --reply-out pcap-out:/tmp/replies.pcap --verify");
  CLI11_PARSE(app, argc, argv);
  return packet_processing::run(o);
}
