// SPDX-License-Identifier: Apache-2.0
// What the files of the dpdk driver share: the spec's options, the module
// libgnio_dpdk.so that makes every DPDK call (port*.cpp), and the EAL, which
// a process brings up once.
#pragma once

#include <cstdint>
#include <string>

#include "backends/dpdk/port_api.h"
#include "gnio/status.hpp"

namespace gnio::backend::dpdk {

// dpdk:PORT[,queues=N][,eal=ARGS][,mbuf_mem=host|gpu][,rxd=N][,txd=N][,mbufs=N][,frame=BYTES]
struct Options {
  std::string port;  // as written: device name with its arguments, or a port number
  uint32_t queues = 1;
  std::string eal;  // empty: gnio's defaults
  bool eal_given = false;
  bool gpu_mem = false;
  uint32_t rxd = 1024;
  uint32_t txd = 1024;
  uint32_t mbufs = 8192;
  uint32_t frame = 2048;
};

// libgnio_dpdk.so, loaded at the first call: from $GNIO_DPDK_MODULE, the
// build tree, the install directory, or the loader's search path.
struct Module {
  const gnio_dpdk_api* api = nullptr;
  std::string error;  // why loading failed
};
const Module& module();

// The EAL, once per process: the first dpdk spec's eal= (or gnio's
// defaults) wins; later eal= options are ignored, with a log line.
Status init_eal(const gnio_dpdk_api& api, const Options& o, const std::string& spec_text);

}  // namespace gnio::backend::dpdk
