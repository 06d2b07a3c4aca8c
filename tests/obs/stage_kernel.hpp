// SPDX-License-Identifier: Apache-2.0
// The kernel the observability tests run: it receives from one queue per
// block, reports its stage, and with stall_after > 0 block 0 stops beating
// (holding its burst) after that many packets, until the host asks it to exit.
// launch_stage_kernel() is its one launch, compiled by nvcc in
// stage_kernel.cu, so that the tests and the runner around it are plain C++.
#pragma once

#include <cstdint>

#include "gnio/dev/kernel.hpp"
#include "gnio/dev/rxq.hpp"
#include "gnio/persistent_kernel.hpp"

namespace gnio::obs_test {

enum Stage : uint32_t { kStart, kReceive, kProcess, kRelease };
constexpr uint32_t kMaxQueues = 16;

struct StageKernel {
  dev::Rxq rxq[kMaxQueues];
  uint32_t nq;
  uint32_t burst;
  uint64_t stall_after;  // packets block 0 receives before it stops beating (0: never)
  bool stall_ignores_exit;  // the stall outlives the exit flag (tests a forced exit)

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    const dev::Rxq& q = rxq[dev::block_index() % nq];
    uint64_t seen = 0;
    while (dev::scope_all<Scope::Thread>(ctx.running())) {
      ctx.heartbeat();
      ctx.set_stage(kReceive);
      dev::RxBurst b = q.receive<Scope::Thread>(burst, 200000);
      if (b.count() == 0) continue;
      ctx.set_stage(kProcess);
      seen += b.count();
      if (stall_after && dev::block_index() == 0 && seen >= stall_after) {
        while (ctx.running() || stall_ignores_exit) {
        }  // the deliberate hang: no heartbeat, the burst held
        return;
      }
      consume(ctx, q, b);
    }
    // Drain what the engine published before the exit flag was seen.
    for (;;) {
      dev::RxBurst b = q.receive<Scope::Thread>(burst, 0);
      if (b.count() == 0) break;
      consume(ctx, q, b);
    }
  }

  GNIO_HD void consume(const dev::KernelCtx& ctx, const dev::Rxq& q, dev::RxBurst& b) const {
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < b.count(); ++i) bytes += b[i].size();
    ctx.set_stage(kRelease);
    if (q.release<Scope::Thread>(b) != dev::Status::Success) ctx.count_error();
    ctx.count_packets(b.count(), bytes);
    ctx.count_burst<Scope::Thread>();
  }
};

Result<PersistentKernel> launch_stage_kernel(const Gpu& gpu, const LaunchConfig& cfg, const StageKernel& kernel);

}  // namespace gnio::obs_test
