// SPDX-License-Identifier: Apache-2.0
// Micro-benchmarks of the per-packet header helpers that the NIC engine runs
// for every received frame (classify, rss_hash; describe_frame, which the
// engine runs instead of both) and that kernels call (swap_addresses,
// fnv1a64), on frames from the synthetic generator.
#include <benchmark/benchmark.h>

#include <vector>

#include "backends/synthetic.hpp"
#include "engine/rx_metadata.hpp"
#include "gnio/dev/headers.hpp"

namespace {

std::vector<std::vector<uint8_t>> frames(uint32_t size) {
  auto opts = gnio::backend::parse_synthetic_spec("synthetic:count=256,proto=mix,ipv6=mix,size=" + std::to_string(size));
  std::vector<std::vector<uint8_t>> out;
  for (uint64_t i = 0; i < 256; ++i) out.push_back(gnio::backend::make_synthetic_frame(opts.value(), i));
  return out;
}

template <typename F>
void run(benchmark::State& state, F&& f) {
  auto fs = frames(static_cast<uint32_t>(state.range(0)));
  size_t i = 0;
  for (auto _ : state) {
    auto& fr = fs[i++ & 255];
    benchmark::DoNotOptimize(f(fr.data(), static_cast<uint32_t>(fr.size())));
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

void BM_classify(benchmark::State& s) { run(s, [](const uint8_t* p, uint32_t n) { return gnio::dev::classify(p, n); }); }
void BM_rss_hash(benchmark::State& s) { run(s, [](const uint8_t* p, uint32_t n) { return gnio::dev::rss_hash(p, n); }); }
// The ones' complement sum over whole frames: the RFC 1071 loop over
// big-endian 16-bit words (the baseline) and the word-wise sum it replaced.
uint32_t sum_by_16bit_words(const uint8_t* p, uint32_t len) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i + 1 < len; i += 2) sum += (static_cast<uint32_t>(p[i]) << 8) | p[i + 1];
  if (len % 2) sum += static_cast<uint32_t>(p[len - 1]) << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint32_t>(sum);
}
void BM_sum_by_16bit_words(benchmark::State& s) { run(s, sum_by_16bit_words); }
void BM_ones_complement_sum(benchmark::State& s) {
  run(s, [](const uint8_t* p, uint32_t n) { return gnio::dev::ones_complement_sum(p, n); });
}

// The engine's descriptor metadata, before (two parses, bitwise Toeplitz)
// and now (one parse, table-driven Toeplitz).
void BM_metadata_classify_plus_rss_hash(benchmark::State& s) {
  run(s, [](const uint8_t* p, uint32_t n) { return gnio::dev::classify(p, n) ^ gnio::dev::rss_hash(p, n); });
}
void BM_metadata_describe_frame(benchmark::State& s) {
  run(s, [](const uint8_t* p, uint32_t n) {
    auto m = gnio::detail::describe_frame(p, n);
    return m.flags ^ m.rss_hash;
  });
}
void BM_swap_addresses(benchmark::State& s) {
  run(s, [](uint8_t* p, uint32_t n) { return gnio::dev::swap_addresses(p, n); });
}
void BM_fnv1a64(benchmark::State& s) { run(s, [](const uint8_t* p, uint32_t n) { return gnio::dev::fnv1a64(p, n); }); }

BENCHMARK(BM_classify)->Arg(128)->Arg(1500);
BENCHMARK(BM_rss_hash)->Arg(128)->Arg(1500);
BENCHMARK(BM_sum_by_16bit_words)->Arg(128)->Arg(1500);
BENCHMARK(BM_ones_complement_sum)->Arg(128)->Arg(1500);
BENCHMARK(BM_metadata_classify_plus_rss_hash)->Arg(128)->Arg(1500);
BENCHMARK(BM_metadata_describe_frame)->Arg(128)->Arg(1500);
BENCHMARK(BM_swap_addresses)->Arg(128)->Arg(1500);
BENCHMARK(BM_fnv1a64)->Arg(128)->Arg(1500);

}  // namespace

BENCHMARK_MAIN();
