#include "engine/rx_engine.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "core/log.hpp"
#include "engine/engine_thread.hpp"
#include "engine/rx_metadata.hpp"
#include "engine/stream_ops.hpp"
#include "eth/eth_impl.hpp"
#include "gnio/dev/atomic.hpp"
#include "gnio/dev/headers.hpp"
#include "gnio/dev/thread.hpp"
#include "gpu/cuda_util.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio::detail {

namespace {

// A ring in device memory is published once this many bytes of strides
// and this many descriptors (at most an eighth of the ring) wait, or the
// larger byte count alone: each copy then moves at least 256 KiB under
// load, and the CUDA calls of a publication, which engine threads make
// one at a time, are spread over many small frames (with 128 frames per
// publication 4 threads spent 61 % of their time in them on the H200). A
// ring in host memory is published once this many descriptors wait. Either
// sooner when the backend had nothing more.
constexpr uint64_t kPublishBytesStaged = 256 * 1024;
constexpr uint64_t kPublishDescsStaged = 1024;
constexpr uint64_t kPublishBytesStagedMax = 4 * 1024 * 1024;
constexpr uint64_t kPublishDescsHost = 256;

// By DMA: a run of frames cut short by the next frame (the backend's
// buffers and the ring's strides differ in size, so runs do not grow) is
// copied by the CPU into the staging mirror when it is shorter than this,
// where consecutive ones form one range: a cudaMemcpyAsync call costs the
// host microseconds, a CPU copy of a few KiB less (a choice, not measured).
constexpr uint64_t kMinDmaRunBytes = 16 * 1024;

// Which engine thread serves `q`, on which core, polling how.
struct Placement {
  uint16_t index;
  int core;
  bool busy;
};

Placement placement_of(const RxqImpl& q) {
  const EnginePlacement& p = q.dev->placement;
  Placement out{};
  out.index = q.engine_thread >= 0 ? static_cast<uint16_t>(q.engine_thread)
              : p.threads > 0      ? static_cast<uint16_t>(q.queue_id % p.threads)
                                   : q.queue_id;
  out.core = q.engine_core != -2 ? q.engine_core : p.cores.empty() ? -1 : p.cores[out.index % p.cores.size()];
  out.busy = q.busy_poll >= 0 ? q.busy_poll == 1 : p.busy_poll;
  return out;
}

// Strides of 2^shift bytes a packet of `len` bytes takes.
uint32_t strides_for(uint32_t len, uint32_t shift) { return (len + (1u << shift) - 1) >> shift; }

// The first of `need` contiguous strides at or after `head` in a ring of
// `nstrides`: a packet does not wrap, it starts over at slot 0.
uint64_t stride_pos(uint64_t head, uint32_t need, uint64_t nstrides) {
  const uint64_t slot = head & (nstrides - 1);
  return slot + need > nstrides ? head + nstrides - slot : head;
}

// The PacketFlags a backend's RxFrameFlags stand for (all describe() adds without offloads).
uint32_t flag_bits(uint32_t frame_flags) {
  uint32_t out = 0;
  if (frame_flags & backend::RxFrameTruncated) out |= dev::bit(dev::PacketFlags::FrameTruncated);
  if (frame_flags & backend::RxFrameSyntheticL2) out |= dev::bit(dev::PacketFlags::SyntheticL2);
  return out;
}

Result<std::shared_ptr<EngineThread>> thread_for(RxqImpl& q) {
  const Placement want = placement_of(q);
  std::lock_guard lock(q.dev->engine_mu);
  std::weak_ptr<EngineThread>& slot = q.dev->engine_threads[want.index];
  if (auto t = slot.lock()) {
    if (t->core() != want.core || t->busy_poll() != want.busy)
      return Status(Errc::InvalidValue, Layer::Eth,
                    "RX queue " + std::to_string(q.queue_id) + " asks engine thread " + std::to_string(want.index) +
                        " for core " + std::to_string(want.core) + (want.busy ? ", busy poll" : ", back-off") +
                        ", but that thread already runs on core " + std::to_string(t->core()) +
                        (t->busy_poll() ? ", busy poll" : ", back-off") +
                        "; give queues sharing a thread the same core and poll mode");
    return t;
  }
  auto t = std::make_shared<EngineThread>(want.core, want.busy);
  slot = t;
  return t;
}

}  // namespace

RxEngine::RxEngine(RxqImpl& q)
    : q_(q),
      be_(*q.dev->backend),
      wire_(be_.caps().drops_when_full),
      offloads_(q.offloads),
      plain_(!q.offloads.packet_type && !q.offloads.checksum && !q.offloads.rss_hash),
      burst_(q.burst_size),
      max_frame_(q.max_packet_size) {}

Result<std::unique_ptr<RxEngine>> RxEngine::start(RxqImpl& q) {
  std::unique_ptr<RxEngine> e(new RxEngine(q));
  GNIO_TRY(e->allocate());
  auto t = thread_for(q);
  if (!t) return t.status();
  e->thread_ = std::move(*t);
  GNIO_TRY(e->thread_->attach(e.get()));
  return e;
}

Result<std::unique_ptr<RxEngine>> RxEngine::create_unattached(RxqImpl& q) {
  std::unique_ptr<RxEngine> e(new RxEngine(q));
  GNIO_TRY(e->allocate());
  return e;
}

RxEngine::~RxEngine() {
  stop();
#if GNIO_HAVE_CUDA
  if (stream_) {
    q_.gpu->bind_thread();
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
    stream_ = nullptr;
  }
#endif
}

const GpuImpl& RxEngine::gpu() const noexcept { return *q_.gpu; }

Status RxEngine::allocate() {
  GpuImpl& gpu = *q_.gpu;
  nstrides_ = q_.num_strides;
  ndesc_ = q_.num_strides;
  stride_shift_ = static_cast<uint32_t>(std::countr_zero(q_.stride_size));
  const bool device_ring = q_.ring_mem == RingMem::Gpu;
  const MemKind ring_kind = device_ring ? MemKind::Gpu : MemKind::CpuGpu;
  const size_t data_bytes = static_cast<size_t>(nstrides_) << stride_shift_;
  const size_t desc_bytes = static_cast<size_t>(ndesc_) * sizeof(dev::RxDesc);

  // Frames stay where the backend put them when the kernel can read that
  // memory where it is: a ring in host memory without a packet pool. A
  // ring in device memory is filled from that memory by the copy engine.
  const std::optional<backend::RxMemory> owned = be_.rx_memory(q_.queue_id);
  in_place_ = owned.has_value() && !device_ring && !q_.pool;
  dma_ = owned.has_value() && device_ring && !q_.pool;
  if (in_place_ || dma_) GNIO_TRY(map_backend_memory(*owned));
  if (in_place_) {
    data_ = std::move(frame_map_);
  } else if (q_.pool) {
    data_ = q_.pool->memory();
  } else {
    auto d = gpu.alloc(data_bytes, ring_kind, 4096);
    if (!d) return d.status();
    data_ = std::move(*d);
  }
  span_end_.assign(in_place_ ? 0 : ndesc_, 0);
  auto desc = gpu.alloc(desc_bytes, ring_kind, 4096);
  if (!desc) return desc.status();
  desc_ = std::move(*desc);
  auto producer = gpu.alloc(128, ring_kind, 128);
  if (!producer) return producer.status();
  producer_ = std::move(*producer);
  auto claim = gpu.alloc(256, MemKind::Gpu, 128);  // claim, released, told and its lock: a cache line each
  if (!claim) return claim.status();
  claim_ = std::move(*claim);
  auto consumer = gpu.alloc(128, MemKind::CpuGpu, 128);
  if (!consumer) return consumer.status();
  consumer_ = std::move(*consumer);

  // A ring in device memory is filled through a pinned mirror of itself,
  // so every copy is one contiguous cudaMemcpyAsync.
  staged_ = !in_place_ && (data_.kind() != MemKind::CpuGpu || desc_.kind() != MemKind::CpuGpu);
  if (staged_) {
    auto staging = gpu.alloc(data_bytes + desc_bytes, MemKind::CpuGpu, 4096);
    if (!staging) return staging.status();
    staging_ = std::move(*staging);
    write_data_ = static_cast<uint8_t*>(staging_.host_ptr());
    write_desc_ = reinterpret_cast<dev::RxDesc*>(write_data_ + data_bytes);
  } else {
    write_data_ = in_place_ ? nullptr : static_cast<uint8_t*>(data_.host_ptr());
    write_desc_ = static_cast<dev::RxDesc*>(desc_.host_ptr());
  }

  dev_ring_.data = static_cast<uint8_t*>(data_.device_ptr());
  dev_ring_.desc = static_cast<dev::RxDesc*>(desc_.device_ptr());
  dev_ring_.producer = static_cast<uint64_t*>(producer_.device_ptr());
  dev_ring_.consumer = static_cast<uint64_t*>(consumer_.device_ptr());
  dev_ring_.claim = static_cast<uint64_t*>(claim_.device_ptr());
  dev_ring_.released = static_cast<uint64_t*>(claim_.device_ptr()) + 8;
  dev_ring_.told = static_cast<uint64_t*>(claim_.device_ptr()) + 16;
  dev_ring_.desc_mask = ndesc_ - 1;
  dev_ring_.stride_shift = stride_shift_;
  // An eighth of the frames the ring holds at the largest frame size, and
  // of the frames the backend lends: a kernel that told the engine later
  // would leave it waiting for buffers with packets to deliver.
  const uint32_t strides_per_frame = std::max<uint32_t>(1, (max_frame_ + q_.stride_size - 1) >> stride_shift_);
  uint32_t capacity = in_place_ ? ndesc_ : std::min(ndesc_, nstrides_ / strides_per_frame);
  if (owned && owned->frames != 0) capacity = std::min(capacity, owned->frames);
  dev_ring_.release_step = std::max<uint32_t>(1, capacity / 8);

#if GNIO_HAVE_CUDA
  if (!gpu.emulated) {
    GNIO_TRY(gpu.bind_thread());
    GNIO_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating the RX engine stream");
  }
#endif
  return Status::ok();
}

Status RxEngine::map_backend_memory(const backend::RxMemory& m) {
  if (!m.base || m.bytes == 0)
    return {Errc::InvalidValue, Layer::Backend,
            be_.caps().driver + ": RX queue " + std::to_string(q_.queue_id) +
                " names backend frame memory of " + std::to_string(m.bytes) +
                " bytes with no base; a backend without its own memory returns no rx_memory()"};
  // Registered memory is pinned: a cudaMemcpyAsync from it is a DMA.
  auto mapped = q_.gpu->register_host(m.base, m.bytes);
  if (!mapped) return mapped.status();
  frame_map_ = std::move(*mapped);
  frame_base_ = m.base;
  frame_bytes_ = m.bytes;
  lent_.resize(std::bit_ceil(static_cast<size_t>(ndesc_) + burst_));
  release_after_.resize(lent_.size());
  return Status::ok();
}

void RxEngine::stop() {
  if (thread_) {
    thread_->detach(this);
    thread_.reset();
  }
}

bool RxEngine::drained() const noexcept {
  return source_done_.load() && released_atomic_.load() == published_atomic_.load();
}

Status RxEngine::source_status() const {
  std::lock_guard lock(status_mu_);
  return source_status_;
}

void RxEngine::stop_source() {
  source_stop_.store(true);
  // The turn in progress may have read the flag unset: wait for it to end.
  const uint64_t seen = turns_.load();
  for (uint32_t spins = 0; thread_ && turns_.load() == seen; ++spins) dev::host_backoff(spins);
}

void RxEngine::count_turn(bool work, uint64_t turn_ns, uint64_t wait_ns) {
  // One writer (this engine's thread): plain adds, no locked instruction.
  auto add = [](std::atomic<uint64_t>& a, uint64_t v) {
    a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
  };
  RxqCounters& c = q_.counters;
  add(work ? c.work_polls : c.idle_polls, 1);
  add(work ? c.busy_ns : c.idle_ns, turn_ns);
  if (wait_ns) add(c.idle_ns, wait_ns);
}

void RxEngine::fail(const Status& s) {
  // The caller reports the error (source_status()); here only for tracing.
  log::write(log::Level::Debug, "rx-engine", q_.queue_id, "the source stopped: " + s.to_string());
  q_.counters.errors.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(status_mu_);
  source_status_ = s;
}

void RxEngine::reclaim() {
  const uint64_t ci = dev::load_acquire(static_cast<uint64_t*>(consumer_.host_ptr()));
  if (ci == reclaimed_) return;
  // Descriptors are released in order: the last one tells where the free
  // strides end.
  if (!in_place_) stride_tail_ = span_end_[(ci - 1) & (ndesc_ - 1)];
  reclaimed_ = ci;
  if (in_place_ || dma_) release_in_place(ci);
  released_atomic_.store(ci);
  q_.counters.released.store(ci, std::memory_order_relaxed);
}

void RxEngine::release_in_place(uint64_t upto) {
  const uint64_t mask = lent_.size() - 1;
  uint64_t end = lent_head_;
  while (end < placed_ && release_after_[end & mask] <= upto) ++end;
  if (end == lent_head_) return;
  // The frames go back as they lie in lent_: one slice, two where it wraps.
  const uint64_t at = lent_head_ & mask, n = end - lent_head_;
  const uint64_t first = std::min<uint64_t>(n, lent_.size() - at);
  be_.rx_release(q_.queue_id, std::span<const backend::RxFrame>(lent_.data() + at, first));
  if (n > first) be_.rx_release(q_.queue_id, std::span<const backend::RxFrame>(lent_.data(), n - first));
  lent_head_ = end;
}

void RxEngine::add_range(std::vector<std::pair<uint64_t, uint64_t>>& ranges, uint64_t off, uint64_t len) {
  if (!ranges.empty() && ranges.back().first + ranges.back().second == off)
    ranges.back().second += len;
  else
    ranges.emplace_back(off, len);
}

uint32_t RxEngine::describe(const uint8_t* data, uint32_t len, uint32_t flags, uint32_t* rss_hash) const {
  if (plain_) {
    *rss_hash = 0;
    return flag_bits(flags);
  }
  return describe_offloads(data, len, flags, rss_hash);
}

uint32_t RxEngine::describe_offloads(const uint8_t* data, uint32_t len, uint32_t flags, uint32_t* rss_hash) const {
  uint32_t out = flag_bits(flags);
  const bool have_hash = (flags & backend::RxFrameRssHash) != 0;
  const bool want_types = offloads_.packet_type || offloads_.checksum;
  const bool want_hash = offloads_.rss_hash && !have_hash;
  if (!offloads_.rss_hash) *rss_hash = 0;
  if (!want_types && !want_hash) return out;
  dev::ParsedPacket pp;
  const bool parsed = dev::parse_packet(data, len, pp);
  // The checksum state also of cut frames: their IPv4 header may be whole.
  if (want_types) out |= offloads_.checksum ? dev::checksum_state(data, pp) : pp.flags;
  if (want_hash) {
    uint8_t in[dev::kRssMaxInput];
    const uint32_t n = parsed ? dev::rss_input(data, pp, in) : 0;
    *rss_hash = n ? default_rss_table().hash(in, n) : 0u;
  }
  return out;
}

// ---- through the sink -------------------------------------------------------

std::optional<uint64_t> RxEngine::find_strides(uint32_t len, uint32_t& need) const {
  if (pi_ - reclaimed_ >= ndesc_) return std::nullopt;
  need = strides_for(len, stride_shift_);
  const uint64_t pos = stride_pos(stride_head_, need, nstrides_);
  if (pos + need - stride_tail_ > nstrides_) return std::nullopt;
  return pos;
}

void RxEngine::append(const dev::RxDesc& d, uint64_t pos, uint32_t flags) {
  write_desc_[pi_ & (ndesc_ - 1)] = d;
  span_end_[pi_ & (ndesc_ - 1)] = pos + d.nstrides;
  stride_head_ = pos + d.nstrides;
  ++pi_;
  ++new_offered_;
  new_bytes_ += d.len;
  new_truncated_ += (flags & backend::RxFrameTruncated) != 0;
  if (staged_) staged_bytes_ += static_cast<uint64_t>(d.nstrides) << stride_shift_;
}

uint8_t* RxEngine::claim(uint32_t len) {
  if (room_ == 0) return nullptr;
  const std::optional<uint64_t> pos = find_strides(len, claim_need_);
  if (!pos) return nullptr;
  claim_pos_ = *pos;
  return write_data_ + ((*pos & (nstrides_ - 1)) << stride_shift_);
}

void RxEngine::commit(uint32_t len, uint64_t timestamp_ns, uint32_t flags, uint32_t wire_len) {
  commit_hashed(len, timestamp_ns, flags & ~backend::RxFrameRssHash, wire_len, 0);
}

void RxEngine::commit_hashed(uint32_t len, uint64_t timestamp_ns, uint32_t flags, uint32_t /*wire_len*/,
                             uint32_t rss_hash) {
  const uint64_t offset = (claim_pos_ & (nstrides_ - 1)) << stride_shift_;
  // Whole strides: consecutive packets then form one range, one copy.
  if (staged_) add_range(data_ranges_, offset, static_cast<uint64_t>(claim_need_) << stride_shift_);
  dev::RxDesc d;
  d.len = len;
  d.flags = describe(write_data_ + offset, len, flags, &rss_hash);
  d.rss_hash = rss_hash;
  d.nstrides = claim_need_;
  d.offset = offset;
  d.timestamp_ns = timestamp_ns;
  append(d, claim_pos_, flags);
  --room_;
}

void RxEngine::drop(DropReason why) {
  ++new_dropped_[static_cast<size_t>(why)];
  ++new_offered_;
  if (room_ > 0) --room_;
}

Result<size_t> RxEngine::pull_sink() {
  return be_.rx_into(q_.queue_id, *this);
}

void RxEngine::count_lost() {
  const DropCounts lost = be_.take_rx_drops(q_.queue_id);
  for (size_t r = 0; r < kDropReasons; ++r) {
    new_dropped_[r] += lost[r];
    new_offered_ += lost[r];
  }
}

// ---- in place (backend-owned memory, ring in host memory) -------------------

Result<size_t> RxEngine::take_burst(size_t n) {
  if (lent_tail_ - lent_head_ + n > lent_.size()) grow_lent(lent_tail_ - lent_head_ + n);
  const uint64_t at = lent_tail_ & (lent_.size() - 1);
  const size_t ask = std::min<uint64_t>(n, lent_.size() - at);
  Result<size_t> got = be_.rx_burst(q_.queue_id, std::span(lent_.data() + at, ask));
  if (got) lent_tail_ += *got;
  return got;
}

void RxEngine::grow_lent(size_t need) {
  // Wire drops wait behind undelivered frames: more than planned for.
  size_t size = lent_.size();
  while (size < need) size *= 2;
  std::vector<backend::RxFrame> frames(size);
  std::vector<uint64_t> after(size);
  const uint64_t old_mask = lent_.size() - 1, mask = size - 1;
  for (uint64_t k = lent_head_; k < lent_tail_; ++k) {
    frames[k & mask] = lent_[k & old_mask];
    after[k & mask] = release_after_[k & old_mask];
  }
  lent_.swap(frames);
  release_after_.swap(after);
}

Result<size_t> RxEngine::pull_in_place() {
  Result<size_t> got = take_burst(room_);
  if (!got) return got;
  // The ring's state in locals: the descriptor stores below cannot alias them.
  const uint64_t lmask = lent_.size() - 1, dmask = ndesc_ - 1, desc_limit = reclaimed_ + ndesc_;
  uint64_t pi = pi_, bytes = 0, truncated = 0;
  Status bad;
  for (; placed_ < lent_tail_; ++placed_) {
    const backend::RxFrame& f = lent_[placed_ & lmask];
    uint64_t& release_after = release_after_[placed_ & lmask];
    if (f.len == 0) {
      release_after = pi;
      drop(DropReason::Empty);
      continue;
    }
    if (!in_region(f)) {
      bad = check_in_region(f);
      break;
    }
    if (pi >= desc_limit) {
      release_after = pi;
      drop(DropReason::RingFull);  // a wire does not wait for the ring
      continue;
    }
    uint32_t flags = f.flags;
    uint32_t len = f.len;
    if (len > max_frame_) {
      len = max_frame_;
      flags |= backend::RxFrameTruncated;
    }
    uint32_t rss_hash = f.rss_hash;
    dev::RxDesc d;
    d.len = len;
    d.flags = describe(f.data, len, flags, &rss_hash);
    d.rss_hash = rss_hash;
    d.nstrides = 1;
    d.offset = static_cast<uint64_t>(f.data - frame_base_);
    d.timestamp_ns = f.timestamp_ns;
    write_desc_[pi & dmask] = d;
    release_after = ++pi;
    bytes += len;
    truncated += (flags & backend::RxFrameTruncated) != 0;
  }
  new_offered_ += pi - pi_;
  new_bytes_ += bytes;
  new_truncated_ += truncated;
  pi_ = pi;
  // Dropped frames with nothing undelivered before them go back now.
  release_in_place(reclaimed_);
  if (!bad) return bad;
  return got;
}

Status RxEngine::check_in_region(const backend::RxFrame& f) const {
  if (in_region(f)) return Status::ok();
  return Status(Errc::BadState, Layer::Backend,
                be_.caps().driver + ": RX queue " + std::to_string(q_.queue_id) + " returned a frame of " +
                    std::to_string(f.len) + " bytes outside the frame memory it named (" +
                    std::to_string(frame_bytes_) + " bytes); the backend must return frames from rx_memory()");
}

bool RxEngine::holds_frames() const { return be_.rx_held(q_.queue_id) || (dma_ && placed_ != lent_tail_); }

// ---- by DMA (backend-owned memory, ring in device memory) -------------------
//
// Frames are placed in the ring's strides as the sink places them, their
// descriptors written to the staging mirror, and their bytes copied by the
// copy engine straight from the backend's registered memory. A frame goes
// back to the backend (rx_release(), in rx_burst() order) only once the
// kernel released its descriptor: the kernel sees a descriptor only after
// the producer index, which the stream writes after the copies that read
// the frame, so a released descriptor means the copy of its frame has
// landed and the backend may reuse the buffer.

Result<size_t> RxEngine::pull_dma() {
  const size_t asked = room_;
  // Frames of a pull source that found no strides before go first.
  Result<size_t> waiting = place_lent();
  if (!waiting || placed_ != lent_tail_ || *waiting >= asked) return waiting;
  Result<size_t> got = take_burst(asked - *waiting);
  if (!got) return got;
  Result<size_t> placed = place_lent();
  if (!placed) return placed;
  return *waiting + *placed;
}

Result<size_t> RxEngine::place_lent() {
  // The ring's state in locals: the descriptor stores below cannot alias them.
  const uint64_t lmask = lent_.size() - 1, dmask = ndesc_ - 1, smask = nstrides_ - 1;
  const uint32_t shift = stride_shift_;
  const uint64_t desc_limit = reclaimed_ + ndesc_, stride_limit = stride_tail_ + nstrides_;
  uint64_t pi = pi_, head = stride_head_, bytes = 0, strides = 0, truncated = 0;
  Run run = open_run_;
  const uint64_t first = placed_;
  Status bad;
  for (; placed_ < lent_tail_; ++placed_) {
    const backend::RxFrame& f = lent_[placed_ & lmask];
    uint64_t& release_after = release_after_[placed_ & lmask];
    if (f.len == 0) {
      release_after = pi;
      drop(DropReason::Empty);
      continue;
    }
    if (!in_region(f)) {
      bad = check_in_region(f);
      break;
    }
    uint32_t flags = f.flags;
    uint32_t len = f.len;
    if (len > max_frame_) {
      len = max_frame_;
      flags |= backend::RxFrameTruncated;
    }
    // Where the sink would put it (find_strides()): contiguous strides after the last frame.
    const uint32_t need = strides_for(len, shift);
    const uint64_t pos = stride_pos(head, need, nstrides_);
    if (pi >= desc_limit || pos + need > stride_limit) {
      if (!wire_) break;  // a pulled source waits, and what follows waits behind it
      release_after = pi;
      drop(DropReason::RingFull);  // a wire does not wait for the ring
      continue;
    }
    const uint64_t offset = (pos & smask) << shift;
    // One copy covers both frames when they lie at the same distance on
    // both sides; the bytes between them (the rest of the run's last
    // stride, under one stride) are copied along: they lie inside the
    // backend's region because both frames do, and inside strides of this
    // run in the ring. A wrap of either side makes the distances differ and
    // ends the run.
    if (run.bytes && f.data >= run.src && offset >= run.dst + run.bytes &&
        static_cast<uint64_t>(f.data - run.src) == offset - run.dst) {
      run.bytes = offset + len - run.dst;
    } else {
      open_run_ = run;
      end_run(/*copy_if_short=*/true);
      run = {f.data, offset, len};
    }
    uint32_t rss_hash = f.rss_hash;
    dev::RxDesc d;
    d.len = len;
    d.flags = describe(f.data, len, flags, &rss_hash);
    d.rss_hash = rss_hash;
    d.nstrides = need;
    d.offset = offset;
    d.timestamp_ns = f.timestamp_ns;
    write_desc_[pi & dmask] = d;
    head = pos + need;
    span_end_[pi & dmask] = head;
    release_after = ++pi;
    strides += need;
    bytes += len;
    truncated += (flags & backend::RxFrameTruncated) != 0;
  }
  open_run_ = run;
  new_offered_ += pi - pi_;
  new_bytes_ += bytes;
  new_truncated_ += truncated;
  staged_bytes_ += strides << shift;
  stride_head_ = head;
  pi_ = pi;
  // Dropped frames with nothing undelivered before them go back now.
  release_in_place(reclaimed_);
  if (!bad) return bad;
  return placed_ - first;
}

void RxEngine::end_run(bool copy_if_short) {
  Run& r = open_run_;
  if (!r.bytes) return;
  if (copy_if_short && r.bytes < kMinDmaRunBytes) {
    // Whole strides, so that consecutive short runs form one range.
    std::memcpy(write_data_ + r.dst, r.src, r.bytes);
    const uint64_t stride = uint64_t{1} << stride_shift_;
    add_range(data_ranges_, r.dst, (r.bytes + stride - 1) & ~(stride - 1));
  } else {
    runs_.push_back(r);
  }
  r.bytes = 0;
}

void RxEngine::give_back_unplaced() {
  // Taken from the backend but never offered: they go back, uncounted,
  // after the frames before them.
  const uint64_t mask = lent_.size() - 1;
  for (; placed_ < lent_tail_; ++placed_) release_after_[placed_ & mask] = pi_;
  release_in_place(reclaimed_);
}

// ---- publishing -------------------------------------------------------------

Status RxEngine::publish() {
  // Offers are counted before the deliveries and drops they cover, which
  // are released after them: EthRxq::stats() reads in the other order, so
  // a reader never sees more delivered and dropped than offered.
  if (new_offered_) q_.counters.offered.fetch_add(new_offered_, std::memory_order_release);
  new_offered_ = 0;
  const uint64_t t0 = pi_ != published_ ? dev::host_now_ns() : 0;
  if (pi_ != published_) {
    uint8_t* ring_data = static_cast<uint8_t*>(data_.device_ptr());
    uint8_t* ring_desc = static_cast<uint8_t*>(desc_.device_ptr());
    const uint8_t* stage_desc = reinterpret_cast<const uint8_t*>(write_desc_);
    // The new descriptors: one range, or two where they wrap the ring.
    desc_ranges_.clear();
    if (staged_) {
      const uint64_t first = published_ & (ndesc_ - 1), count = pi_ - published_;
      const uint64_t head = std::min<uint64_t>(count, ndesc_ - first);
      add_range(desc_ranges_, first * sizeof(dev::RxDesc), head * sizeof(dev::RxDesc));
      if (count > head) add_range(desc_ranges_, 0, (count - head) * sizeof(dev::RxDesc));
    }
    if (dma_) end_run(/*copy_if_short=*/false);
    if (staged_ && q_.gpu->emulated) {
      // The emulated copy engine: same ranges, same order, then the index.
      for (auto [off, len] : data_ranges_) std::memcpy(ring_data + off, write_data_ + off, len);
      for (const Run& r : runs_) std::memcpy(ring_data + r.dst, r.src, r.bytes);
      for (auto [off, len] : desc_ranges_) std::memcpy(ring_desc + off, stage_desc + off, len);
      dev::store_release(static_cast<uint64_t*>(producer_.device_ptr()), pi_);
    } else if (staged_) {
#if GNIO_HAVE_CUDA
      for (auto [off, len] : data_ranges_)
        GNIO_CUDA_TRY(cudaMemcpyAsync(ring_data + off, write_data_ + off, len, cudaMemcpyHostToDevice, stream_),
                      "copying RX packet bytes to the GPU ring");
      for (const Run& r : runs_)
        GNIO_CUDA_TRY(cudaMemcpyAsync(ring_data + r.dst, r.src, r.bytes, cudaMemcpyHostToDevice, stream_),
                      "copying RX frames from the backend's memory to the GPU ring");
      for (auto [off, len] : desc_ranges_)
        GNIO_CUDA_TRY(cudaMemcpyAsync(ring_desc + off, stage_desc + off, len, cudaMemcpyHostToDevice, stream_),
                      "copying RX descriptors to the GPU ring");
      GNIO_TRY(stream_write_value64(stream_, producer_.device_ptr(), pi_));
#endif
    } else {
      dev::store_release(static_cast<uint64_t*>(producer_.host_ptr()), pi_);
    }
    RxqCounters& c = q_.counters;
    if (staged_)
      c.copies.fetch_add(data_ranges_.size() + runs_.size() + desc_ranges_.size(), std::memory_order_relaxed);
    c.publish_ns.fetch_add(dev::host_now_ns() - t0, std::memory_order_relaxed);
    c.packets.fetch_add(pi_ - published_, std::memory_order_release);
    c.bytes.fetch_add(new_bytes_, std::memory_order_relaxed);
    c.bursts.fetch_add(1, std::memory_order_relaxed);
    data_ranges_.clear();
    runs_.clear();
    staged_bytes_ = 0;
    new_bytes_ = 0;
    published_ = pi_;
    published_atomic_.store(pi_);
  }
  RxqCounters& c = q_.counters;
  for (size_t r = 0; r < kDropReasons; ++r) {
    if (new_dropped_[r]) c.dropped[r].fetch_add(new_dropped_[r], std::memory_order_release);
    new_dropped_[r] = 0;
  }
  if (new_truncated_) c.truncated.fetch_add(new_truncated_, std::memory_order_relaxed);
  new_truncated_ = 0;
  return Status::ok();
}

bool RxEngine::batch_full() const {
  const uint64_t descs = pi_ - published_;
  if (!staged_) return descs >= kPublishDescsHost;
  return staged_bytes_ >= kPublishBytesStagedMax ||
         (staged_bytes_ >= kPublishBytesStaged && descs >= std::min<uint64_t>(kPublishDescsStaged, ndesc_ / 8));
}

bool RxEngine::poll() {
  if (!backend_done_ && source_stop_.load()) {
    backend_done_ = true;
    if (dma_) give_back_unplaced();
  }
  const uint64_t reclaimed_before = reclaimed_;
  reclaim();
  bool moved = reclaimed_ != reclaimed_before;
  const uint16_t qid = q_.queue_id;
  // Pull until the batch is worth publishing, the ring is full, or the
  // backend had less than asked (then publish at once: latency stays low
  // when traffic is light).
  while (!backend_done_) {
    const uint64_t free_desc = ndesc_ - (pi_ - reclaimed_);
    room_ = static_cast<uint32_t>(wire_ ? burst_ : std::min<uint64_t>(burst_, free_desc));
    if (room_ == 0) break;
    const uint32_t asked = room_;
    Result<size_t> got = in_place_ ? pull_in_place() : dma_ ? pull_dma() : pull_sink();
    count_lost();
    if (!got) {
      fail(got.status());
      backend_done_ = true;
      break;
    }
    moved |= *got > 0;
    if (*got == 0 && be_.at_end(qid) && !holds_frames()) backend_done_ = true;
    if (*got < asked) break;
    if (batch_full()) break;
  }
  room_ = 0;
  if (Status s = publish(); !s) {
    fail(s);
    backend_done_ = true;
  }
  source_done_.store(backend_done_);
  turns_.store(turns_.load(std::memory_order_relaxed) + 1);
  return moved;
}

}  // namespace gnio::detail
