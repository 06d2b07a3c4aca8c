// SPDX-License-Identifier: Apache-2.0
// gnio._gnio: BatchReceiver for Python. A Batch holds its pool buffer
// through an Owner; the buffer goes back to the kernel when the last
// reference is gone: the Batch released (with-exit or release()), every
// Array dropped and every DLPack capsule deleted by its consumer.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <string>

#include "arrays.hpp"
#include "gnio/batch.hpp"
#include "gnio/capabilities.hpp"
#include "gnio/dev/batch.hpp"
#include "gnio/doctor.hpp"

#if GNIO_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>
#endif

namespace py = pybind11;

namespace gnio::pyext {

namespace {

// Whether the CUDA driver loads kernels lazily (CUDA_MODULE_LOADING=LAZY,
// the default since CUDA 12.2). Then the first launch of any kernel that
// PyTorch or CuPy has not run yet may wait for every running kernel of the
// context, and gnio's persistent kernel never ends: the process hangs.
bool lazy_module_loading() {
#if GNIO_HAVE_CUDA
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion("cuModuleGetLoadingMode", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess || !fn)
    return false;  // a driver without lazy loading
  CUmoduleLoadingMode mode{};
  return reinterpret_cast<CUresult (*)(CUmoduleLoadingMode*)>(fn)(&mode) == CUDA_SUCCESS && mode == CU_MODULE_LAZY_LOADING;
#else
  return false;
#endif
}

// A gnio Status as a C++ exception; translated to gnio.Error.
struct StatusError {
  Status status;
};

[[noreturn]] void raise(Status s) { throw StatusError{std::move(s)}; }
[[noreturn]] void raise(Errc code, const std::string& message) { raise(Status(code, Layer::App, message)); }

PyObject* error_type = nullptr;

// A pool buffer next() returned: given back when the last reference goes.
class LeaseOwner final : public Owner {
 public:
  LeaseOwner(BatchReceiver rx, uint32_t buffer) : rx_(std::move(rx)), buffer_(buffer) {}
  ~LeaseOwner() override {
    wait_for_consumers();
    (void)rx_.release(buffer_);
  }

 private:
  BatchReceiver rx_;  // a copy: keeps the receiver's memory alive
  uint32_t buffer_;
};

// The memory of Batch.copy(): host memory, or device memory on a GPU.
class CopyOwner final : public Owner {
 public:
  CopyOwner(size_t bytes, bool on_gpu) : on_gpu_(on_gpu) {
#if GNIO_HAVE_CUDA
    if (on_gpu_) {
      if (cudaMalloc(&mem_, bytes) != cudaSuccess)
        raise(Errc::NoMemory, "cudaMalloc of " + std::to_string(bytes) + " bytes for Batch.copy() failed; release "
                              "batches or copies you no longer need");
      return;
    }
#endif
    host_.resize(bytes);
    mem_ = host_.data();
  }
  ~CopyOwner() override {
    wait_for_consumers();
#if GNIO_HAVE_CUDA
    if (on_gpu_) cudaFree(mem_);
#endif
  }
  uint8_t* data() { return static_cast<uint8_t*>(mem_); }

 private:
  bool on_gpu_;
  void* mem_ = nullptr;
  std::vector<uint8_t> host_;
};

void copy_bytes(void* dst, const void* src, size_t n, bool on_gpu) {
#if GNIO_HAVE_CUDA
  if (on_gpu) {
    if (cudaMemcpy(dst, src, n, cudaMemcpyDeviceToDevice) != cudaSuccess)
      raise(Errc::Driver, "cudaMemcpy of " + std::to_string(n) + " bytes for Batch.copy() failed");
    return;
  }
#endif
  (void)on_gpu;
  std::memcpy(dst, src, n);
}

// snap 0: the flat layout (data holds the frames whole, `offsets` where each starts).
class Batch {
 public:
  Batch(std::shared_ptr<Owner> owner, BatchArrays arrays, BatchRef ref, uint32_t snap, Device device)
      : owner_(std::move(owner)), a_(arrays), ref_(ref), snap_(snap), device_(device) {}

  bool flat() const { return snap_ == 0; }
  Array data() const {
    if (!flat()) return array(a_.data, 8, snap_);
    live("reading its arrays");
    return Array{owner_, a_.data, device_, 8, static_cast<int64_t>(ref_.bytes), 0};
  }
  Array offsets() const {
    if (!flat())
      raise(Errc::NotSupported, "offsets belong to layout='flat'; this batch is padded (data is uint8 [n, snap], "
                                "lengths the real lengths): open the Receiver with layout='flat' for whole frames");
    live("reading its arrays");
    return Array{owner_, a_.offsets, device_, 32, static_cast<int64_t>(ref_.count) + 1, 0};
  }
  Array lengths() const { return array(a_.lengths, 32); }
  Array timestamps() const { return array(a_.timestamps, 64); }
  Array rss_hash() const { return array(a_.rss_hash, 32); }
  Array queue() const { return array(a_.queue, 16); }
  uint32_t count() const { return ref_.count; }
  const BatchRef& ref() const { return ref_; }
  uint32_t snap() const { return snap_; }
  bool released() const { return !owner_; }
  void release() { owner_.reset(); }

  Batch copy() const {
    live("copy()");
    const size_t n = ref_.count;
    constexpr int kArrays = 6;
    const size_t sizes[kArrays] = {flat() ? ref_.bytes : n * snap_, n * 4, n * 8, n * 4, n * 2,
                                   flat() ? (n + 1) * 4 : 0};
    size_t at[kArrays], total = 0;
    for (int i = 0; i < kArrays; ++i) {
      at[i] = total;
      total += (sizes[i] + 255) / 256 * 256;
    }
    const bool gpu = device_.type == 2;
    auto owner = std::make_shared<CopyOwner>(total ? total : 1, gpu);
    const void* src[kArrays] = {a_.data, a_.lengths, a_.timestamps, a_.rss_hash, a_.queue, a_.offsets};
    void* dst[kArrays];
    for (int i = 0; i < kArrays; ++i) {
      dst[i] = sizes[i] ? owner->data() + at[i] : nullptr;
      if (sizes[i]) copy_bytes(dst[i], src[i], sizes[i], gpu);
    }
    return Batch(owner, {dst[0], dst[1], dst[2], dst[3], dst[4], dst[5]}, ref_, snap_, device_);
  }

 private:
  void live(const char* what) const {
    if (!owner_)
      raise(Errc::BadState, std::string("batch ") + std::to_string(ref_.seq) + " of queue " +
                                std::to_string(ref_.queue) + " was released; " + what +
                                " is for a batch inside its `with` block (keep a tensor made before, or copy())");
  }
  Array array(void* p, uint8_t bits, uint32_t cols = 0) const {
    live("reading its arrays");
    return Array{owner_, p, device_, bits, ref_.count, cols};
  }

  std::shared_ptr<Owner> owner_;
  BatchArrays a_;
  BatchRef ref_;
  uint32_t snap_;
  Device device_;
};

WhenFull parse_when_full(const std::string& s) {
  if (s == "auto") return WhenFull::Auto;
  if (s == "wait") return WhenFull::Wait;
  if (s == "drop") return WhenFull::Drop;
  raise(Errc::InvalidValue, "when_full='" + s + "' is none of auto, wait, drop");
}

BatchLayout parse_layout(const std::string& s) {
  if (s == "padded") return BatchLayout::Padded;
  if (s == "flat") return BatchLayout::Flat;
  raise(Errc::InvalidValue, "layout='" + s + "' is neither 'padded' (uint8 [n, snap]) nor 'flat' (whole frames "
                            "back to back with offsets [n + 1]); pass one of them");
}

py::dict queue_stats(const BatchQueueStats& q) {
  py::dict d, dropped;
  d["offered"] = q.offered;
  d["delivered"] = q.delivered;
  d["delivered_bytes"] = q.delivered_bytes;
  d["batches"] = q.batches;
  for (size_t i = 0; i < kBatchDropReasons; ++i)
    dropped[py::str(std::string(batch_drop_reason_name(static_cast<BatchDropReason>(i))))] = q.dropped[i];
  d["dropped"] = dropped;
  d["in_flight"] = q.in_flight;
  return d;
}

class Receiver {
 public:
  Receiver(const std::string& spec, const std::string& gpu, uint32_t queues, uint32_t batch, uint32_t snap,
           uint32_t buffers, double timeout_ms, const std::string& when_full, uint32_t burst, bool rss_hash,
           const std::string& ring, const std::string& layout, uint64_t flat_bytes) {
    BatchConfig c;
    c.spec = spec;
    c.gpu = gpu;
    c.queues = queues;
    c.batch = batch;
    c.layout = parse_layout(layout);
    c.snap = snap;
    c.flat_bytes = flat_bytes;
    c.buffers = buffers;
    if (timeout_ms < 0) raise(Errc::InvalidValue, "timeout_ms=" + std::to_string(timeout_ms) + " is negative; pass 0 or more");
    c.timeout = std::chrono::microseconds(static_cast<int64_t>(timeout_ms * 1000));
    c.when_full = parse_when_full(when_full);
    c.burst = burst;
    c.rss_hash = rss_hash;
    if (ring != "gpu" && ring != "host") raise(Errc::InvalidValue, "ring='" + ring + "' is neither gpu nor host");
    c.ring_in_host = ring == "host";
    Result<BatchReceiver> r = [&] {
      py::gil_scoped_release nogil;
      return BatchReceiver::open(c);
    }();
    if (!r) raise(r.status());
    rx_ = std::move(*r);
    device_ = rx_.emulated() ? Device{1, 0} : Device{2, rx_.cuda_ordinal()};
    if (!rx_.emulated() && lazy_module_loading()) {
      {
        py::gil_scoped_release nogil;
        (void)rx_.close(std::chrono::milliseconds(0));
      }
      raise(Status(Errc::NotSupported, Layer::Cuda,
                   "CUDA loads kernels lazily in this process (CUDA_MODULE_LOADING is LAZY or unset): the first "
                   "launch of a PyTorch or CuPy kernel would wait forever for gnio's persistent kernel; import gnio "
                   "before torch or cupy (it sets CUDA_MODULE_LOADING=EAGER) or set CUDA_MODULE_LOADING=EAGER in the "
                   "environment",
                   Axis::Cuda));
    }
  }

  // ("batch", Batch) | ("timeout", None) | ("end", None). Waits without the
  // GIL, in slices, so that Ctrl-C raises KeyboardInterrupt within 50 ms.
  py::tuple next(double timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<int64_t>(timeout_ms * 1000));
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      const auto slice = std::max(std::chrono::milliseconds(0), std::min(left, std::chrono::milliseconds(50)));
      Result<BatchNext> n = [&] {
        py::gil_scoped_release nogil;
        return rx_.next(slice);
      }();
      if (!n) raise(n.status());
      if (n->what == BatchNext::What::Batch) {
        auto owner = std::make_shared<LeaseOwner>(rx_, n->batch.buffer);
        const BatchConfig& c = rx_.config();
        return py::make_tuple("batch", Batch(owner, rx_.arrays(n->batch.buffer), n->batch,
                                             c.layout == BatchLayout::Flat ? 0 : c.snap, device_));
      }
      if (n->what == BatchNext::What::End) return py::make_tuple("end", py::none());
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (std::chrono::steady_clock::now() >= deadline) return py::make_tuple("timeout", py::none());
    }
  }

  py::dict stats() const {
    const BatchStats s = rx_.stats();
    py::dict d = queue_stats(s.total);
    py::list per;
    for (const BatchQueueStats& q : s.queues) {
      py::dict e = queue_stats(q);
      e["queue"] = q.queue;
      per.append(e);
    }
    d["per_queue"] = per;
    d["buffers"] = s.buffers;
    d["held"] = s.held;
    return d;
  }

  void close(double drain_ms) {
    Status s;
    {
      py::gil_scoped_release nogil;
      s = rx_.close(std::chrono::milliseconds(static_cast<int64_t>(drain_ms)));
    }
    if (!s) raise(s);
  }

  py::dict config() const {
    const BatchConfig& c = rx_.config();
    py::dict d;
    d["spec"] = c.spec;
    d["gpu"] = rx_.gpu_name();
    d["queues"] = c.queues;
    d["batch"] = c.batch;
    d["layout"] = std::string(batch_layout_name(c.layout));
    d["snap"] = c.layout == BatchLayout::Flat ? py::object(py::none()) : py::int_(c.snap);
    d["flat_bytes"] = c.flat_bytes;
    d["buffers"] = c.buffers;
    d["timeout_ms"] = c.timeout.count() / 1000.0;
    d["when_full"] = c.when_full == WhenFull::Drop ? "drop" : "wait";
    d["burst"] = c.burst;
    d["rss_hash"] = c.rss_hash;
    d["ring"] = c.ring_in_host ? "host" : "gpu";
    return d;
  }
  bool closed() const { return rx_.closed(); }
  std::string device() const { return device_.type == 2 ? "cuda:" + std::to_string(device_.id) : "cpu"; }

 private:
  BatchReceiver rx_;
  Device device_;
};

}  // namespace

}  // namespace gnio::pyext

PYBIND11_MODULE(_gnio, m) {
  using namespace gnio;
  using namespace gnio::pyext;
  m.doc() = "gnio's batch receiver: received packets as DLPack arrays (see docs/PYTHON.md)";
  error_type = PyErr_NewExceptionWithDoc("gnio.Error",
                                         "A gnio error: .code is its name (e.g. 'INVALID_VALUE'), .layer the part "
                                         "that failed, .message what failed and what to do.",
                                         PyExc_RuntimeError, nullptr);
  m.attr("Error") = pybind11::handle(error_type);
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      pybind11::object err = pybind11::reinterpret_borrow<pybind11::object>(error_type)(e.status.message());
      err.attr("code") = std::string(errc_name(e.status.code()));
      err.attr("layer") = std::string(layer_name(e.status.layer()));
      err.attr("message") = e.status.message();
      PyErr_SetObject(error_type, err.ptr());
    }
  });
  bind_array(m);
  pybind11::class_<Batch>(m, "Batch", "A batch of received packets, held until released (see docs/PYTHON.md).")
      .def_property_readonly("data", &Batch::data,
                             "uint8 [n, snap]: each packet's first snap bytes, zero-padded; with layout='flat' "
                             "uint8 [bytes]: the whole frames back to back")
      .def_property_readonly("offsets", &Batch::offsets,
                             "uint32 [n + 1], layout='flat' only: packet i is data[offsets[i]:offsets[i + 1]]")
      .def_property_readonly("layout", [](const Batch& b) { return b.flat() ? "flat" : "padded"; })
      .def_property_readonly("lengths", &Batch::lengths, "uint32 [n]: each packet's received length")
      .def_property_readonly("timestamps", &Batch::timestamps, "uint64 [n]: arrival or capture time, ns since the epoch")
      .def_property_readonly("rss_hash", &Batch::rss_hash, "uint32 [n]: Toeplitz hash of each frame")
      .def_property_readonly("queue", &Batch::queue, "uint16 [n]: the RX queue of each packet")
      .def_property_readonly("count", &Batch::count)
      .def("__len__", &Batch::count)
      .def_property_readonly("snap", [](const Batch& b) { return b.flat() ? py::object(py::none()) : py::int_(b.snap()); })
      .def_property_readonly("queue_id", [](const Batch& b) { return b.ref().queue; })
      .def_property_readonly("seq", [](const Batch& b) { return b.ref().seq; })
      .def_property_readonly("bytes", [](const Batch& b) { return b.ref().bytes; })
      .def_property_readonly("reason", [](const Batch& b) {
        const uint32_t f = b.ref().flags;
        return f & dev::BatchFull        ? "full"
               : f & dev::BatchBytesFull ? "bytes_full"
               : f & dev::BatchTimedOut  ? "timeout"
                                         : "flushed";
      })
      .def_property_readonly("released", &Batch::released)
      .def("release", &Batch::release,
           "Drops this batch's hold on its buffer; the buffer goes back once no Array or capsule of it lives")
      .def("copy", &Batch::copy, "A batch of the same packets in memory of its own, never reused")
      .def("__enter__", [](pybind11::object self) { return self; })
      .def("__exit__", [](Batch& b, pybind11::args) {
        b.release();
        return false;
      });
  pybind11::class_<Receiver>(m, "_Receiver")
      .def(pybind11::init<const std::string&, const std::string&, uint32_t, uint32_t, uint32_t, uint32_t, double,
                          const std::string&, uint32_t, bool, const std::string&, const std::string&, uint64_t>(),
           pybind11::arg("spec"), pybind11::arg("gpu"), pybind11::arg("queues"), pybind11::arg("batch"),
           pybind11::arg("snap"), pybind11::arg("buffers"), pybind11::arg("timeout_ms"), pybind11::arg("when_full"),
           pybind11::arg("burst"), pybind11::arg("rss_hash"), pybind11::arg("ring"), pybind11::arg("layout"),
           pybind11::arg("flat_bytes"))
      .def("next", &Receiver::next, pybind11::arg("timeout_ms"))
      .def("stats", &Receiver::stats)
      .def("close", &Receiver::close, pybind11::arg("drain_ms") = 2000.0)
      .def_property_readonly("config", &Receiver::config)
      .def_property_readonly("closed", &Receiver::closed)
      .def_property_readonly("device", &Receiver::device);
  m.def("_caps_json", [](const std::string& nic, const std::string& gpu) {
    pybind11::gil_scoped_release nogil;
    return to_json(discover(nic, gpu), -1);
  });
  m.def("_doctor_json", [](const std::string& nic, const std::string& gpu, uint64_t ring_bytes) {
    pybind11::gil_scoped_release nogil;
    doctor::Request req;
    req.nic_spec = nic;
    req.gpu = gpu;
    req.ring_bytes = ring_bytes;
    return doctor::to_json(doctor::run_all(doctor::Environment::real(), req), -1);
  });
  m.def("_raise", [](const std::string& code, const std::string& message) {
    auto c = errc_from_name(code);
    raise(c ? *c : Errc::InvalidValue, message);
  });
}
