// SPDX-License-Identifier: Apache-2.0
#include "gnio/persistent_kernel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/log.hpp"
#include "gnio/dev/atomic.hpp"
#include "gpu/cuda_util.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio {

namespace detail {

struct KernelRuntime {
  std::shared_ptr<GpuImpl> gpu;
  LaunchConfig cfg;
  DeviceMemory exit_flag;  // CpuGpu
  DeviceMemory published;  // CpuGpu, BlockCounters per block
  DeviceMemory shadow;     // Gpu, BlockCounters per block
  bool running = false;
  std::vector<std::thread> threads;  // emulated blocks
  std::atomic<uint32_t> emulated_exited{0};
#if GNIO_HAVE_CUDA
  cudaStream_t stream = nullptr;
#endif
  // Heartbeat as the host last saw it move, per block (hang detection).
  mutable std::mutex health_mu;
  mutable std::vector<uint64_t> seen_heartbeat;
  mutable std::vector<std::chrono::steady_clock::time_point> seen_moving;
  // The hang watcher: logs each block's hung/recovered transitions.
  std::thread watcher;
  std::mutex watch_mu;
  std::condition_variable watch_cv;
  bool watch_stop = false;

  ~KernelRuntime() { stop_watcher(); }

  void start_health(bool watch) {
    seen_heartbeat.assign(cfg.grid, 0);
    seen_moving.assign(cfg.grid, std::chrono::steady_clock::now());
    if (watch && cfg.hang_timeout.count() > 0) watcher = std::thread([this] { watch_loop(); });
  }
  void stop_watcher() {
    {
      std::lock_guard lock(watch_mu);
      watch_stop = true;
    }
    watch_cv.notify_all();
    if (watcher.joinable()) watcher.join();
  }
  void watch_loop() {
    const auto period = std::max(std::chrono::milliseconds(10), cfg.hang_timeout / 4);
    std::vector<bool> hung(cfg.grid, false);
    std::unique_lock lock(watch_mu);
    while (!watch_cv.wait_for(lock, period, [this] { return watch_stop; })) {
      for (const BlockHealth& h : health()) {
        if (h.hung == hung[h.block]) continue;
        hung[h.block] = h.hung;
        const auto age_ms = std::chrono::duration_cast<std::chrono::milliseconds>(h.heartbeat_age).count();
        if (h.hung)
          log::warn("kernel", "kernel \"" + cfg.name + "\" block " + std::to_string(h.block) +
                                  " is hung: heartbeat " + std::to_string(h.heartbeat) + " has not moved for " +
                                  std::to_string(age_ms) + " ms while its queue has packets waiting; last stage " +
                                  h.stage_name + "; find the wait without a timeout in that stage");
        else
          log::info("kernel", "kernel \"" + cfg.name + "\" block " + std::to_string(h.block) +
                                  " is moving again (heartbeat " + std::to_string(h.heartbeat) + ", stage " +
                                  h.stage_name + ")");
      }
    }
  }
  std::string stage_name(uint64_t stage) const {
    if (stage < cfg.stage_names.size()) return cfg.stage_names[stage];
    return std::to_string(stage);
  }
  std::vector<BlockHealth> health() const {
    std::vector<BlockHealth> out(cfg.grid);
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(health_mu);
    for (uint32_t b = 0; b < cfg.grid; ++b) {
      auto* c = const_cast<dev::BlockCounters*>(&counters()[b]);
      BlockHealth& h = out[b];
      h.block = b;
      h.exited = dev::load_acquire(&c->exited) != 0;
      h.heartbeat = dev::load_relaxed(&c->heartbeat);
      h.stage = static_cast<uint32_t>(dev::load_relaxed(&c->stage));
      h.stage_name = stage_name(h.stage);
      if (h.heartbeat != seen_heartbeat[b]) {
        seen_heartbeat[b] = h.heartbeat;
        seen_moving[b] = now;
      }
      h.heartbeat_age = now - seen_moving[b];
      h.work_waiting = h.exited ? false : (cfg.has_work ? cfg.has_work(b) : true);
      h.hung = !h.exited && cfg.hang_timeout.count() > 0 && h.work_waiting && h.heartbeat_age >= cfg.hang_timeout;
    }
    return out;
  }

  const dev::BlockCounters* counters() const {
    return static_cast<const dev::BlockCounters*>(published.host_ptr());
  }
  bool finished(Status& error) {
    if (gpu->emulated) return emulated_exited.load() == cfg.grid;
#if GNIO_HAVE_CUDA
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaErrorNotReady) return false;
    if (e != cudaSuccess) error = cuda_status(e, "persistent kernel \"" + cfg.name + "\"");
#else
    (void)error;  // without CUDA every kernel is emulated
#endif
    return true;
  }
  void finish() {
    stop_watcher();
    running = false;
    for (auto& t : threads) t.join();
    threads.clear();
#if GNIO_HAVE_CUDA
    if (stream) {
      cudaStreamDestroy(stream);
      stream = nullptr;
    }
#endif
    if (gpu->live_kernels.fetch_sub(1) == 1) gpu->release_deferred();
  }
};

Result<uint32_t> resident_per_sm(const Gpu& gpu, const LaunchConfig& cfg, const void* entry) {
  if (gpu.emulated() || !gpu.impl() || cfg.block == 0 || cfg.block > 1024) return 0u;  // prepare_kernel() says why
#if GNIO_HAVE_CUDA
  GNIO_TRY(gpu.impl()->bind_thread());
  int n = 0;
  GNIO_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, entry, static_cast<int>(cfg.block), 0),
                "asking how many blocks of " + std::to_string(cfg.block) + " threads of kernel \"" + cfg.name +
                    "\" a multiprocessor of " + gpu.bus_id() + " holds");
  if (n <= 0)
    return Status(Errc::InvalidValue, Layer::Kernel,
                  "kernel \"" + cfg.name + "\" with blocks of " + std::to_string(cfg.block) + " threads fits no " +
                      "multiprocessor of " + gpu.bus_id() + " (registers or shared memory); use smaller blocks");
  return static_cast<uint32_t>(n);
#else
  (void)entry;
  return 0u;
#endif
}

uint32_t kernel_grid(const KernelRuntime& rt) { return rt.cfg.grid; }

Result<std::shared_ptr<KernelRuntime>> prepare_kernel(const Gpu& gpu, const LaunchConfig& requested, uint32_t per_sm) {
  LaunchConfig cfg = requested;
  if (!gpu.impl() || gpu.impl()->closed.load())
    return Status(Errc::BadState, Layer::Kernel, "launching kernel \"" + cfg.name + "\" on a Gpu that is not open");
  if (cfg.block == 0 || cfg.block > 1024)
    return Status(Errc::InvalidValue, Layer::Kernel,
                  "kernel \"" + cfg.name + "\" launch with blocks of " + std::to_string(cfg.block) +
                      " threads; use 1..1024 threads");
  constexpr uint32_t kEmulatedMax = 256;
  const uint32_t sms = static_cast<uint32_t>(std::max(gpu.impl()->info.multiprocessors, 0));
  const uint32_t resident = gpu.emulated() ? kEmulatedMax : per_sm * sms;
  if (cfg.grid == 0) {
    cfg.grid = gpu.emulated() ? std::clamp(std::thread::hardware_concurrency(), 1u, kEmulatedMax) : resident;
    log::info("kernel", "\"" + cfg.name + "\": " + std::to_string(cfg.grid) + " blocks, sized to " +
                            (gpu.emulated() ? std::string("the CPU cores of the emulated device")
                                            : gpu.bus_id() + " (" + std::to_string(sms) + " multiprocessors x " +
                                                  std::to_string(per_sm) + " blocks of " +
                                                  std::to_string(cfg.block) + " threads)"));
  }
  if (gpu.emulated() && cfg.grid > kEmulatedMax)
    return Status(Errc::InvalidValue, Layer::Kernel,
                  "emulated kernel \"" + cfg.name + "\" with " + std::to_string(cfg.grid) +
                      " blocks: each block is a CPU thread; use at most " + std::to_string(kEmulatedMax) +
                      " (0 sizes the grid to the CPU cores)");
  if (!gpu.emulated() && resident > 0 && cfg.grid > resident)
    return Status(Errc::InvalidValue, Layer::Kernel,
                  "kernel \"" + cfg.name + "\" with " + std::to_string(cfg.grid) + " blocks of " +
                      std::to_string(cfg.block) + " threads: " + gpu.bus_id() + " holds at most " +
                      std::to_string(resident) + " at once (" + std::to_string(sms) + " multiprocessors x " +
                      std::to_string(per_sm) + "), and a persistent kernel's blocks must all run at once; use at "
                      "most " + std::to_string(resident) + " blocks, or 0 to size the grid to the GPU");
  if (cfg.grid == 0)
    return Status(Errc::InvalidValue, Layer::Kernel,
                  "kernel \"" + cfg.name + "\": the grid could not be sized to " + gpu.bus_id() +
                      " (its multiprocessor count is unknown); give LaunchConfig::grid explicitly");
  auto rt = std::make_shared<KernelRuntime>();
  rt->gpu = gpu.impl();
  rt->cfg = cfg;
  const size_t counters_bytes = sizeof(dev::BlockCounters) * cfg.grid;
  auto flag = rt->gpu->alloc(128, MemKind::CpuGpu, 128);
  if (!flag) return flag.status();
  auto pub = rt->gpu->alloc(counters_bytes, MemKind::CpuGpu, 128);
  if (!pub) return pub.status();
  auto shadow = rt->gpu->alloc(counters_bytes, MemKind::Gpu, 128);
  if (!shadow) return shadow.status();
  rt->exit_flag = std::move(*flag);
  rt->published = std::move(*pub);
  rt->shadow = std::move(*shadow);
#if GNIO_HAVE_CUDA
  if (!gpu.emulated()) {
    GNIO_TRY(rt->gpu->bind_thread());
    GNIO_CUDA_TRY(cudaStreamCreateWithFlags(&rt->stream, cudaStreamNonBlocking),
                  "creating the stream of kernel \"" + cfg.name + "\"");
  }
#endif
  return rt;
}

dev::KernelCtx kernel_ctx(const KernelRuntime& rt) {
  return dev::KernelCtx(static_cast<const uint32_t*>(rt.exit_flag.device_ptr()),
                        static_cast<dev::BlockCounters*>(rt.published.device_ptr()),
                        static_cast<dev::BlockCounters*>(rt.shadow.device_ptr()));
}

void* kernel_stream(const KernelRuntime& rt) {
#if GNIO_HAVE_CUDA
  return rt.stream;
#else
  (void)rt;
  return nullptr;
#endif
}

Status kernel_launched(KernelRuntime& rt, int cuda_error) {
#if GNIO_HAVE_CUDA
  if (cuda_error != cudaSuccess)
    return cuda_status(static_cast<cudaError_t>(cuda_error),
                       "launching kernel \"" + rt.cfg.name + "\" (" + std::to_string(rt.cfg.grid) + " x " +
                           std::to_string(rt.cfg.block) + ")");
#else
  (void)cuda_error;
#endif
  rt.running = true;
  rt.gpu->live_kernels.fetch_add(1);
  rt.start_health(true);
  log::info("kernel", "launched \"" + rt.cfg.name + "\" on " + rt.gpu->bus_id);
  return Status::ok();
}

Status start_emulated(KernelRuntime& rt, std::function<void(const dev::KernelCtx&)> body) {
  const dev::KernelCtx ctx = kernel_ctx(rt);
  rt.running = true;
  rt.gpu->live_kernels.fetch_add(1);
  for (uint32_t b = 0; b < rt.cfg.grid; ++b) {
    rt.threads.emplace_back([&rt, body, ctx, b] {
      dev::emulated_thread = {b, rt.cfg.grid};
      body(ctx);
      ctx.mark_exited();
      rt.emulated_exited.fetch_add(1);
    });
  }
  rt.start_health(true);
  return Status::ok();
}

}  // namespace detail

PersistentKernel& PersistentKernel::operator=(PersistentKernel&& o) noexcept {
  if (this != &o) {
    if (running()) stop();
    rt_ = std::move(o.rt_);
  }
  return *this;
}

PersistentKernel::~PersistentKernel() {
  if (!running()) return;
  Status s = stop();
  if (s) return;
  log::error("kernel", "a persistent kernel is still running at destruction: " + s.to_string());
  // Its memory must outlive it: hand the runtime to the GPU context.
  for (auto& t : rt_->threads) t.detach();
  rt_->threads.clear();
  rt_->gpu->defer(rt_);
}

bool PersistentKernel::running() const { return rt_ && rt_->running; }

Status PersistentKernel::stop(std::chrono::milliseconds timeout) {
  if (!rt_) return {Errc::BadState, Layer::Kernel, "stop on a kernel that was never launched"};
  if (!rt_->running) return Status::ok();
  dev::store_release(static_cast<uint32_t*>(rt_->exit_flag.host_ptr()), 1u);
  Status error;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!rt_->finished(error)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      auto stalled = stalled_blocks(std::chrono::milliseconds(100));
      std::string list;
      for (uint32_t b : stalled) {
        if (!list.empty()) list += ',';
        list += std::to_string(b);
      }
      uint32_t inside = 0;
      for (uint32_t b = 0; b < rt_->cfg.grid; ++b) inside += rt_->counters()[b].exited == 0;
      return {Errc::Timeout, Layer::Kernel,
              "kernel \"" + rt_->cfg.name + "\" on " + rt_->gpu->bus_id + " did not exit " +
                  std::to_string(timeout.count()) +
                  " ms after its exit flag was set; " + std::to_string(inside) + " of " +
                  std::to_string(rt_->cfg.grid) + " blocks still inside their loop, heartbeat stalled in blocks [" +
                  list + "]; the kernel must poll ctx.running() and not wait without a timeout"};
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  rt_->finish();
  return error;
}

std::vector<dev::BlockCounters> PersistentKernel::counters() const {
  if (!rt_) return {};
  std::vector<dev::BlockCounters> out(rt_->cfg.grid);
  for (uint32_t b = 0; b < rt_->cfg.grid; ++b) {
    auto* src = const_cast<dev::BlockCounters*>(&rt_->counters()[b]);
    out[b] = {dev::load_relaxed(&src->heartbeat), dev::load_relaxed(&src->packets), dev::load_relaxed(&src->bytes),
              dev::load_relaxed(&src->bursts),    dev::load_relaxed(&src->again),   dev::load_relaxed(&src->errors),
              dev::load_relaxed(&src->user),      dev::load_acquire(&src->exited), dev::load_relaxed(&src->stage),
              {}};
  }
  return out;
}

KernelTotals PersistentKernel::totals() const {
  KernelTotals t;
  for (const auto& c : counters()) {
    t.packets += c.packets;
    t.bytes += c.bytes;
    t.bursts += c.bursts;
    t.again += c.again;
    t.errors += c.errors;
    t.user += c.user;
  }
  return t;
}

std::vector<uint32_t> PersistentKernel::stalled_blocks(std::chrono::milliseconds window) const {
  auto before = counters();
  std::this_thread::sleep_for(window);
  auto after = counters();
  std::vector<uint32_t> stalled;
  for (uint32_t b = 0; b < after.size(); ++b)
    if (!after[b].exited && after[b].heartbeat == before[b].heartbeat) stalled.push_back(b);
  return stalled;
}

std::vector<BlockHealth> PersistentKernel::health() const {
  if (!rt_) return {};
  return rt_->health();
}

const LaunchConfig& PersistentKernel::config() const {
  static const LaunchConfig none;
  return rt_ ? rt_->cfg : none;
}

}  // namespace gnio
