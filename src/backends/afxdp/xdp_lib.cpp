// SPDX-License-Identifier: Apache-2.0
#include "backends/afxdp/xdp_lib.hpp"

#include <dlfcn.h>

namespace gnio::backend::afxdp {

namespace {

template <class F>
void resolve(void* lib, const char* name, F& out, std::string& error) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out && error.empty()) error = std::string("symbol ") + name + " is missing";
}

}  // namespace

const XdpLib& xdp_lib() {
  static const XdpLib lib = [] {
    XdpLib l;
    void* bpf = dlopen("libbpf.so.1", RTLD_NOW | RTLD_GLOBAL);
    void* xdp = bpf ? dlopen("libxdp.so.1", RTLD_NOW | RTLD_GLOBAL) : nullptr;
    if (!bpf || !xdp) {
      l.error = dlerror();
      return l;
    }
    resolve(xdp, "xsk_umem__create", l.umem_create, l.error);
    resolve(xdp, "xsk_umem__delete", l.umem_delete, l.error);
    resolve(xdp, "xsk_socket__create", l.socket_create, l.error);
    resolve(xdp, "xsk_socket__delete", l.socket_delete, l.error);
    resolve(xdp, "xsk_socket__fd", l.socket_fd, l.error);
    resolve(xdp, "xsk_socket__update_xskmap", l.update_xskmap, l.error);
    resolve(bpf, "bpf_map_create", l.map_create, l.error);
    resolve(bpf, "bpf_prog_load", l.prog_load, l.error);
    resolve(bpf, "bpf_link_create", l.link_create, l.error);
    return l;
  }();
  return lib;
}

}  // namespace gnio::backend::afxdp
