// SPDX-License-Identifier: Apache-2.0
// How fast an RX engine can publish a ring in device memory to a running
// persistent kernel, by the number of publishers (one per RX queue), with
// nothing else in the way: no backend, no ring bookkeeping. Each
// publication is a packet-byte copy, a descriptor copy and the producer
// index; one kernel block per publisher waits for the index and
// acknowledges it in pinned memory, which the publisher waits for once
// `depth` publications are in flight (a ring's flow control). Variants:
//   streams: each publisher's own stream: two cudaMemcpyAsync and a
//            cuStreamWriteValue64 (the RX engine's publish() today);
//   shared:  the same work, every publisher on one stream of the GPU;
//   events:  the streams variant with no kernel: flow control by a CUDA
//            event per publication (does the running kernel matter?);
//   pinned-write: the streams variant with the index written by
//            cuStreamWriteValue64 into pinned host memory;
//   event-store: copies and an event on the publisher's stream; the
//            publisher stores the index in pinned memory once the event
//            completed (no stream memory operation);
//   pull:    no stream work: the publisher stores the index in pinned
//            memory and the block copies both parts from the pinned
//            staging into device memory itself.
// Rows are publications per second and GB/s against the H2D copy floor of
// the same run.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/machine.hpp"
#include "common/table.hpp"
#include "gnio/gpu.hpp"
#include "publish/options.hpp"
#include "publish/stream_ops.hpp"

namespace publish_bench {

namespace {

using gnio::bench::fmt;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kThreads = 256;

// One publisher's words, each on its own 128-byte line. `index` is where the
// producer index goes: device memory for the stream variants, pinned for pull.
struct Slot {
  uint64_t* index;      // device (streams, shared) or pinned (pull)
  uint64_t* ack;        // pinned: the last index the block saw, after its copy
  const uint8_t* src;   // pinned staging: data then descriptors
  uint8_t* dst;         // device: data then descriptors
};

__device__ uint64_t load_index(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ void store_ack(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Block b serves publisher b until `stop` (pinned) is set. With `pull` it
// copies the publication's bytes first, 16 bytes a load, 8 loads in flight
// per thread.
__global__ void serve(const Slot* slots, const volatile uint32_t* stop, uint64_t bytes, bool pull) {
  const Slot s = slots[blockIdx.x];
  __shared__ uint64_t seen_s;
  uint64_t seen = 0;
  while (true) {
    if (threadIdx.x == 0) {
      uint64_t v;
      for (uint32_t spins = 0;; ++spins) {
        v = load_index(s.index);
        if (v != seen || *stop) break;
        __nanosleep(spins < 8 ? 32 : 256);
      }
      seen_s = *stop && v == seen ? ~uint64_t{0} : v;
    }
    __syncthreads();
    const uint64_t v = seen_s;
    __syncthreads();
    if (v == ~uint64_t{0}) return;
    if (pull) {
      const uint4* src = reinterpret_cast<const uint4*>(s.src);
      uint4* dst = reinterpret_cast<uint4*>(s.dst);
      const uint64_t n = bytes / 16;
      constexpr uint32_t kUnroll = 8;
      for (uint64_t i = threadIdx.x; i < n; i += uint64_t{kThreads} * kUnroll) {
        uint4 r[kUnroll];
#pragma unroll
        for (uint32_t u = 0; u < kUnroll; ++u) {
          const uint64_t k = i + uint64_t{u} * kThreads;
          if (k < n) r[u] = src[k];
        }
#pragma unroll
        for (uint32_t u = 0; u < kUnroll; ++u) {
          const uint64_t k = i + uint64_t{u} * kThreads;
          if (k < n) dst[k] = r[u];
        }
      }
      __syncthreads();  // every thread's copy before thread 0's acknowledgement
    }
    seen = v;
    if (threadIdx.x == 0) store_ack(s.ack, v);
  }
}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "publish_bench: %s failed: %s\n", what, cudaGetErrorString(e));
  return false;
}

struct Result {
  bool ok = false;
  uint64_t publications = 0;
  double seconds = 0;
  double p50_us = 0, p99_us = 0;  // enqueue to acknowledgement
};

enum class Variant { Streams, Shared, Events, PinnedWrite, EventStore, Pull };

const char* name_of(Variant v) {
  switch (v) {
    case Variant::Streams: return "streams";
    case Variant::Shared: return "shared";
    case Variant::Events: return "events";
    case Variant::PinnedWrite: return "pinned-write";
    case Variant::EventStore: return "event-store";
    case Variant::Pull: return "pull";
  }
  return "?";
}

const char* text_of(Variant v) {
  switch (v) {
    case Variant::Streams: return "a stream per publisher (2 copies + cuStreamWriteValue64)";
    case Variant::Shared: return "one stream shared by the publishers";
    case Variant::Events: return "a stream per publisher, no kernel (event per publication)";
    case Variant::PinnedWrite: return "a stream per publisher, index written into pinned memory";
    case Variant::EventStore: return "a stream per publisher, index stored by the host after an event";
    case Variant::Pull: return "kernel copies from pinned, index in pinned";
  }
  return "?";
}

Result measure(Variant v, uint32_t publishers, const Options& o) {
  Result res;
  const uint64_t bytes = uint64_t{o.data_bytes} + o.desc_bytes;
  const bool pull = v == Variant::Pull, kernel = v != Variant::Events;
  const bool index_pinned = pull || v == Variant::PinnedWrite || v == Variant::EventStore;
  const bool use_events = v == Variant::Events || v == Variant::EventStore;
  std::vector<uint8_t*> src(publishers), dst(publishers);
  std::vector<uint64_t*> dev_index(publishers);
  uint64_t* pinned = nullptr;  // per publisher: index line, ack line
  uint32_t* stop = nullptr;
  Slot* slots = nullptr;
  bool ok = check(cudaHostAlloc(&pinned, publishers * 256, cudaHostAllocMapped), "cudaHostAlloc(indices)") &&
            check(cudaHostAlloc(&stop, 128, cudaHostAllocMapped), "cudaHostAlloc(stop)") &&
            check(cudaMalloc(&slots, publishers * sizeof(Slot)), "cudaMalloc(slots)");
  for (uint32_t p = 0; ok && p < publishers; ++p)
    ok = check(cudaHostAlloc(&src[p], bytes, cudaHostAllocMapped), "cudaHostAlloc(staging)") &&
         check(cudaMalloc(&dst[p], bytes), "cudaMalloc(ring)") && check(cudaMalloc(&dev_index[p], 128), "cudaMalloc(index)") &&
         check(cudaMemset(dev_index[p], 0, 128), "cudaMemset(index)");
  std::vector<cudaStream_t> streams(publishers, nullptr);
  cudaStream_t kernel_stream = nullptr;
  if (ok) {
    std::memset(pinned, 0, publishers * 256);
    *stop = 0;
    std::vector<Slot> host(publishers);
    for (uint32_t p = 0; p < publishers; ++p) {
      std::memset(src[p], static_cast<int>(p + 1), bytes);
      host[p].index = index_pinned ? pinned + p * 32 : dev_index[p];
      host[p].ack = pinned + p * 32 + 16;
      host[p].src = src[p];
      host[p].dst = dst[p];
    }
    ok = check(cudaMemcpy(slots, host.data(), publishers * sizeof(Slot), cudaMemcpyHostToDevice), "cudaMemcpy(slots)");
    for (uint32_t p = 0; ok && p < publishers; ++p)
      ok = check(cudaStreamCreateWithFlags(&streams[p], cudaStreamNonBlocking), "cudaStreamCreate");
    ok = ok && check(cudaStreamCreateWithFlags(&kernel_stream, cudaStreamNonBlocking), "cudaStreamCreate(kernel)");
  }
  if (ok && kernel) {
    serve<<<publishers, kThreads, 0, kernel_stream>>>(slots, stop, bytes, pull);
    ok = check(cudaGetLastError(), "launching the serving kernel");
  }
  std::mutex shared_mu;
  std::atomic<bool> go{false}, failed{false};
  std::atomic<uint64_t> total{0};
  std::vector<std::vector<double>> latencies(publishers);
  const auto window = std::chrono::duration<double>(o.window_s);
  auto publisher = [&](uint32_t p) {
    volatile uint64_t* ack = pinned + p * 32 + 16;
    volatile uint64_t* pinned_index = pinned + p * 32;
    cudaStream_t st = v == Variant::Shared ? streams[0] : streams[p];
    std::vector<Clock::time_point> sent(o.depth);
    std::vector<cudaEvent_t> done(o.depth, nullptr);
    if (use_events)
      for (auto& e : done) cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    while (!go.load()) std::this_thread::yield();
    const auto end = Clock::now() + window;
    uint64_t i = 0, stored = 0;
    // event-store: the index of every publication whose copies completed,
    // in order, stored in pinned memory where the kernel polls it.
    auto store_completed = [&] {
      while (stored < i && cudaEventQuery(done[(stored + 1) % o.depth]) == cudaSuccess)
        __atomic_store_n(const_cast<uint64_t*>(pinned_index), ++stored, __ATOMIC_RELEASE);
    };
    auto completed = [&](uint64_t k) {  // publication k (from 1) acknowledged
      if (v == Variant::Events) return cudaEventQuery(done[k % o.depth]) == cudaSuccess;
      return *ack >= k;
    };
    while (Clock::now() < end) {
      if (i >= o.depth) {
        const uint64_t k = i + 1 - o.depth;
        while (!completed(k)) {
          if (failed.load()) return;
          if (v == Variant::EventStore) store_completed();
        }
        latencies[p].push_back(std::chrono::duration<double, std::micro>(Clock::now() - sent[k % o.depth]).count());
      }
      ++i;
      sent[i % o.depth] = Clock::now();
      if (pull) {
        __atomic_store_n(const_cast<uint64_t*>(pinned_index), i, __ATOMIC_RELEASE);
        continue;
      }
      std::unique_lock<std::mutex> lock(shared_mu, std::defer_lock);
      if (v == Variant::Shared) lock.lock();
      uint64_t* index_dst = v == Variant::PinnedWrite ? const_cast<uint64_t*>(pinned_index) : dev_index[p];
      bool good = cudaMemcpyAsync(dst[p], src[p], o.data_bytes, cudaMemcpyHostToDevice, st) == cudaSuccess &&
                  cudaMemcpyAsync(dst[p] + o.data_bytes, src[p] + o.data_bytes, o.desc_bytes, cudaMemcpyHostToDevice,
                                  st) == cudaSuccess &&
                  (v == Variant::EventStore || stream_write_value64(st, index_dst, i).is_ok());
      if (good && use_events) good = cudaEventRecord(done[i % o.depth], st) == cudaSuccess;
      if (!good) {
        failed.store(true);
        return;
      }
    }
    // The publications still in flight complete before the count is taken.
    for (uint64_t k = i + 1 > o.depth ? i + 1 - o.depth : 1; k <= i; ++k)
      while (!completed(k)) {
        if (failed.load()) return;
        if (v == Variant::EventStore) store_completed();
      }
    total.fetch_add(i);
    for (auto e : done)
      if (e) cudaEventDestroy(e);
  };
  if (ok) {
    std::vector<std::thread> threads;
    for (uint32_t p = 0; p < publishers; ++p) threads.emplace_back(publisher, p);
    const auto t0 = Clock::now();
    go.store(true);
    for (auto& t : threads) t.join();
    res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    res.publications = total.load();
    ok = !failed.load();
  }
  if (stop) *stop = 1;
  if (kernel_stream) ok = check(cudaStreamSynchronize(kernel_stream), "the serving kernel") && ok;
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  if (!all.empty()) {
    res.p50_us = all[all.size() / 2];
    res.p99_us = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  }
  for (auto s : streams)
    if (s) cudaStreamDestroy(s);
  if (kernel_stream) cudaStreamDestroy(kernel_stream);
  for (uint32_t p = 0; p < publishers; ++p) {
    cudaFreeHost(src[p]);
    cudaFree(dst[p]);
    cudaFree(dev_index[p]);
  }
  cudaFree(slots);
  cudaFreeHost(stop);
  cudaFreeHost(pinned);
  res.ok = ok;
  return res;
}

// One large pinned-to-device copy timed with events: the bound of every row.
double h2d_floor_gbs() {
  constexpr size_t kBytes = 256u << 20;
  void *h = nullptr, *d = nullptr;
  cudaEvent_t a, b;
  double gbs = 0;
  if (check(cudaHostAlloc(&h, kBytes, 0), "cudaHostAlloc(floor)") && check(cudaMalloc(&d, kBytes), "cudaMalloc(floor)")) {
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaMemcpy(d, h, kBytes, cudaMemcpyHostToDevice);
    cudaEventRecord(a);
    for (int i = 0; i < 4; ++i) cudaMemcpyAsync(d, h, kBytes, cudaMemcpyHostToDevice);
    cudaEventRecord(b);
    if (check(cudaEventSynchronize(b), "the floor copies")) {
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      gbs = 4.0 * kBytes / (ms * 1e6);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  cudaFree(d);
  cudaFreeHost(h);
  return gbs;
}

}  // namespace

int run(const Options& o) {
  gnio::Result<gnio::Gpu> gpu = gnio::Gpu::open(o.gpu);
  if (!gpu) {
    std::fprintf(stderr, "publish_bench: opening GPU '%s': %s (it needs a CUDA device)\n", o.gpu.c_str(),
                 gpu.status().to_string().c_str());
    return 2;
  }
  if (!check(cudaSetDevice(gpu->ordinal()), "cudaSetDevice")) return 1;
  std::printf("# publish_bench\n\n%s\n\n", gnio::bench::machine(*gpu).c_str());
  const double floor = h2d_floor_gbs();
  std::printf("H2D copy floor (256 MiB, pinned to device): %.1f GB/s. One publication: %u + %u bytes, %u in flight "
              "per publisher, %.2f s a row.\n\n",
              floor, o.data_bytes, o.desc_bytes, o.depth, o.window_s);
  gnio::bench::print_header({"variant", "publishers", "publications/s", "GB/s", "ratio to H2D floor",
                             "enqueue to ack p50", "p99"},
                            "lrrrrrr");
  int rc = 0;
  for (Variant v : {Variant::Streams, Variant::Shared, Variant::Events, Variant::PinnedWrite, Variant::EventStore, Variant::Pull}) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), name_of(v)) == o.only.end()) continue;
    for (uint32_t n : o.publishers) {
      const Result r = measure(v, n, o);
      if (!r.ok) rc = 1;
      const double rate = r.seconds > 0 ? r.publications / r.seconds : 0;
      const double gbs = rate * (double(o.data_bytes) + o.desc_bytes) / 1e9;
      gnio::bench::print_row({text_of(v), std::to_string(n), r.ok ? fmt("%.0f", rate) : "failed", fmt("%.2f", gbs),
                              fmt("%.3f", gnio::bench::ratio(gbs, floor)), fmt("%.1f us", r.p50_us),
                              fmt("%.1f us", r.p99_us)});
    }
  }
  return rc;
}

}  // namespace publish_bench
