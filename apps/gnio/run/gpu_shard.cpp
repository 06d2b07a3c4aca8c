// SPDX-License-Identifier: Apache-2.0
#include "gpu_shard.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "packet_processing/report.hpp"

namespace gnio::cli {

void RecordReader::drain(std::vector<dev::app::Record>& out) {
  ring.drain([&](const dev::app::Record& in_ring) {
    dev::app::Record& r = out.emplace_back();
    dev::app::store_record(in_ring, &r);
    if ((r.kind == dev::app::kRecordDns && print_dns) || (r.kind == dev::app::kRecordHttp && print_http) ||
        (r.kind == dev::app::kRecordTls && print_tls))
      std::printf("%s\n", app::record_line(r).c_str());
  });
}

namespace {

Status bad_map(const std::string& map, const std::string& why) {
  return Status(Errc::InvalidValue, Layer::App,
                "--gpu-map " + map + ": " + why + "; write it as QUEUES:GPU,... e.g. 0-3:cpu,4-7:cpu:1, every queue "
                "once, each GPU one of --gpu");
}

bool parse_u32(const std::string& s, uint32_t& v) {
  if (s.empty() || s.size() > 5 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  v = static_cast<uint32_t>(std::stoul(s));
  return true;
}

}  // namespace

Result<std::vector<std::vector<uint32_t>>> map_queues(uint32_t queues, const std::vector<std::string>& gpu_names,
                                                      const std::vector<std::string>& gpu_ids,
                                                      const std::string& map) {
  const size_t g = gpu_ids.size();
  std::vector<std::vector<uint32_t>> out(g);
  if (queues < g)
    return Status(Errc::InvalidValue, Layer::App,
                  std::to_string(g) + " GPUs need at least as many RX queues (--queues " + std::to_string(queues) +
                      "): every GPU serves one or more");
  if (map.empty()) {
    for (uint32_t q = 0; q < queues; ++q) out[static_cast<size_t>(q) * g / queues].push_back(q);
    return out;
  }
  std::vector<int> owner(queues, -1);
  for (size_t pos = 0; pos <= map.size();) {
    const size_t comma = std::min(map.find(',', pos), map.size());
    std::string entry = map.substr(pos, comma - pos);
    pos = comma + 1;
    // A GPU name may hold ':' (a bus id, cpu:1): the queues end at the first.
    const size_t colon = entry.find(':');
    if (colon == std::string::npos) return bad_map(map, "\"" + entry + "\" has no ':'");
    const std::string range = entry.substr(0, colon), gpu = entry.substr(colon + 1);
    uint32_t lo = 0, hi = 0;
    const size_t dash = range.find('-');
    if (!parse_u32(range.substr(0, dash), lo) || !parse_u32(dash == std::string::npos ? range.substr(0, dash)
                                                                                     : range.substr(dash + 1), hi) ||
        hi < lo)
      return bad_map(map, "\"" + range + "\" is not a queue or a range like 0-3");
    if (hi >= queues)
      return bad_map(map, "queue " + std::to_string(hi) + " is beyond --queues " + std::to_string(queues));
    size_t which = g;
    for (size_t i = 0; i < g; ++i)
      if (gpu == gpu_names[i] || gpu == gpu_ids[i]) which = i;
    if (which == g) return bad_map(map, "\"" + gpu + "\" is not one of --gpu");
    for (uint32_t q = lo; q <= hi; ++q) {
      if (owner[q] >= 0) return bad_map(map, "queue " + std::to_string(q) + " is mapped twice");
      owner[q] = static_cast<int>(which);
      out[which].push_back(q);
    }
  }
  for (uint32_t q = 0; q < queues; ++q)
    if (owner[q] < 0) return bad_map(map, "queue " + std::to_string(q) + " is mapped to no GPU");
  for (size_t i = 0; i < g; ++i)
    if (out[i].empty()) return bad_map(map, "GPU " + gpu_ids[i] + " gets no queue");
  return out;
}

Status GpuShard::prepare(std::vector<EthRxq>& rxqs, const ShardConfig& c) {
  args = c.base;
  args.queues = static_cast<uint32_t>(queues.size());
  for (size_t i = 0; i < queues.size(); ++i) {
    auto g = GpuRxq::create(gpu, rxqs[queues[i]]);
    if (!g) return g.status();
    args.rxq[i] = g->handle();
    args.rxq_id[i] = static_cast<uint16_t>(queues[i]);
    grxqs.push_back(std::move(*g));
  }
  if (capture_txq) {
    auto g = GpuTxq::create(gpu, *capture_txq);
    if (!g) return g.status();
    args.capture = dev::Capture(g->handle());
    capture_gtxq = std::move(*g);
  }
  if (txq) {
    auto g = GpuTxq::create(gpu, *txq);
    if (!g) return g.status();
    args.txq = g->handle();
    args.tx = true;
    gtxq = std::move(*g);
  }
  auto sem = GpuSemaphore::create(gpu, c.record_items, sizeof(dev::app::Record));
  if (!sem) return sem.status();
  records = std::move(*sem);
  flow_slots = c.flow_slots;
  auto m_counters = gpu.alloc(app::counter::kCount * sizeof(uint64_t), MemKind::GpuCpu);
  // The flow table in device memory: its atomics stay in the GPU, and the
  // host reads it by copies (flows_now()). As managed memory, each of the
  // host's reads of a page moved it to the host and the kernel's next
  // update moved it back: the export's scan of a large table every second
  // cost a quarter of the packet rate.
  auto m_flows = gpu.alloc(size_t{c.flow_slots} * sizeof(dev::app::FlowEntry), MemKind::Gpu);
  auto m_claim = gpu.alloc(sizeof(uint64_t), MemKind::GpuCpu);
  auto m_consumed = gpu.alloc(sizeof(uint64_t), MemKind::CpuGpu);
  for (auto* m : {&m_counters, &m_flows, &m_claim, &m_consumed})
    if (!*m) return m->status();
  counters = std::move(*m_counters);
  flows = std::move(*m_flows);
  claim = std::move(*m_claim);
  consumed = std::move(*m_consumed);
  args.counters = static_cast<uint64_t*>(counters.device_ptr());
  args.flows = {static_cast<dev::app::FlowEntry*>(flows.device_ptr()), c.flow_slots - 1};
  if (c.eviction_items > 0) {
    auto items = gpu.alloc(size_t{c.eviction_items} * sizeof(dev::app::EvictedFlow), MemKind::GpuCpu);
    auto next = gpu.alloc(sizeof(uint64_t), MemKind::GpuCpu);
    for (auto* m : {&items, &next})
      if (!*m) return m->status();
    evicted_items = std::move(*items);
    evicted_next = std::move(*next);
    args.flows.evicted = {static_cast<dev::app::EvictedFlow*>(evicted_items.device_ptr()),
                          static_cast<uint64_t*>(evicted_next.device_ptr()), c.eviction_items - 1};
    evicted_host = {static_cast<dev::app::EvictedFlow*>(evicted_items.host_ptr()),
                    static_cast<uint64_t*>(evicted_next.host_ptr()), c.eviction_items - 1};
  }
  args.records = records->handle();
  args.record_claim = static_cast<uint64_t*>(claim.device_ptr());
  args.record_consumed = static_cast<const uint64_t*>(consumed.device_ptr());
  args.burst = c.burst;
  if (!c.filter.empty()) {
    auto f = FilterProgram::compile(gpu, c.filter);
    if (!f) return f.status();
    filter = std::move(*f);
    args.filter = filter.handle();
  }
  reader.ring = {&*records, static_cast<uint64_t*>(consumed.host_ptr())};
  return Status::ok();
}

Status GpuShard::launch(const std::vector<EthRxq>& rxqs, const ShardConfig& c) {
  LaunchConfig cfg;
  const uint32_t nq = static_cast<uint32_t>(queues.size());
  if (c.blocks != 0 && c.blocks < nq)
    return Status(Errc::InvalidValue, Layer::App,
                  "--blocks " + std::to_string(c.blocks) + " is fewer than the " + std::to_string(nq) +
                      " RX queues of " + gpu.bus_id() + ": every queue needs a block; give at least " +
                      std::to_string(nq) + " or 0 (one per queue)");
  cfg.grid = c.blocks != 0 ? c.blocks : nq;
  cfg.block = gpu.emulated() ? 1u : c.block;
  cfg.name = "packet_processing";
  cfg.stage_names.assign(std::begin(app::stage::kNames), std::end(app::stage::kNames));
  cfg.hang_timeout = std::chrono::milliseconds(static_cast<int64_t>(c.hang_timeout_s * 1000));
  // Block b has work while its queue holds packets delivered and not released.
  cfg.has_work = [&rxqs, ids = queues, nq](uint32_t b) {
    const RxqStats s = rxqs[ids[b % nq]].stats();
    return s.packets > s.released;
  };
  auto k = app::launch_packet_processing(gpu, cfg, args);
  if (!k) return k.status();
  kernel = std::move(*k);
  return Status::ok();
}

Status GpuShard::release_handles() {
  if (records)
    if (Status s = records->destroy(); !s) return s;
  if (gtxq)
    if (Status s = gtxq->destroy(); !s) return s;
  if (capture_gtxq)
    if (Status s = capture_gtxq->destroy(); !s) return s;
  for (GpuRxq& g : grxqs)
    if (Status s = g.destroy(); !s) return s;
  return Status::ok();
}

Status start_txq_per_gpu(EthDevice& dev, std::vector<GpuShard>& shards, uint32_t depth, uint32_t staging_slot,
                         std::optional<EthTxq> GpuShard::*member) {
  for (size_t i = 0; i < shards.size(); ++i) {
    auto t = dev.create_txq(static_cast<uint16_t>(i));
    if (!t) return Status(t.status().code(), t.status().layer(), "creating TX queue " + std::to_string(i) + ": " +
                                                                     t.status().message());
    Status s = t->set_depth(depth);
    if (s && staging_slot != 0) s = t->set_staging_slot_size(staging_slot);
    if (s) s = t->set_gpu(shards[i].gpu);
    if (s) s = t->start();
    if (!s)
      return Status(s.code(), s.layer(), "TX queue " + std::to_string(i) + " on " + shards[i].gpu.bus_id() + ": " +
                                             s.message());
    shards[i].*member = std::move(*t);
  }
  return Status::ok();
}

Result<std::span<const dev::app::FlowEntry>> GpuShard::flows_now(std::vector<dev::app::FlowEntry>& buffer) const {
  if (flows.host_ptr() != nullptr)
    return std::span<const dev::app::FlowEntry>(static_cast<const dev::app::FlowEntry*>(flows.host_ptr()), flow_slots);
  buffer.resize(flow_slots);
  GNIO_TRY(flows.copy_to_host(0, buffer.data(), size_t{flow_slots} * sizeof(dev::app::FlowEntry)));
  return std::span<const dev::app::FlowEntry>(buffer);
}

}  // namespace gnio::cli
