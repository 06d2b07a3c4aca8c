// SPDX-License-Identifier: Apache-2.0
// mem:[FILE][,count=N][,ring=B][,queues=Q][,pps=R] plus, without FILE, the
// generator's frames=F,size=,flows=,seed=,proto=,ipv6= — a prebuilt
// in-memory source. Its frames (a capture's, or the first F frames of the
// synthetic generator) are built once into page-aligned host memory the
// source owns, one region per RX queue, and handed out the way a NIC hands
// out frames it has DMA'd: rx_memory() names the region (the engine
// registers it with the GPU), rx_burst() returns frames pointing into it,
// rx_release() gives them back. Each queue's region is a ring of B buffers
// (B a multiple of the queue's frame count, so buffer b holds the frame that
// comes due when it is lent and nothing is rewritten per delivery); a
// buffer is lent again only after it was released, and while none is free
// nothing is delivered (with pps=, frames that come due then are lost and
// counted, as at a NIC; the buffers after a loss are rewritten with the
// frames that come due instead).
// Frames are spread over queues by their RSS hash (default Toeplitz key),
// which goes with each frame.
// It costs no per-frame work beyond a descriptor, so a benchmark fed by it
// measures the engine and not the source.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/drivers.hpp"
#include "backends/spec.hpp"
#include "backends/synthetic.hpp"
#include "core/log.hpp"

namespace gnio::backend {

namespace {

constexpr uint16_t kMaxQueues = 64;
constexpr uint64_t kDefaultRing = 4096;
constexpr uint64_t kMaxRing = 1u << 20;
constexpr uint64_t kDefaultFrames = 1024;
constexpr uint64_t kMaxFrames = 1u << 20;
constexpr size_t kMaxRegionBytes = size_t{16} << 30;  // all queues together
constexpr uint32_t kMinBuffer = 64;

// One prebuilt frame: its bytes and what the source says of it.
struct Frame {
  std::vector<uint8_t> bytes;
  uint32_t flags = 0;
  uint32_t wire_len = 0;
  uint32_t rss_hash = 0;  // set by build()
};

// Page-aligned host memory, unmapped on destruction.
class Region {
 public:
  Region() = default;
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  ~Region() {
    if (base_) munmap(base_, bytes_);
  }

  Status map(size_t bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    bytes_ = (bytes + page - 1) / page * page;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      base_ = nullptr;
      return Status(Errc::NoMemory, Layer::Backend,
                    "mem: cannot map " + std::to_string(bytes_) + " bytes of frame memory: " + std::strerror(errno) +
                        "; lower ring= or the frame size, or use fewer queues");
    }
    base_ = static_cast<uint8_t*>(p);
    madvise(base_, bytes_, MADV_HUGEPAGE);  // fewer pages to pin and translate; a hint only
    return Status::ok();
  }
  uint8_t* base() const { return base_; }
  size_t bytes() const { return bytes_; }

 private:
  uint8_t* base_ = nullptr;
  size_t bytes_ = 0;
};

struct Options {
  std::string file;   // empty: generator frames
  uint64_t count = 0; // frames in total over all queues; 0 = endless
  bool count_set = false;
  uint64_t ring = kDefaultRing;
  uint16_t queues = 1;
  double pps = 0;
};

class PrebuiltBackend final : public Backend {
 public:
  PrebuiltBackend(const Options& o, std::vector<Frame> frames) : o_(o), frames_(std::move(frames)), queues_(o.queues) {
    caps_.driver = "mem";
    caps_.max_rx_queues = o.queues;
    caps_.max_tx_queues = 0;
    caps_.max_packet_size = kMaxFrameSize;
    caps_.tx_supported = false;
    caps_.tx_regular = false;
    caps_.tx_wait_on_time = false;
    caps_.drops_when_full = o.pps > 0;
    if (o.pps > 0) pacer_.emplace(o.pps);
    if (!o_.count_set) o_.count = frames_.size();
  }

  // Spreads the frames over the queues and builds each queue's buffer ring.
  Status build() {
    for (uint32_t i = 0; i < frames_.size(); ++i) {
      Frame& f = frames_[i];
      const RssSpread spread = rss_spread(f.bytes.data(), static_cast<uint32_t>(f.bytes.size()), o_.queues);
      f.rss_hash = spread.hash;
      queues_[spread.queue].frames.push_back(i);
    }
    size_t total = 0;
    for (Queue& q : queues_) {
      if (q.frames.empty()) continue;
      uint32_t longest = 0;
      for (uint32_t i : q.frames) longest = std::max(longest, static_cast<uint32_t>(frames_[i].bytes.size()));
      q.buffer = std::max(kMinBuffer, std::bit_ceil(longest));
      const uint64_t per_ring = q.frames.size();
      q.nbuffers = (std::max<uint64_t>(o_.ring, per_ring) + per_ring - 1) / per_ring * per_ring;
      total += q.nbuffers * q.buffer;
    }
    if (total > kMaxRegionBytes)
      return Status(Errc::InvalidValue, Layer::Backend,
                    "mem: the buffer rings would take " + std::to_string(total >> 20) + " MiB (limit " +
                        std::to_string(kMaxRegionBytes >> 20) + " MiB); lower ring= (now " + std::to_string(o_.ring) +
                        "), the frame size or queues=");
    for (Queue& q : queues_) {
      if (q.frames.empty()) continue;
      q.next = q.frames[0];
      GNIO_TRY(q.region.map(q.nbuffers * q.buffer));
      q.holds.resize(q.nbuffers);
      for (uint64_t b = 0; b < q.nbuffers; ++b) {
        q.holds[b] = static_cast<uint32_t>(b % q.frames.size());
        const Frame& f = frames_[q.frames[q.holds[b]]];
        std::memcpy(q.region.base() + b * q.buffer, f.bytes.data(), f.bytes.size());
      }
    }
    return Status::ok();
  }

  const EthCaps& caps() const override { return caps_; }

  std::optional<RxMemory> rx_memory(uint16_t queue) const override {
    if (queue >= queues_.size() || queues_[queue].frames.empty()) return std::nullopt;
    const Region& r = queues_[queue].region;
    return RxMemory{r.base(), r.bytes(), static_cast<uint32_t>(std::min<uint64_t>(queues_[queue].nbuffers, UINT32_MAX))};
  }

  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) override {
    if (queue >= queues_.size()) return bad_queue(queue);
    Queue& q = queues_[queue];
    if (q.frames.empty()) return size_t{0};
    // The stream index past which nothing is handed out this burst.
    const uint64_t limit = std::min(pacer_ ? pacer_->due() : UINT64_MAX, o_.count != 0 ? o_.count : UINT64_MAX);
    const uint64_t now = realtime_ns();
    // The queue's state in locals: the stores into `out` cannot alias them.
    const uint32_t* order = q.frames.data();
    const size_t nframes = q.frames.size();
    uint32_t* holds = q.holds.data();
    uint8_t* const base = q.region.base();
    const uint64_t nbuffers = q.nbuffers, buffer_bytes = q.buffer, free_until = q.released + nbuffers;
    uint64_t lent = q.lent, buffer = q.next_buffer, round = q.round, next = q.next, lost = 0;
    size_t pos = q.pos, n = 0;
    while (n < out.size() && next < limit) {
      if (lent == free_until) {
        if (!pacer_) break;  // a pulled source waits for a buffer
        ++lost;              // a wire does not: the frame is lost at the NIC
        step(order, nframes, round, pos, next);
        continue;
      }
      const Frame& f = frames_[order[pos]];
      uint8_t* data = base + buffer * buffer_bytes;
      // A frame lost while every buffer was lent leaves the next buffer one
      // frame ahead of the stream: it gets the due frame's bytes (a paced
      // source after a loss only; otherwise each buffer holds its frame).
      if (holds[buffer] != pos) {
        std::memcpy(data, f.bytes.data(), f.bytes.size());
        holds[buffer] = static_cast<uint32_t>(pos);
      }
      out[n++] = RxFrame{data, static_cast<uint32_t>(f.bytes.size()), f.flags | RxFrameRssHash, f.wire_len, now,
                         lent++, f.rss_hash};
      if (++buffer == nbuffers) buffer = 0;
      step(order, nframes, round, pos, next);
    }
    q.lent = lent;
    q.next_buffer = buffer;
    q.round = round;
    q.pos = pos;
    q.next = next;
    q.lost += lost;
    return n;
  }

  void rx_release(uint16_t queue, std::span<const RxFrame> frames) override {
    if (queue >= queues_.size()) return;
    Queue& q = queues_[queue];
    if (frames.empty()) return;
    // Cookies are consecutive in lending order: a slice given back in that
    // order starts at the next one expected and counts up by one; any other
    // frees nothing.
    const uint64_t first = frames.front().cookie, last = frames.back().cookie;
    bool in_order = first == q.released && q.lent - q.released >= frames.size();
    for (size_t i = 0; i < frames.size(); ++i) in_order &= frames[i].cookie == first + i;
    if (!in_order) {
      log::error("mem", "RX queue " + std::to_string(queue) + ": frames " + std::to_string(first) + ".." +
                            std::to_string(last) + " (" + std::to_string(frames.size()) +
                            ") given back out of order (next expected " + std::to_string(q.released) + " of " +
                            std::to_string(q.lent) + " lent); release frames in the order rx_burst() returned them");
      return;
    }
    q.released += frames.size();
  }

  // The engine copies (a ring in device memory): every frame is copied out
  // of its buffer right away, so the buffer ring is not involved.
  Result<size_t> rx_into(uint16_t queue, RxSink& sink) override {
    if (queue >= queues_.size()) return bad_queue(queue);
    Queue& q = queues_[queue];
    if (q.frames.empty()) return size_t{0};
    const uint64_t due = pacer_ ? pacer_->due() : UINT64_MAX;
    const uint64_t now = realtime_ns();
    size_t offered = 0;
    while (sink.room() > 0 && !ended(q)) {
      if (q.next >= due) break;
      const Frame& f = frames_[q.frames[q.pos]];
      uint32_t len = static_cast<uint32_t>(f.bytes.size());
      uint32_t flags = f.flags;
      uint32_t wire_len = f.wire_len;
      if (len > sink.max_frame()) {
        if (wire_len == 0) wire_len = len;
        len = sink.max_frame();
        flags |= RxFrameTruncated;
      }
      uint8_t* dst = sink.claim(len);
      if (!dst) {
        if (!pacer_) break;
        sink.drop(DropReason::RingFull);
      } else {
        std::memcpy(dst, f.bytes.data(), len);
        sink.commit_hashed(len, now, flags | RxFrameRssHash, wire_len, f.rss_hash);
      }
      advance(q);
      ++offered;
    }
    return offered;
  }

  DropCounts take_rx_drops(uint16_t queue) override {
    DropCounts out{};
    if (queue >= queues_.size()) return out;
    out[static_cast<size_t>(DropReason::RingFull)] = std::exchange(queues_[queue].lost, 0);
    return out;
  }

  bool at_end(uint16_t queue) const override { return queue >= queues_.size() || ended(queues_[queue]); }

  Result<size_t> tx_burst(uint16_t, std::span<const TxFrame>) override {
    return Status(Errc::NotSupported, Layer::Backend,
                  "mem: the prebuilt source is receive-only; to send frames use 'loop:', 'pcap-out:FILE' or "
                  "'pcapng-out:FILE'",
                  Axis::Nic);
  }

 private:
  struct Queue {
    std::vector<uint32_t> frames;  // indices into frames_ of this queue's frames, ascending
    uint32_t buffer = 0;           // bytes per buffer (a power of two)
    uint64_t nbuffers = 0;         // a multiple of frames.size(): buffer b starts with frames[b % frames.size()]
    std::vector<uint32_t> holds;   // per buffer: the position in `frames` of the frame it holds
    Region region;
    uint64_t round = 0;            // next frame of the stream: round * frames_.size() + frames[pos]
    size_t pos = 0;
    uint64_t next = 0;             // that stream index, kept by advance()
    uint64_t lent = 0;             // buffers handed out (cookies are this sequence)
    uint64_t next_buffer = 0;      // lent % nbuffers: the buffer lent next
    uint64_t released = 0;         // buffers given back
    uint64_t lost = 0;             // frames due while every buffer was lent, not yet taken
  };

  bool ended(const Queue& q) const { return q.frames.empty() || (o_.count != 0 && q.next >= o_.count); }
  // Moves a stream position (round, pos and its index next) one frame on.
  void step(const uint32_t* order, size_t nframes, uint64_t& round, size_t& pos, uint64_t& next) const {
    if (++pos == nframes) {
      pos = 0;
      ++round;
    }
    next = round * frames_.size() + order[pos];
  }
  void advance(Queue& q) const { step(q.frames.data(), q.frames.size(), q.round, q.pos, q.next); }

  Status bad_queue(uint16_t queue) const {
    return Status(Errc::InvalidValue, Layer::Backend,
                  "mem: RX queue " + std::to_string(queue) + " does not exist; this source has " +
                      std::to_string(queues_.size()) + " queue(s) (set queues=Q)");
  }

  Options o_;
  EthCaps caps_;
  std::optional<Pacer> pacer_;
  std::vector<Frame> frames_;
  std::vector<Queue> queues_;
};

// Every frame of one pass over a capture, read by the pcap driver (so link
// types and cut records are handled the same way).
Result<std::vector<Frame>> capture_frames(const std::string& file) {
  auto pcap = open_pcap("pcap:\"" + file + "\"");
  if (!pcap) return pcap.status();
  std::vector<Frame> frames;
  std::vector<RxFrame> burst(256);
  while (!(*pcap)->at_end(0)) {
    auto n = (*pcap)->rx_burst(0, burst);
    if (!n) return n.status();
    for (size_t i = 0; i < *n; ++i) {
      const RxFrame& f = burst[i];
      if (f.len == 0) continue;  // nothing a NIC would deliver
      frames.push_back({std::vector<uint8_t>(f.data, f.data + f.len), f.flags, f.wire_len});
    }
    if (frames.size() > kMaxFrames)
      return Status(Errc::InvalidValue, Layer::Backend,
                    "mem:" + file + " holds more than " + std::to_string(kMaxFrames) +
                        " frames; prebuild a shorter capture (editcap -r FILE OUT 1-100000)");
  }
  if (frames.empty())
    return Status(Errc::InvalidValue, Layer::Backend,
                  "mem:" + file + " holds no Ethernet frames to prebuild; give a capture with at least one frame");
  return frames;
}

}  // namespace

Result<std::unique_ptr<Backend>> open_mem(std::string_view text) {
  auto spec = Spec::parse(text, ArgMode::Optional,
                          {"count", "ring", "queues", "pps", "frames", "size", "flows", "seed", "proto", "ipv6"});
  if (!spec) return spec.status();
  Options o;
  o.file = spec->arg();
  auto count = spec->u64("count", 0, 0, UINT64_MAX);
  if (!count) return count.status();
  auto ring = spec->u64("ring", kDefaultRing, 1, kMaxRing);
  if (!ring) return ring.status();
  auto queues = spec->u64("queues", 1, 1, kMaxQueues);
  if (!queues) return queues.status();
  auto pps = spec->rate("pps", kMaxPps);
  if (!pps) return pps.status();
  o.count = *count;
  o.count_set = spec->has("count");
  o.ring = *ring;
  o.queues = static_cast<uint16_t>(*queues);
  o.pps = *pps;

  std::vector<Frame> frames;
  const std::initializer_list<const char*> generator_keys = {"frames", "size", "flows", "seed", "proto", "ipv6"};
  if (!o.file.empty()) {
    for (const char* key : generator_keys)
      if (spec->has(key))
        return spec->invalid(key, "shapes generated frames, and this source replays " + o.file,
                             "leave it out, or drop the file to prebuild generator frames");
    auto f = capture_frames(o.file);
    if (!f) return f.status();
    frames = std::move(*f);
  } else {
    auto nframes = spec->u64("frames", kDefaultFrames, 1, kMaxFrames);
    if (!nframes) return nframes.status();
    // The generator's own options, checked by its own parser.
    std::string generator = "synthetic:count=" + std::to_string(*nframes);
    for (const char* key : {"size", "flows", "seed", "proto", "ipv6"})
      if (const std::string* v = spec->find(key)) generator += std::string(",") + key + "=" + *v;
    auto g = parse_synthetic_spec(generator);
    if (!g) return Status(g.status().code(), Layer::Backend, spec->text() + ": " + g.status().message());
    for (uint64_t i = 0; i < *nframes; ++i) frames.push_back({make_synthetic_frame(*g, i), 0, 0});
  }
  auto be = std::make_unique<PrebuiltBackend>(o, std::move(frames));
  GNIO_TRY(be->build());
  return std::unique_ptr<Backend>(std::move(be));
}

}  // namespace gnio::backend
