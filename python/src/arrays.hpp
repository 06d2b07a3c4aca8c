// SPDX-License-Identifier: Apache-2.0
// What the Python module hands out: the owner of a batch's memory (a
// held pool buffer, or a copy) and its arrays with the DLPack, CUDA array
// interface and NumPy array interface protocols.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gnio::pyext {

// Keeps a batch's memory: while any Owner reference lives (a Batch not
// released, an Array, a DLPack capsule not yet deleted by its consumer),
// the memory stays. On a CUDA GPU the destructor first waits for the work
// queued on every stream a consumer named in __dlpack__(stream=...).
class Owner {
 public:
  virtual ~Owner() = default;
  // A CUDA stream a consumer will read the memory on (its __dlpack__ stream).
  void note_stream(uintptr_t stream);

 protected:
  // Waits for the work queued on the noted streams (no-op on the emulated device).
  void wait_for_consumers();

 private:
  std::mutex mu_;
  std::vector<uintptr_t> streams_;
};

// Where an array lives: kDLCPU (1) on the emulated device, kDLCUDA (2) on a GPU.
struct Device {
  int type = 1;
  int id = 0;
};

// One array of a batch: a view of its owner's memory, rows x cols elements
// (cols 0: one dimension) of an unsigned type of `bits`.
struct Array {
  std::shared_ptr<Owner> owner;
  const void* ptr = nullptr;
  Device device;
  uint8_t bits = 8;
  int64_t rows = 0;
  int64_t cols = 0;
};

// Registers gnio.Array.
void bind_array(pybind11::module_& m);

}  // namespace gnio::pyext
