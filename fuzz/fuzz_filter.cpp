// SPDX-License-Identifier: Apache-2.0
// Arbitrary bytes as a classic BPF program and a packet: the validator
// decides on the program; the device interpreter runs any program reading
// only the program and the captured bytes, and decides on every program the
// validator accepts as libpcap's bpf_filter() does.
//
// Input: byte 0 the number of instructions (as many as the input holds, if
// fewer), bytes 1..2 how much longer than the capture the packet was on the
// wire (little-endian), then the instructions (8 bytes each, as struct
// bpf_insn in this machine's byte order), then the packet's captured bytes.
#include <pcap/pcap.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gnio/dev/filter.hpp"
#include "gnio/filter.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const size_t n = std::min<size_t>(data[0], (size - 3) / sizeof(gnio::dev::BpfInsn));
  const uint32_t extra = static_cast<uint32_t>(data[1] | data[2] << 8);
  std::vector<gnio::dev::BpfInsn> program(n);
  if (n != 0) std::memcpy(program.data(), data + 3, n * sizeof(gnio::dev::BpfInsn));
  const size_t at = 3 + n * sizeof(gnio::dev::BpfInsn);
  // Exact-size heap copies, so that the sanitizer sees any read past either.
  const std::vector<uint8_t> packet(data + at, data + size);
  const auto caplen = static_cast<uint32_t>(packet.size());
  const uint32_t wirelen = caplen + extra;
  const gnio::dev::FilterRef ref(program.data(), static_cast<uint32_t>(n));
  const uint32_t ours = ref.run(packet.data(), caplen, wirelen);
  if (!gnio::validate_filter(program)) return 0;
  std::vector<bpf_insn> theirs(n);
  for (size_t i = 0; i < n; ++i) theirs[i] = {program[i].code, program[i].jt, program[i].jf, program[i].k};
  if (bpf_filter(theirs.data(), packet.data(), wirelen, caplen) != ours) std::abort();
  return 0;
}
