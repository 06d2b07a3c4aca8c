// SPDX-License-Identifier: Apache-2.0
// The DPDK port report of `gnio caps`: what the module says of a port, as text and JSON.
#include "backends/dpdk/caps.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/dpdk/internal.hpp"
#include "backends/spec.hpp"
#include "gnio/text_escape.hpp"

namespace gnio::caps {

namespace {

std::vector<std::string> words(const char* s) {
  std::vector<std::string> out;
  std::string w;
  for (const char* p = s;; ++p) {
    if (*p == ' ' || *p == '\0') {
      if (!w.empty()) out.push_back(w);
      w.clear();
      if (*p == '\0') break;
    } else {
      w += *p;
    }
  }
  return out;
}

std::string joined(const char* s) { return *s ? s : "none"; }

}  // namespace

std::optional<DriverReport> dpdk_port_report(std::string_view text) {
  using backend::ArgMode;
  using backend::Spec;
  using backend::dpdk::Options;
  if (backend::spec_driver(text) != "dpdk") return std::nullopt;
  // The port is the user's text and the errors quote it: written by
  // escape_text()'s rule, and a dump that cannot throw.
  auto json_text = [](const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  auto fail = [&](const std::string& why) {
    return DriverReport{"DPDK port", "dpdk_port", "  " + why + "\n", json_text({{"error", escape_text(why)}})};
  };
  auto spec = Spec::parse(text, ArgMode::Required, {"queues", "eal", "mbuf_mem", "rxd", "txd", "mbufs", "frame"});
  if (!spec) return fail(spec.status().to_string());
  Options o;
  o.port = spec->arg();
  if (const std::string* eal = spec->find("eal")) {
    o.eal = *eal;
    o.eal_given = true;
  }
  const backend::dpdk::Module& m = backend::dpdk::module();
  if (!m.api) return fail(m.error);
  if (Status s = backend::dpdk::init_eal(*m.api, o, std::string(text)); !s) return fail(s.to_string());
  char err[GNIO_DPDK_ERR_LEN] = {};
  uint16_t port_id = 0;
  gnio_dpdk_port_info i{};
  if (m.api->port_find(o.port.c_str(), &port_id, err) != 0 || m.api->port_info(port_id, &i, err) != 0)
    return fail(err);
  char mac[18];
  std::snprintf(mac, sizeof mac, "%02x:%02x:%02x:%02x:%02x:%02x", i.mac[0], i.mac[1], i.mac[2], i.mac[3], i.mac[4],
                i.mac[5]);
  nlohmann::json j{
      {"port_id", i.port_id},
      {"name", escape_text(i.name)},
      {"pmd", i.driver},
      {"bus", i.bus},
      {"numa_node", i.numa_node},
      {"max_rx_queues", i.max_rx_queues},
      {"max_tx_queues", i.max_tx_queues},
      {"rx_desc", {{"min", i.rx_desc_min}, {"max", i.rx_desc_max}, {"align", i.rx_desc_align}}},
      {"tx_desc", {{"min", i.tx_desc_min}, {"max", i.tx_desc_max}, {"align", i.tx_desc_align}}},
      {"max_rx_pktlen", i.max_rx_pktlen},
      {"mtu", {{"now", i.mtu}, {"min", i.min_mtu}, {"max", i.max_mtu}}},
      {"rx_offloads", words(i.rx_offloads)},
      {"tx_offloads", words(i.tx_offloads)},
      {"rss_functions", words(i.rss_functions)},
      {"rss_key_bytes", i.hash_key_size},
      {"reta_size", i.reta_size},
      {"mac", mac},
      {"link", {{"up", i.link_up != 0}, {"speed_mbps", i.link_speed_mbps}}},
      {"dma_into_external_memory", i.can_dma_map != 0},
  };
  std::string t;
  t += "  port " + std::to_string(i.port_id) + " " + i.name + ": PMD " + i.driver + " on bus " + i.bus +
       ", NUMA node " + std::to_string(i.numa_node) + ", MAC " + mac + "\n";
  t += "  queues: " + std::to_string(i.max_rx_queues) + " RX, " + std::to_string(i.max_tx_queues) + " TX\n";
  t += "  descriptors: RX " + std::to_string(i.rx_desc_min) + ".." + std::to_string(i.rx_desc_max) + " (align " +
       std::to_string(i.rx_desc_align) + "), TX " + std::to_string(i.tx_desc_min) + ".." +
       std::to_string(i.tx_desc_max) + " (align " + std::to_string(i.tx_desc_align) + ")\n";
  t += "  max RX packet " + std::to_string(i.max_rx_pktlen) + " bytes; MTU " + std::to_string(i.mtu) + " (" +
       std::to_string(i.min_mtu) + ".." + std::to_string(i.max_mtu) + ")\n";
  t += "  RX offloads: " + joined(i.rx_offloads) + "\n";
  t += "  TX offloads: " + joined(i.tx_offloads) + "\n";
  t += "  RSS functions: " + joined(i.rss_functions) + " (key " + std::to_string(i.hash_key_size) +
       " bytes, RETA " + std::to_string(i.reta_size) + ")\n";
  t += std::string("  link ") + (i.link_up ? "up" : "down") + ", " + std::to_string(i.link_speed_mbps) + " Mb/s\n";
  t += std::string("  RX frames in gnio's memory: ") +
       (i.can_dma_map ? "DMA-mapped (rte_dev_dma_map, IOVA as VA)" : "written by the CPU (virtual device)") + "\n";
  return DriverReport{"DPDK port", "dpdk_port", t, json_text(j)};
}

}  // namespace gnio::caps
