// SPDX-License-Identifier: Apache-2.0
// Rows of the doctor for an afxdp:IFACE spec, from what the kernel says of
// the interface in this network namespace (nothing is attached): that it
// exists and the spec fits it (queues, MTU against the frame, UMEM against
// the memlock limit), and that no other XDP program holds it.
#include <sys/resource.h>

#include "backends/afxdp/iface.hpp"
#include "backends/spec.hpp"
#include "doctor/checks.hpp"
#include "doctor/util.hpp"

namespace gnio::doctor::detail {

namespace {

struct AfxdpSpec {
  std::string iface;
  uint64_t queue = 0, queues = 1, ring = 2048, frame = 2048;
};

// The parts of an afxdp spec the checks need; nullopt (and `why`) when the
// spec is of another driver or malformed.
std::optional<AfxdpSpec> afxdp_spec(const Request& req, std::string* why) {
  if (backend::spec_driver(req.nic_spec) != "afxdp") {
    *why = req.nic_spec.empty() ? "no --nic SPEC given" : "--nic is not an afxdp spec";
    return std::nullopt;
  }
  auto spec = backend::Spec::parse(req.nic_spec, backend::ArgMode::Required,
                                   {"queue", "queues", "mode", "frame", "ring", "busy_poll"});
  if (!spec) {
    *why = spec.status().message();
    return std::nullopt;
  }
  AfxdpSpec s;
  s.iface = spec->arg();
  for (auto [key, out, def] : {std::tuple{"queue", &s.queue, 0ull}, std::tuple{"queues", &s.queues, 1ull},
                               std::tuple{"ring", &s.ring, 2048ull}, std::tuple{"frame", &s.frame, 2048ull}}) {
    auto v = spec->u64(key, def, 0, UINT32_MAX);
    if (!v) {
      *why = v.status().message();
      return std::nullopt;
    }
    *out = *v;
  }
  return s;
}

}  // namespace

CheckResult check_afxdp_interface(const Environment& env, const Request& req) {
  const char* id = "afxdp.interface";
  std::string why;
  auto s = afxdp_spec(req, &why);
  if (!s) return make(id, State::Skip, why);
  auto f = backend::afxdp::query_iface(s->iface);
  if (!f) return make(id, State::Fail, f.status().message(), "name an interface of this namespace: `ip link` lists them");
  std::string found = "interface " + f->name + " (driver " + (f->driver.empty() ? "unknown" : f->driver) + "), " +
                      std::to_string(f->queues()) + " queue(s), MTU " + std::to_string(f->mtu);
  if (s->queue + s->queues > f->queues())
    return make(id, State::Fail,
                found + ": queue=" + std::to_string(s->queue) + ",queues=" + std::to_string(s->queues) +
                    " needs " + std::to_string(s->queue + s->queues) + " queue(s)",
                "use queue+queues <= " + std::to_string(f->queues()) + ", or add channels: ethtool -L " + f->name +
                    " combined N");
  const uint32_t max_mtu = backend::afxdp::max_mtu_for_frame(static_cast<uint32_t>(s->frame));
  if (f->mtu > max_mtu)
    return make(id, State::Fail,
                found + ": a frame of " + std::to_string(s->frame) + " bytes carries MTU <= " + std::to_string(max_mtu),
                std::string(s->frame < 4096 ? "add frame=4096 to the spec, or " : "") + "lower the MTU: ip link set dev " +
                    f->name + " mtu " + std::to_string(max_mtu));
  // The UMEM (ring RX + ring TX frames per queue) is locked memory.
  const uint64_t umem = s->queues * 2 * s->ring * s->frame;
  found += "; UMEM " + bytes_text(umem);
  rlimit lim{};
  auto eff = effective_capabilities(env.proc_root);
  const bool ipc_lock = eff && ((*eff >> 14) & 1u);
  if (!ipc_lock && getrlimit(RLIMIT_MEMLOCK, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && umem > lim.rlim_cur)
    return make(id, State::Fail, found + " is more than RLIMIT_MEMLOCK " + bytes_text(lim.rlim_cur),
                "ulimit -l " + std::to_string((umem + 1023) / 1024) + " (KiB) or unlimited, grant CAP_IPC_LOCK, or lower ring=");
  return make(id, State::Pass, found);
}

CheckResult check_afxdp_xdp_program(const Environment&, const Request& req) {
  const char* id = "afxdp.xdp_program";
  std::string why;
  auto s = afxdp_spec(req, &why);
  if (!s) return make(id, State::Skip, why);
  auto f = backend::afxdp::query_iface(s->iface);
  if (!f) return make(id, State::Skip, f.status().message());
  if (f->xdp_prog_id == 0) return make(id, State::Pass, "no XDP program is attached to " + f->name);
  return make(id, State::Fail,
              "XDP program id " + std::to_string(f->xdp_prog_id) + " is attached to " + f->name + " (" +
                  std::string(backend::afxdp::attached_name(f->xdp_attached)) + " mode); gnio does not replace it",
              "see it with `bpftool net show dev " + f->name + "`; detach it with `xdp-loader unload " + f->name +
                  " --all` or `ip link set dev " + f->name + " xdp off` if nothing needs it");
}

}  // namespace gnio::doctor::detail
