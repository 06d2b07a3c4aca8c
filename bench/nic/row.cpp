// SPDX-License-Identifier: Apache-2.0
// How a row of nic_bench is read: its ratio base, what bounds it and its
// drops as text.
#include "row.hpp"

#include "../common/table.hpp"

using namespace gnio;
using bench::fmt;

namespace nic_bench {

const Row* ratio_base(const std::vector<Row>& rows, uint32_t size) {
  const Row* best = nullptr;
  for (const Row& b : rows)
    if (b.is_baseline && !b.tool.empty() && b.size == size && b.measured() && (!best || b.mpps() > best->mpps()))
      best = &b;
  if (best) return best;
  for (const Row& b : rows)
    if (b.is_baseline && b.size == size && b.measured()) return &b;
  return nullptr;
}

// A receiver that got (almost) all that was sent without pushing back did
// not limit the row; refusals and drops say it did. On veth the sending CPU
// also runs the receiver's kernel path, and the receiver's threads share
// the cores: a sender that sent clearly less here than into the ratio base
// was slowed by this receiver.
std::string limited_by(const Row& r, const std::vector<Row>& rows) {
  if (!r.measured() || r.send.sent == 0) return "";
  const double got = 100.0 * r.received / r.send.sent;
  const double refused = 100.0 * r.send.refused / (r.send.sent + r.send.refused);
  if (got >= 99.0 && refused < 1.0) {
    const Row* base = ratio_base(rows, r.size);
    if (base && base != &r && r.sender_mpps() < 0.9 * base->sender_mpps())
      return "sender, slowed by this receiver (got " + fmt("%.1f", got) + " % of sent; " +
             fmt("%.3f", base->sender_mpps()) + " Mpps sent into the base)";
    return "sender (receiver got " + fmt("%.1f", got) + " % of sent)";
  }
  std::string why = "receiver (got " + fmt("%.1f", got) + " % of sent";
  if (refused >= 1.0) why += ", " + fmt("%.1f", refused) + " % of sends refused by the full veth queue";
  return why + ")";
}

std::string drops_text(const Row& r) {
  std::string s;
  auto add = [&](const std::string& what, uint64_t n) {
    if (n) s += (s.empty() ? "" : ", ") + what + " " + std::to_string(n);
  };
  for (size_t i = 0; i < kDropReasons; ++i)
    add(std::string("gnio ") + std::string(drop_reason_name(static_cast<DropReason>(i))), r.gnio_dropped[i]);
  add("xsk no fill frame", r.kernel.xsk_no_fill_frame);
  add("xsk rx ring full", r.kernel.xsk_rx_ring_full);
  add("af_packet ring full", r.kernel.packet_ring_full);
  add("socket queue full", r.socket_dropped);
  add("veth dropped on transmit", r.veth_silent_drops);
  add(r.tool + " missed", r.tool_dropped);
  return s.empty() ? "0" : s;
}

}  // namespace nic_bench
