// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief tcpdump filter expressions on the device: a classic BPF
/// interpreter that decides as libpcap's `pcap_offline_filter()` does.
///
/// The program comes from gnio::FilterProgram (gnio/filter.hpp), which
/// compiles an expression with libpcap and validates it on the host;
/// FilterRef is its trivially copyable view, passed to a kernel by value.
/// Header-only and free of the standard library, like the packet parsers
/// (packet_parse.hpp): every function is `__host__ __device__`, so a kernel,
/// the emulated device and host code run the same interpreter.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"

namespace gnio::dev {

/// @brief One classic BPF instruction, laid out as libpcap's `struct
/// bpf_insn` (8 bytes).
struct BpfInsn {
  uint16_t code;  ///< The opcode: class, size or operation, mode or source.
  uint8_t jt;     ///< A conditional jump's offset when the test holds.
  uint8_t jf;     ///< A conditional jump's offset when it does not.
  uint32_t k;     ///< The constant: an offset, an immediate, a jump or a scratch word.
};

/// @brief Opcodes and limits of classic BPF, as pcap/bpf.h names them:
/// what the interpreter runs and gnio::validate_filter() checks.
namespace bpf {
inline constexpr uint16_t kLd = 0x00;    ///< Class: load into A.
inline constexpr uint16_t kLdx = 0x01;   ///< Class: load into X.
inline constexpr uint16_t kSt = 0x02;    ///< Class: store A into scratch memory.
inline constexpr uint16_t kStx = 0x03;   ///< Class: store X into scratch memory.
inline constexpr uint16_t kAlu = 0x04;   ///< Class: arithmetic on A.
inline constexpr uint16_t kJmp = 0x05;   ///< Class: jumps.
inline constexpr uint16_t kRet = 0x06;   ///< Class: return (the verdict).
inline constexpr uint16_t kMisc = 0x07;  ///< Class: register transfers (tax, txa).
inline constexpr uint16_t kW = 0x00;     ///< Size: 32-bit word.
inline constexpr uint16_t kH = 0x08;     ///< Size: 16-bit half word.
inline constexpr uint16_t kB = 0x10;     ///< Size: byte.
inline constexpr uint16_t kImm = 0x00;   ///< Mode: the constant k.
inline constexpr uint16_t kAbs = 0x20;   ///< Mode: packet bytes at k.
inline constexpr uint16_t kInd = 0x40;   ///< Mode: packet bytes at X + k.
inline constexpr uint16_t kMem = 0x60;   ///< Mode: scratch memory word k.
inline constexpr uint16_t kLen = 0x80;   ///< Mode: the packet's wire length.
inline constexpr uint16_t kMsh = 0xa0;   ///< Mode: 4 * (packet byte k & 0xf), an IPv4 header length.
inline constexpr uint16_t kAdd = 0x00;   ///< ALU: A + operand.
inline constexpr uint16_t kSub = 0x10;   ///< ALU: A - operand.
inline constexpr uint16_t kMul = 0x20;   ///< ALU: A * operand.
inline constexpr uint16_t kDiv = 0x30;   ///< ALU: A / operand.
inline constexpr uint16_t kOr = 0x40;    ///< ALU: A | operand.
inline constexpr uint16_t kAnd = 0x50;   ///< ALU: A & operand.
inline constexpr uint16_t kLsh = 0x60;   ///< ALU: A << operand.
inline constexpr uint16_t kRsh = 0x70;   ///< ALU: A >> operand.
inline constexpr uint16_t kNeg = 0x80;   ///< ALU: -A.
inline constexpr uint16_t kMod = 0x90;   ///< ALU: A % operand.
inline constexpr uint16_t kXor = 0xa0;   ///< ALU: A ^ operand.
inline constexpr uint16_t kJa = 0x00;    ///< Jump: always, by k.
inline constexpr uint16_t kJeq = 0x10;   ///< Jump: A == operand.
inline constexpr uint16_t kJgt = 0x20;   ///< Jump: A > operand.
inline constexpr uint16_t kJge = 0x30;   ///< Jump: A >= operand.
inline constexpr uint16_t kJset = 0x40;  ///< Jump: A & operand != 0.
inline constexpr uint16_t kK = 0x00;     ///< Operand (ALU, jumps) or verdict (ret): the constant k.
inline constexpr uint16_t kX = 0x08;     ///< Operand: register X.
inline constexpr uint16_t kA = 0x10;     ///< Verdict (ret): register A.
inline constexpr uint16_t kTax = 0x00;   ///< Misc: X = A.
inline constexpr uint16_t kTxa = 0x80;   ///< Misc: A = X.
inline constexpr uint32_t kMemWords = 16;     ///< Words of scratch memory (BPF_MEMWORDS).
inline constexpr uint32_t kMaxInsns = 4096;   ///< The longest program gnio runs (Linux's cBPF limit).
/// The lowest of Linux's negative load offsets (SKF_LL_OFF; SKF_NET_OFF and
/// the ancillary SKF_AD_OFF lie above it): meaningful only in a socket
/// filter, refused here.
inline constexpr uint32_t kLinuxOffsets = 0xffe00000u;

/// @brief The class of an opcode.
/// @param code The opcode.
/// @return kLd .. kMisc.
GNIO_HD constexpr uint16_t op_class(uint16_t code) { return code & 0x07; }
}  // namespace bpf

namespace detail {

GNIO_HD inline uint32_t bpf_load(const uint8_t* p, uint32_t off, uint32_t size) {
  uint32_t v = 0;
  for (uint32_t i = 0; i < size; ++i) v = (v << 8) | p[off + i];
  return v;
}

// Whether `size` bytes from base + k lie inside the caplen bytes, without
// the sum wrapping.
GNIO_HD inline bool bpf_fits(uint32_t base, uint32_t k, uint32_t size, uint32_t caplen) {
  return base <= caplen && k <= caplen - base && size <= caplen - base - k;
}

GNIO_HD inline uint32_t bpf_alu(uint16_t op, uint32_t a, uint32_t v) {
  switch (op) {
    case bpf::kAdd: return a + v;
    case bpf::kSub: return a - v;
    case bpf::kMul: return a * v;
    case bpf::kDiv: return a / v;
    case bpf::kMod: return a % v;
    case bpf::kOr: return a | v;
    case bpf::kAnd: return a & v;
    case bpf::kXor: return a ^ v;
    case bpf::kLsh: return v < 32 ? a << v : 0;
    case bpf::kRsh: return v < 32 ? a >> v : 0;
    default: return 0u - a;  // kNeg: validated programs hold no other operation
  }
}

GNIO_HD inline bool bpf_test(uint16_t op, uint32_t a, uint32_t v) {
  switch (op) {
    case bpf::kJeq: return a == v;
    case bpf::kJgt: return a > v;
    case bpf::kJge: return a >= v;
    default: return (a & v) != 0;  // kJset
  }
}

}  // namespace detail

/// @brief The device view of a validated classic BPF program
/// (gnio::FilterProgram::handle()): trivially copyable, passed to a kernel
/// by value, valid while its FilterProgram lives.
///
/// An empty view (default-constructed) holds no program and accepts every
/// packet, as libpcap's bpf_filter() does without one.
class FilterRef {
 public:
  /// @brief No program: run() accepts every packet.
  FilterRef() = default;
  /// @brief A view of a program that gnio::validate_filter() accepted.
  /// @param insns The instructions, in memory the caller reads (device
  ///        memory for a kernel, host memory for host code).
  /// @param count How many; 0 makes the empty view.
  GNIO_HD FilterRef(const BpfInsn* insns, uint32_t count) : insns_(insns), count_(count) {}

  /// @brief The program's instructions.
  /// @return The first instruction; nullptr for the empty view.
  GNIO_HD const BpfInsn* insns() const { return insns_; }
  /// @brief The program's length.
  /// @return Instructions; 0 for the empty view.
  GNIO_HD uint32_t size() const { return count_; }

  /// @brief Runs the program on one packet, as `pcap_offline_filter()`.
  ///
  /// A load past `caplen` ends the run with 0 (reject), as do division and
  /// modulo by a zero X; shifts by 32 or more give 0; scratch memory starts
  /// zeroed. Only the program and the packet's `caplen` bytes are read,
  /// whatever the program; a program that gnio::validate_filter() refused
  /// may give any verdict.
  /// @param pkt The packet's first byte.
  /// @param caplen Bytes of the packet that are present (read at most).
  /// @param wirelen The packet's length on the wire (what `len` and
  ///        `greater` / `less` compare); caplen when nothing was cut.
  /// @return The program's verdict: 0 rejects; otherwise the bytes of the
  ///         packet to keep (the snap length the program was compiled
  ///         with, for libpcap's programs); 0xffffffff for the empty view.
  GNIO_HD uint32_t run(const uint8_t* pkt, uint32_t caplen, uint32_t wirelen) const {
    if (count_ == 0) return 0xffffffffu;
    uint32_t a = 0, x = 0;
    uint32_t mem[bpf::kMemWords] = {};
    for (uint32_t pc = 0; pc < count_; ++pc) {
      const BpfInsn in = insns_[pc];
      const uint16_t cls = bpf::op_class(in.code);
      const uint16_t mode = in.code & 0xe0;
      const uint16_t size = in.code & 0x18;
      const uint32_t bytes = size == bpf::kW ? 4 : size == bpf::kH ? 2 : 1;
      switch (cls) {
        case bpf::kRet: return (in.code & bpf::kA) ? a : in.k;
        case bpf::kLd:
          if (mode == bpf::kImm) {
            a = in.k;
          } else if (mode == bpf::kMem) {
            a = mem[in.k & (bpf::kMemWords - 1)];
          } else if (mode == bpf::kLen) {
            a = wirelen;
          } else {
            const uint32_t base = mode == bpf::kInd ? x : 0;
            if (!detail::bpf_fits(base, in.k, bytes, caplen)) return 0;
            a = detail::bpf_load(pkt, base + in.k, bytes);
          }
          break;
        case bpf::kLdx:
          if (mode == bpf::kImm) {
            x = in.k;
          } else if (mode == bpf::kMem) {
            x = mem[in.k & (bpf::kMemWords - 1)];
          } else if (mode == bpf::kLen) {
            x = wirelen;
          } else {  // kMsh
            if (in.k >= caplen) return 0;
            x = (pkt[in.k] & 0xfu) << 2;
          }
          break;
        case bpf::kSt: mem[in.k & (bpf::kMemWords - 1)] = a; break;
        case bpf::kStx: mem[in.k & (bpf::kMemWords - 1)] = x; break;
        case bpf::kAlu: {
          const uint16_t op = in.code & 0xf0;
          const uint32_t v = (in.code & bpf::kX) ? x : in.k;
          if ((op == bpf::kDiv || op == bpf::kMod) && v == 0) return 0;
          a = detail::bpf_alu(op, a, v);
          break;
        }
        case bpf::kJmp: {
          const uint16_t op = in.code & 0xf0;
          if (op == bpf::kJa) {
            if (in.k >= count_ - pc) return 0;  // refused by the validator: a jump past the end
            pc += in.k;
          } else {
            pc += detail::bpf_test(op, a, (in.code & bpf::kX) ? x : in.k) ? in.jt : in.jf;
          }
          break;
        }
        default:  // kMisc
          if (in.code & bpf::kTxa)
            a = x;
          else
            x = a;
          break;
      }
    }
    return 0;  // ran past the end: refused by the validator
  }

 private:
  const BpfInsn* insns_ = nullptr;
  uint32_t count_ = 0;
};

}  // namespace gnio::dev
