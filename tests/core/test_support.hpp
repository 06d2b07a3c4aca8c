// SPDX-License-Identifier: Apache-2.0
// Shared by the runtime tests: which device the tests drive (GNIO_TEST_GPU:
// "cpu" for the emulated device, "auto" or a bus id for a real GPU) and a
// skip when a real GPU was asked for and there is none.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "gnio/gpu.hpp"

namespace gnio::test {

inline std::string test_gpu_id() {
  const char* v = std::getenv("GNIO_TEST_GPU");
  return v && *v ? v : "cpu";
}

// Waits up to `limit` for pred(); returns its last value.
template <typename Pred>
bool eventually(Pred&& pred, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return pred();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

}  // namespace gnio::test

// Opens the device under test into `var`, or skips the test.
#define GNIO_OPEN_TEST_GPU(var)                                                        \
  auto var##_result = ::gnio::Gpu::open(::gnio::test::test_gpu_id());                  \
  if (!var##_result && ::gnio::test::test_gpu_id() == "auto")                          \
    GTEST_SKIP() << "no CUDA device: " << var##_result.status().message();             \
  ASSERT_TRUE(var##_result.has_value()) << var##_result.status().to_string();          \
  ::gnio::Gpu var = std::move(*var##_result)
