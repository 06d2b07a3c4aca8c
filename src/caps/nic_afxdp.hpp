// The NIC axis of an afxdp:IFACE spec as the kernel reports it: channels,
// the XDP modes the driver has, MTU against the frame size, the driver and
// any XDP program already attached; then the XDP mode the spec runs in
// (EthCaps::xdp_mode), learnt by opening it once (attach, bind, detach).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gnio::caps {

struct AfxdpInterfaceReport {
  std::string text;  // indented lines for `gnio caps`
  std::string json;  // one JSON object
};

// nullopt for specs of other drivers; for an afxdp spec whose interface
// cannot be queried, the report says why.
std::optional<AfxdpInterfaceReport> afxdp_interface_report(std::string_view spec);

}  // namespace gnio::caps
