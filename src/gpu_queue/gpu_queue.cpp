// SPDX-License-Identifier: Apache-2.0
#include "gnio/gpu_queue.hpp"

#include <chrono>
#include <thread>

#include "core/log.hpp"
#include "engine/rx_engine.hpp"
#include "engine/tx_engine.hpp"
#include "engine/queue_state.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio {

namespace detail {

// Each handle pins its queue and GPU; the counts that make out-of-order
// teardown return BadState drop when the last reference goes.
struct GpuRxqImpl {
  std::shared_ptr<GpuImpl> gpu;
  std::shared_ptr<RxqImpl> q;
  dev::Rxq handle;
  ~GpuRxqImpl() {
    q->gpu_handles.fetch_sub(1);
    gpu->live_handles.fetch_sub(1);
  }
};

struct GpuTxqImpl {
  std::shared_ptr<GpuImpl> gpu;
  std::shared_ptr<TxqImpl> q;
  dev::Txq handle;
  ~GpuTxqImpl() {
    q->gpu_handles.fetch_sub(1);
    gpu->live_handles.fetch_sub(1);
  }
};

struct SemaphoreImpl {
  std::shared_ptr<GpuImpl> gpu;
  DeviceMemory status, payload;
  dev::Semaphore dev_view, host_view;
  ~SemaphoreImpl() { gpu->live_handles.fetch_sub(1); }
};

}  // namespace detail

namespace {

template <typename QImpl>
Status check_layering(const char* what, const Gpu& gpu, const std::shared_ptr<QImpl>& q) {
  if (!gpu.impl()) return {Errc::BadState, Layer::Gpu, std::string(what) + " with a Gpu that is not open"};
  if (!q) return {Errc::BadState, Layer::Gpu, std::string(what) + " on a destroyed Ethernet queue"};
  if (q->state != QueueState::Started)
    return {Errc::BadState, Layer::Gpu,
            std::string(what) + " on a queue in state " + std::string(queue_state_name(q->state)) +
                "; configure and start the Ethernet queue first (GPU handles layer on top of started queues)"};
  if (!q->gpu || !q->engine)
    return {Errc::BadState, Layer::Gpu,
            std::string(what) + " on a queue started without a GPU datapath; call set_gpu() before start()"};
  if (q->gpu != gpu.impl())
    return {Errc::InvalidValue, Layer::Gpu,
            std::string(what) + ": the queue's datapath is GPU " + q->gpu->bus_id + ", not " + gpu.bus_id()};
  return Status::ok();
}

Status handle_teardown(const char* what, const std::shared_ptr<detail::GpuImpl>& gpu) {
  if (gpu->live_kernels.load() > 0)
    return {Errc::BadState, Layer::Gpu,
            std::string("destroying a ") + what + " while " + std::to_string(gpu->live_kernels.load()) +
                " persistent kernel(s) run on GPU " + gpu->bus_id + "; stop the kernels first"};
  return Status::ok();
}

}  // namespace

Result<GpuRxq> GpuRxq::create(const Gpu& gpu, const EthRxq& rxq) {
  auto q = rxq.impl();
  GNIO_TRY(check_layering("GpuRxq::create", gpu, q));
  auto impl = std::make_shared<detail::GpuRxqImpl>();
  impl->gpu = gpu.impl();
  impl->q = q;
  impl->handle = dev::Rxq(q->engine->device_ring());
  q->gpu_handles.fetch_add(1);
  impl->gpu->live_handles.fetch_add(1);
  return GpuRxq(std::move(impl));
}

GpuRxq& GpuRxq::operator=(GpuRxq&& o) noexcept {
  if (this != &o) {
    destroy();
    impl_ = std::move(o.impl_);
  }
  return *this;
}

GpuRxq::~GpuRxq() {
  Status s = destroy();
  if (!s) {
    log::error("gpu", "GpuRxq destroyed while a kernel may still use it: " + s.to_string() +
                          "; its queue stays alive until the kernels stop");
    impl_->gpu->defer(impl_);
  }
}

dev::Rxq GpuRxq::handle() const noexcept { return impl_ ? impl_->handle : dev::Rxq(); }

Status GpuRxq::destroy() {
  if (!impl_) return Status::ok();
  GNIO_TRY(handle_teardown("GpuRxq", impl_->gpu));
  impl_.reset();
  return Status::ok();
}

Result<GpuTxq> GpuTxq::create(const Gpu& gpu, const EthTxq& txq) {
  auto q = txq.impl();
  GNIO_TRY(check_layering("GpuTxq::create", gpu, q));
  auto impl = std::make_shared<detail::GpuTxqImpl>();
  impl->gpu = gpu.impl();
  impl->q = q;
  impl->handle = dev::Txq(q->engine->device_ring());
  q->gpu_handles.fetch_add(1);
  impl->gpu->live_handles.fetch_add(1);
  return GpuTxq(std::move(impl));
}

GpuTxq& GpuTxq::operator=(GpuTxq&& o) noexcept {
  if (this != &o) {
    destroy();
    impl_ = std::move(o.impl_);
  }
  return *this;
}

GpuTxq::~GpuTxq() {
  Status s = destroy();
  if (!s) {
    log::error("gpu", "GpuTxq destroyed while a kernel may still use it: " + s.to_string() +
                          "; its queue stays alive until the kernels stop");
    impl_->gpu->defer(impl_);
  }
}

dev::Txq GpuTxq::handle() const noexcept { return impl_ ? impl_->handle : dev::Txq(); }

Status GpuTxq::destroy() {
  if (!impl_) return Status::ok();
  GNIO_TRY(handle_teardown("GpuTxq", impl_->gpu));
  impl_.reset();
  return Status::ok();
}

Result<GpuSemaphore> GpuSemaphore::create(const Gpu& gpu, uint32_t items, uint32_t payload_bytes) {
  if (!gpu.impl()) return Status(Errc::BadState, Layer::Gpu, "GpuSemaphore::create with a Gpu that is not open");
  if (items == 0 || payload_bytes == 0)
    return Status(Errc::InvalidValue, Layer::Gpu,
                  "semaphore of " + std::to_string(items) + " items x " + std::to_string(payload_bytes) +
                      " payload bytes; both must be at least 1");
  auto impl = std::make_shared<detail::SemaphoreImpl>();
  impl->gpu = gpu.impl();
  auto st = impl->gpu->alloc(static_cast<size_t>(items) * sizeof(uint32_t), MemKind::CpuGpu, 128);
  if (!st) return st.status();
  auto pl = impl->gpu->alloc(static_cast<size_t>(items) * payload_bytes, MemKind::CpuGpu, 128);
  if (!pl) return pl.status();
  impl->status = std::move(*st);
  impl->payload = std::move(*pl);
  impl->dev_view = dev::Semaphore(static_cast<uint32_t*>(impl->status.device_ptr()),
                                  static_cast<uint8_t*>(impl->payload.device_ptr()), items, payload_bytes);
  impl->host_view = dev::Semaphore(static_cast<uint32_t*>(impl->status.host_ptr()),
                                   static_cast<uint8_t*>(impl->payload.host_ptr()), items, payload_bytes);
  impl->gpu->live_handles.fetch_add(1);
  return GpuSemaphore(std::move(impl));
}

GpuSemaphore& GpuSemaphore::operator=(GpuSemaphore&& o) noexcept {
  if (this != &o) {
    destroy();
    impl_ = std::move(o.impl_);
  }
  return *this;
}

GpuSemaphore::~GpuSemaphore() {
  Status s = destroy();
  if (!s) {
    log::error("gpu", "GpuSemaphore destroyed while a kernel may still use it: " + s.to_string() +
                          "; its memory stays alive until the kernels stop");
    impl_->gpu->defer(impl_);
  }
}

dev::Semaphore GpuSemaphore::handle() const noexcept { return impl_ ? impl_->dev_view : dev::Semaphore(); }
dev::SemStatus GpuSemaphore::status(uint32_t item) const { return impl_->host_view.get_status(item); }
void GpuSemaphore::set_status(uint32_t item, dev::SemStatus s) { impl_->host_view.set_status(item, s); }
const uint8_t* GpuSemaphore::payload(uint32_t item) const { return impl_->host_view.payload(item); }

Status GpuSemaphore::wait(uint32_t item, dev::SemStatus want, uint32_t timeout_ms) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (status(item) != want) {
    if (std::chrono::steady_clock::now() >= deadline)
      return {Errc::Timeout, Layer::Gpu,
              "semaphore item " + std::to_string(item) + " still has status " +
                  std::to_string(static_cast<uint32_t>(status(item))) + " after " + std::to_string(timeout_ms) +
                  " ms; is the kernel running (check its heartbeat)?"};
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return Status::ok();
}

Status GpuSemaphore::destroy() {
  if (!impl_) return Status::ok();
  GNIO_TRY(handle_teardown("GpuSemaphore", impl_->gpu));
  impl_.reset();
  return Status::ok();
}

}  // namespace gnio
