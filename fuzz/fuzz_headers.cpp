// SPDX-License-Identifier: Apache-2.0
// The device packet parsers and classifier (the GNIO_HD code the GPU runs)
// on arbitrary frames: every read must stay inside the frame.
#include <cstdint>
#include <vector>

#include "gnio/dev/headers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gnio::dev;
  if (size > 65535) return 0;
  const uint32_t len = static_cast<uint32_t>(size);
  // An exact-size heap copy, so that the sanitizer sees any read past the end.
  std::vector<uint8_t> frame(data, data + size);
  ParsedPacket pp;
  const bool whole = parse_packet(frame.data(), len, pp);
  (void)classify(frame.data(), len);
  (void)rss_hash(frame.data(), len);
  (void)fnv1a64(frame.data(), len);
  if (whole) {
    (void)checksum_state(frame.data(), pp);
    (void)detail::refusal(pp);
  }
  std::vector<uint8_t> copy = frame;
  (void)update_checksums(copy.data(), len);
  std::vector<uint8_t> reply = frame;
  (void)swap_addresses(reply.data(), len);  // also turns requests into replies: no round trip to check
  return 0;
}
