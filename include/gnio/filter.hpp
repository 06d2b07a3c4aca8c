// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief tcpdump filter expressions for kernels: compiled on the host by
/// libpcap, validated, copied into memory the GPU reads, and run on the
/// device by dev::FilterRef::run() (gnio/dev/filter.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gnio/dev/filter.hpp"
#include "gnio/gpu.hpp"
#include "gnio/mem.hpp"
#include "gnio/status.hpp"

namespace gnio {

/// @brief What a filter expression is compiled for.
struct FilterOptions {
  /// The link type of the frames (a DLT_ value of pcap/dlt.h): 1, Ethernet
  /// (DLT_EN10MB), is what every RX queue delivers, whatever the capture's
  /// own link type was.
  int linktype = 1;
  /// The snap length: what the program returns for a packet it accepts
  /// (tcpdump's default, 262144).
  uint32_t snaplen = 262144;
  /// Whether libpcap's optimiser runs (as tcpdump does, unless -O).
  bool optimize = true;
};

/// @brief Compiles a tcpdump expression (pcap-filter(7)) into classic BPF
/// with libpcap (`pcap_compile()` on `pcap_open_dead(linktype, snaplen)`),
/// then checks it with validate_filter(). Host only; no GPU involved.
/// @param expression The expression, e.g. "udp port 53"; empty accepts
///        every packet.
/// @param options The link type, snap length and optimiser.
/// @return The instructions, or InvalidValue with libpcap's message for an
///         expression it refuses (syntax, or a primitive the link type does
///         not have), or validate_filter()'s refusal (e.g. `protochain`,
///         which libpcap compiles as a loop).
Result<std::vector<dev::BpfInsn>> compile_filter(std::string_view expression, const FilterOptions& options = {});

/// @brief Checks that dev::FilterRef::run() decides on a program as libpcap
/// would.
///
/// The rules: 1 to bpf::kMaxInsns instructions; only the opcodes libpcap's
/// interpreter runs, without Linux's negative offsets (SKF_AD_OFF ancillary
/// data, SKF_NET_OFF, SKF_LL_OFF) and without `ret x`; jumps forward only,
/// each landing inside the program; the last instruction a `ret`, so every
/// path ends in one; scratch memory words below bpf::kMemWords, each stored
/// on every path before it is loaded; no division or modulo by the constant
/// 0 and no shift by a constant of 32 or more.
/// @param program The instructions.
/// @return Ok, or InvalidValue naming the first instruction that breaks a
///         rule, the rule and its value.
Status validate_filter(std::span<const dev::BpfInsn> program);

/// @brief A validated filter program in memory a kernel reads: the owning
/// host type of dev::FilterRef.
///
/// The program lives in managed memory (MemKind::GpuCpu) where the GPU has
/// concurrent managed access, in mapped pinned memory (MemKind::CpuGpu)
/// otherwise. Copies share that memory; host only.
class FilterProgram {
 public:
  /// @brief Compiles an expression (compile_filter()) and copies the program
  ///        into memory of `gpu`.
  /// @param gpu The device whose kernels run the filter.
  /// @param expression The tcpdump expression.
  /// @param options The link type, snap length and optimiser.
  /// @return The program, or compile_filter()'s error, or Gpu::alloc()'s.
  static Result<FilterProgram> compile(Gpu& gpu, std::string_view expression, const FilterOptions& options = {});

  /// @brief Validates a program built by other means (validate_filter())
  ///        and copies it into memory of `gpu`.
  /// @param gpu The device whose kernels run the filter.
  /// @param program The instructions.
  /// @return The program, or validate_filter()'s error, or Gpu::alloc()'s.
  static Result<FilterProgram> load(Gpu& gpu, std::vector<dev::BpfInsn> program);

  /// @brief No program: both views accept every packet.
  FilterProgram() = default;

  /// @brief The view a kernel takes by value.
  /// @return The program in the GPU's memory; valid while this object (or
  ///         a copy of it) lives. Empty for an empty FilterProgram.
  dev::FilterRef handle() const noexcept;
  /// @brief The same program for host code (a host-side path, a check of
  ///        a kernel's decisions).
  /// @return A view of the host copy of the instructions.
  dev::FilterRef host_handle() const noexcept;
  /// @brief The instructions.
  /// @return The host copy, as compiled or loaded.
  std::span<const dev::BpfInsn> instructions() const noexcept { return insns_; }
  /// @brief The expression the program was compiled from.
  /// @return The expression; empty for a loaded program.
  const std::string& expression() const noexcept { return expression_; }
  /// @brief Where the GPU's copy lives.
  /// @return MemKind::GpuCpu or MemKind::CpuGpu (Gpu for an empty program).
  MemKind memory_kind() const noexcept { return mem_.kind(); }

 private:
  static Result<FilterProgram> place(Gpu& gpu, std::string expression, std::vector<dev::BpfInsn> program);
  std::string expression_;
  std::vector<dev::BpfInsn> insns_;
  DeviceMemory mem_;
};

}  // namespace gnio
