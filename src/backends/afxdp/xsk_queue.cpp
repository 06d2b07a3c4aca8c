// SPDX-License-Identifier: Apache-2.0
#include "backends/afxdp/xsk_queue.hpp"

#include <linux/if_xdp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "backends/afxdp/xdp_lib.hpp"
#include "backends/drivers.hpp"
#include "core/log.hpp"

namespace gnio::backend::afxdp {

namespace {

constexpr int kBusyPollUs = 20;

}  // namespace

XskQueue::XskQueue(const Options& o, uint32_t nic_queue)
    : o_(o), frame_shift_(static_cast<uint32_t>(__builtin_ctz(o.frame))), nic_queue_(nic_queue) {}

XskQueue::~XskQueue() {
  if (xsk_) xdp_lib().socket_delete(xsk_);
  if (umem_) xdp_lib().umem_delete(umem_);
  if (area_) munmap(area_, area_bytes_);
}

Status XskQueue::open(bool zero_copy, int xskmap_fd, const std::string& driver) {
  const uint32_t nframes = 2 * o_.ring;
  area_bytes_ = static_cast<size_t>(nframes) * o_.frame;
  void* p = mmap(nullptr, area_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED)
    return os_error(Errc::NoMemory, "afxdp:" + o_.iface + " queue " + std::to_string(nic_queue_) + ": cannot map " +
                                        std::to_string(area_bytes_) + " bytes of UMEM", errno,
                    "lower ring= or frame=");
  area_ = static_cast<uint8_t*>(p);

  xsk_umem_config ucfg{};
  ucfg.fill_size = o_.ring;
  ucfg.comp_size = o_.ring;
  ucfg.frame_size = o_.frame;
  ucfg.frame_headroom = 0;
  int rc = xdp_lib().umem_create(&umem_, area_, area_bytes_, &fill_, &comp_, &ucfg);
  if (rc != 0) {
    const int err = -rc;
    return os_error(is_permission(err) ? Errc::IoError : err == ENOMEM || err == ENOBUFS ? Errc::NoMemory : Errc::Driver,
                    "afxdp:" + o_.iface + " queue " + std::to_string(nic_queue_) + ": cannot register " +
                        std::to_string(area_bytes_) + " bytes of UMEM",
                    err,
                    is_permission(err) || err == ENOMEM || err == ENOBUFS
                        ? "the UMEM is locked memory: raise `ulimit -l` (or grant CAP_IPC_LOCK), or lower ring="
                        : "check that the kernel has AF_XDP (CONFIG_XDP_SOCKETS)");
  }
  xsk_socket_config scfg{};
  scfg.rx_size = o_.ring;
  scfg.tx_size = o_.ring;
  scfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
  scfg.bind_flags = static_cast<uint16_t>(XDP_USE_NEED_WAKEUP | (zero_copy ? XDP_ZEROCOPY : XDP_COPY));
  rc = xdp_lib().socket_create(&xsk_, o_.iface.c_str(), nic_queue_, umem_, &rx_, &tx_, &scfg);
  if (rc != 0) {
    const int err = -rc;
    if (err == EBUSY) return Status(Errc::Again, Layer::Backend, "queue busy");
    if (zero_copy && (err == EOPNOTSUPP || err == EINVAL || err == EPROTONOSUPPORT))
      return mode_not_available(o_.iface, driver, "zc",
                                std::string("refused an AF_XDP zero-copy bind (") + std::strerror(err) + ")");
    return os_error(is_permission(err) ? Errc::IoError : Errc::Driver,
                    "afxdp:" + o_.iface + ": cannot bind an XSK socket to queue " + std::to_string(nic_queue_), err,
                    is_permission(err) ? privilege_fix() : "check `dmesg`; another AF_XDP socket may hold the queue");
  }
  fd_ = xdp_lib().socket_fd(xsk_);
  rc = xdp_lib().update_xskmap(xsk_, xskmap_fd);
  if (rc != 0)
    return os_error(Errc::Driver, "afxdp:" + o_.iface + ": cannot enter the socket of queue " +
                                      std::to_string(nic_queue_) + " into the XSKMAP", -rc,
                    "check `dmesg`");
  if (o_.busy_poll) set_busy_poll();

  for (uint32_t i = 0; i < o_.ring; ++i) to_fill_.push_back(static_cast<uint64_t>(i) << frame_shift_);
  refill();
  for (uint32_t i = o_.ring; i < nframes; ++i) tx_free_.push_back(static_cast<uint64_t>(i) << frame_shift_);
  tx_readers_.assign(o_.ring, 0);
  released_while_read_.assign(o_.ring, 0);
  return Status::ok();
}

size_t XskQueue::rx_burst(std::span<RxFrame> out) {
  take_recycled();
  refill();
  uint32_t idx = 0;
  uint32_t n = xsk_ring_cons__peek(&rx_, static_cast<uint32_t>(out.size()), &idx);
  if (n == 0) {
    // The kernel waits for a wakeup (need_wakeup), or busy polling drives
    // the NIC's NAPI from here.
    if (o_.busy_poll || xsk_ring_prod__needs_wakeup(&fill_)) recvfrom(fd_, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
    return 0;
  }
  const uint64_t now = realtime_ns();
  for (uint32_t i = 0; i < n; ++i) {
    const xdp_desc* d = xsk_ring_cons__rx_desc(&rx_, idx + i);
    const uint64_t addr = xsk_umem__add_offset_to_addr(d->addr);
    RxFrame& f = out[i];
    f = RxFrame{};
    f.data = area_ + addr;
    f.len = d->len;
    f.timestamp_ns = now;
    f.cookie = addr & ~(static_cast<uint64_t>(o_.frame) - 1);
  }
  xsk_ring_cons__release(&rx_, n);
  return n;
}

void XskQueue::rx_release(std::span<const RxFrame> frames) {
  if (frames_read_.load(std::memory_order_acquire) == 0) {
    for (const RxFrame& f : frames) to_fill_.push_back(f.cookie);
  } else {
    std::lock_guard lock(mu_);
    for (const RxFrame& f : frames) {
      const uint64_t i = f.cookie >> frame_shift_;
      if (tx_readers_[i] > 0) released_while_read_[i] = 1;
      else to_fill_.push_back(f.cookie);
    }
  }
  refill();
}

size_t XskQueue::tx_burst(std::span<const TxFrame> frames) {
  complete();
  const uint8_t* rx_end = area_ + static_cast<size_t>(o_.ring) * o_.frame;
  uint32_t idx = 0;
  const uint32_t want = static_cast<uint32_t>(std::min<size_t>(frames.size(), tx_free_.size()));
  const uint32_t n = want ? xsk_ring_prod__reserve(&tx_, want, &idx) : 0;
  for (uint32_t i = 0; i < n; ++i) {
    const TxFrame& f = frames[i];
    uint64_t addr;
    if (f.data >= area_ && f.data + f.len <= rx_end &&
        (static_cast<uint64_t>(f.data - area_) >> frame_shift_) ==
            (static_cast<uint64_t>(f.data + f.len - 1 - area_) >> frame_shift_)) {
      // Already in an RX frame of this UMEM: send it from there, and keep
      // the frame from the fill ring until the send completed.
      addr = static_cast<uint64_t>(f.data - area_);
      std::lock_guard lock(mu_);
      if (tx_readers_[addr >> frame_shift_]++ == 0) frames_read_.fetch_add(1, std::memory_order_release);
    } else {
      addr = tx_free_.back();
      tx_free_.pop_back();
      std::memcpy(area_ + addr, f.data, f.len);
    }
    xdp_desc* d = xsk_ring_prod__tx_desc(&tx_, idx + i);
    d->addr = addr;
    d->len = f.len;
    d->options = 0;
  }
  if (n > 0) {
    xsk_ring_prod__submit(&tx_, n);
    tx_outstanding_ += n;
  }
  kick();
  return n;
}

void XskQueue::flush() {
  // A generic-mode send moves at most a batch per kick.
  for (int tries = 0; tries < 1000 && tx_outstanding_ > 0; ++tries) {
    kick();
    complete();
    if (tx_outstanding_ > 0) usleep(100);
  }
}

void XskQueue::log_statistics() const {
  if (!xsk_) return;
  xdp_statistics st{};
  socklen_t len = sizeof st;
  if (getsockopt(fd_, SOL_XDP, XDP_STATISTICS, &st, &len) != 0) return;
  if (st.rx_dropped + st.rx_ring_full + st.rx_fill_ring_empty_descs + st.rx_invalid_descs + st.tx_invalid_descs == 0)
    return;
  log::warn("afxdp", o_.iface + " queue " + std::to_string(nic_queue_) + ": the kernel dropped " +
                         std::to_string(st.rx_dropped) + " frame(s), RX ring full " + std::to_string(st.rx_ring_full) +
                         " time(s), fill ring empty " + std::to_string(st.rx_fill_ring_empty_descs) +
                         " time(s), invalid RX/TX descriptors " + std::to_string(st.rx_invalid_descs) + "/" +
                         std::to_string(st.tx_invalid_descs) + "; a larger ring= or faster release avoids drops");
}

void XskQueue::set_busy_poll() {
  // Where the kernel has them (5.11+); without, the socket still works.
  int one = 1, us = kBusyPollUs, budget = 64;
  bool ok = setsockopt(fd_, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof one) == 0 &&
            setsockopt(fd_, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof us) == 0 &&
            setsockopt(fd_, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof budget) == 0;
  if (!ok)
    log::warn("afxdp", o_.iface + " queue " + std::to_string(nic_queue_) + ": busy polling is not available (" +
                           std::strerror(errno) + "); the socket works without it");
}

// RX thread: frames whose last TX reader completed go back to the fill ring.
void XskQueue::take_recycled() {
  if (!have_recycled_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(mu_);
  to_fill_.insert(to_fill_.end(), recycled_.begin(), recycled_.end());
  recycled_.clear();
  have_recycled_.store(false, std::memory_order_relaxed);
}

void XskQueue::refill() {
  if (to_fill_.empty()) return;
  uint32_t idx = 0;
  const uint32_t n = xsk_ring_prod__reserve(&fill_, static_cast<uint32_t>(to_fill_.size()), &idx);
  for (uint32_t i = 0; i < n; ++i) *xsk_ring_prod__fill_addr(&fill_, idx + i) = to_fill_[i];
  xsk_ring_prod__submit(&fill_, n);
  to_fill_.erase(to_fill_.begin(), to_fill_.begin() + n);
}

// TX thread: completed descriptors free their frames.
void XskQueue::complete() {
  uint32_t idx = 0;
  const uint32_t n = xsk_ring_cons__peek(&comp_, o_.ring, &idx);
  if (n == 0) return;
  const uint64_t rx_bytes = static_cast<uint64_t>(o_.ring) << frame_shift_;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t addr = *xsk_ring_cons__comp_addr(&comp_, idx + i);
    if (addr >= rx_bytes) {
      tx_free_.push_back(addr & ~(static_cast<uint64_t>(o_.frame) - 1));
      continue;
    }
    const uint64_t f = addr >> frame_shift_;
    std::lock_guard lock(mu_);
    if (--tx_readers_[f] == 0) {
      frames_read_.fetch_sub(1, std::memory_order_release);
      if (released_while_read_[f]) {
        released_while_read_[f] = 0;
        recycled_.push_back(f << frame_shift_);
        have_recycled_.store(true, std::memory_order_release);
      }
    }
  }
  xsk_ring_cons__release(&comp_, n);
  tx_outstanding_ -= n;
}

void XskQueue::kick() {
  if (tx_outstanding_ == 0 || !xsk_ring_prod__needs_wakeup(&tx_)) return;
  // A generic-mode send moves a batch per call and says EAGAIN while more wait.
  for (int tries = 0; tries < 64; ++tries) {
    if (sendto(fd_, nullptr, 0, MSG_DONTWAIT, nullptr, 0) >= 0 || errno != EAGAIN) break;
  }
}

}  // namespace gnio::backend::afxdp
