// SPDX-License-Identifier: Apache-2.0
// A tcpdump expression into classic BPF by libpcap itself: pcap_compile() on
// a dead handle of the asked link type and snap length, the program that
// `tcpdump -r` runs on a capture of that link type.
#include <pcap/pcap.h>

#include <cstddef>
#include <memory>

#include "gnio/filter.hpp"

namespace gnio {

namespace {

static_assert(sizeof(dev::BpfInsn) == sizeof(bpf_insn) && offsetof(dev::BpfInsn, code) == offsetof(bpf_insn, code) &&
                  offsetof(dev::BpfInsn, jt) == offsetof(bpf_insn, jt) &&
                  offsetof(dev::BpfInsn, jf) == offsetof(bpf_insn, jf) &&
                  offsetof(dev::BpfInsn, k) == offsetof(bpf_insn, k),
              "dev::BpfInsn is laid out as libpcap's struct bpf_insn");

// libpcap's MAXIMUM_SNAPLEN: the most tcpdump accepts for -s.
constexpr uint32_t kMaxSnaplen = 262144;

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};

std::string describe(std::string_view expression, int linktype) {
  const char* name = pcap_datalink_val_to_name(linktype);
  return "filter expression '" + std::string(expression) + "' (link type " + std::to_string(linktype) +
         (name ? std::string(" ") + name : std::string()) + ")";
}

}  // namespace

Result<std::vector<dev::BpfInsn>> compile_filter(std::string_view expression, const FilterOptions& options) {
  if (options.snaplen == 0 || options.snaplen > kMaxSnaplen)
    return Status(Errc::InvalidValue, Layer::App,
                  describe(expression, options.linktype) + ": snap length " + std::to_string(options.snaplen) +
                      " is outside 1.." + std::to_string(kMaxSnaplen) +
                      " (a program returns it for the packets it accepts); pass a snap length in that range");
  std::unique_ptr<pcap_t, PcapCloser> dead(pcap_open_dead(options.linktype, static_cast<int>(options.snaplen)));
  if (!dead)
    return Status(Errc::NoMemory, Layer::App,
                  describe(expression, options.linktype) + ": pcap_open_dead() could not allocate its handle");
  const std::string text(expression);
  bpf_program prog{};
  if (pcap_compile(dead.get(), &prog, text.c_str(), options.optimize ? 1 : 0, PCAP_NETMASK_UNKNOWN) != 0)
    return Status(Errc::InvalidValue, Layer::App,
                  describe(expression, options.linktype) + ": libpcap refused it: " + pcap_geterr(dead.get()) +
                      "; fix the expression (pcap-filter(7); `tcpdump -d -y LINKTYPE EXPR` shows what compiles)");
  std::vector<dev::BpfInsn> insns(prog.bf_len);
  for (size_t i = 0; i < insns.size(); ++i)
    insns[i] = {prog.bf_insns[i].code, prog.bf_insns[i].jt, prog.bf_insns[i].jf, prog.bf_insns[i].k};
  pcap_freecode(&prog);
  if (Status s = validate_filter(insns); !s)
    return Status(s.code(), s.layer(),
                  describe(expression, options.linktype) + " compiles to a program the device interpreter refuses: " +
                      s.message());
  return insns;
}

}  // namespace gnio
