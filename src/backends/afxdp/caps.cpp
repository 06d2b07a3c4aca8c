// SPDX-License-Identifier: Apache-2.0
#include "backends/afxdp/caps.hpp"

#include <nlohmann/json.hpp>

#include "backends/afxdp/iface.hpp"
#include "backends/backend.hpp"
#include "backends/spec.hpp"
#include "gnio/text_escape.hpp"

namespace gnio::caps {

namespace {

using backend::afxdp::IfaceFacts;
using namespace backend::afxdp;

// The interface name is the user's text and the errors quote it: written by
// escape_text()'s rule, and a dump that cannot throw.
std::string json_text(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

std::string pad(const std::string& s, size_t n) { return s.size() >= n ? s + " " : s + std::string(n - s.size(), ' '); }

// "yes", "no", or "unknown" where the kernel has no xdp-features (< 6.3).
std::string feature(const IfaceFacts& f, uint64_t bit) {
  if (!f.xdp_features) return "unknown";
  return (*f.xdp_features & bit) ? "yes" : "no";
}

// What mode=auto starts with on this interface (it falls back at attach
// and bind time where the driver refuses).
std::string auto_mode(const IfaceFacts& f) {
  if (!f.xdp_features) return "zc, else drv, else skb (tried at open)";
  if (*f.xdp_features & XdpActXskZeroCopy) return "zc";
  if (*f.xdp_features & XdpActRedirect) return "drv";
  return "skb";
}

}  // namespace

std::optional<DriverReport> afxdp_interface_report(std::string_view text) {
  if (backend::spec_driver(text) != "afxdp") return std::nullopt;
  DriverReport r;
  r.title = "AF_XDP interface";
  r.json_key = "interface";
  nlohmann::json j;
  auto spec = backend::Spec::parse(text, backend::ArgMode::Required,
                                   {"queue", "queues", "mode", "frame", "ring", "busy_poll"});
  if (!spec) {
    r.text = "  interface: " + spec.status().message() + "\n";
    r.json = json_text({{"error", escape_text(spec.status().message())}});
    return r;
  }
  auto facts = query_iface(spec->arg());
  if (!facts) {
    r.text = "  interface: " + facts.status().message() + "\n";
    r.json = json_text({{"interface", escape_text(spec->arg())}, {"error", escape_text(facts.status().message())}});
    return r;
  }
  const IfaceFacts& f = *facts;
  const uint32_t frame = spec->find("frame") && *spec->find("frame") == "4096" ? 4096 : 2048;
  const uint32_t max_mtu = max_mtu_for_frame(frame);
  auto line = [&r](const std::string& k, const std::string& v) { r.text += "  " + pad(k, 20) + v + "\n"; };

  line("interface", f.name + " (ifindex " + std::to_string(f.ifindex) + ")");
  line("NIC driver", (f.driver.empty() ? std::string("unknown") : f.driver) +
                         (f.bus_info.empty() ? std::string() : ", bus " + f.bus_info));
  std::string ch = f.have_channels ? "rx " + std::to_string(f.rx_channels) + ", tx " + std::to_string(f.tx_channels) +
                                         ", combined " + std::to_string(f.combined_channels) + " (max " +
                                         std::to_string(f.max_rx_channels) + "/" + std::to_string(f.max_tx_channels) +
                                         "/" + std::to_string(f.max_combined_channels) + ")"
                                   : "not reported by the driver; device queues rx " +
                                         std::to_string(f.num_rx_queues) + ", tx " + std::to_string(f.num_tx_queues);
  line("channels", ch);
  line("XSK queues", std::to_string(f.queues()) + " (queue=0.." + std::to_string(f.queues() ? f.queues() - 1 : 0) + ")");
  line("XDP modes", "skb yes, drv " + feature(f, XdpActRedirect) + ", zc " + feature(f, XdpActXskZeroCopy) +
                        (f.xdp_features ? "" : " (kernel without xdp-features: probed at open)"));
  line("mode=auto uses", auto_mode(f));
  line("MTU", std::to_string(f.mtu) + (f.mtu <= max_mtu ? " fits" : " does NOT fit") + " a frame of " +
                  std::to_string(frame) + " bytes (MTU <= " + std::to_string(max_mtu) + ")");
  // The mode the spec runs in is settled only by attaching and binding.
  // An XDP program already attached is reported below and never replaced.
  std::string mode_in_use, mode_error;
  if (f.xdp_prog_id != 0) {
    mode_error = "not opened: another XDP program is attached";
  } else if (auto be = backend::open_backend(text); be) {
    mode_in_use = (*be)->caps().xdp_mode;
  } else {
    mode_error = "open failed: " + be.status().message();
  }
  const std::string asked = spec->find("mode") ? *spec->find("mode") : std::string("auto");
  line("XDP mode in use", mode_error.empty() ? mode_in_use + " (asked: mode=" + asked + ")" : mode_error);
  line("XDP program", f.xdp_prog_id == 0 ? std::string("none attached")
                                         : "id " + std::to_string(f.xdp_prog_id) + " attached (" +
                                               std::string(attached_name(f.xdp_attached)) +
                                               "): gnio will not replace it");

  j = {{"interface", escape_text(f.name)},
       {"ifindex", f.ifindex},
       {"driver", escape_text(f.driver)},
       {"bus_info", escape_text(f.bus_info)},
       {"mtu", f.mtu},
       {"frame", frame},
       {"max_mtu_for_frame", max_mtu},
       {"xsk_queues", f.queues()},
       {"xdp_modes", {{"skb", "yes"}, {"drv", feature(f, XdpActRedirect)}, {"zc", feature(f, XdpActXskZeroCopy)}}},
       {"auto_mode", auto_mode(f)},
       {"xdp_prog_id", f.xdp_prog_id},
       {"xdp_attached", attached_name(f.xdp_attached)}};
  if (f.have_channels)
    j["channels"] = {{"rx", f.rx_channels},         {"tx", f.tx_channels},         {"combined", f.combined_channels},
                     {"max_rx", f.max_rx_channels}, {"max_tx", f.max_tx_channels}, {"max_combined", f.max_combined_channels}};
  if (f.xdp_features) j["xdp_features"] = *f.xdp_features;
  if (mode_error.empty())
    j["xdp_mode"] = mode_in_use;
  else
    j["xdp_mode_error"] = escape_text(mode_error);
  r.json = json_text(j);
  return r;
}

}  // namespace gnio::caps
