// SPDX-License-Identifier: Apache-2.0
// gnio_bench's rows for several devices in one process, one receive kernel
// each. Does a second device slow the first one's queues (the first alone,
// then the same queues with the second device receiving beside it), and
// what do two devices give against one (the same queues on the first
// device, then spread over both)? Each pair is measured in the same run.
#include "sections.hpp"
#include "../common/table.hpp"
#include "gnio/gpu.hpp"

using namespace gnio;
using bench::fmt;

namespace gnio_bench {

namespace {

Row renamed(Row r, const std::string& name, uint32_t queues) {
  r.name = name;
  r.queues = queues;
  r.bound.clear();
  r.ratio = 0;
  return r;
}

void bound_by(Row& r, const char* what, const Row& base) {
  r.bound = fmt(what, base.mpps());
  r.ratio = bench::ratio(r.mpps(), base.mpps());
}

}  // namespace

void gpus_rows(const std::vector<Gpu*>& gpus, const Options& o, std::vector<Row>& table) {
  if (!o.runs("gpus") || gpus.size() < 2) return;
  Gpu* first = gpus[0];
  Gpu* second = gpus[1];
  const uint32_t q = o.queue_counts.front();
  const uint32_t size = o.sizes.front();
  for (RingMem m : {RingMem::Host, RingMem::Gpu}) {
    const std::string mem = std::string(", mem=") + mem_name(m);
    const RxRun alone = gnio_rx_on({first}, {q}, o, {size, m, q, true});
    const RxRun both = gnio_rx_on({first, second}, {q, q}, o, {size, m, 2 * q, true});
    const RxRun one = gnio_rx_on({first}, {2 * q}, o, {size, m, 2 * q, true});

    Row a = renamed(alone.total, "gpus: first device's queues, alone" + mem, q);
    a.result = "on " + first->bus_id();
    table.push_back(a);

    Row beside{"gpus: first device's queues, second device beside it" + mem, size, q};
    beside.ok = false;
    if (both.per_device.size() == 2) {
      beside = renamed(both.per_device[0], beside.name, q);
      beside.ok = both.total.ok;
      beside.result = "on " + first->bus_id() + fmt(", beside %.2f Mpps", both.per_device[1].mpps()) + " on " +
                      second->bus_id();
    }
    bound_by(beside, "alone %.2f Mpps", a);
    table.push_back(beside);

    Row on_one = renamed(one.total, "gpus: all queues on the first device" + mem, 2 * q);
    on_one.result = "on " + first->bus_id();
    table.push_back(on_one);

    Row spread = renamed(both.total, "gpus: the same queues spread over both devices" + mem, 2 * q);
    if (both.per_device.size() == 2)
      spread.result = fmt("%.2f Mpps", both.per_device[0].mpps()) + " on " + first->bus_id() +
                      fmt(" + %.2f Mpps", both.per_device[1].mpps()) + " on " + second->bus_id();
    bound_by(spread, "one device %.2f Mpps", on_one);
    table.push_back(spread);
  }
}

}  // namespace gnio_bench
