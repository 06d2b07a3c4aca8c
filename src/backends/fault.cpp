// SPDX-License-Identifier: Apache-2.0
// fault:KEY=VALUE,...,inner=SPEC: another backend with faults injected, for
// testing that a run continues or stops cleanly and counts what happened.
// inner= comes last and takes the rest of the spec verbatim (it has commas
// of its own). Frame positions count the frames offered on each RX queue.
//
//   error_at=N          the RX call after N frames fails with IoError (the
//                       engine stops the source cleanly and reports it)
//   short=K             every RX call offers at most K frames (short reads)
//   stall_at=N          after N frames the queue offers nothing for
//   stall_ms=M          M ms (default 200), once
//   malformed_at=N      after N frames a burst of K malformed frames arrives
//   malformed=K         (default 1); the NIC discards them, counted as malformed
//   stop_at=N           the source stops dead after N frames (a cable pull)
//   slow_us=U           TX: a slow consumer taking one frame per call, U us each
#include <chrono>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "backends/drivers.hpp"
#include "backends/spec.hpp"

namespace gnio::backend {

namespace {

constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

struct FaultPlan {
  uint64_t error_at = kNever;
  uint64_t short_read = 0;
  uint64_t stall_at = kNever;
  uint64_t stall_ms = 200;
  uint64_t malformed_at = kNever;
  uint64_t malformed = 1;
  uint64_t stop_at = kNever;
  uint64_t slow_us = 0;
};

// Lends the engine's sink to the inner backend with at most `limit` frames
// of room, counting what the inner backend offered through it.
class LimitedSink final : public RxSink {
 public:
  LimitedSink(RxSink& sink, uint64_t limit) : sink_(sink), limit_(limit) {}
  uint8_t* claim(uint32_t len) override { return room() ? sink_.claim(len) : nullptr; }
  void commit(uint32_t len, uint64_t ts, uint32_t flags, uint32_t wire_len) override {
    ++offered_;
    sink_.commit(len, ts, flags, wire_len);
  }
  void commit_hashed(uint32_t len, uint64_t ts, uint32_t flags, uint32_t wire_len, uint32_t hash) override {
    ++offered_;
    sink_.commit_hashed(len, ts, flags, wire_len, hash);
  }
  void drop(DropReason why) override {
    ++offered_;
    sink_.drop(why);
  }
  uint32_t room() const override {
    return offered_ >= limit_ ? 0 : static_cast<uint32_t>(std::min<uint64_t>(sink_.room(), limit_ - offered_));
  }
  uint32_t max_frame() const override { return sink_.max_frame(); }
  uint64_t offered() const { return offered_; }

 private:
  RxSink& sink_;
  uint64_t limit_;
  uint64_t offered_ = 0;
};

class FaultBackend final : public Backend {
 public:
  FaultBackend(std::unique_ptr<Backend> inner, FaultPlan plan, std::string spec)
      : inner_(std::move(inner)), plan_(plan), spec_(std::move(spec)), caps_(inner_->caps()),
        queues_(caps_.max_rx_queues) {
    caps_.driver = "fault+" + caps_.driver;
  }

  const EthCaps& caps() const override { return caps_; }

  Result<size_t> rx_into(uint16_t queue, RxSink& sink) override {
    QueueState& q = queues_[queue];
    uint64_t limit = 0;
    if (auto early = before_rx(queue, q, &sink, limit); early) return *early;
    LimitedSink limited(sink, limit);
    Result<size_t> got = inner_->rx_into(queue, limited);
    q.offered += limited.offered();
    return got;
  }

  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) override {
    QueueState& q = queues_[queue];
    uint64_t limit = 0;
    if (auto early = before_rx(queue, q, nullptr, limit); early) return *early;
    Result<size_t> got = inner_->rx_burst(queue, out.first(std::min<uint64_t>(out.size(), limit)));
    if (got) q.offered += *got;
    return got;
  }

  std::optional<RxMemory> rx_memory(uint16_t queue) const override { return inner_->rx_memory(queue); }
  void rx_release(uint16_t queue, std::span<const RxFrame> frames) override { inner_->rx_release(queue, frames); }
  DropCounts take_rx_drops(uint16_t queue) override { return inner_->take_rx_drops(queue); }

  bool at_end(uint16_t queue) const override {
    const QueueState& q = queues_[queue];
    return q.stopped || q.failed || (inner_->at_end(queue) && !inner_->rx_held(queue));
  }

  Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) override {
    if (plan_.slow_us == 0 || frames.empty()) return inner_->tx_burst(queue, frames);
    std::this_thread::sleep_for(std::chrono::microseconds(plan_.slow_us));
    return inner_->tx_burst(queue, frames.first(1));
  }

  Status flush() override { return inner_->flush(); }

 private:
  struct QueueState {
    uint64_t offered = 0;
    bool error_done = false, failed = false, stopped = false, stall_done = false;
    std::chrono::steady_clock::time_point stall_until{};
    uint64_t malformed_sent = 0;
  };

  // What happens before the inner backend is asked: a fault that answers
  // the call itself, or the number of frames the call may offer.
  std::optional<Result<size_t>> before_rx(uint16_t queue, QueueState& q, RxSink* sink, uint64_t& limit) {
    if (q.stopped || q.failed) return Result<size_t>(size_t{0});
    if (q.offered >= plan_.stop_at) {
      q.stopped = true;
      return Result<size_t>(size_t{0});
    }
    if (q.offered >= plan_.error_at && !q.error_done) {
      q.error_done = q.failed = true;
      return Result<size_t>(Status(Errc::IoError, Layer::Backend,
                                   spec_ + ": injected I/O error on RX queue " + std::to_string(queue) + " after " +
                                       std::to_string(q.offered) + " frames (error_at=" +
                                       std::to_string(plan_.error_at) + ")"));
    }
    if (q.offered >= plan_.stall_at && !q.stall_done) {
      const auto now = std::chrono::steady_clock::now();
      if (q.stall_until == std::chrono::steady_clock::time_point{})
        q.stall_until = now + std::chrono::milliseconds(plan_.stall_ms);
      if (now < q.stall_until) return Result<size_t>(size_t{0});
      q.stall_done = true;
    }
    if (sink && q.offered >= plan_.malformed_at && q.malformed_sent < plan_.malformed) {
      size_t n = 0;
      while (q.malformed_sent < plan_.malformed && sink->room() > 0) {
        sink->drop(DropReason::Malformed);
        ++q.malformed_sent;
        ++n;
      }
      q.offered += n;
      return Result<size_t>(n);
    }
    // Stop at the next fault position, so that it fires exactly there.
    limit = kNever;
    for (uint64_t at : {plan_.stop_at, plan_.error_at, plan_.stall_at, plan_.malformed_at})
      if (at > q.offered) limit = std::min(limit, at - q.offered);
    if (plan_.short_read) limit = std::min(limit, plan_.short_read);
    return std::nullopt;
  }

  std::unique_ptr<Backend> inner_;
  FaultPlan plan_;
  std::string spec_;
  EthCaps caps_;
  std::vector<QueueState> queues_;
};

}  // namespace

Result<std::unique_ptr<Backend>> open_fault(std::string_view spec) {
  const size_t at = spec.find("inner=");
  if (at == std::string_view::npos || (at > 0 && spec[at - 1] != ',' && spec[at - 1] != ':'))
    return Status(Errc::InvalidValue, Layer::Backend,
                  "queue spec '" + std::string(spec) +
                      "': the fault driver needs the backend to wrap as its last option, e.g. "
                      "'fault:error_at=100,inner=synthetic:count=1000'");
  std::string_view own = spec.substr(0, at);
  if (!own.empty() && own.back() == ',') own.remove_suffix(1);
  const std::string_view inner_spec = spec.substr(at + 6);
  auto parsed = Spec::parse(own, ArgMode::None,
                            {"error_at", "short", "stall_at", "stall_ms", "malformed_at", "malformed", "stop_at",
                             "slow_us"});
  if (!parsed) return parsed.status();
  FaultPlan plan;
  struct Field {
    const char* key;
    uint64_t* value;
    uint64_t min, max;
  } fields[] = {{"error_at", &plan.error_at, 0, kNever - 1},   {"short", &plan.short_read, 1, 1u << 20},
                {"stall_at", &plan.stall_at, 0, kNever - 1},   {"stall_ms", &plan.stall_ms, 1, 600000},
                {"malformed_at", &plan.malformed_at, 0, kNever - 1}, {"malformed", &plan.malformed, 1, 1u << 20},
                {"stop_at", &plan.stop_at, 0, kNever - 1},     {"slow_us", &plan.slow_us, 1, 10'000'000}};
  for (const Field& f : fields) {
    auto v = parsed->u64(f.key, *f.value, f.min, f.max);
    if (!v) return v.status();
    *f.value = *v;
  }
  if (inner_spec.empty() || spec_driver(inner_spec) == "fault")
    return Status(Errc::InvalidValue, Layer::Backend,
                  "queue spec '" + std::string(spec) + "': inner='" + std::string(inner_spec) +
                      "' must name another backend to wrap, e.g. inner=pcap:FILE");
  auto inner = open_backend(inner_spec);
  if (!inner) return inner.status();
  return std::unique_ptr<Backend>(std::make_unique<FaultBackend>(std::move(*inner), plan, std::string(spec)));
}

}  // namespace gnio::backend
