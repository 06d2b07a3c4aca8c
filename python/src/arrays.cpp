// SPDX-License-Identifier: Apache-2.0
// gnio.Array: DLPack (dlpack.h 0.6, the unversioned "dltensor" capsule),
// __cuda_array_interface__ v3 on a GPU, __array_interface__ on the host.
#include "arrays.hpp"

#include <dlpack/dlpack.h>

#include <string>
#include <utility>

#if GNIO_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace py = pybind11;

namespace gnio::pyext {

void Owner::note_stream(uintptr_t stream) {
  std::lock_guard lock(mu_);
  for (uintptr_t s : streams_)
    if (s == stream) return;
  streams_.push_back(stream);
}

void Owner::wait_for_consumers() {
#if GNIO_HAVE_CUDA
  std::vector<uintptr_t> streams;
  {
    std::lock_guard lock(mu_);
    streams.swap(streams_);
  }
  for (uintptr_t s : streams) {
    // DLPack's 1 is the legacy default stream, 2 the per-thread one.
    cudaStream_t st = s == 1 ? cudaStreamLegacy : s == 2 ? cudaStreamPerThread : reinterpret_cast<cudaStream_t>(s);
    cudaEvent_t ev;
    if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess) continue;
    if (cudaEventRecord(ev, st) == cudaSuccess) cudaEventSynchronize(ev);
    cudaEventDestroy(ev);
  }
#endif
}

namespace {

// What a capsule carries: the tensor, its shape, and a reference to the owner.
struct Managed {
  DLManagedTensor tensor{};
  int64_t shape[2] = {0, 0};
  std::shared_ptr<Owner> owner;
};

void delete_managed(DLManagedTensor* t) { delete static_cast<Managed*>(t->manager_ctx); }

void capsule_destructor(PyObject* capsule) {
  // A consumer renames a capsule it took over ("used_dltensor") and calls
  // the deleter itself; an unconsumed one is deleted here.
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (t && t->deleter) t->deleter(t);
}

std::string typestr(const Array& a) {
  return std::string(a.bits == 8 ? "|" : "<") + "u" + std::to_string(a.bits / 8);
}

py::tuple shape_of(const Array& a) {
  return a.cols ? py::make_tuple(a.rows, a.cols) : py::make_tuple(a.rows);
}

// max_version is accepted and answered with the unversioned capsule (what
// dlpack.h 0.6 defines), as the array API allows a producer to.
py::capsule to_dlpack(const Array& a, py::object stream, py::object max_version, py::object dl_device,
                      py::object copy) {
  (void)max_version;
  if (!copy.is_none() && copy.cast<bool>())
    throw py::value_error("copy=True is not offered by __dlpack__; use Batch.copy() for memory of its own");
  if (!dl_device.is_none()) {
    auto want = dl_device.cast<std::pair<int, int>>();
    if (want.first != a.device.type || want.second != a.device.id)
      throw py::buffer_error("the array lives on DLPack device (" + std::to_string(a.device.type) + ", " +
                             std::to_string(a.device.id) + "), not the one asked for; copy it with its library");
  }
  if (a.device.type == kDLCUDA) {
    // None is the legacy default stream (the array API's rule), -1 "no
    // synchronisation": the consumer takes care of it itself.
    intptr_t s = stream.is_none() ? 1 : stream.cast<intptr_t>();
    if (s == 0) throw py::value_error("stream=0 is ambiguous for CUDA in DLPack; pass 1 (legacy default), 2 (per-thread) or a stream handle");
    if (s != -1) a.owner->note_stream(static_cast<uintptr_t>(s));
  } else if (!stream.is_none()) {
    throw py::value_error("stream must be None for an array in host memory (the emulated device); got " +
                          py::repr(stream).cast<std::string>());
  }
  auto* m = new Managed;
  m->owner = a.owner;
  m->shape[0] = a.rows;
  m->shape[1] = a.cols;
  DLTensor& t = m->tensor.dl_tensor;
  t.data = const_cast<void*>(a.ptr);
  t.device = {static_cast<DLDeviceType>(a.device.type), a.device.id};
  t.ndim = a.cols ? 2 : 1;
  t.dtype = {kDLUInt, a.bits, 1};
  t.shape = m->shape;
  t.strides = nullptr;  // compact, row-major
  t.byte_offset = 0;
  m->tensor.manager_ctx = m;
  m->tensor.deleter = delete_managed;
  return py::capsule(&m->tensor, "dltensor", capsule_destructor);
}

}  // namespace

void bind_array(py::module_& m) {
  py::class_<Array>(m, "Array",
                    "One array of a batch in the memory it was received into (a view: no copy). Read it with "
                    "torch.from_dlpack, cupy.from_dlpack or numpy.from_dlpack / numpy.asarray; it keeps the "
                    "batch's memory alive while it, or a tensor made from it, lives.")
      .def("__dlpack__", &to_dlpack, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
           "A DLPack capsule of the array. On a GPU, `stream` is the consumer's CUDA stream (None: the legacy "
           "default stream, -1: none); the batch's memory goes back only after the work queued on it finished.")
      .def("__dlpack_device__", [](const Array& a) { return py::make_tuple(a.device.type, a.device.id); })
      .def_property_readonly("__cuda_array_interface__",
                             [](const Array& a) -> py::dict {
                               if (a.device.type != kDLCUDA)
                                 throw py::attribute_error("the array is in host memory (the emulated device): "
                                                           "use __array_interface__ or DLPack");
                               py::dict d;
                               d["shape"] = shape_of(a);
                               d["typestr"] = typestr(a);
                               d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(a.ptr), true);
                               d["strides"] = py::none();
                               d["version"] = 3;
                               // The kernel finished writing before handing the batch over: nothing to wait for.
                               d["stream"] = py::none();
                               return d;
                             })
      .def_property_readonly("__array_interface__",
                             [](const Array& a) -> py::dict {
                               if (a.device.type != kDLCPU)
                                 throw py::attribute_error("the array is in GPU memory: use DLPack "
                                                           "(torch.from_dlpack, cupy.from_dlpack) or "
                                                           "__cuda_array_interface__");
                               py::dict d;
                               d["shape"] = shape_of(a);
                               d["typestr"] = typestr(a);
                               d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(a.ptr), true);  // read-only
                               d["strides"] = py::none();
                               d["version"] = 3;
                               return d;
                             })
      .def_property_readonly("shape", &shape_of)
      .def_property_readonly("dtype", [](const Array& a) { return "uint" + std::to_string(a.bits); })
      .def_property_readonly("device", [](const Array& a) {
        return a.device.type == kDLCUDA ? "cuda:" + std::to_string(a.device.id) : std::string("cpu");
      })
      .def_property_readonly("nbytes", [](const Array& a) { return a.rows * (a.cols ? a.cols : 1) * a.bits / 8; })
      .def("__len__", [](const Array& a) { return a.rows; })
      .def("__repr__", [](const Array& a) {
        return "<gnio.Array uint" + std::to_string(a.bits) + " " + py::repr(shape_of(a)).cast<std::string>() +
               " on " + (a.device.type == kDLCUDA ? "cuda:" + std::to_string(a.device.id) : std::string("cpu")) + ">";
      });
}

}  // namespace gnio::pyext
