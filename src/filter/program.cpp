// SPDX-License-Identifier: Apache-2.0
// A validated program copied into memory the GPU reads and the host writes
// (managed where the GPU allows it, so that it is read from device memory;
// else mapped pinned memory): the host fills it once, before any kernel
// that reads it is launched.
#include <cstring>

#include "gnio/filter.hpp"

namespace gnio {

Result<FilterProgram> FilterProgram::place(Gpu& gpu, std::string expression, std::vector<dev::BpfInsn> program) {
  const MemKind kind = gpu.info().concurrent_managed_access ? MemKind::GpuCpu : MemKind::CpuGpu;
  auto mem = gpu.alloc(program.size() * sizeof(dev::BpfInsn), kind);
  if (!mem) return mem.status();
  std::memcpy(mem->host_ptr(), program.data(), program.size() * sizeof(dev::BpfInsn));
  FilterProgram p;
  p.expression_ = std::move(expression);
  p.insns_ = std::move(program);
  p.mem_ = std::move(*mem);
  return p;
}

Result<FilterProgram> FilterProgram::compile(Gpu& gpu, std::string_view expression, const FilterOptions& options) {
  auto insns = compile_filter(expression, options);
  if (!insns) return insns.status();
  return place(gpu, std::string(expression), std::move(*insns));
}

Result<FilterProgram> FilterProgram::load(Gpu& gpu, std::vector<dev::BpfInsn> program) {
  GNIO_TRY(validate_filter(program));
  return place(gpu, {}, std::move(program));
}

dev::FilterRef FilterProgram::handle() const noexcept {
  return {static_cast<const dev::BpfInsn*>(mem_.device_ptr()), static_cast<uint32_t>(insns_.size())};
}

dev::FilterRef FilterProgram::host_handle() const noexcept {
  return {insns_.data(), static_cast<uint32_t>(insns_.size())};
}

}  // namespace gnio
