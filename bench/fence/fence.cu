// SPDX-License-Identifier: Apache-2.0
// What the ordered accesses of an RX queue's receive and release cost a
// block when many blocks make them at once. Each of `blocks` blocks has its
// first thread make `ops` accesses of one kind, each block on words of its
// own (128-byte lines apart), the rest of the block idle as in
// dev::Rxq::release(); the row's time is the kernel's, timed by events. A
// cost that stays flat as blocks are added is the block's own; one that
// grows with them is a resource the GPU's blocks share. The accesses are
// gnio's own (gnio/dev/atomic.hpp):
//   release-sys-host      store_release() to pinned host memory (tell_engine()'s store of `consumer`)
//   release-sys-device    store_release() to device memory
//   release-device        store_release_device() to device memory (`released`)
//   fence-sys             fence_system(acq_rel) alone
//   write-host+release    store_relaxed() of one pinned word, then store_release() of another
//   relaxed-host          store_relaxed() to pinned host memory (a posted write)
//   acquire-sys-host      load_acquire() of pinned host memory (the poll of `producer` with mem=host)
//   acquire-sys-device    load_acquire() of device memory
//   acquire-device        load_acquire_device() of device memory
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/machine.hpp"
#include "common/table.hpp"
#include "fence/options.hpp"
#include "gnio/dev/atomic.hpp"
#include "gnio/gpu.hpp"

namespace fence_bench {

namespace {

using gnio::bench::fmt;

enum class Op {
  ReleaseSysHost,
  ReleaseSysDevice,
  ReleaseDevice,
  FenceSys,
  WriteHostRelease,
  RelaxedHost,
  AcquireSysHost,
  AcquireSysDevice,
  AcquireDevice
};

struct Variant {
  Op op;
  const char* name;
};

constexpr Variant kVariants[] = {
    {Op::ReleaseSysHost, "release-sys-host"},     {Op::ReleaseSysDevice, "release-sys-device"},
    {Op::ReleaseDevice, "release-device"},        {Op::FenceSys, "fence-sys"},
    {Op::WriteHostRelease, "write-host+release"}, {Op::RelaxedHost, "relaxed-host"},
    {Op::AcquireSysHost, "acquire-sys-host"},     {Op::AcquireSysDevice, "acquire-sys-device"},
    {Op::AcquireDevice, "acquire-device"},
};

constexpr uint32_t kLineWords = 32;  // 256 bytes between two blocks' words

template <Op kOp>
__global__ void access_loop(uint64_t* host, uint64_t* device, uint32_t ops, uint64_t* sink) {
  if (threadIdx.x != 0) return;
  uint64_t* h = host + uint64_t{blockIdx.x} * kLineWords;
  uint64_t* d = device + uint64_t{blockIdx.x} * kLineWords;
  uint64_t sum = 0;
  for (uint32_t i = 1; i <= ops; ++i) {
    if constexpr (kOp == Op::ReleaseSysHost) gnio::dev::store_release(h, uint64_t{i});
    else if constexpr (kOp == Op::ReleaseSysDevice) gnio::dev::store_release(d, uint64_t{i});
    else if constexpr (kOp == Op::ReleaseDevice) gnio::dev::store_release_device(d, uint64_t{i});
    else if constexpr (kOp == Op::FenceSys) gnio::dev::fence_system(cuda::std::memory_order_acq_rel);
    else if constexpr (kOp == Op::WriteHostRelease) {
      gnio::dev::store_relaxed(h + 16, uint64_t{i});
      gnio::dev::store_release(h, uint64_t{i});
    } else if constexpr (kOp == Op::RelaxedHost) gnio::dev::store_relaxed(h, uint64_t{i});
    else if constexpr (kOp == Op::AcquireSysHost) sum += gnio::dev::load_acquire(h);
    else if constexpr (kOp == Op::AcquireSysDevice) sum += gnio::dev::load_acquire(d);
    else sum += gnio::dev::load_acquire_device(d);
  }
  sink[blockIdx.x] = sum;
}

template <Op kOp>
void launch(uint32_t blocks, uint64_t* host, uint64_t* device, uint32_t ops, uint64_t* sink) {
  access_loop<kOp><<<blocks, 32>>>(host, device, ops, sink);
}

void launch(Op op, uint32_t blocks, uint64_t* host, uint64_t* device, uint32_t ops, uint64_t* sink) {
  switch (op) {
    case Op::ReleaseSysHost: return launch<Op::ReleaseSysHost>(blocks, host, device, ops, sink);
    case Op::ReleaseSysDevice: return launch<Op::ReleaseSysDevice>(blocks, host, device, ops, sink);
    case Op::ReleaseDevice: return launch<Op::ReleaseDevice>(blocks, host, device, ops, sink);
    case Op::FenceSys: return launch<Op::FenceSys>(blocks, host, device, ops, sink);
    case Op::WriteHostRelease: return launch<Op::WriteHostRelease>(blocks, host, device, ops, sink);
    case Op::RelaxedHost: return launch<Op::RelaxedHost>(blocks, host, device, ops, sink);
    case Op::AcquireSysHost: return launch<Op::AcquireSysHost>(blocks, host, device, ops, sink);
    case Op::AcquireSysDevice: return launch<Op::AcquireSysDevice>(blocks, host, device, ops, sink);
    case Op::AcquireDevice: return launch<Op::AcquireDevice>(blocks, host, device, ops, sink);
  }
}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "fence_bench: %s failed: %s\n", what, cudaGetErrorString(e));
  return false;
}

// The kernel's time in seconds, or a negative value when it failed.
double time_row(Op op, uint32_t blocks, uint64_t* host, uint64_t* device, uint32_t ops, uint64_t* sink) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  launch(op, blocks, host, device, ops / 10, sink);  // warm-up: the code loaded, the lines touched
  cudaEventRecord(a);
  launch(op, blocks, host, device, ops, sink);
  cudaEventRecord(b);
  float ms = -1;
  if (check(cudaGetLastError(), "launching the access loop") && check(cudaEventSynchronize(b), "the access loop"))
    cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms < 0 ? -1 : ms / 1e3;
}

}  // namespace

int run(const Options& o) {
  gnio::Result<gnio::Gpu> gpu = gnio::Gpu::open(o.gpu);
  if (!gpu || gpu->emulated()) {
    std::fprintf(stderr, "fence_bench: opening GPU '%s': %s (it needs a CUDA device)\n", o.gpu.c_str(),
                 gpu ? "the emulated device has no GPU memory system" : gpu.status().to_string().c_str());
    return 2;
  }
  if (!check(cudaSetDevice(gpu->ordinal()), "cudaSetDevice")) return 1;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu->ordinal());
  std::vector<uint32_t> counts;
  for (uint32_t b : o.blocks) counts.push_back(b == 0 ? static_cast<uint32_t>(sms) : b);
  const uint32_t most = *std::max_element(counts.begin(), counts.end());
  uint64_t *host = nullptr, *device = nullptr, *sink = nullptr;
  const size_t bytes = size_t{most} * kLineWords * sizeof(uint64_t);
  if (!check(cudaHostAlloc(&host, bytes, cudaHostAllocMapped), "cudaHostAlloc(words)") ||
      !check(cudaMalloc(&device, bytes), "cudaMalloc(words)") || !check(cudaMemset(device, 0, bytes), "cudaMemset") ||
      !check(cudaMalloc(&sink, most * sizeof(uint64_t)), "cudaMalloc(sink)"))
    return 1;
  std::printf("# fence_bench\n\n%s\n\n%u operations per block and row, one thread of 32 per block making them; "
              "%d SMs. `x 1 block`: a block's time per operation against the same variant's 1-block row of this "
              "run; `vs linear`: all blocks' operations per second against blocks times the 1-block row's.\n\n",
              gnio::bench::machine(*gpu).c_str(), o.ops, sms);
  gnio::bench::print_header({"variant", "blocks", "ns per operation (a block)", "x 1 block", "operations/s (all blocks)",
                             "vs linear"},
                            "lrrrrr");
  int rc = 0;
  for (const Variant& v : kVariants) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), v.name) == o.only.end()) continue;
    double one_block_ns = 0;
    for (uint32_t n : counts) {
      const double s = time_row(v.op, n, host, device, o.ops, sink);
      if (s < 0) {
        rc = 1;
        gnio::bench::print_row({v.name, std::to_string(n), "failed", "-", "-", "-"});
        continue;
      }
      const double ns = s * 1e9 / o.ops;
      if (n == 1 || one_block_ns == 0) one_block_ns = n == 1 ? ns : 0;
      const double rate = double(n) * o.ops / s;
      const double linear = one_block_ns > 0 ? n * 1e9 / one_block_ns : 0;
      gnio::bench::print_row({v.name, std::to_string(n), fmt("%.0f", ns),
                              one_block_ns > 0 ? fmt("%.2f", ns / one_block_ns) : "-", fmt("%.3g", rate),
                              linear > 0 ? fmt("%.3f", rate / linear) : "-"});
    }
  }
  cudaFree(sink);
  cudaFree(device);
  cudaFreeHost(host);
  return rc;
}

}  // namespace fence_bench
