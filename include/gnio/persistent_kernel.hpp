// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Layer 4: one long-running (persistent) kernel per GPU per
/// direction.
///
/// The kernel polls RX queues, processes packets in place and sends
/// through TX queues until the host sets its exit flag; per-block
/// heartbeats and counters are readable while it runs, so a hung kernel is
/// found, never silently waited on.
///
/// A kernel is a copyable functor with
/// @code
///   GNIO_HD void operator()(const gnio::dev::KernelCtx& ctx) const;
/// @endcode
/// whose body loops while `ctx.running()`, calls `ctx.heartbeat()` once per
/// iteration and never waits without a timeout. Write it in a .cu file:
/// gnio_kernel_sources() in CMake compiles it with nvcc when CUDA is
/// present and as C++ for the emulated device otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gnio/dev/kernel.hpp"
#include "gnio/gpu.hpp"
#include "gnio/status.hpp"

namespace gnio {

/// @brief How PersistentKernel::launch() starts a kernel, and how its
/// health is judged.
struct LaunchConfig {
  /// Blocks; 0 sizes the grid to the GPU: as many blocks of this kernel
  /// as its multiprocessors hold at once (SM count x occupancy), or on the
  /// emulated device, where each block is a CPU thread, one per CPU core
  /// (at most 256). A persistent kernel's blocks must all be resident, so
  /// a larger grid is refused. config().grid is the grid launched.
  uint32_t grid = 1;
  /// Threads per block, 1..1024 (on the emulated device a block runs as one
  /// thread whatever this says).
  uint32_t block = 256;
  /// The kernel's name in logs and error messages.
  std::string name = "persistent";
  /// Names of the values a block passes to dev::KernelCtx::set_stage()
  /// (index = value), used by BlockHealth::stage_name and in hang reports.
  std::vector<std::string> stage_names;
  /// Hang detection: a block still inside its loop whose heartbeat has not
  /// moved for hang_timeout while has_work(block) says it has work waiting
  /// is hung. 0 turns the verdict (and the watcher thread that logs it) off.
  std::chrono::milliseconds hang_timeout{0};
  /// Whether block `block` has work waiting (e.g. its RX queue delivered
  /// packets it has not released); empty: always assumed. Called on host
  /// threads (the watcher and callers of PersistentKernel::health()), so
  /// it must be thread-safe.
  std::function<bool(uint32_t block)> has_work;
};

/// @brief What the host knows of one block's liveness
/// (PersistentKernel::health()).
struct BlockHealth {
  uint32_t block = 0;      ///< Block index, 0..grid-1.
  uint64_t heartbeat = 0;  ///< The block's published heartbeat (loop iterations).
  /// Time since the host last saw the heartbeat move.
  std::chrono::nanoseconds heartbeat_age{0};
  uint32_t stage = 0;      ///< The value the block last passed to set_stage().
  std::string stage_name;  ///< LaunchConfig::stage_names[stage], or the number as text.
  bool exited = false;     ///< The block has left its loop.
  bool work_waiting = false;  ///< LaunchConfig::has_work said yes (false once exited).
  /// Inside its loop, work waiting, and heartbeat_age >= hang_timeout
  /// (never with a hang_timeout of 0).
  bool hung = false;
};

/// @brief The published counters of every block, summed
/// (PersistentKernel::totals()); each field as in dev::BlockCounters.
struct KernelTotals {
  uint64_t packets = 0;  ///< Packets the kernel counted (dev::KernelCtx::count_packets()).
  uint64_t bytes = 0;    ///< Bytes the kernel counted.
  uint64_t bursts = 0;   ///< Bursts received (dev::KernelCtx::count_burst()).
  uint64_t again = 0;    ///< TX reservations refused because the ring was full.
  uint64_t errors = 0;   ///< Errors the kernel counted.
  uint64_t user = 0;     ///< The application's own counter.
};

namespace detail {
struct KernelRuntime;
// Blocks of cfg.block threads of the kernel entry `entry` that one
// multiprocessor of `gpu` holds at once; 0 on the emulated device.
Result<uint32_t> resident_per_sm(const Gpu& gpu, const LaunchConfig& cfg, const void* entry);
// Checks and sizes the grid (per_sm: resident_per_sm()) and allocates the
// kernel's exit flag and counters.
Result<std::shared_ptr<KernelRuntime>> prepare_kernel(const Gpu& gpu, const LaunchConfig& cfg, uint32_t per_sm);
// The grid prepare_kernel() settled.
uint32_t kernel_grid(const KernelRuntime& rt);
dev::KernelCtx kernel_ctx(const KernelRuntime& rt);
void* kernel_stream(const KernelRuntime& rt);
Status kernel_launched(KernelRuntime& rt, int cuda_error);
Status start_emulated(KernelRuntime& rt, std::function<void(const dev::KernelCtx&)> body);

#if defined(__CUDACC__)
template <typename K>
__global__ void persistent_entry(K kernel, dev::KernelCtx ctx) {
  kernel(ctx);
  ctx.mark_exited();
}
#endif
}  // namespace detail

/// @brief A running persistent kernel: its exit flag, per-block counters
/// and health.
///
/// Lifecycle: launch() → (counters(), health() while it runs) → stop().
/// While it runs, the GPU handles and the Gpu it uses refuse to be
/// destroyed or closed (BadState). Move-only; host only.
class PersistentKernel {
 public:
  /// @brief Launches `kernel` with `cfg.grid` blocks of `cfg.block` threads.
  ///
  /// On a CUDA GPU the kernel runs on a non-blocking stream of its own; on
  /// the emulated device each block is a CPU thread running a copy of
  /// `kernel`. Each block's counters are zeroed, and once the body returns
  /// the block publishes them a last time and marks itself exited.
  /// @tparam K A copyable functor with
  ///         `GNIO_HD void operator()(const dev::KernelCtx&) const`.
  /// @param gpu The open GPU context to run on.
  /// @param cfg Grid, block, name and health settings (copied).
  /// @param kernel The functor, copied to the device (or to each CPU thread).
  /// @return The running kernel, or: BadState when `gpu` is not open;
  ///         InvalidValue for a block outside 1..1024, more blocks than
  ///         the GPU holds at once, or more than 256 blocks on the
  ///         emulated device; NotSupported
  ///         (Axis::Cuda) on a CUDA GPU when the caller was not compiled
  ///         by nvcc; any error of Gpu::alloc(); the mapped CUDA error when
  ///         the stream cannot be created or the launch fails.
  template <typename K>
  static Result<PersistentKernel> launch(const Gpu& gpu, const LaunchConfig& cfg, const K& kernel);

  /// @brief No kernel: running() is false, the readers return empty lists.
  PersistentKernel() = default;
  /// @brief Takes over the other kernel, which is left empty.
  PersistentKernel(PersistentKernel&&) noexcept = default;
  /// @brief Stops this kernel if it runs (default timeout, result ignored),
  ///        then takes over the other.
  /// @return `*this`.
  PersistentKernel& operator=(PersistentKernel&&) noexcept;
  /// @brief Stops the kernel if it runs. When that times out it logs an
  ///        error and hands the kernel's memory to the GPU context, which
  ///        keeps it until the kernel is gone.
  ~PersistentKernel();

  /// @brief Sets the exit flag and waits for every block to leave its loop.
  ///
  /// Blocks see the flag within about 50 µs of wait_clock time
  /// (dev::KernelCtx::running()).
  /// @param timeout How long to wait for the blocks.
  /// @return Ok once every block exited (also when already stopped);
  ///         Timeout naming the blocks whose heartbeat stalled (the kernel
  ///         is then still running and stop() may be called again);
  ///         BadState for a kernel never launched; the mapped CUDA error
  ///         when the kernel failed on the GPU.
  Status stop(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  /// @brief Whether the kernel was launched and not yet stopped.
  /// @return True from a successful launch() until a stop() that returned
  ///         after every block exited.
  bool running() const;

  /// @brief The counters every block published, now.
  ///
  /// A block publishes at most every 20 µs of its wait_clock and at exit,
  /// from its heartbeat, so counts lag by that much or one loop iteration.
  /// @return One dev::BlockCounters per block (reserved words zero); empty
  ///         for a kernel never launched.
  std::vector<dev::BlockCounters> counters() const;
  /// @brief counters() summed over the blocks.
  /// @return The sums; all zero for a kernel never launched.
  KernelTotals totals() const;
  /// @brief The blocks still inside their loop whose heartbeat did not move
  ///        during `window`.
  ///
  /// Blocks the calling thread for `window` (it reads the counters, sleeps,
  /// reads them again).
  /// @param window How long to watch.
  /// @return Block indices, ascending.
  std::vector<uint32_t> stalled_blocks(std::chrono::milliseconds window) const;
  /// @brief Heartbeat age, stage and hang verdict of every block, now.
  ///
  /// Ages count from the moment the host last saw the heartbeat move: from
  /// launch, from an earlier health() call or from the hang watcher's last
  /// look. Thread-safe.
  /// @return One BlockHealth per block; empty for a kernel never launched.
  std::vector<BlockHealth> health() const;
  /// @brief The configuration the kernel was launched with.
  /// @return The LaunchConfig copy; a default one for a kernel never launched.
  const LaunchConfig& config() const;

 private:
  explicit PersistentKernel(std::shared_ptr<detail::KernelRuntime> rt) : rt_(std::move(rt)) {}
  std::shared_ptr<detail::KernelRuntime> rt_;
};

template <typename K>
Result<PersistentKernel> PersistentKernel::launch(const Gpu& gpu, const LaunchConfig& cfg, const K& kernel) {
  uint32_t per_sm = 0;
#if defined(__CUDACC__)
  if (!gpu.emulated()) {
    auto n = detail::resident_per_sm(gpu, cfg, reinterpret_cast<const void*>(&detail::persistent_entry<K>));
    if (!n) return n.status();
    per_sm = *n;
  }
#endif
  auto rt = detail::prepare_kernel(gpu, cfg, per_sm);
  if (!rt) return rt.status();
  if (gpu.emulated()) {
    GNIO_TRY(detail::start_emulated(**rt, [kernel](const dev::KernelCtx& ctx) { kernel(ctx); }));
    return PersistentKernel(std::move(*rt));
  }
#if defined(__CUDACC__)
  const dev::KernelCtx ctx = detail::kernel_ctx(**rt);
  detail::persistent_entry<K>
      <<<detail::kernel_grid(**rt), cfg.block, 0, static_cast<cudaStream_t>(detail::kernel_stream(**rt))>>>(kernel,
                                                                                                             ctx);
  GNIO_TRY(detail::kernel_launched(**rt, static_cast<int>(cudaGetLastError())));
  return PersistentKernel(std::move(*rt));
#else
  (void)kernel;
  return Status(Errc::NotSupported, Layer::Kernel,
                "kernel \"" + cfg.name + "\" was compiled without CUDA, so it can run only on the emulated "
                "device (\"cpu\"); compile it with nvcc (gnio_kernel_sources in CMake) to run on " + gpu.bus_id(),
                Axis::Cuda);
#endif
}

}  // namespace gnio
