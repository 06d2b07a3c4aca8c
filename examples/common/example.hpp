// SPDX-License-Identifier: Apache-2.0
// Small helpers the examples share: GPU selection with a skip code for test
// runs without a GPU, scope/memory option parsing, and waiting for a queue
// to drain with progress and a deadline.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <variant>

#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/persistent_kernel.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "gnio/host_reference.hpp"

namespace gnio::examples {

// ctest's SKIP_RETURN_CODE: the run needs a CUDA device and there is none.
inline constexpr int kExitSkip = 77;

inline int fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
  return 2;
}

// "auto" falls back to the emulated device when no CUDA device is present,
// unless require_gpu is set, in which case the caller exits with kExitSkip.
inline Result<Gpu> open_gpu(const std::string& id, bool require_gpu) {
  return require_gpu ? Gpu::open(id) : Gpu::open_or_emulated(id);
}

inline std::optional<Scope> parse_scope(const std::string& s) {
  if (s == "thread") return Scope::Thread;
  if (s == "warp") return Scope::Warp;
  if (s == "block") return Scope::Block;
  return std::nullopt;
}

inline std::optional<RingMem> parse_mem(const std::string& s) {
  if (s == "gpu") return RingMem::Gpu;
  if (s == "host") return RingMem::Host;
  return std::nullopt;
}

// What every example starts from: the receive scope, the ring memory and the GPU.
struct Setup {
  Scope scope;
  RingMem mem;
  Gpu gpu;
};

// The setup, or the exit code to leave with: 2 for a bad option or a failure,
// kExitSkip when --require-gpu finds no GPU.
inline std::variant<Setup, int> setup(const std::string& scope, const std::string& mem, const std::string& gpu_id,
                                      bool require_gpu) {
  auto s = parse_scope(scope);
  auto m = parse_mem(mem);
  if (!s || !m) {
    std::fprintf(stderr, "error: --scope must be thread|warp|block (got %s) and --mem gpu|host (got %s)\n",
                 scope.c_str(), mem.c_str());
    return 2;
  }
  auto gpu = open_gpu(gpu_id, require_gpu);
  if (gpu) return Setup{*s, *m, std::move(*gpu)};
  if (require_gpu && gpu_id == "auto") {
    std::printf("SKIP: %s\n", gpu.status().message().c_str());
    return kExitSkip;
  }
  return fail(gpu.status());
}

// "offered=N delivered=N dropped=N (ring_full=N empty=N ...) truncated=N":
// every frame the backend offered is delivered or dropped for a reason.
inline std::string rx_stats_line(const RxqStats& s) {
  uint64_t dropped = 0;
  std::string reasons;
  for (size_t r = 0; r < kDropReasons; ++r) {
    dropped += s.dropped[r];
    reasons += (r ? " " : "") + std::string(drop_reason_name(static_cast<DropReason>(r))) + "=" +
               std::to_string(s.dropped[r]);
  }
  return "offered=" + std::to_string(s.offered) + " delivered=" + std::to_string(s.packets) +
         " dropped=" + std::to_string(dropped) + " (" + reasons + ") truncated=" + std::to_string(s.truncated);
}

// "submitted=N sent=N dropped=N (too_long=N empty=N ...)": every descriptor
// the device pushed is sent or dropped for a reason.
inline std::string tx_stats_line(const TxqStats& s) {
  std::string reasons;
  for (size_t r = 0; r < kTxDropReasons; ++r)
    reasons += (r ? " " : "") + std::string(tx_drop_reason_name(static_cast<TxDropReason>(r))) + "=" +
               std::to_string(s.dropped[r]);
  return "submitted=" + std::to_string(s.submitted) + " sent=" + std::to_string(s.packets) +
         " dropped=" + std::to_string(s.errors) + " (" + reasons + ")";
}

// Why the GPU saw other packets than the host reference read, in the
// queue's own words: drops by reason, frames cut to the max packet size.
inline std::string explain_difference(const RxqStats& s, uint64_t gpu_packets, uint64_t reference_packets) {
  std::string why;
  for (size_t r = 0; r < kDropReasons; ++r)
    if (s.dropped[r])
      why += std::to_string(s.dropped[r]) + " dropped as " + std::string(drop_reason_name(static_cast<DropReason>(r))) +
             "; ";
  if (s.truncated) why += std::to_string(s.truncated) + " delivered cut to the max packet size; ";
  if (gpu_packets != s.packets)
    why += "the kernel counted " + std::to_string(gpu_packets) + " of the " + std::to_string(s.packets) +
           " packets the queue delivered; ";
  if (why.empty())
    why = "the queue delivered every frame offered whole; the bytes differ (" + std::to_string(gpu_packets) +
          " packets on the GPU, " + std::to_string(reference_packets) + " in the reference); ";
  return why.substr(0, why.size() - 2);
}

// Waits until `done()` or the deadline; Timeout names what was pending.
template <typename Done>
Status wait_until(Done&& done, std::chrono::seconds limit, const char* what, const PersistentKernel& k) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      auto t = k.totals();
      return {Errc::Timeout, Layer::App,
              std::string(what) + " not done after " + std::to_string(limit.count()) + " s (kernel saw " +
                  std::to_string(t.packets) + " packets)"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return Status::ok();
}

}  // namespace gnio::examples
