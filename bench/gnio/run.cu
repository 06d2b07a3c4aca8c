// SPDX-License-Identifier: Apache-2.0
// gnio_bench: one table of what gnio's datapath delivers and what bounds it.
//
// Rows, each with its ratio to the floor or ceiling that bounds it, one
// section per file of this folder:
//  - floors: host<->device copy bandwidth, a kernel reading pinned host
//    memory, the persistent-kernel doorbell round trip, a kernel launch;
//  - the bare-ring ceiling: the same receive kernel fed by one host thread
//    that only copies prebuilt frames (mem=gpu) or descriptors (mem=host)
//    into a ring laid out as gnio/dev/ring.hpp says and publishes it;
//  - gnio: the NIC engine fed by the prebuilt source (mem:) and by the
//    generator (synthetic:), 64..8000 B, mem=host|gpu, 1..8 queues;
//  - the anti-patterns on the same packets: a launch per packet, a host
//    copy plus a launch per burst of 32 and of 256;
//  - TX from device and host memory payloads; echo latency at low load;
//  - with several devices (--gpu A,B): the gnio rows spread over them, and
//    whether a second device slows the first one's queues.
// Throughput rows run until their source has delivered, then count the
// packets the kernel finished in a fixed window.
#include <algorithm>
#include <cstdio>

#include "sections.hpp"
#include "../common/clock.hpp"
#include "../common/machine.hpp"
#include "gpu_choice.hpp"

using namespace gnio;

namespace {

// Each entry of --gpu, "auto" falling back to the emulated device as a
// single --gpu does; "all" is every CUDA device.
Result<std::vector<Gpu>> open_devices(const std::string& list) {
  if (list == "all") return Gpu::open_list(list);
  auto entries = Gpu::parse_list(list);
  if (!entries) return entries.status();
  std::vector<Gpu> gpus;
  for (const std::string& e : *entries) {
    auto g = examples::open_gpu(e, false);
    if (!g)
      return Status(g.status().code(), Layer::Gpu,
                    "--gpu " + list + ", entry \"" + e + "\": " + g.status().message());
    gpus.push_back(std::move(*g));
  }
  // Spelled out: nvcc does not move a local into a converting return.
  Result<std::vector<Gpu>> opened(std::move(gpus));
  return opened;
}

}  // namespace

int gnio_bench::run(Options o) {
  if (o.quick) {
    o.window_s = std::min(o.window_s, 0.05);
    o.samples = std::min(o.samples, 200u);
    o.frames = 256;
    o.ring = 1024;
    o.strides = 2048;
    o.burst = std::min(o.burst, o.ring / 4);  // a ring of four bursts, as in a full run
  }
  auto opened = open_devices(o.gpu);
  if (!opened) return examples::fail(opened.status());
  std::vector<Gpu*> gpus;
  for (Gpu& g : *opened) gpus.push_back(&g);
  // The sections of one device run on the first.
  Gpu* gpu = gpus.front();
  const auto started = bench::Clock::now();

  std::vector<Row> table;
  const Floors floors = floor_rows(*gpu, o, table);
  // Ceilings by size and ring memory; gnio rows are read against them.
  const std::vector<Row> ceilings = ceiling_rows(*gpu, o, floors, table);
  ceiling_anatomy_rows(*gpu, o, ceilings, table);
  const std::vector<Row> gnio_rows = gnio_rx_rows(gpus, o, ceilings, table);
  gnio_anatomy_rows(*gpu, o, ceilings, table);
  const std::vector<Row> anti = anti_pattern_rows(*gpu, o, ceilings, table);
  tx_rows(*gpu, o, floors, table);
  const std::vector<Row> echoes = echo_rows(*gpu, o, floors, table);
  gpus_rows(gpus, o, table);
  const std::vector<Target> targets =
      o.partial() ? std::vector<Target>{} : read_targets(floors, ceilings, gnio_rows, anti, echoes);

  std::string machine = bench::machine(*gpu);
  for (size_t d = 1; d < gpus.size(); ++d)
    machine += "; device " + std::to_string(d) + ": " +
               (gpus[d]->emulated() ? std::string("emulated") : gpus[d]->info().name) + " (" + gpus[d]->bus_id() + ")";
  print_table(machine, o, table, targets);
  std::printf("\nwall time: %.1f s\n", bench::secs_since(started));
  for (const Row& r : table)
    if (!r.ok) return 1;
  return 0;
}
