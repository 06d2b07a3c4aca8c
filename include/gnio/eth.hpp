// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Layer 1: an Ethernet device opened from a queue spec, and its RX/TX
/// queues.
///
/// Queues are configured and started here first; GPU-visible handles
/// (gpu_queue.hpp) are layered on top of started queues and never own them.
/// A queue's lifecycle, as DPDK's ethdev orders it: EthDevice::create_rxq()
/// or create_txq() (state Created), the setters (Configured), start()
/// (Started), then stop() (Stopped) and destroy() (Destroyed). Setters and
/// start() are for Created or Configured queues only, so a stopped queue is
/// not started again: create another. Every call out of that order returns
/// Errc::BadState and leaves the queue's state unchanged; destroy() is for
/// any state, but returns BadState too while a GPU handle to the queue is
/// alive.
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
#include "gnio/queue_counters.hpp"
#include "gnio/status.hpp"

namespace gnio {

class Gpu;
class BufArr;

namespace detail {
struct DeviceImpl;
struct RxqImpl;
struct TxqImpl;
}  // namespace detail

/// @brief Where an RX or TX queue is in its lifecycle (eth.hpp gives the
/// order of the calls).
///
/// Created by EthDevice::create_rxq()/create_txq(); Configured once a setter
/// accepted a value; Started by start(); Stopped by stop(); Destroyed by
/// destroy(), and also what state() says of an empty or moved-from queue.
enum class QueueState : uint8_t { Created, Configured, Started, Stopped, Destroyed };
/// @brief Stable lower-case name of a queue state, used in errors and reports.
/// @param s The state.
/// @return "created", "configured", "started", "stopped" or "destroyed".
std::string_view queue_state_name(QueueState s) noexcept;

/// @brief Where the RX ring lives (EthRxq::set_ring_mem()).
///
/// Gpu ("mem=gpu"): device memory, filled by copies from a pinned staging
/// mirror; Host ("mem=host"): pinned host memory mapped into the GPU,
/// written directly, lower latency.
enum class RingMem : uint8_t { Gpu, Host };

/// @brief What the NIC engine computes into each RX descriptor besides
/// length, position and timestamp, like DPDK's rx_offloads.
///
/// All off by default: each costs the engine a parse of the frame, done
/// once for all that are on. A backend that already hashed the frame for
/// RSS spreading hands its hash over, so rss_hash costs no second hash.
struct RxOffloads {
  /// L2/L3/L4 bits of dev::PacketFlags (L3Ipv4, L4Udp, Vlan, ...), plus
  /// Truncated (a header or the datagram is cut) or Malformed (a header
  /// contradicts itself: wrong IP version, IPv4 header length under 20 or
  /// over the total length, L4 header outside its datagram, ...).
  bool packet_type = false;
  /// L3/L4 checksum state (L3CsumGood/Bad, L4CsumGood/Bad/Partial); implies packet_type.
  bool checksum = false;
  bool rss_hash = false;     ///< Toeplitz hash (default key) in RxDesc::rss_hash
  /// @brief Every offload on.
  /// @return packet_type, checksum and rss_hash all true.
  static constexpr RxOffloads all() { return {true, true, true}; }
  /// @brief Whether the engine parses frames at all.
  /// @return True when any offload is on.
  bool any() const { return packet_type || checksum || rss_hash; }
};

/// @brief What an RX queue's engine did with the frames its backend offered.
/// offered == packets + sum(dropped) whenever the engine has published
/// (counters are added per burst). One uint64_t field per entry of
/// GNIO_RXQ_COUNTERS (gnio/queue_counters.hpp, which says what each counts):
/// offered, packets, bytes, bursts, truncated, released, errors, copies,
/// publish_ns, and the engine thread's turns on the queue (monotonic clock):
/// work_polls and busy_ns for turns that moved or reclaimed anything,
/// idle_polls and idle_ns for the others plus the thread's back-off while
/// none of its queues had work (busy_ns + idle_ns is the time the queue was
/// attached, less what its thread spent on other queues' work).
struct RxqStats {
/// @brief Declares one RxqStats field per GNIO_RXQ_COUNTERS entry; undefined after use.
/// @param field The field's name.
/// @param metric Unused here: the Prometheus family.
/// @param unit Unused here: Count or Nanoseconds.
/// @param help Unused here: the family's help.
#define GNIO_RXQ_STATS_FIELD(field, metric, unit, help) uint64_t field = 0;
  GNIO_RXQ_COUNTERS(GNIO_RXQ_STATS_FIELD)
#undef GNIO_RXQ_STATS_FIELD
  /// Frames dropped at the "NIC" because the ring was full: dropped[RingFull].
  uint64_t rx_missed = 0;
  /// Frames not delivered, by reason (drop_reason.hpp).
  DropCounts dropped{};

  /// @brief Adds another queue's counters, field by field: the counters of
  ///        several queues as one.
  /// @param o The other queue's counters.
  /// @return `*this`.
  RxqStats& operator+=(const RxqStats& o) noexcept;
};

/// @brief What a TX queue did with the descriptors the device pushed.
/// submitted == packets + sum(dropped) once the engine completed every
/// pushed descriptor (always after stop(); while it runs, completions ==
/// packets + sum(dropped), counters added per burst). host_send() adds to
/// packets and bytes only. One uint64_t field per entry of GNIO_TXQ_COUNTERS
/// (gnio/queue_counters.hpp): submitted, packets, bytes, completions,
/// waited_on_time, and the device-memory payloads read through the engine's
/// pinned arena (copy_payloads, copies, copy_bytes, copy_waits).
struct TxqStats {
/// @brief Declares one TxqStats field per GNIO_TXQ_COUNTERS entry; undefined after use.
/// @param field The field's name.
/// @param metric Unused here: the Prometheus family.
/// @param unit Unused here: Count or Nanoseconds.
/// @param help Unused here: the family's help.
#define GNIO_TXQ_STATS_FIELD(field, metric, unit, help) uint64_t field = 0;
  GNIO_TXQ_COUNTERS(GNIO_TXQ_STATS_FIELD)
#undef GNIO_TXQ_STATS_FIELD
  /// Completed without being sent, by reason (drop_reason.hpp).
  TxDropCounts dropped{};
  /// sum(dropped): descriptors completed with an error.
  uint64_t errors = 0;

  /// @brief Adds another queue's counters, field by field: the counters of
  ///        several queues as one.
  /// @param o The other queue's counters.
  /// @return `*this`.
  TxqStats& operator+=(const TxqStats& o) noexcept;
};

/// @brief Default bytes of a TX staging slot (EthTxq::set_staging_slot_size):
/// a standard frame, the size small staged sends are made for.
inline constexpr uint32_t kDefaultTxStagingSlot = 2048;

class EthRxq;
class EthTxq;

/// @brief An Ethernet device opened from a queue spec: its backend, its
/// capabilities, and the factory of its RX and TX queues.
///
/// A shared handle: copies refer to one device, and every queue keeps its
/// device alive. Open it, check caps(), create queues, then configure and
/// start each queue (EthRxq, EthTxq). Host only.
class EthDevice {
 public:
  /// @brief Opens a device from a queue spec.
  /// @param spec "pcap:FILE[,loop=N][,pps=R]", "pcap-out:FILE",
  ///        "pcapng-out:FILE[,rotate=SIZE|DURATION][,files=N]", "synthetic:...",
  ///        "loop:[NAME]" (README.md, "Queue specs"). Every spec also takes the RX
  ///        engine placement: threads=T (T engine threads for the RX queues),
  ///        cores=A-B or cores=A:B:C (pin thread i to the i-th core), poll=busy|backoff.
  /// @return The device, or: InvalidValue for a malformed placement option;
  ///         any error of the backend the spec names opening.
  static Result<EthDevice> open(std::string_view spec);

  /// @brief No device: caps() is empty and create_rxq()/create_txq() return BadState.
  EthDevice() = default;
  /// @brief The spec the device was opened with.
  /// @return The spec as given to open(); empty for no device.
  const std::string& spec() const noexcept;
  /// @brief What the device can do and its limits; queue setters are checked against them.
  /// @return The backend's capabilities; all off for no device.
  const EthCaps& caps() const noexcept;

  /// @brief Whether the device has RX queues of a type.
  /// @param t The queue type.
  /// @return True when caps() allows RX and that type.
  bool rxq_type_supported(RxqType t) const noexcept;
  /// @brief Whether the device has TX queues of a type.
  /// @param t The queue type.
  /// @return True when caps() allows TX and that type.
  bool txq_type_supported(TxqType t) const noexcept;

  /// @brief Creates an RX queue, in state Created with default settings.
  /// @param queue_id The NIC queue, below caps().max_rx_queues.
  /// @return The queue, or: BadState for no device; NotSupported when the
  ///         device has no RX queues; InvalidValue for a queue_id over the limit.
  Result<EthRxq> create_rxq(uint16_t queue_id = 0);
  /// @brief Creates a TX queue, in state Created with default settings.
  /// @param queue_id The NIC queue, below caps().max_tx_queues.
  /// @return The queue, or: BadState for no device; NotSupported when the
  ///         device has no TX queues; InvalidValue for a queue_id over the limit.
  Result<EthTxq> create_txq(uint16_t queue_id = 0);

  /// @brief The implementation, for gnio's own layers.
  /// @return The shared implementation; null for no device.
  std::shared_ptr<detail::DeviceImpl> impl() const noexcept { return impl_; }
  /// @brief For gnio's own layers and tests: a device around an implementation built
  ///        inside the library (e.g. over a backend that no spec names).
  /// @param impl The implementation.
  /// @return The device.
  static EthDevice adopt(std::shared_ptr<detail::DeviceImpl> impl) { return EthDevice(std::move(impl)); }

 private:
  explicit EthDevice(std::shared_ptr<detail::DeviceImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::DeviceImpl> impl_;
};

/// @brief One received frame on the host path (queue started without a GPU).
struct HostFrame {
  std::vector<uint8_t> data;  ///< The frame's bytes, cut to the queue's max packet size.
  uint64_t timestamp_ns = 0;  ///< Capture or arrival time, CLOCK_REALTIME ns (from the backend).
};

/// @brief An RX queue of an EthDevice: its settings, its NIC engine, its
/// counters.
///
/// Lifecycle (calls out of this order return BadState):
/// 1. EthDevice::create_rxq(): state Created.
/// 2. The setters, in any order (state Configured): set_gpu() for a GPU
///    datapath, the ring's geometry, offloads and engine placement.
/// 3. start(): state Started; with a GPU, the RX engine allocates the ring
///    and starts polling the backend.
/// 4. On a GPU datapath, GpuRxq::create() and a kernel that receives
///    (dev::Rxq); on the host path, host_receive().
/// 5. Optionally stop_source() and wait for at_end(), for an exact drain.
/// 6. Stop the kernel and destroy the GpuRxq, then stop(): state Stopped.
/// 7. destroy() (also run by the destructor): state Destroyed.
///
/// Move-only; host only. stats() and at_end() may be read while the engine
/// runs.
class EthRxq {
 public:
  /// @brief No queue: state() is Destroyed and every call but destroy() returns BadState.
  EthRxq() = default;
  /// @brief Takes over the other queue, which is left empty.
  EthRxq(EthRxq&&) noexcept = default;
  /// @brief Destroys this queue (the result is ignored), then takes over the other.
  /// @return `*this`.
  EthRxq& operator=(EthRxq&&) noexcept;
  /// @brief Calls destroy(). While a GPU handle (GpuRxq) is alive it logs an
  ///        error, and the ring stays alive until the handle is gone.
  ~EthRxq();

  /// @name Setters
  /// Created/Configured only (BadState after start); values are checked
  /// against the device's caps (InvalidValue names value and limit). Each
  /// accepted value moves the queue to Configured.
  /// @{

  /// @brief The number of strides in the ring; default 4096.
  /// @param n A power of two, 2..caps().max_ring_entries.
  /// @return Ok; InvalidValue outside that; BadState after start().
  Status set_num_strides(uint32_t n);       // power of two
  /// @brief The bytes of each stride of the ring; default 2048 (within caps()).
  /// @param bytes A power of two, caps.min_stride..max_stride.
  /// @return Ok; InvalidValue outside that; BadState after start().
  Status set_stride_size(uint32_t bytes);   // power of two, caps.min_stride..max_stride
  /// @brief Limits the frames this queue delivers.
  /// Longer frames are delivered cut to it, with dev::PacketFlags::FrameTruncated.
  /// Default: what the backend delivers (caps().max_packet_size), within half the ring.
  /// @param bytes 60..caps().max_packet_size; start() also checks that it fits
  ///        twice in the ring (InvalidValue there).
  /// @return Ok; InvalidValue outside that range; BadState after start().
  Status set_max_packet_size(uint32_t bytes);
  /// @brief The most frames the engine takes from the backend in one request;
  ///        default 64 (within caps()).
  /// @param packets 1..caps().max_burst.
  /// @return Ok; InvalidValue outside that range; BadState after start().
  Status set_burst_size(uint32_t packets);
  /// @brief Where the ring lives (RingMem); default RingMem::Gpu.
  /// @param mem Device memory or pinned host memory.
  /// @return Ok; BadState after start().
  Status set_ring_mem(RingMem mem);
  /// @brief What the engine computes into each descriptor; default none.
  /// @param offloads The offloads to turn on.
  /// @return Ok; BadState after start().
  Status set_rx_offloads(RxOffloads offloads);
  /// @brief The NIC-engine thread that serves this queue, like a DPDK lcore: RX
  /// queues of one device with the same index share one thread. Default:
  /// from the spec's threads=T (queue q on thread q % T), else one per queue.
  /// @param index The engine thread's index.
  /// @return Ok; BadState after start().
  Status set_engine_thread(uint16_t index);
  /// @brief Pins the queue's engine thread to CPU core `core` (-1: not pinned).
  /// Default: the spec's cores= list, else not pinned.
  /// @param core A CPU number, or -1.
  /// @return Ok; InvalidValue for a core that is not a CPU number; BadState after start().
  Status set_engine_core(int core);
  /// @brief How the engine thread waits when idle.
  /// true: the engine thread spins when idle (lowest latency, a core at
  /// 100 %); false: it backs off. Default: the spec's poll=busy|backoff.
  /// @param busy Whether to spin.
  /// @return Ok; BadState after start().
  Status set_busy_poll(bool busy);
  /// @brief Datapath on this GPU: the ring is allocated in its memory at start().
  /// Without it the queue is on the host path (host_receive()).
  /// @param gpu An open GPU context.
  /// @return Ok; InvalidValue when `gpu` is not open; BadState after start().
  Status set_gpu(const Gpu& gpu);
  /// @brief Packet pool for the ring: count == num_strides, elem_size == stride size.
  /// Needs set_gpu() (start() checks both).
  /// @param pool The pool, allocated on the queue's GPU.
  /// @return Ok; BadState after start().
  Status set_packet_buffer(const BufArr& pool);
  /// @}

  /// @brief Starts the queue: Created or Configured to Started.
  ///
  /// With set_gpu(), the RX engine allocates the ring and starts polling the
  /// backend; without, the queue serves host_receive().
  /// @return Ok; BadState when the queue is not Created or Configured, when a
  ///         packet buffer was set without a GPU, or the GPU was closed;
  ///         InvalidValue when the max packet size does not fit twice in the
  ///         ring or the packet buffer does not match it; any error of the
  ///         engine's allocation.
  Status start();
  /// @brief Ends the source for an exact drain (an application stopping on a
  ///        signal).
  ///
  /// The engine asks the backend for no more frames, and keeps
  /// publishing and reclaiming what it already moved (frames in backend
  /// memory still go back as the consumer releases them). When it returns
  /// the engine's last request for frames has returned and every frame it
  /// took is published (producer index stored with release order, or its
  /// copy and index write queued on the engine's stream) or counted as
  /// dropped: stats().offered is final and equals packets + sum(dropped).
  /// at_end() turns true once the consumer released every published
  /// descriptor; stop the kernel then, and its count equals stats().packets.
  /// Frames the backend had read but not yet offered are not offered (a
  /// wire loses what arrives after it). Started queues only; a second call
  /// returns at once.
  /// @return Ok; BadState when the queue is not Started.
  Status stop_source();
  /// @brief Stops the queue's engine: Started to Stopped.
  /// @return Ok; BadState when the queue is not Started, or while a GPU
  ///         handle (GpuRxq) to it is alive: destroy the handle first.
  Status stop();
  /// @brief Releases the queue (stopping it first when Started): state Destroyed.
  /// BadState while a GPU handle (GpuRxq) to this queue is alive.
  /// @return Ok (also for an empty queue); BadState while a GpuRxq is alive.
  Status destroy();

  /// @brief Where the queue is in its lifecycle.
  /// @return The state; Destroyed for an empty queue.
  QueueState state() const noexcept;
  /// @brief The queue's counters, read while the engine runs.
  /// @return A snapshot (RxqStats); zeros for an empty queue.
  RxqStats stats() const noexcept;
  /// @brief The number of strides in the ring (set_num_strides()).
  /// @return Strides; 0 for an empty queue.
  uint32_t num_strides() const noexcept;
  /// @brief The bytes of each stride (set_stride_size()).
  /// @return Bytes; 0 for an empty queue.
  uint32_t stride_size() const noexcept;
  /// @brief The longest frame delivered uncut (set_max_packet_size()).
  /// @return Bytes: the value set, else the default; 0 for an empty queue.
  uint32_t max_packet_size() const noexcept;
  /// @brief The most frames per backend request (set_burst_size()).
  /// @return Frames; 0 for an empty queue.
  uint32_t burst_size() const noexcept;
  /// @brief Where the ring lives (set_ring_mem()).
  /// @return The ring memory; RingMem::Gpu for an empty queue.
  RingMem ring_mem() const noexcept;
  /// @brief The offloads on (set_rx_offloads()).
  /// @return The offloads; none for an empty queue.
  RxOffloads rx_offloads() const noexcept;

  /// @brief Host datapath, for a queue started without set_gpu(): up to max frames.
  ///
  /// The same rules as the NIC engine: empty frames are dropped, longer
  /// ones cut to max_packet_size(); the counters of stats() count them.
  /// @param max The most frames to return (at most burst_size() per call).
  /// @return The frames (none once the source ended); BadState when the queue
  ///         is not Started or its datapath is on a GPU; any backend error.
  Result<std::vector<HostFrame>> host_receive(size_t max);
  /// @brief True once a finite source is drained (or stop_source() ended it) and
  /// every packet was delivered (and, on a GPU datapath, released by the kernel).
  /// @return Whether the queue has nothing more to deliver; true for an empty queue.
  bool at_end() const noexcept;
  /// @brief Why the source stopped early (a corrupt capture, a backend failure).
  /// @return The error; ok while it is healthy or ended normally.
  Status source_status() const;

  /// @brief The implementation, for gnio's own layers.
  /// @return The shared implementation; null for an empty queue.
  std::shared_ptr<detail::RxqImpl> impl() const noexcept { return impl_; }

 private:
  friend class EthDevice;
  explicit EthRxq(std::shared_ptr<detail::RxqImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::RxqImpl> impl_;
};

/// @brief A TX queue of an EthDevice: its settings, its NIC engine, its
/// counters.
///
/// Lifecycle (calls out of this order return BadState):
/// 1. EthDevice::create_txq(): state Created.
/// 2. The setters, in any order but register_buffer() after set_gpu()
///    (state Configured).
/// 3. start(): state Started; with a GPU, the TX engine allocates the ring
///    and its staging slots and starts polling the doorbell.
/// 4. On a GPU datapath, GpuTxq::create() and a kernel that sends
///    (dev::Txq); on the host path, host_send() and flush().
/// 5. Stop the kernel and destroy the GpuTxq, then stop(): it waits for
///    what was pushed, completes the rest as dropped(stopped), flushes the
///    backend; state Stopped.
/// 6. destroy() (also run by the destructor): state Destroyed.
///
/// Move-only; host only. stats() may be read while the engine runs.
class EthTxq {
 public:
  /// @brief No queue: state() is Destroyed and every call but destroy() returns BadState.
  EthTxq() = default;
  /// @brief Takes over the other queue, which is left empty.
  EthTxq(EthTxq&&) noexcept = default;
  /// @brief Destroys this queue (the result is ignored), then takes over the other.
  /// @return `*this`.
  EthTxq& operator=(EthTxq&&) noexcept;
  /// @brief Calls destroy(). While a GPU handle (GpuTxq) is alive it logs an
  ///        error, and the ring stays alive until the handle is gone.
  ~EthTxq();

  /// @brief The number of descriptors in the ring; default 1024.
  /// @param descriptors A power of two, 2..caps().max_ring_entries.
  /// @return InvalidValue (naming value and limit) outside that range; BadState after start()
  Status set_depth(uint32_t descriptors);  // power of two
  /// @brief Limits the frames this queue sends.
  /// Default: what the backend can send (caps().max_packet_size: pcap-out and
  /// pcapng-out 256 KiB, AF_XDP/DPDK the port's frame size). On the device, TxBatch::set()
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
  /// @brief How the kernel submits (TxqType); default TxqType::Regular.
  /// @param type The queue type.
  /// @return Ok; NotSupported for WaitOnTime on a device without it; BadState after start().
  Status set_type(TxqType type);
  /// @brief Datapath on this GPU: the ring and its staging slots are allocated at start().
  /// Without it the queue is on the host path (host_send()).
  /// @param gpu An open GPU context.
  /// @return Ok; InvalidValue when `gpu` is not open; BadState after start().
  Status set_gpu(const Gpu& gpu);
  /// @brief A TX buffer pool the kernel may send from (zero-copy from RX rings on
  /// the same GPU is registered automatically).
  /// @param pool The pool: allocated on the queue's GPU, elements at least
  ///        max_packet_size() bytes.
  /// @return Ok; BadState before set_gpu() or after start(); InvalidValue for
  ///         a pool on another GPU or with smaller elements.
  Status register_buffer(const BufArr& pool);

  /// @brief Starts the queue: Created or Configured to Started.
  ///
  /// With set_gpu(), the TX engine allocates the ring and starts polling
  /// its doorbell; without, the queue serves host_send().
  /// @return Ok; BadState when the queue is not Created or Configured, or the
  ///         GPU was closed; any error of the engine's allocation.
  Status start();
  /// @brief Waits up to timeout_ms for queued descriptors to be sent, then stops.
  ///
  /// What was pushed and not sent by then completes as
  /// dropped(TxDropReason::Stopped); the backend is flushed. Started to Stopped.
  /// @param timeout_ms How long to wait for the pushed descriptors, in milliseconds.
  /// @return Ok; Timeout when pushed descriptors were left unsent (the queue
  ///         stops all the same); BadState when the queue is not Started, or
  ///         while a GPU handle (GpuTxq) to it is alive; any error of the flush.
  Status stop(uint32_t timeout_ms = 1000);
  /// @brief Releases the queue (stopping it first when Started): state Destroyed.
  /// @return Ok (also for an empty queue); BadState while a GpuTxq is alive;
  ///         an error of stop() (the queue is destroyed all the same).
  Status destroy();

  /// @brief Where the queue is in its lifecycle.
  /// @return The state; Destroyed for an empty queue.
  QueueState state() const noexcept;
  /// @brief The queue's counters, read while the engine runs.
  /// @return A snapshot (TxqStats); zeros for an empty queue.
  TxqStats stats() const noexcept;
  /// @brief The number of descriptors in the ring (set_depth()).
  /// @return Descriptors; 0 for an empty queue.
  uint32_t depth() const noexcept;
  /// @brief The longest frame the queue sends (set_max_packet_size()).
  /// @return Bytes; 0 for an empty queue.
  uint32_t max_packet_size() const noexcept;
  /// @brief The staging slot size start() allocates (or allocated) for this queue.
  /// @return bytes per slot, a multiple of 64; 0 for a destroyed queue
  uint32_t staging_slot_size() const noexcept;
  /// @brief How the kernel submits (set_type()).
  /// @return The type; TxqType::Regular for an empty queue.
  TxqType type() const noexcept;

  /// @brief Host datapath, for a queue started without set_gpu(): returns frames sent.
  /// @param frames The frames, each at most max_packet_size() bytes.
  /// @return The number of frames the backend accepted, from the first (a
  ///         short count: send the rest later); BadState when the queue is not
  ///         Started or its datapath is on a GPU; InvalidValue for a frame
  ///         over the max packet size (nothing sent); any backend error.
  Result<size_t> host_send(std::span<const std::span<const uint8_t>> frames);
  /// @brief Makes everything sent so far durable or visible (pcap-out flushes its file).
  /// @return Ok; BadState for an empty queue; any backend error (pcapng-out:
  ///         the first write error since the last flush, with the frames it dropped).
  Status flush();

  /// @brief The implementation, for gnio's own layers.
  /// @return The shared implementation; null for an empty queue.
  std::shared_ptr<detail::TxqImpl> impl() const noexcept { return impl_; }

 private:
  friend class EthDevice;
  explicit EthTxq(std::shared_ptr<detail::TxqImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::TxqImpl> impl_;
};

}  // namespace gnio
