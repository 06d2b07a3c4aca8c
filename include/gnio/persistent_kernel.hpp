// Layer 4: one long-running kernel per GPU per direction. It polls RX queues,
// processes packets in place and sends through TX queues until the host
// sets its exit flag; per-block heartbeats and counters are readable while
// it runs, so a hung kernel is found, never silently waited on.
//
// A kernel is a copyable functor with
//   GNIO_HD void operator()(const gnio::dev::KernelCtx& ctx) const;
// Write it in a .cu file: gnio_kernel_sources() in CMake compiles it with
// nvcc when CUDA is present and as C++ for the emulated device otherwise.
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

struct LaunchConfig {
  uint32_t grid = 1;    // blocks (on the emulated device: CPU threads)
  uint32_t block = 256; // threads per block (1 on the emulated device)
  std::string name = "persistent";
  // Names of the values a block passes to ctx.set_stage() (index = value).
  std::vector<std::string> stage_names;
  // Hang detection: a block still inside its loop whose heartbeat has not
  // moved for hang_timeout while has_work(block) says its queue has packets
  // waiting is hung. 0 turns the verdict (and the watcher that logs it) off.
  std::chrono::milliseconds hang_timeout{0};
  // Whether block b has work waiting (e.g. its RX queue delivered packets it
  // has not released); empty: always assumed.
  std::function<bool(uint32_t block)> has_work;
};

// What the host knows of one block's liveness.
struct BlockHealth {
  uint32_t block = 0;
  uint64_t heartbeat = 0;
  std::chrono::nanoseconds heartbeat_age{0};  // since the heartbeat last moved (as seen by the host)
  uint32_t stage = 0;
  std::string stage_name;
  bool exited = false;
  bool work_waiting = false;
  bool hung = false;
};

struct KernelTotals {
  uint64_t packets = 0, bytes = 0, bursts = 0, again = 0, errors = 0, user = 0;
};

namespace detail {
struct KernelRuntime;
Result<std::shared_ptr<KernelRuntime>> prepare_kernel(const Gpu& gpu, const LaunchConfig& cfg);
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

class PersistentKernel {
 public:
  template <typename K>
  static Result<PersistentKernel> launch(const Gpu& gpu, const LaunchConfig& cfg, const K& kernel);

  PersistentKernel() = default;
  PersistentKernel(PersistentKernel&&) noexcept = default;
  PersistentKernel& operator=(PersistentKernel&&) noexcept;
  ~PersistentKernel();

  // Sets the exit flag and waits for every block to leave its loop. On
  // timeout returns Timeout naming the blocks whose heartbeat stalled; the
  // kernel is then still running and stop() may be called again.
  Status stop(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  bool running() const;

  std::vector<dev::BlockCounters> counters() const;
  KernelTotals totals() const;
  // Blocks still inside their loop whose heartbeat did not move in `window`.
  std::vector<uint32_t> stalled_blocks(std::chrono::milliseconds window) const;
  // Heartbeat age, stage and hang verdict of every block, now. Ages count
  // from the moment the host last saw the heartbeat move: from launch, from
  // an earlier health() call or from the hang watcher's last look.
  std::vector<BlockHealth> health() const;
  const LaunchConfig& config() const;

 private:
  explicit PersistentKernel(std::shared_ptr<detail::KernelRuntime> rt) : rt_(std::move(rt)) {}
  std::shared_ptr<detail::KernelRuntime> rt_;
};

template <typename K>
Result<PersistentKernel> PersistentKernel::launch(const Gpu& gpu, const LaunchConfig& cfg, const K& kernel) {
  auto rt = detail::prepare_kernel(gpu, cfg);
  if (!rt) return rt.status();
  if (gpu.emulated()) {
    GNIO_TRY(detail::start_emulated(**rt, [kernel](const dev::KernelCtx& ctx) { kernel(ctx); }));
    return PersistentKernel(std::move(*rt));
  }
#if defined(__CUDACC__)
  const dev::KernelCtx ctx = detail::kernel_ctx(**rt);
  detail::persistent_entry<K>
      <<<cfg.grid, cfg.block, 0, static_cast<cudaStream_t>(detail::kernel_stream(**rt))>>>(kernel, ctx);
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
