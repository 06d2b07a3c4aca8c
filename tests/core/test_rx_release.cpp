// The device RX release protocol, driven from one host thread (the device
// API is host code too): bursts released out of order give the engine its
// strides back in order, and only once every burst before them is back.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "gnio/dev/rxq.hpp"

namespace gnio {
namespace {

constexpr uint32_t kDesc = 64;

// A ring of kDesc descriptors in host memory with `published` of them
// published, told the engine every `step` descriptors.
struct HostRing {
  std::array<dev::RxDesc, kDesc> desc{};
  std::array<uint8_t, kDesc * 64> data{};
  alignas(64) uint64_t producer = 0, consumer = 0;
  alignas(64) std::array<uint64_t, 64 + kDesc> words{};  // claim, released, told/lock, done marks
  dev::RxRing ring;

  HostRing(uint64_t published, uint32_t step) {
    producer = published;
    ring.data = data.data();
    ring.desc = desc.data();
    ring.producer = &producer;
    ring.consumer = &consumer;
    ring.claim = &words[0];
    ring.released = &words[16];
    ring.told = &words[32];
    ring.done = &words[64];
    ring.desc_mask = kDesc - 1;
    ring.release_step = step;
  }
  uint64_t released() const { return words[16]; }
};

TEST(RxRelease, OutOfOrderReleasesReachTheEngineInOrder) {
  HostRing h(24, 8);
  const dev::Rxq q(h.ring);
  const dev::RxBurst a = q.receive<Scope::Thread>(8, 0), b = q.receive<Scope::Thread>(8, 0),
                     c = q.receive<Scope::Thread>(8, 0);
  ASSERT_EQ(a.first(), 0u);
  ASSERT_EQ(b.first(), 8u);
  ASSERT_EQ(c.first(), 16u);
  // The later two first: nothing moves while the first is held.
  EXPECT_EQ(q.release<Scope::Thread>(c), dev::Status::Success);
  EXPECT_EQ(q.release<Scope::Thread>(b), dev::Status::Success);
  EXPECT_EQ(h.released(), 0u);
  EXPECT_EQ(h.consumer, 0u);
  // The first one releases all three at once, and the engine hears of it
  // (the index crossed multiples of the step).
  EXPECT_EQ(q.release<Scope::Thread>(a), dev::Status::Success);
  EXPECT_EQ(h.released(), 24u);
  EXPECT_EQ(h.consumer, 24u);
}

TEST(RxRelease, ReleasingTwiceIsBadState) {
  HostRing h(16, 4);
  const dev::Rxq q(h.ring);
  const dev::RxBurst a = q.receive<Scope::Thread>(8, 0), b = q.receive<Scope::Thread>(8, 0);
  EXPECT_EQ(q.release<Scope::Thread>(b), dev::Status::Success);
  EXPECT_EQ(q.release<Scope::Thread>(b), dev::Status::BadState);  // held behind `a`, already marked
  EXPECT_EQ(q.release<Scope::Thread>(a), dev::Status::Success);
  EXPECT_EQ(q.release<Scope::Thread>(a), dev::Status::BadState);  // released past it
  EXPECT_EQ(h.released(), 16u);
}

TEST(RxRelease, MarksOfEarlierLapsDoNotReleaseALaterBurst) {
  // Four laps of the ring in two bursts of 32, the second released first:
  // `released` stops at every held burst, whatever its slot holds from the
  // burst that started there a lap before.
  HostRing h(0, 1);
  const dev::Rxq q(h.ring);
  uint64_t expect = 0;
  for (int lap = 0; lap < 4; ++lap) {
    h.producer += 64;
    const dev::RxBurst x = q.receive<Scope::Thread>(32, 0), y = q.receive<Scope::Thread>(32, 0);
    ASSERT_EQ(x.count(), 32u);
    ASSERT_EQ(y.count(), 32u);
    EXPECT_EQ(q.release<Scope::Thread>(y), dev::Status::Success);
    EXPECT_EQ(h.released(), expect) << "lap " << lap;
    EXPECT_EQ(q.release<Scope::Thread>(x), dev::Status::Success);
    expect += 64;
    EXPECT_EQ(h.released(), expect) << "lap " << lap;
    EXPECT_EQ(h.consumer, expect) << "lap " << lap;
  }
}

}  // namespace
}  // namespace gnio
