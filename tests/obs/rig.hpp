// SPDX-License-Identifier: Apache-2.0
// A device, its RX queues started on a GPU, and the stage kernel set up
// for them: what the hang and fault tests run.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gnio/eth.hpp"
#include "gnio/gpu_queue.hpp"
#include "stage_kernel.hpp"

namespace gnio::obs_test {

struct Rig {
  EthDevice dev;
  std::vector<EthRxq> rxqs;
  std::vector<GpuRxq> handles;
  StageKernel kernel{};

  void teardown() {
    for (GpuRxq& h : handles) h.destroy();
    for (EthRxq& q : rxqs) q.destroy();
  }
};

inline void open_rig(Rig& rig, const Gpu& gpu, const std::string& spec, uint64_t stall_after) {
  auto dev = EthDevice::open(spec);
  ASSERT_TRUE(dev) << dev.status().to_string();
  rig.dev = std::move(*dev);
  const uint32_t nq = rig.dev.caps().max_rx_queues;
  for (uint32_t id = 0; id < nq; ++id) {
    auto q = rig.dev.create_rxq(static_cast<uint16_t>(id));
    ASSERT_TRUE(q) << q.status().to_string();
    for (Status s : {q->set_num_strides(256), q->set_burst_size(16), q->set_gpu(gpu), q->start()})
      ASSERT_TRUE(s) << s.to_string();
    auto h = GpuRxq::create(gpu, *q);
    ASSERT_TRUE(h) << h.status().to_string();
    rig.kernel.rxq[id] = h->handle();
    rig.rxqs.push_back(std::move(*q));
    rig.handles.push_back(std::move(*h));
  }
  rig.kernel.nq = nq;
  rig.kernel.burst = 16;
  rig.kernel.stall_after = stall_after;
}

}  // namespace gnio::obs_test
