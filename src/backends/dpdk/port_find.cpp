// SPDX-License-Identifier: Apache-2.0
// Finding a port by its number or its device name, probing the device when
// DPDK does not know it yet.
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <cctype>
#include <cstdlib>
#include <mutex>
#include <string>

#include "port_module.hpp"

namespace gnio::dpdk_module {

namespace {

bool all_digits(const char* s) {
  if (!*s) return false;
  for (; *s; ++s)
    if (!std::isdigit(static_cast<unsigned char>(*s))) return false;
  return true;
}

int find_by_device_name(const std::string& devname, uint16_t* port_id) {
  if (rte_eth_dev_get_port_by_name(devname.c_str(), port_id) == 0) return 0;
  // Some PMDs (mlx5 with representors, ...) name ports apart from their device.
  uint16_t p;
  RTE_ETH_FOREACH_DEV(p) {
    rte_eth_dev_info info;
    if (rte_eth_dev_info_get(p, &info) == 0 && info.device && devname == rte_dev_name(info.device)) {
      *port_id = p;
      return 0;
    }
  }
  return -1;
}

}  // namespace

int port_find(const char* name, uint16_t* port_id, char* err) {
  std::lock_guard lock(g_mu);
  if (all_digits(name)) {
    unsigned long p = std::strtoul(name, nullptr, 10);
    if (p >= RTE_MAX_ETHPORTS || !rte_eth_dev_is_valid_port(static_cast<uint16_t>(p))) {
      set_err(err, "no DPDK port %s (%u port(s) available)", name, rte_eth_dev_count_avail());
      return -1;
    }
    *port_id = static_cast<uint16_t>(p);
    return 0;
  }
  std::string devname(name);
  devname = devname.substr(0, devname.find(','));
  if (find_by_device_name(devname, port_id) == 0) return 0;
  int rc = rte_dev_probe(name);
  if (rc < 0) {
    set_err(err, "probing the device '%s' failed: %s", name, rte_strerror(-rc));
    return -1;
  }
  if (find_by_device_name(devname, port_id) != 0) {
    set_err(err, "the device '%s' was probed but made no ethdev port named '%s'", name, devname.c_str());
    return -1;
  }
  return 0;
}

}  // namespace gnio::dpdk_module
