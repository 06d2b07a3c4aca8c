// SPDX-License-Identifier: Apache-2.0
// The checks that let the device interpreter run a classic BPF program
// without bounds checks of its own on the program and decide as libpcap's
// bpf_filter() does: one pass in program order, which sees every path since
// jumps go forward only.
#include <cstdio>
#include <vector>

#include "gnio/filter.hpp"

namespace gnio {

namespace {

namespace bpf = dev::bpf;

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

Status refuse(size_t i, size_t n, const dev::BpfInsn& in, const std::string& why) {
  return {Errc::InvalidValue, Layer::App,
          "filter program: instruction " + std::to_string(i) + " of " + std::to_string(n) + " (code " + hex(in.code) +
              " jt " + std::to_string(in.jt) + " jf " + std::to_string(in.jf) + " k " + hex(in.k) + ") " + why};
}

// The opcodes libpcap's bpf_filter() runs, except `ret x`, which it does
// not either.
bool known_opcode(uint16_t code) {
  using namespace bpf;
  switch (code) {
    case kRet | kK: case kRet | kA:
    case kLd | kW | kAbs: case kLd | kH | kAbs: case kLd | kB | kAbs:
    case kLd | kW | kInd: case kLd | kH | kInd: case kLd | kB | kInd:
    case kLd | kW | kLen: case kLdx | kW | kLen: case kLdx | kB | kMsh:
    case kLd | kImm: case kLdx | kImm: case kLd | kMem: case kLdx | kMem: case kSt: case kStx:
    case kJmp | kJa:
    case kJmp | kJeq | kK: case kJmp | kJgt | kK: case kJmp | kJge | kK: case kJmp | kJset | kK:
    case kJmp | kJeq | kX: case kJmp | kJgt | kX: case kJmp | kJge | kX: case kJmp | kJset | kX:
    case kAlu | kNeg: case kMisc | kTax: case kMisc | kTxa:
      return true;
    default:
      break;
  }
  if (op_class(code) != kAlu || (code & ~(0xf0 | kX | 0x07)) != 0) return false;
  switch (code & 0xf0) {
    case kAdd: case kSub: case kMul: case kDiv: case kMod: case kOr: case kAnd: case kXor: case kLsh: case kRsh:
      return true;
    default:
      return false;
  }
}

bool uses_scratch(uint16_t code) {
  const uint16_t cls = bpf::op_class(code);
  return cls == bpf::kSt || cls == bpf::kStx || ((cls == bpf::kLd || cls == bpf::kLdx) && (code & 0xe0) == bpf::kMem);
}

}  // namespace

Status validate_filter(std::span<const dev::BpfInsn> program) {
  const size_t n = program.size();
  if (n == 0)
    return {Errc::InvalidValue, Layer::App,
            "filter program of 0 instructions: a program needs at least one, its last a ret (an empty expression "
            "compiles to `ret #snaplen`, which accepts every packet)"};
  if (n > bpf::kMaxInsns)
    return {Errc::InvalidValue, Layer::App,
            "filter program of " + std::to_string(n) + " instructions is longer than the " +
                std::to_string(bpf::kMaxInsns) +
                " the device interpreter runs; shorten the expression (a `portrange` or a `net` for a list of ports "
                "or hosts)"};
  // stored[i]: the scratch words every path to instruction i has stored; an
  // instruction no path reaches keeps all bits.
  std::vector<uint32_t> stored(n, (1u << bpf::kMemWords) - 1);
  stored[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    const dev::BpfInsn& in = program[i];
    const uint16_t cls = bpf::op_class(in.code);
    if (!known_opcode(in.code))
      return refuse(i, n, in,
                    "has an opcode the device interpreter does not run: only the classic BPF of libpcap's "
                    "bpf_filter(), without `ret x`; build the program with compile_filter() or pcap/bpf.h's "
                    "BPF_STMT and BPF_JUMP");
    const uint16_t mode = in.code & 0xe0;
    if (cls == bpf::kLd && (mode == bpf::kAbs || mode == bpf::kInd) && in.k >= bpf::kLinuxOffsets)
      return refuse(i, n, in,
                    "loads at one of Linux's negative offsets (SKF_AD_OFF ancillary data such as the VLAN tag a "
                    "NIC stripped, SKF_NET_OFF, SKF_LL_OFF), which mean something only in a Linux socket filter; "
                    "compile the expression for captured frames (compile_filter(), pcap_open_dead())");
    uint32_t out = stored[i];
    if (uses_scratch(in.code)) {
      if (in.k >= bpf::kMemWords)
        return refuse(i, n, in,
                      "uses scratch memory word " + std::to_string(in.k) + "; there are " +
                          std::to_string(bpf::kMemWords) + " (0.." + std::to_string(bpf::kMemWords - 1) + ")");
      const uint32_t word = 1u << in.k;
      if (cls == bpf::kSt || cls == bpf::kStx)
        out |= word;
      else if (!(stored[i] & word))
        return refuse(i, n, in,
                      "loads scratch memory word " + std::to_string(in.k) +
                          " where some path to it has not stored it (libpcap would read an undefined value); "
                          "store the word on every path first");
    }
    if (cls == bpf::kAlu && (in.code & bpf::kX) == 0) {
      const uint16_t op = in.code & 0xf0;
      if ((op == bpf::kDiv || op == bpf::kMod) && in.k == 0)
        return refuse(i, n, in, "divides by the constant 0; a program must not (libpcap refuses it too)");
      if ((op == bpf::kLsh || op == bpf::kRsh) && in.k >= 32)
        return refuse(i, n, in, "shifts by the constant " + std::to_string(in.k) + "; at most 31");
    }
    auto lands = [&](uint64_t offset, const char* which) -> Status {
      const uint64_t to = i + 1 + offset;
      if (to >= n)
        return refuse(i, n, in,
                      std::string(which) + " goes to instruction " + std::to_string(to) + ", past the last (" +
                          std::to_string(n - 1) + "); a jump must land inside the program");
      stored[to] &= out;
      return Status::ok();
    };
    if (cls == bpf::kRet) continue;
    if (cls == bpf::kJmp && (in.code & 0xf0) == bpf::kJa) {
      if (in.k >= 0x80000000u)
        return refuse(i, n, in,
                      "jumps back by " + std::to_string(0u - in.k) +
                          ": the device interpreter runs forward jumps only, so that every run ends (libpcap "
                          "compiles `protochain` as such a loop); filter without protochain, e.g. with `ip6 proto "
                          "N` for the first header");
      GNIO_TRY(lands(in.k, "its jump"));
    } else if (cls == bpf::kJmp) {
      GNIO_TRY(lands(in.jt, "its jt"));
      GNIO_TRY(lands(in.jf, "its jf"));
    } else if (i + 1 == n) {
      return refuse(i, n, in,
                    "is the last instruction and not a ret: that path runs past the end of the program; end "
                    "every path with a ret");
    } else {
      stored[i + 1] &= out;
    }
  }
  return Status::ok();
}

}  // namespace gnio
