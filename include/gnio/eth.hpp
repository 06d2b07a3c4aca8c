// Layer 1: an Ethernet device opened from a queue spec, and its RX/TX queues.
// Queues are configured and started here first; GPU-visible handles
// (gpu_queue.hpp) are layered on top of started queues and never own them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gnio/drop_reason.hpp"
#include "gnio/eth_caps.hpp"
#include "gnio/mem.hpp"
#include "gnio/status.hpp"

namespace gnio {

class Gpu;
class BufArr;

namespace detail {
struct DeviceImpl;
struct RxqImpl;
struct TxqImpl;
}  // namespace detail

enum class QueueState : uint8_t { Created, Configured, Started, Stopped, Destroyed };
std::string_view queue_state_name(QueueState s) noexcept;

// Where the RX ring lives. Gpu ("mem=gpu"): device memory, filled by copies
// from a pinned staging mirror; Host ("mem=host"): pinned host memory
// mapped into the GPU, written directly, lower latency.
enum class RingMem : uint8_t { Gpu, Host };

// What the NIC engine computes into each RX descriptor besides length,
// position and timestamp, like DPDK's rx_offloads. All off by default: each
// costs the engine a parse of the frame, done once for all that are on.
// A backend that already hashed the frame for RSS spreading hands its hash
// over, so rss_hash costs no second hash.
struct RxOffloads {
  // L2/L3/L4 bits of dev::PacketFlags (L3Ipv4, L4Udp, Vlan, ...), plus
  // Truncated (a header or the datagram is cut) or Malformed (a header
  // contradicts itself: wrong IP version, IPv4 header length under 20 or
  // over the total length, L4 header outside its datagram, ...).
  bool packet_type = false;
  bool checksum = false;     // L3/L4 checksum state (L3CsumGood/Bad, L4CsumGood/Bad/Partial); implies packet_type
  bool rss_hash = false;     // Toeplitz hash (default key) in RxDesc::rss_hash
  static constexpr RxOffloads all() { return {true, true, true}; }
  bool any() const { return packet_type || checksum || rss_hash; }
};

// offered == packets + sum(dropped) whenever the engine has published
// (counters are added per burst).
struct RxqStats {
  uint64_t offered = 0;    // frames the backend offered to the queue
  uint64_t packets = 0;    // published to the consumer (delivered)
  uint64_t bytes = 0;
  uint64_t bursts = 0;     // producer-index publications
  uint64_t rx_missed = 0;  // dropped at the "NIC": ring full (== dropped[RingFull])
  DropCounts dropped{};    // frames not delivered, by reason (drop_reason.hpp)
  uint64_t truncated = 0;  // delivered cut to max_packet_size (descriptor flag FrameTruncated)
  uint64_t released = 0;   // descriptors the consumer released
  uint64_t errors = 0;     // backend errors
  uint64_t copies = 0;     // host-to-device copies issued (ring mem=gpu)
  uint64_t publish_ns = 0; // engine time spent publishing bursts (copies + index)
  // The engine thread's turns on this queue (monotonic clock). A turn that
  // moved or reclaimed anything is work; busy_ns is the time of those
  // turns, idle_ns that of the others plus the thread's back-off or spin
  // while none of its queues had work. busy_ns + idle_ns is the time the
  // queue was attached, less what its thread spent on other queues' work.
  uint64_t work_polls = 0;  // turns that found work (wake-ups)
  uint64_t idle_polls = 0;  // turns that found nothing
  uint64_t busy_ns = 0;
  uint64_t idle_ns = 0;
};

/// @brief What a TX queue did with the descriptors the device pushed.
/// submitted == packets + sum(dropped) once the engine completed every
/// pushed descriptor (always after stop(); while it runs, completions ==
/// packets + sum(dropped), counters added per burst). host_send() adds to
/// packets and bytes only.
struct TxqStats {
  uint64_t submitted = 0;     // descriptors pushed by the device, as the engine last read the producer index
  uint64_t packets = 0;       // handed to the backend (sent)
  uint64_t bytes = 0;
  uint64_t completions = 0;   // completions published to the device
  TxDropCounts dropped{};     // completed without being sent, by reason (drop_reason.hpp)
  uint64_t errors = 0;        // sum(dropped): descriptors completed with an error
  uint64_t waited_on_time = 0;  // packets held for their send time
  // Payloads in device memory read through the engine's pinned arena: the
  // copies issued, the bytes they moved (gaps between payloads included)
  // and the waits for a burst's copies (one per burst that had any).
  uint64_t copies = 0;
  uint64_t copy_bytes = 0;
  uint64_t copy_waits = 0;
};

/// @brief Default bytes of a TX staging slot (EthTxq::set_staging_slot_size):
/// a standard frame, the size small staged sends are made for.
inline constexpr uint32_t kDefaultTxStagingSlot = 2048;

class EthRxq;
class EthTxq;

class EthDevice {
 public:
  // spec: "pcap:FILE[,loop=N][,pps=R]", "pcap-out:FILE", "synthetic:...",
  // "loop:[NAME]" (DESIGN.md "Backends"). Every spec also takes the RX
  // engine placement: threads=T (T engine threads for the RX queues),
  // cores=A-B or cores=A:B:C (pin thread i to the i-th core), poll=busy|backoff.
  static Result<EthDevice> open(std::string_view spec);

  EthDevice() = default;
  const std::string& spec() const noexcept;
  const EthCaps& caps() const noexcept;

  bool rxq_type_supported(RxqType t) const noexcept;
  bool txq_type_supported(TxqType t) const noexcept;

  Result<EthRxq> create_rxq(uint16_t queue_id = 0);
  Result<EthTxq> create_txq(uint16_t queue_id = 0);

  std::shared_ptr<detail::DeviceImpl> impl() const noexcept { return impl_; }
  // For gnio's own layers and tests: a device around an implementation built
  // inside the library (e.g. over a backend that no spec names).
  static EthDevice adopt(std::shared_ptr<detail::DeviceImpl> impl) { return EthDevice(std::move(impl)); }

 private:
  explicit EthDevice(std::shared_ptr<detail::DeviceImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::DeviceImpl> impl_;
};

// One received frame on the host path (queue started without a GPU).
struct HostFrame {
  std::vector<uint8_t> data;
  uint64_t timestamp_ns = 0;
};

class EthRxq {
 public:
  EthRxq() = default;
  EthRxq(EthRxq&&) noexcept = default;
  EthRxq& operator=(EthRxq&&) noexcept;
  ~EthRxq();

  // Setters: Created/Configured only (BadState after start); values are
  // checked against the device's caps (InvalidValue names value and limit).
  Status set_num_strides(uint32_t n);       // power of two
  Status set_stride_size(uint32_t bytes);   // power of two, caps.min_stride..max_stride
  // Longer frames are delivered cut to it, with dev::PacketFlags::FrameTruncated.
  // Default: what the backend delivers (caps().max_packet_size), within half the ring.
  Status set_max_packet_size(uint32_t bytes);
  Status set_burst_size(uint32_t packets);
  Status set_ring_mem(RingMem mem);
  Status set_rx_offloads(RxOffloads offloads);
  // The NIC-engine thread that serves this queue, like a DPDK lcore: RX
  // queues of one device with the same index share one thread. Default:
  // from the spec's threads=T (queue q on thread q % T), else one per queue.
  Status set_engine_thread(uint16_t index);
  // Pins the queue's engine thread to CPU core `core` (-1: not pinned).
  // Default: the spec's cores= list, else not pinned.
  Status set_engine_core(int core);
  // true: the engine thread spins when idle (lowest latency, a core at
  // 100 %); false: it backs off. Default: the spec's poll=busy|backoff.
  Status set_busy_poll(bool busy);
  // Datapath on this GPU: the ring is allocated in its memory at start().
  Status set_gpu(const Gpu& gpu);
  // Packet pool for the ring: count == num_strides, elem_size == stride size.
  Status set_packet_buffer(const BufArr& pool);

  Status start();
  // Ends the source for an exact drain (an application stopping on a
  // signal): the engine asks the backend for no more frames, and keeps
  // publishing and reclaiming what it already moved (frames in backend
  // memory still go back as the consumer releases them). When it returns
  // the engine's last request for frames has returned and every frame it
  // took is published (producer index stored with release order, or its
  // copy and index write queued on the engine's stream) or counted as
  // dropped: stats().offered is final and equals packets + sum(dropped).
  // at_end() turns true once the consumer released every published
  // descriptor; stop the kernel then, and its count equals stats().packets.
  // Frames the backend had read but not yet offered are not offered (a
  // wire loses what arrives after it). Started queues only; a second call
  // returns at once.
  Status stop_source();
  Status stop();
  // BadState while a GPU handle (GpuRxq) to this queue is alive.
  Status destroy();

  QueueState state() const noexcept;
  RxqStats stats() const noexcept;
  uint32_t num_strides() const noexcept;
  uint32_t stride_size() const noexcept;
  uint32_t max_packet_size() const noexcept;
  uint32_t burst_size() const noexcept;
  RingMem ring_mem() const noexcept;
  RxOffloads rx_offloads() const noexcept;

  // Host datapath, for a queue started without set_gpu(): up to max frames.
  Result<std::vector<HostFrame>> host_receive(size_t max);
  // True once a finite source is drained (or stop_source() ended it) and
  // every packet was delivered (and, on a GPU datapath, released by the kernel).
  bool at_end() const noexcept;
  // Why the source stopped early (a corrupt capture, a backend failure);
  // ok while it is healthy or ended normally.
  Status source_status() const;

  std::shared_ptr<detail::RxqImpl> impl() const noexcept { return impl_; }

 private:
  friend class EthDevice;
  explicit EthRxq(std::shared_ptr<detail::RxqImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::RxqImpl> impl_;
};

class EthTxq {
 public:
  EthTxq() = default;
  EthTxq(EthTxq&&) noexcept = default;
  EthTxq& operator=(EthTxq&&) noexcept;
  ~EthTxq();

  Status set_depth(uint32_t descriptors);  // power of two
  /// @brief Limits the frames this queue sends.
  /// Default: what the backend can send (caps().max_packet_size: pcap-out
  /// 256 KiB, AF_XDP/DPDK the port's frame size). On the device, TxBatch::set()
  /// of a longer frame returns InvalidValue and the engine counts it as
  /// dropped(too_long) instead of sending it.
  /// @param bytes 60..caps().max_packet_size
  /// @return InvalidValue (naming value and limit) outside that range; BadState after start()
  Status set_max_packet_size(uint32_t bytes);
  /// @brief Bytes of each descriptor's TX staging slot (TxBatch::stage(),
  /// set_staged()): depth x slot bytes of pinned host memory. Frames longer
  /// than a slot are sent zero-copy with TxBatch::set().
  /// Default: min(max packet size, kDefaultTxStagingSlot), so that a queue of
  /// jumbo frames does not pin depth x max packet size. Rounded up to 64 bytes
  /// and capped at the max packet size at start().
  /// @param bytes 64..caps().max_packet_size
  /// @return InvalidValue (naming value and limit) outside that range; BadState after start()
  Status set_staging_slot_size(uint32_t bytes);
  Status set_type(TxqType type);
  Status set_gpu(const Gpu& gpu);
  // A TX buffer pool the kernel may send from (zero-copy from RX rings on
  // the same GPU is registered automatically).
  Status register_buffer(const BufArr& pool);

  Status start();
  // Waits up to timeout_ms for queued descriptors to be sent, then stops.
  Status stop(uint32_t timeout_ms = 1000);
  Status destroy();

  QueueState state() const noexcept;
  TxqStats stats() const noexcept;
  uint32_t depth() const noexcept;
  uint32_t max_packet_size() const noexcept;
  /// @brief The staging slot size start() allocates (or allocated) for this queue.
  /// @return bytes per slot, a multiple of 64; 0 for a destroyed queue
  uint32_t staging_slot_size() const noexcept;
  TxqType type() const noexcept;

  // Host datapath, for a queue started without set_gpu(): returns frames sent.
  Result<size_t> host_send(std::span<const std::span<const uint8_t>> frames);
  Status flush();

  std::shared_ptr<detail::TxqImpl> impl() const noexcept { return impl_; }

 private:
  friend class EthDevice;
  explicit EthTxq(std::shared_ptr<detail::TxqImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::TxqImpl> impl_;
};

}  // namespace gnio
