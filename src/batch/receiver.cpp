// SPDX-License-Identifier: Apache-2.0
// BatchReceiver: the device, its queues on one GPU, the batch pool and the
// semaphore, the kernel, and the host's side of the exchange (which batch
// is next, which buffers the host holds, the accounting).
#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "gnio/batch.hpp"
#include "gnio/dev/batch.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "launch.hpp"

namespace gnio {

std::string_view batch_drop_reason_name(BatchDropReason r) {
  constexpr std::array<std::string_view, kBatchDropReasons> names{"ring_full", "empty",  "oversize",     "malformed",
                                                                   "pool_full", "closed", "flat_oversize"};
  const auto i = static_cast<size_t>(r);
  return i < names.size() ? names[i] : "unknown";
}

std::string_view batch_layout_name(BatchLayout l) { return l == BatchLayout::Flat ? "flat" : "padded"; }

namespace detail {

struct BatchReceiverImpl {
  BatchConfig cfg;
  Gpu gpu;
  EthDevice dev;
  std::vector<EthRxq> rxqs;
  std::vector<GpuRxq> handles;
  GpuSemaphore sem;
  DeviceMemory pool;
  DeviceMemory counters;  // one dev::BatchBlockCounters per block, pinned host
  dev::BatchPool view;
  PersistentKernel kernel;
  uint32_t grid = 0;

  mutable std::mutex mu;  // everything below
  std::vector<uint64_t> next_seq;  // per block: the seq next() hands out next
  std::vector<bool> held;          // per buffer: returned by next(), not released
  std::vector<BatchQueueStats> per_queue;
  uint32_t rotate = 0;
  bool closed = false;

  const dev::BatchBlockCounters& block_counters(uint32_t b) const {
    return static_cast<const dev::BatchBlockCounters*>(counters.host_ptr())[b];
  }
  dev::BatchInfo info(uint32_t buffer) const {
    dev::BatchInfo i{};
    std::memcpy(&i, sem.payload(buffer), sizeof(i));
    return i;
  }
  // A Ready buffer whose batch is the next of its block, or none.
  std::optional<uint32_t> next_ready() {
    for (uint32_t k = 0; k < view.buffers; ++k) {
      const uint32_t b = (rotate + k) % view.buffers;
      if (held[b] || sem.status(b) != dev::SemStatus::Ready) continue;
      const dev::BatchInfo i = info(b);
      if (i.block < grid && i.seq == next_seq[i.block]) {
        rotate = b + 1;
        return b;
      }
    }
    return std::nullopt;
  }
  BatchRef take(uint32_t b) {
    const dev::BatchInfo i = info(b);
    held[b] = true;
    sem.set_status(b, dev::SemStatus::Hold);
    ++next_seq[i.block];
    BatchQueueStats& q = per_queue[i.queue];
    q.delivered += i.count;
    q.delivered_bytes += i.bytes;
    ++q.batches;
    return {b, i.count, static_cast<uint16_t>(i.queue), i.flags, i.seq, i.bytes};
  }
  // Gives a Ready batch nobody will take back to the kernel, as dropped(closed).
  void discard(uint32_t b) {
    const dev::BatchInfo i = info(b);
    ++next_seq[i.block];
    per_queue[i.queue].dropped[static_cast<size_t>(BatchDropReason::Closed)] += i.count;
    sem.set_status(b, dev::SemStatus::Free);
  }
  void discard_ready() {
    while (auto b = next_ready()) discard(*b);
  }
  // Packets each queue's blocks received, handed over and dropped as pool_full.
  struct KernelCounts {
    uint64_t received = 0, handed = 0, pool_full = 0, flat_oversize = 0;
  };
  std::vector<KernelCounts> kernel_counts() const {
    std::vector<KernelCounts> k(rxqs.size());
    for (uint32_t b = 0; b < grid; ++b) {
      const dev::BatchBlockCounters& c = block_counters(b);
      KernelCounts& q = k[b % rxqs.size()];
      // Pairs with the block's release of `handed` after the Ready status.
      q.handed += dev::load_acquire(const_cast<uint64_t*>(&c.handed));
      q.received += dev::load_acquire(const_cast<uint64_t*>(&c.received));
      q.pool_full += dev::load_acquire(const_cast<uint64_t*>(&c.pool_full));
      q.flat_oversize += dev::load_acquire(const_cast<uint64_t*>(&c.flat_oversize));
    }
    return k;
  }
  // Every packet published to the rings was received and is in a Ready
  // batch or dropped.
  bool kernel_drained() const {
    const auto k = kernel_counts();
    for (size_t q = 0; q < rxqs.size(); ++q)
      if (k[q].received != rxqs[q].stats().packets ||
          k[q].handed + k[q].pool_full + k[q].flat_oversize != k[q].received)
        return false;
    return true;
  }
};

}  // namespace detail

namespace {

Status invalid(const std::string& what) { return {Errc::InvalidValue, Layer::App, what}; }

Status check(const BatchConfig& c) {
  if (c.spec.empty()) return invalid("batch receive needs a spec (pcap:FILE, synthetic:..., afxdp:IF, ...); got none");
  if (c.batch < 1 || c.batch > (1u << 20))
    return invalid("batch=" + std::to_string(c.batch) + " is outside 1..1048576 packets; pass a batch size in range");
  if (c.layout == BatchLayout::Padded && (c.snap < 1 || c.snap > 65535))
    return invalid("snap=" + std::to_string(c.snap) + " is outside 1..65535 bytes; pass a snap length in range");
  if (c.layout != BatchLayout::Padded && c.layout != BatchLayout::Flat)
    return invalid("layout=" + std::to_string(static_cast<int>(c.layout)) + " is neither padded nor flat");
  if (c.layout == BatchLayout::Padded && c.flat_bytes != 0)
    return invalid("flat_bytes=" + std::to_string(c.flat_bytes) +
                   " applies to the flat layout only; pass layout flat, or leave flat_bytes 0");
  if (c.flat_bytes > UINT32_MAX)
    return invalid("flat_bytes=" + std::to_string(c.flat_bytes) +
                   " is more than the 4294967295 bytes uint32 offsets address; pass a smaller buffer");
  if (c.queues > dev::RxQueueSet::kMax)
    return invalid("queues=" + std::to_string(c.queues) + " is more than the " +
                   std::to_string(dev::RxQueueSet::kMax) + " a batch kernel serves; pass fewer");
  if (c.burst < 1) return invalid("burst=0: the kernel must take at least 1 packet per receive; pass burst >= 1");
  if (c.timeout.count() < 0) return invalid("timeout must not be negative; pass 0 or more microseconds");
  return Status::ok();
}

constexpr size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace

Result<BatchReceiver> BatchReceiver::open(const BatchConfig& cfg) {
  GNIO_TRY(check(cfg));
  auto impl = std::make_shared<detail::BatchReceiverImpl>();
  detail::BatchReceiverImpl& r = *impl;
  r.cfg = cfg;
  auto gpu = cfg.gpu == "auto" ? Gpu::open_or_emulated("auto") : Gpu::open(cfg.gpu);
  if (!gpu) return gpu.status();
  r.gpu = std::move(*gpu);
  auto dev = EthDevice::open(cfg.spec);
  if (!dev) return dev.status();
  r.dev = std::move(*dev);
  const uint32_t nq = cfg.queues ? cfg.queues : std::min<uint32_t>(r.dev.caps().max_rx_queues, dev::RxQueueSet::kMax);
  if (nq > r.dev.caps().max_rx_queues)
    return invalid("queues=" + std::to_string(nq) + " but " + cfg.spec + " offers " +
                   std::to_string(r.dev.caps().max_rx_queues) + " RX queues; pass queues <= that (e.g. the spec's queues=N)");
  r.cfg.queues = nq;
  r.grid = nq;
  const uint32_t buffers = cfg.buffers ? cfg.buffers : 4 * nq;
  if (buffers < nq)
    return invalid("buffers=" + std::to_string(buffers) + " is fewer than one per queue (" + std::to_string(nq) +
                   "); pass buffers >= queues");
  r.cfg.buffers = buffers;
  if (r.cfg.when_full == WhenFull::Auto) r.cfg.when_full = r.dev.caps().drops_when_full ? WhenFull::Drop : WhenFull::Wait;

  for (uint32_t id = 0; id < nq; ++id) {
    auto rxq = r.dev.create_rxq(static_cast<uint16_t>(id));
    if (!rxq) return rxq.status();
    RxOffloads off;
    off.rss_hash = cfg.rss_hash;
    for (Status s : {rxq->set_ring_mem(cfg.ring_in_host ? RingMem::Host : RingMem::Gpu), rxq->set_rx_offloads(off),
                     rxq->set_gpu(r.gpu), rxq->start()})
      GNIO_TRY(s);
    auto h = GpuRxq::create(r.gpu, *rxq);
    if (!h) return h.status();
    r.handles.push_back(std::move(*h));
    r.rxqs.push_back(std::move(*rxq));
  }

  // By default the longest frame a queue delivers always fits an empty buffer.
  const bool flat = cfg.layout == BatchLayout::Flat;
  if (flat && cfg.flat_bytes == 0) {
    r.cfg.flat_bytes = uint64_t{cfg.batch} * 1536;
    for (const EthRxq& q : r.rxqs) r.cfg.flat_bytes = std::max<uint64_t>(r.cfg.flat_bytes, q.max_packet_size());
  }
  r.cfg.flat_bytes = std::min<uint64_t>(r.cfg.flat_bytes, UINT32_MAX);
  const size_t flat_stride = align_up(r.cfg.flat_bytes, 256);

  // One allocation: data, then lengths, timestamps, rss hashes, queue ids, offsets.
  const size_t slots = size_t{buffers} * cfg.batch;
  const size_t data_bytes = flat ? flat_stride * buffers : align_up(slots * cfg.snap, 256);
  const size_t len_at = data_bytes, ts_at = align_up(len_at + slots * 4, 256);
  const size_t rss_at = align_up(ts_at + slots * 8, 256), q_at = align_up(rss_at + slots * 4, 256);
  const size_t off_at = align_up(q_at + slots * 2, 256);
  const size_t total = align_up(off_at + (flat ? (slots + buffers) * 4 : 0), 256);
  auto pool = r.gpu.alloc(total, MemKind::Gpu);
  if (!pool) return pool.status();
  r.pool = std::move(*pool);
  auto* base = static_cast<uint8_t*>(r.pool.device_ptr());
  r.view = {base,
            reinterpret_cast<uint32_t*>(base + len_at),
            reinterpret_cast<uint64_t*>(base + ts_at),
            reinterpret_cast<uint32_t*>(base + rss_at),
            reinterpret_cast<uint16_t*>(base + q_at),
            cfg.batch,
            flat ? 0 : cfg.snap,
            buffers,
            flat ? reinterpret_cast<uint32_t*>(base + off_at) : nullptr,
            static_cast<uint32_t>(r.cfg.flat_bytes),
            flat_stride};
  auto sem = GpuSemaphore::create(r.gpu, buffers, sizeof(dev::BatchInfo));
  if (!sem) return sem.status();
  r.sem = std::move(*sem);
  auto counters = r.gpu.alloc(sizeof(dev::BatchBlockCounters) * r.grid, MemKind::CpuGpu);
  if (!counters) return counters.status();
  r.counters = std::move(*counters);

  r.next_seq.assign(r.grid, 0);
  r.held.assign(buffers, false);
  r.per_queue.resize(nq);
  for (uint32_t q = 0; q < nq; ++q) r.per_queue[q].queue = static_cast<uint16_t>(q);

  dev::BatchKernel k{};
  for (const GpuRxq& h : r.handles) {
    k.queue_ids[k.queues.count] = static_cast<uint16_t>(k.queues.count);
    k.queues.rxq[k.queues.count++] = h.handle();
  }
  k.sem = r.sem.handle();
  k.pool = r.view;
  k.counters = static_cast<dev::BatchBlockCounters*>(r.counters.device_ptr());
  k.burst = cfg.burst;
  k.timeout_ns = static_cast<uint64_t>(cfg.timeout.count()) * 1000;
  k.drop_when_full = r.cfg.when_full == WhenFull::Drop;
  LaunchConfig lc;
  lc.grid = r.grid;
  lc.block = 256;
  lc.name = "gnio_batch";
  auto kernel = batch::launch_batch_kernel(r.gpu, lc, k);
  if (!kernel) return kernel.status();
  r.kernel = std::move(*kernel);
  return BatchReceiver(std::move(impl));
}

Result<BatchNext> BatchReceiver::next(std::chrono::milliseconds timeout) {
  if (!impl_) return Status(Errc::BadState, Layer::App, "next() on an empty BatchReceiver; open() one first");
  detail::BatchReceiverImpl& r = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (uint32_t spins = 0;; ++spins) {
    {
      std::lock_guard lock(r.mu);
      if (r.closed)
        return Status(Errc::BadState, Layer::App, "next() after close(): the receiver of " + r.cfg.spec +
                                                      " is closed; open a new one");
      if (auto b = r.next_ready()) return BatchNext{BatchNext::What::Batch, r.take(*b)};
      // The source ended, the kernel released everything and no batch is
      // being filled or waits: nothing more will come.
      const bool ended = std::all_of(r.rxqs.begin(), r.rxqs.end(), [](const EthRxq& q) { return q.at_end(); });
      if (ended && r.kernel_drained() && !r.next_ready()) return BatchNext{BatchNext::What::End, {}};
    }
    if (std::chrono::steady_clock::now() >= deadline) return BatchNext{BatchNext::What::Timeout, {}};
    std::this_thread::sleep_for(std::chrono::microseconds(spins < 64 ? 10 : 100));
  }
}

Status BatchReceiver::release(uint32_t buffer) {
  if (!impl_) return Status(Errc::BadState, Layer::App, "release() on an empty BatchReceiver");
  detail::BatchReceiverImpl& r = *impl_;
  std::lock_guard lock(r.mu);
  if (buffer >= r.held.size() || !r.held[buffer])
    return Status(Errc::BadState, Layer::App,
                  "batch buffer " + std::to_string(buffer) + " is not held (released twice, or never returned by "
                  "next()); release each batch once");
  r.held[buffer] = false;
  // Pairs with the kernel's acquire of the status in take_free(): the
  // host's reads of the buffer are done before the kernel overwrites it.
  r.sem.set_status(buffer, dev::SemStatus::Free);
  return Status::ok();
}

BatchArrays BatchReceiver::arrays(uint32_t buffer) const {
  if (!impl_ || buffer >= impl_->view.buffers) return {};
  const dev::BatchPool& p = impl_->view;
  const size_t first = size_t{buffer} * p.capacity;
  if (p.flat_bytes)
    return {p.data + buffer * p.flat_stride, p.lengths + first,  p.timestamps + first,
            p.rss_hash + first,              p.queue + first,    p.offsets + first + buffer};
  return {p.data + first * p.snap, p.lengths + first, p.timestamps + first, p.rss_hash + first, p.queue + first};
}

BatchStats BatchReceiver::stats() const {
  BatchStats s;
  if (!impl_) return s;
  detail::BatchReceiverImpl& r = *impl_;
  std::lock_guard lock(r.mu);
  const auto k = r.kernel_counts();
  for (size_t q = 0; q < r.rxqs.size(); ++q) {
    BatchQueueStats qs = r.per_queue[q];
    const RxqStats rs = r.rxqs[q].stats();
    qs.offered = rs.offered;
    for (size_t d = 0; d < kDropReasons; ++d) qs.dropped[d] += rs.dropped[d];
    qs.dropped[static_cast<size_t>(BatchDropReason::PoolFull)] = k[q].pool_full;
    qs.dropped[static_cast<size_t>(BatchDropReason::FlatOversize)] = k[q].flat_oversize;
    uint64_t accounted = qs.delivered;
    for (uint64_t d : qs.dropped) accounted += d;
    qs.in_flight = qs.offered > accounted ? qs.offered - accounted : 0;
    s.queues.push_back(qs);
    BatchQueueStats& t = s.total;
    t.offered += qs.offered;
    t.delivered += qs.delivered;
    t.delivered_bytes += qs.delivered_bytes;
    t.batches += qs.batches;
    for (size_t d = 0; d < kBatchDropReasons; ++d) t.dropped[d] += qs.dropped[d];
    t.in_flight += qs.in_flight;
  }
  s.buffers = r.view.buffers;
  s.held = static_cast<uint32_t>(std::count(r.held.begin(), r.held.end(), true));
  return s;
}

Status BatchReceiver::close(std::chrono::milliseconds drain) {
  if (!impl_) return Status::ok();
  detail::BatchReceiverImpl& r = *impl_;
  std::lock_guard lock(r.mu);
  if (r.closed) return Status::ok();
  r.closed = true;
  Status first;
  auto keep = [&](Status s) {
    if (!s && first) first = std::move(s);
  };
  for (EthRxq& q : r.rxqs) keep(q.stop_source());
  // Let the kernel receive what the rings still hold, giving back the
  // batches nobody will take so that it has buffers to fill.
  const auto deadline = std::chrono::steady_clock::now() + drain;
  while (std::chrono::steady_clock::now() < deadline) {
    r.discard_ready();
    if (r.kernel_drained()) break;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  keep(r.kernel.stop());
  r.discard_ready();  // the partly filled batches the blocks flushed at stop
  const auto k = r.kernel_counts();
  for (size_t q = 0; q < r.rxqs.size(); ++q) {
    const uint64_t published = r.rxqs[q].stats().packets;
    if (published > k[q].received)
      r.per_queue[q].dropped[static_cast<size_t>(BatchDropReason::Closed)] += published - k[q].received;
  }
  for (GpuRxq& h : r.handles) keep(h.destroy());
  for (EthRxq& q : r.rxqs) keep(q.stop());
  return first;
}

bool BatchReceiver::closed() const {
  if (!impl_) return true;
  std::lock_guard lock(impl_->mu);
  return impl_->closed;
}

const BatchConfig& BatchReceiver::config() const {
  static const BatchConfig none;
  return impl_ ? impl_->cfg : none;
}

bool BatchReceiver::emulated() const { return impl_ && impl_->gpu.emulated(); }

int BatchReceiver::cuda_ordinal() const { return impl_ ? impl_->gpu.ordinal() : -1; }

const std::string& BatchReceiver::gpu_name() const {
  static const std::string none;
  return impl_ ? impl_->gpu.bus_id() : none;
}

}  // namespace gnio
