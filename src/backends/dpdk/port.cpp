// SPDX-License-Identifier: Apache-2.0
// libgnio_dpdk.so: every DPDK call of the dpdk backend, behind the plain C
// table of port_api.h. One instance per process (the EAL is one per process).
// This file holds the table, the one symbol the module exports, and the
// state its other files (port_*.cpp) share.
#include <cstdarg>
#include <cstdio>

#include "port_module.hpp"

namespace gnio::dpdk_module {

std::mutex g_mu;
std::vector<PortState> g_ports(RTE_MAX_ETHPORTS);

void set_err(char* err, const char* fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(err, GNIO_DPDK_ERR_LEN, fmt, ap);
  va_end(ap);
}

namespace {

const gnio_dpdk_api kApi = {
    GNIO_DPDK_API_VERSION, eal_init, port_find, port_info, port_start, port_close, rx_burst, free_mbufs, tx_burst,
    stats,
};

}  // namespace

}  // namespace gnio::dpdk_module

extern "C" __attribute__((visibility("default"))) const gnio_dpdk_api* gnio_dpdk_api_v1(void) {
  return &gnio::dpdk_module::kApi;
}
