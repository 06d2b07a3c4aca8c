// SPDX-License-Identifier: Apache-2.0
#include "gnio/gpu.hpp"

#include <algorithm>
#include <optional>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "core/log.hpp"
#include "gpu/cuda_util.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio {

namespace detail {

Allocation::~Allocation() {
  if (owner) owner->remove_region(reinterpret_cast<uint64_t>(dev));
  if (!dev) return;
  if (registered) {
    owner->unregister_host(host);
    return;
  }
  if (!owner || owner->emulated) {
    std::free(dev);
    return;
  }
#if GNIO_HAVE_CUDA
  owner->bind_thread();
  cudaError_t err = kind == MemKind::CpuGpu ? cudaFreeHost(host) : cudaFree(dev);
  if (err != cudaSuccess) log::warn("gpu", std::string("freeing device memory failed: ") + cudaGetErrorName(err));
#endif
}

void GpuImpl::add_region(const Region& r) {
  std::lock_guard lock(mu_);
  regions_[r.dev_base] = r;
}

void GpuImpl::defer(std::shared_ptr<void> keep_alive) {
  std::lock_guard lock(mu_);
  deferred_.push_back(std::move(keep_alive));
}

void GpuImpl::release_deferred() {
  std::vector<std::shared_ptr<void>> release;
  {
    std::lock_guard lock(mu_);
    release.swap(deferred_);
  }
}

void GpuImpl::remove_region(uint64_t dev_base) {
  std::lock_guard lock(mu_);
  regions_.erase(dev_base);
}

bool GpuImpl::resolve(uint64_t addr, uint32_t len, Region& out) const {
  std::lock_guard lock(mu_);
  auto it = regions_.upper_bound(addr);
  if (it == regions_.begin()) return false;
  --it;
  const Region& r = it->second;
  if (addr < r.dev_base || addr + len > r.dev_base + r.size) return false;
  out = r;
  return true;
}

Status GpuImpl::bind_thread() const {
  if (emulated) return Status::ok();
#if GNIO_HAVE_CUDA
  GNIO_CUDA_TRY(cudaSetDevice(ordinal), "cudaSetDevice(" + std::to_string(ordinal) + ") for GPU " + bus_id);
  return Status::ok();
#else
  return {Errc::NotSupported, Layer::Gpu, "gnio was built without CUDA", Axis::Cuda};
#endif
}

GpuImpl::~GpuImpl() {
#if GNIO_HAVE_CUDA
  if (zero_stream_ && bind_thread()) cudaStreamDestroy(zero_stream_);
  if (copy_stream_ && bind_thread()) cudaStreamDestroy(copy_stream_);
#endif
}

Status GpuImpl::copy_to_host(const void* dev, void* dst, size_t bytes, const std::string& what) {
  if (emulated) {
    std::memcpy(dst, dev, bytes);
    return Status::ok();
  }
#if GNIO_HAVE_CUDA
  std::lock_guard lock(copy_mu_);
  GNIO_TRY(bind_thread());
  if (!copy_stream_)
    GNIO_CUDA_TRY(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking),
                  "creating the stream that copies to the host on " + bus_id);
  GNIO_CUDA_TRY(cudaMemcpyAsync(dst, dev, bytes, cudaMemcpyDefault, copy_stream_), what);
  GNIO_CUDA_TRY(cudaStreamSynchronize(copy_stream_), what);
  return Status::ok();
#else
  return {Errc::NotSupported, Layer::Gpu, what + ": gnio was built without CUDA", Axis::Cuda};
#endif
}

#if GNIO_HAVE_CUDA
Status GpuImpl::zero_device_memory(void* dev, size_t bytes, const std::string& what) {
  std::lock_guard lock(mu_);
  if (!zero_stream_)
    GNIO_CUDA_TRY(cudaStreamCreateWithFlags(&zero_stream_, cudaStreamNonBlocking),
                  "creating the stream that zeroes allocations on " + bus_id);
  GNIO_CUDA_TRY(cudaMemsetAsync(dev, 0, bytes, zero_stream_), "zeroing the " + what);
  GNIO_CUDA_TRY(cudaStreamSynchronize(zero_stream_), "zeroing the " + what);
  return Status::ok();
}
#endif

Result<DeviceMemory> GpuImpl::alloc(size_t bytes, MemKind kind, size_t align) {
  if (closed.load()) return Status(Errc::BadState, Layer::Gpu, "alloc on GPU " + bus_id + " after close()");
  if (bytes == 0) return Status(Errc::InvalidValue, Layer::Gpu, "alloc of 0 bytes; ask for at least one byte");
  if (align == 0 || (align & (align - 1)) != 0)
    return Status(Errc::InvalidValue, Layer::Gpu,
                  "alignment " + std::to_string(align) + " is not a power of two; use e.g. 256");
  auto a = std::make_shared<Allocation>();
  a->size = bytes;
  a->kind = kind;
  if (emulated) {
    size_t rounded = (bytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align < alignof(std::max_align_t) ? alignof(std::max_align_t) : align, rounded);
    if (!p)
      return Status(Errc::NoMemory, Layer::Gpu, "emulated device: " + std::to_string(bytes) + " bytes not available");
    std::memset(p, 0, rounded);
    a->dev = a->host = p;
  } else {
#if GNIO_HAVE_CUDA
    GNIO_TRY(bind_thread());
    const std::string what = std::to_string(bytes) + "-byte " + std::string(mem_kind_name(kind)) + " allocation on " + bus_id;
    switch (kind) {
      case MemKind::Gpu:
        GNIO_CUDA_TRY(cudaMalloc(&a->dev, bytes), "cudaMalloc of " + what);
        GNIO_TRY(zero_device_memory(a->dev, bytes, what));
        break;
      case MemKind::GpuCpu:
        if (!info.concurrent_managed_access)
          return Status(Errc::NotSupported, Layer::Gpu,
                        "GpuCpu memory needs concurrent managed access, which GPU " + bus_id +
                            " lacks; use MemKind::CpuGpu",
                        Axis::Cuda);
        GNIO_CUDA_TRY(cudaMallocManaged(&a->dev, bytes), "cudaMallocManaged of " + what);
        {
          cudaMemLocation loc{};
          loc.type = cudaMemLocationTypeDevice;
          loc.id = ordinal;
          GNIO_CUDA_TRY(cudaMemAdvise(a->dev, bytes, cudaMemAdviseSetPreferredLocation, loc),
                        "cudaMemAdvise(preferred location) of " + what);
        }
        std::memset(a->dev, 0, bytes);
        a->host = a->dev;
        break;
      case MemKind::CpuGpu:
        GNIO_CUDA_TRY(cudaHostAlloc(&a->host, bytes, cudaHostAllocMapped | cudaHostAllocPortable),
                      "cudaHostAlloc of " + what);
        std::memset(a->host, 0, bytes);
        GNIO_CUDA_TRY(cudaHostGetDevicePointer(&a->dev, a->host, 0), "cudaHostGetDevicePointer of " + what);
        break;
    }
#endif
  }
  a->owner = shared_from_this();
  add_region({reinterpret_cast<uint64_t>(a->dev), bytes, static_cast<uint8_t*>(a->host), kind});
  return DeviceMemory(std::move(a));
}

Result<DeviceMemory> GpuImpl::register_host(void* host, size_t bytes) {
  if (closed.load()) return Status(Errc::BadState, Layer::Gpu, "register_host on GPU " + bus_id + " after close()");
  if (!host || bytes == 0)
    return Status(Errc::InvalidValue, Layer::Gpu,
                  "register_host of " + std::to_string(bytes) + " bytes at " +
                      std::to_string(reinterpret_cast<uint64_t>(host)) + "; give a non-empty host range");
  auto a = std::make_shared<Allocation>();
  a->size = bytes;
  a->kind = MemKind::CpuGpu;
  a->registered = true;
  a->host = host;
  if (emulated) {
    a->dev = host;
  } else {
#if GNIO_HAVE_CUDA
    GNIO_TRY(bind_thread());
    const std::string what = std::to_string(bytes) + " bytes of host memory on " + bus_id;
    std::lock_guard lock(mu_);
    int& count = host_registrations_[host];
    if (count == 0) {
      cudaError_t err = cudaHostRegister(host, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
      // Memory its owner already pinned (cudaHostAlloc) is mapped as it is.
      if (err == cudaErrorHostMemoryAlreadyRegistered) {
        (void)cudaGetLastError();
        count = -1;
      } else if (err != cudaSuccess) {
        host_registrations_.erase(host);
        GNIO_CUDA_TRY(err, "cudaHostRegister of " + what);
      }
    }
    if (count >= 0) ++count;
    cudaError_t err = cudaHostGetDevicePointer(&a->dev, host, 0);
    if (err != cudaSuccess) {
      if (count > 0 && --count == 0) {
        cudaHostUnregister(host);
        host_registrations_.erase(host);
      }
      a->dev = nullptr;
      GNIO_CUDA_TRY(err, "cudaHostGetDevicePointer of " + what);
    }
#else
    return Status(Errc::NotSupported, Layer::Gpu, "gnio was built without CUDA", Axis::Cuda);
#endif
  }
  a->owner = shared_from_this();
  add_region({reinterpret_cast<uint64_t>(a->dev), bytes, static_cast<uint8_t*>(a->host), MemKind::CpuGpu});
  return DeviceMemory(std::move(a));
}

void GpuImpl::unregister_host([[maybe_unused]] void* host) {
#if GNIO_HAVE_CUDA
  if (emulated) return;
  std::lock_guard lock(mu_);
  auto it = host_registrations_.find(host);
  if (it == host_registrations_.end() || it->second < 0) return;  // its owner pinned it
  if (--it->second > 0) return;
  host_registrations_.erase(it);
  bind_thread();
  if (cudaError_t err = cudaHostUnregister(host); err != cudaSuccess)
    log::warn("gpu", std::string("cudaHostUnregister of backend frame memory failed: ") + cudaGetErrorName(err));
#endif
}

namespace {
std::mutex g_registry_mu;
std::map<std::string, std::weak_ptr<GpuImpl>> g_registry;
}  // namespace

}  // namespace detail

std::string_view mem_kind_name(MemKind kind) noexcept {
  switch (kind) {
    case MemKind::Gpu: return "gpu";
    case MemKind::GpuCpu: return "gpu_cpu";
    case MemKind::CpuGpu: return "cpu_gpu";
  }
  return "unknown";
}

void* DeviceMemory::device_ptr() const noexcept { return a_ ? a_->dev : nullptr; }
void* DeviceMemory::host_ptr() const noexcept { return a_ ? a_->host : nullptr; }
size_t DeviceMemory::size() const noexcept { return a_ ? a_->size : 0; }
MemKind DeviceMemory::kind() const noexcept { return a_ ? a_->kind : MemKind::Gpu; }

Status DeviceMemory::copy_to_host(size_t offset, void* dst, size_t bytes) const {
  if (!a_) return Status(Errc::BadState, Layer::Gpu, "copy_to_host on an empty DeviceMemory; allocate it first");
  if (offset > a_->size || bytes > a_->size - offset)
    return Status(Errc::InvalidValue, Layer::Gpu,
                  "copy_to_host of bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                      ") of a " + std::to_string(a_->size) + "-byte allocation; stay inside it");
  if (bytes == 0) return Status::ok();
  if (!dst) return Status(Errc::InvalidValue, Layer::Gpu, "copy_to_host to a null destination; pass host memory");
  return a_->owner->copy_to_host(static_cast<const uint8_t*>(a_->dev) + offset, dst, bytes,
                                 "copying " + std::to_string(bytes) + " bytes of a " +
                                     std::string(mem_kind_name(a_->kind)) + " allocation to the host on " +
                                     a_->owner->bus_id);
}

dev::BufArr BufArr::handle() const noexcept {
  return {static_cast<uint8_t*>(mem_.device_ptr()), elem_size_, count_};
}

namespace {

CudaDeviceInfo emulated_info(const std::string& name) {
  CudaDeviceInfo i;
  i.bus_id = name;
  i.name = "gnio emulated device (kernels on CPU threads)";
  i.can_map_host_memory = true;
  i.unified_addressing = true;
  i.concurrent_managed_access = true;
  i.stream_mem_ops = true;
  i.stream_mem_ops_64 = true;
  return i;
}

std::string present_list(const std::vector<CudaDeviceInfo>& devs) {
  if (devs.empty()) return "none";
  std::string s;
  for (const auto& d : devs) s += (s.empty() ? "" : ", ") + d.bus_id + " (" + d.name + ")";
  return s;
}

// "cpu" and "cpu:N" (N in 0..63): the emulated device's canonical name,
// "cpu" for device 0; "" for other text, nullopt for a bad N.
std::optional<std::string> emulated_name(const std::string& text) {
  if (text == "cpu") return std::string("cpu");
  if (text.rfind("cpu:", 0) != 0) return std::string();
  const std::string n = text.substr(4);
  constexpr unsigned kMaxEmulated = 63;
  const bool digits = !n.empty() && n.size() <= 2 && n.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || (n.size() > 1 && n[0] == '0') || std::stoul(n) > kMaxEmulated)
    return std::nullopt;
  const unsigned i = static_cast<unsigned>(std::stoul(n));
  return i == 0 ? std::string("cpu") : "cpu:" + std::to_string(i);
}

}  // namespace

Result<Gpu> Gpu::open(std::string_view bus_id_text) {
  auto impl = std::make_shared<detail::GpuImpl>();
  std::string requested(bus_id_text);
  const std::optional<std::string> emulated = emulated_name(requested);
  if (!emulated)
    return Status(Errc::InvalidValue, Layer::Gpu,
                  "\"" + requested + "\" names no emulated device: use cpu:0 .. cpu:63 (\"cpu\" is cpu:0)");
  if (!emulated->empty()) {
    impl->emulated = true;
    impl->bus_id = *emulated;
    impl->info = emulated_info(*emulated);
  } else {
    auto devs = list_cuda_devices();
    if (!devs) return devs.status();
    if (requested == "auto") {
      if (devs->empty()) {
        CudaRuntimeInfo rt = query_cuda_runtime();
        return Status(Errc::NotFound, Layer::Gpu,
                      "--gpu auto found no CUDA device (" + (rt.error.empty() ? "none enumerated" : rt.error) +
                          "); use \"cpu\" for the emulated device or check `nvidia-smi -L`",
                      Axis::Cuda);
      }
      impl->info = devs->front();
    } else {
      std::string norm = normalize_bus_id(requested);
      if (norm.empty())
        return Status(Errc::InvalidValue, Layer::Gpu,
                      "\"" + requested + "\" is not a PCIe bus id (expected dddd:bb:dd.f, \"auto\" or \"cpu:N\")");
      bool found = false;
      for (const auto& d : *devs)
        if (d.bus_id == norm) {
          impl->info = d;
          found = true;
        }
      if (!found)
        return Status(Errc::InvalidValue, Layer::Gpu,
                      "bus id " + norm + " matches no CUDA device; present: " + present_list(*devs) +
                          "; pass one of these (cudaDeviceGetPCIBusId / nvidia-smi -L)");
    }
    impl->bus_id = impl->info.bus_id;
    impl->ordinal = impl->info.ordinal;
    GNIO_TRY(impl->bind_thread());
  }

  std::lock_guard lock(detail::g_registry_mu);
  auto& slot = detail::g_registry[impl->bus_id];
  if (auto existing = slot.lock(); existing && !existing->closed.load())
    return Status(Errc::BadState, Layer::Gpu,
                  "GPU " + impl->bus_id + " already has an open context (one context per GPU); "
                  "pass the existing Gpu around or close() it first");
  slot = impl;
  log::info("gpu", "opened context for " + impl->bus_id + " (" + impl->info.name + ")");
  return Gpu(std::move(impl));
}

Result<std::vector<std::string>> Gpu::parse_list(std::string_view list_text) {
  const std::string list(list_text);
  std::vector<std::string> names;
  for (size_t pos = 0; pos <= list.size();) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    names.push_back(list.substr(pos, comma - pos));
    pos = comma + 1;
  }
  const auto refuse = [&](const std::string& why) {
    return Status(Errc::InvalidValue, Layer::Gpu, "GPU list \"" + list + "\": " + why);
  };
  for (const std::string& name : names) {
    if (name.empty()) return refuse("has an empty entry; separate devices by single commas");
    if (name == "all") {
      if (names.size() > 1) return refuse("\"all\" already names every CUDA device; give it alone");
      continue;
    }
    const std::optional<std::string> emulated = emulated_name(name);
    if (!emulated) return refuse("entry \"" + name + "\" names no emulated device: use cpu:0 .. cpu:63");
    if (emulated->empty() && name != "auto" && normalize_bus_id(name).empty())
      return refuse("entry \"" + name + "\" is not a PCIe bus id (dddd:bb:dd.f), \"auto\", \"all\" or \"cpu:N\"");
  }
  return names;
}

Result<std::vector<Gpu>> Gpu::open_list(std::string_view list_text) {
  const std::string list(list_text);
  std::vector<std::string> names;
  if (list == "all") {
    auto devs = list_cuda_devices();
    if (!devs) return devs.status();
    if (devs->empty())
      return Status(Errc::NotFound, Layer::Gpu,
                    "--gpu all found no CUDA device; name emulated devices instead (cpu:0,cpu:1) or check "
                    "`nvidia-smi -L`",
                    Axis::Cuda);
    for (const CudaDeviceInfo& d : *devs) names.push_back(d.bus_id);
  } else {
    auto parsed = parse_list(list);
    if (!parsed) return parsed.status();
    names = std::move(*parsed);
  }
  std::vector<Gpu> gpus;
  for (const std::string& name : names) {
    auto g = open(name);
    if (!g) return Status(g.status().code(), Layer::Gpu, "opening \"" + name + "\" of GPU list \"" + list + "\": " +
                                                             g.status().message());
    for (const Gpu& other : gpus)
      if (other.bus_id() == g->bus_id())
        return Status(Errc::InvalidValue, Layer::Gpu,
                      "GPU list \"" + list + "\" names " + g->bus_id() + " twice; one context per GPU");
    gpus.push_back(std::move(*g));
  }
  return gpus;
}

Result<Gpu> Gpu::open_or_emulated(std::string_view bus_id) {
  auto g = open(bus_id);
  if (g || bus_id != "auto") return g;
  log::warn("gpu", "no CUDA device (" + g.status().message() + "); running on the emulated device");
  return open("cpu");
}

Gpu& Gpu::operator=(Gpu&& other) noexcept {
  if (this != &other) {
    close();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

Gpu::~Gpu() {
  Status s = close();
  if (!s) log::error("gpu", "Gpu destroyed out of order: " + s.to_string() + "; its memory stays alive until the "
                            "queues and handles using it are gone");
}

bool Gpu::emulated() const noexcept { return impl_ && impl_->emulated; }
const std::string& Gpu::bus_id() const noexcept {
  static const std::string none;
  return impl_ ? impl_->bus_id : none;
}
int Gpu::ordinal() const noexcept { return impl_ ? impl_->ordinal : -1; }
const CudaDeviceInfo& Gpu::info() const noexcept {
  static const CudaDeviceInfo none;
  return impl_ ? impl_->info : none;
}

Result<DeviceMemory> Gpu::alloc(size_t bytes, MemKind kind, size_t align) {
  if (!impl_) return Status(Errc::BadState, Layer::Gpu, "alloc on a Gpu that was moved from or never opened");
  return impl_->alloc(bytes, kind, align);
}

Result<BufArr> Gpu::create_buf_arr(MemKind kind, uint32_t count, uint32_t elem_size) {
  if (count == 0) return Status(Errc::InvalidValue, Layer::Gpu, "buffer array of 0 elements; ask for at least one");
  if (elem_size < 64 || elem_size > 65536 || (elem_size & (elem_size - 1)) != 0)
    return Status(Errc::InvalidValue, Layer::Gpu,
                  "buffer array element size " + std::to_string(elem_size) +
                      " must be a power of two between 64 and 65536");
  auto mem = alloc(static_cast<size_t>(count) * elem_size, kind, elem_size < 4096 ? 4096 : elem_size);
  if (!mem) return mem.status();
  return BufArr(std::move(*mem), count, elem_size);
}

Status Gpu::close() {
  if (!impl_ || impl_->closed.load()) return Status::ok();
  int q = impl_->live_queues.load(), h = impl_->live_handles.load(), k = impl_->live_kernels.load();
  if (q || h || k)
    return {Errc::BadState, Layer::Gpu,
            "closing GPU " + impl_->bus_id + " while " + std::to_string(k) + " kernel(s), " + std::to_string(h) +
                " GPU handle(s) and " + std::to_string(q) +
                " started queue(s) use it; stop kernels, destroy handles, then queues, then close the GPU"};
  impl_->closed.store(true);
  impl_.reset();
  return Status::ok();
}

}  // namespace gnio
