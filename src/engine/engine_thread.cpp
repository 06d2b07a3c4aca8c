// SPDX-License-Identifier: Apache-2.0
#include "engine/engine_thread.hpp"
#include "engine/numa.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "core/log.hpp"
#include "engine/rx_engine.hpp"
#include "engine/queue_state.hpp"
#include "gnio/dev/thread.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio::detail {

namespace {

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

uint64_t monotonic_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

}  // namespace

Result<std::shared_ptr<EngineThread>> thread_for_queue(RxqImpl& q) {
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

EngineThread::~EngineThread() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

Status EngineThread::attach(RxEngine* e) {
  std::lock_guard lock(mu_);
  engines_.push_back(e);
  if (thread_.joinable()) return Status::ok();
  thread_ = std::thread([this] { run(); });
  // Named like the lcores of other packet frameworks, so that top -H, perf
  // and gdb show which threads are gnio's engines.
  pthread_setname_np(thread_.native_handle(), "gnio-rx-engine");
  if (core_ >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core_, &set);
    if (int err = pthread_setaffinity_np(thread_.native_handle(), sizeof(set), &set); err != 0) {
      // The engine works unpinned; say why it is not where it was asked to be.
      log::warn("rx-engine", "pinning the engine thread to core " + std::to_string(core_) +
                                 " failed: " + std::strerror(err) + "; it runs unpinned (check the cores= list)");
    }
    return Status::ok();
  }
  // Not pinned: the CPUs of the NUMA node of the GPU its first queue fills,
  // where sysfs tells (a ring's writes then stay on the GPU's socket).
  const std::vector<int> near = cpus_near_pci_device("/sys", e->gpu().bus_id);
  if (!near.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : near)
      if (c < CPU_SETSIZE) CPU_SET(c, &set);
    if (int err = pthread_setaffinity_np(thread_.native_handle(), sizeof(set), &set); err != 0)
      log::warn("rx-engine", "keeping the engine thread on the NUMA node of GPU " + e->gpu().bus_id + " failed: " +
                                 std::strerror(err) + "; it runs on any CPU");
    else
      log::info("rx-engine", "engine thread on the " + std::to_string(near.size()) + " CPUs of the NUMA node of GPU " +
                                 e->gpu().bus_id);
  }
  return Status::ok();
}

void EngineThread::detach(RxEngine* e) {
  std::lock_guard lock(mu_);
  engines_.erase(std::remove(engines_.begin(), engines_.end(), e), engines_.end());
}

void EngineThread::run() {
  const GpuImpl* bound = nullptr;
  uint32_t idle = 0;
  // One clock read per turn: each turn runs from the end of the one before.
  uint64_t last = monotonic_ns();
  uint64_t waited = 0;  // the wait before this round, idle time of every queue
  while (!stop_.load(std::memory_order_relaxed)) {
    bool progressed = false;
    {
      std::lock_guard lock(mu_);
      for (RxEngine* e : engines_) {
        // Queues of one thread may sit on different GPUs.
        if (&e->gpu() != bound && e->gpu().bind_thread()) bound = &e->gpu();
        const bool work = e->poll();
        const uint64_t now = monotonic_ns();
        e->count_turn(work, now - last, waited);
        last = now;
        progressed |= work;
      }
    }
    if (progressed) {
      idle = 0;
    } else if (busy_poll_) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    } else {
      dev::host_backoff(++idle);
    }
    const uint64_t now = monotonic_ns();
    waited = now - last;
    last = now;
  }
}

}  // namespace gnio::detail
