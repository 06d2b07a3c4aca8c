// SPDX-License-Identifier: Apache-2.0
// The packet-processing application's parsers (apps/packet_processing/: DNS, HTTP, TLS
// and the analyze() entry) on arbitrary bytes: the input as a DNS message
// (whole, and as the start of one over TCP), an HTTP request and a TLS
// record; as a whole frame; and as the payload of a UDP and TCP frame to
// port 53 and a TCP frame to port 443. Every read must stay inside the
// input and every bound the parsers hand on inside their container.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "packet_processing/analyze.hpp"

namespace {

using namespace gnio::dev::app;

void require(bool holds) {
  if (!holds) std::abort();
}

// analyze() and, for a record, fill_record() on the frame; the record's strings inside their arrays.
void analyze_frame(const std::vector<uint8_t>& frame) {
  const uint32_t len = static_cast<uint32_t>(frame.size());
  const Analysis a = analyze(frame.data(), len);
  require(a.reason < kReasonCount);
  if (a.record == kRecordNone) return;
  require(a.reason == kReasonNone && a.app_offset <= a.app_end && a.app_end <= len);
  Record r{};
  fill_record(frame.data(), a, r);
  require(r.name_len < kNameMax && r.name[r.name_len] == 0);
  require(r.path_len < kPathMax && r.path[r.path_len] == 0);
}

// The bytes as the payload of an IPv4 frame of protocol `proto` (17 or 6) to `port`, checksums left 0.
std::vector<uint8_t> wrapped(const uint8_t* data, uint32_t size, uint8_t proto, uint16_t port) {
  const uint32_t l4 = proto == 17 ? 8 : 20;
  std::vector<uint8_t> f(14 + 20 + l4);
  f[12] = 0x08;
  f[14] = 0x45;
  const uint32_t total = 20 + l4 + size;
  f[16] = static_cast<uint8_t>(total >> 8);
  f[17] = static_cast<uint8_t>(total);
  f[22] = 64;
  f[23] = proto;
  f[34] = 0x9c;  // source port 40000
  f[35] = 0x40;
  f[36] = static_cast<uint8_t>(port >> 8);
  f[37] = static_cast<uint8_t>(port);
  if (proto == 17) {
    f[38] = static_cast<uint8_t>((8 + size) >> 8);
    f[39] = static_cast<uint8_t>(8 + size);
  } else {
    f[46] = 0x50;  // data offset 5
    f[47] = 0x18;  // PSH, ACK
  }
  f.insert(f.end(), data, data + size);
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An IP datagram holds at most 65535 bytes, the headers wrapped around the input included.
  if (size > 65535 - 40) return 0;
  const uint32_t n = static_cast<uint32_t>(size);
  // Exact-size heap copies, so that the sanitizer sees any read past the end.
  const std::vector<uint8_t> input(data, data + size);
  const uint8_t* p = input.data();

  // DNS, whole and as the start of a message over TCP that its first two bytes size.
  require(dns_message(p, n, n) < kReasonCount);
  if (n >= 2) {
    const uint32_t claimed = gnio::dev::load_be16(p);
    const std::vector<uint8_t> message(p + 2, p + n);
    const uint32_t held = claimed < n - 2 ? claimed : n - 2;
    require(dns_message(message.data(), claimed, held) < kReasonCount);
  }
  char name[kNameMax];
  std::memset(name, '?', sizeof name);  // so that text left unterminated shows
  const uint32_t at = n != 0 ? p[0] % n : 0;
  const DnsName d = dns_name(p, n, at, name, kNameMax);
  require(d.text_len < kNameMax && name[d.text_len] == 0);
  require(d.reason != kReasonNone || (d.next > at && d.next <= n));

  // HTTP: the request line's parts in order, the Host value inside the payload.
  RequestLine rl;
  if (http_request_line(p, n, rl)) {
    require(rl.method_end < rl.target_begin && rl.target_begin < rl.target_end && rl.target_end < rl.version_begin &&
            rl.version_begin <= rl.version_end && rl.version_end == rl.line_end && rl.line_end <= n);
    uint32_t host_begin = 0, host_end = 0;
    http_host(p, rl.line_end, n, host_begin, host_end);
    require(host_begin <= host_end && host_end <= n);
  }

  // TLS: a server name found in a ClientHello without fault lies inside it.
  const TlsHello h = tls_client_hello(p, 0, n);
  require(h.reason < kReasonCount);
  if (h.named && h.reason == kReasonNone) require(h.sni_begin <= h.sni_end && h.sni_end <= n);

  analyze_frame(input);
  analyze_frame(wrapped(p, n, 17, 53));
  analyze_frame(wrapped(p, n, 6, 53));
  analyze_frame(wrapped(p, n, 6, 443));
  return 0;
}
