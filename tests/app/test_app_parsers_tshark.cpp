// SPDX-License-Identifier: Apache-2.0
// tshark as the oracle of the application parsers: the valid frames of
// test_app_parsers.cpp and each of them with every length field cut and
// lengthened by one, DNS names of 253 to 256 octets, a TLS record over
// 2^14 bytes and HTTP requests cut at every byte, written to one capture
// (app_parsers.pcap in the working directory, kept for a look in
// Wireshark). For each frame, gnio's verdict (malformed or cut, or not) must
// be tshark's, and where both find it whole, the DNS name, TLS server name
// or HTTP Host must be the one tshark shows.
//
// tshark runs with TCP reassembly off, as gnio looks at one frame at a
// time. It calls a frame malformed with an exception (_ws.malformed), an
// expert info of Warning or Error, "Unreassembled fragment" (a length that
// runs past what a TCP segment holds, with reassembly off) and the names it
// shows for a refused DNS name, "<Name too long>" and "<Unknown extended
// label>". Its notes (extraneous data after the last record) and chats are
// not verdicts.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "app_frames.hpp"
#include "tshark_answers.hpp"

namespace {

using namespace gnio::test;
using namespace gnio::dev::app;

// A case where tshark disagrees for a reason of its own: on the verdict
// (the names are still compared where gnio finds the frame whole), or only
// on the name of a frame both find whole.
struct Exclusion {
  const char* label;
  enum What { kVerdict, kName } what;
  const char* why;
};

const Exclusion kExclusions[] = {
    {"dns response: qdcount - 1", Exclusion::kVerdict,
     "read without a question, the question's bytes make an A record whose TTL has its top bit set: tshark warns "
     "(RFC 2181 §8 says to read such a TTL as zero); a value, not a length, and the lengths all fit"},
    {"dns response: opt rdlength - 1", Exclusion::kVerdict,
     "tshark 4.0 reads an EDNS option's data past its OPT record's RDATA and only notes the byte as extraneous "
     "data; RFC 6891 §6.1.2 puts the options inside RDLENGTH"},
    {"dns query/tcp: opt rdlength - 1", Exclusion::kVerdict, "as for the response over UDP"},
    {"dns query/tcp: ip total length - 1", Exclusion::kVerdict,
     "the message goes on in the next segment: with reassembly off tshark calls that an unreassembled fragment, "
     "the words it also has for a length that crosses a message it holds whole; gnio tells them apart by the "
     "DNS length prefix"},
    {"dns query/tcp: dns tcp length + 1", Exclusion::kVerdict, "as for the IP total length - 1: the message goes on"},
    {"tls: tls handshake length + 1", Exclusion::kVerdict,
     "the handshake message claims a byte past its record, so tshark waits for the record that would carry it "
     "(RFC 8446 §5.1) and dissects nothing; gnio knows already that the extensions, the ClientHello's last field, "
     "end before the message does"},
    {"tls server_name only: tls handshake length + 1", Exclusion::kVerdict, "as for the ClientHello with three"},
    {"tls: record of 2^14 + 1 bytes", Exclusion::kVerdict,
     "the record goes on past the segment and tshark waits for the rest of it before it looks at its length; "
     "RFC 8446 §5.1 bounds it by 2^14 bytes, which its header already breaks"},
    {"tls: ip total length - 1", Exclusion::kName,
     "the record goes on in the next segment: tshark dissects only whole records, gnio reads the server name "
     "from the part held"},
    {"tls: tls record length - 1", Exclusion::kName, "the handshake message goes on in the next record: as above"},
    {"tls: tls record length + 1", Exclusion::kName, "the record goes on in the next segment: as above"},
    {"tls server_name only: tls record length + 1", Exclusion::kName, "as above"},
    {"tls: record of 2^14 bytes", Exclusion::kName, "the record goes on in the next segments: as above"},
};

// For every HTTP request cut inside a header's name, before its colon.
const Exclusion kHttpCutInHeaderName = {
    "http cut inside a header name", Exclusion::kVerdict,
    "tshark calls a last header line without its colon an unreassembled fragment; HTTP has no length for gnio "
    "to hold it to (and gnio no malformed HTTP): it reads the header block up to the segment's end"};

const Exclusion* exclusion(const std::string& label) {
  for (const Exclusion& e : kExclusions)
    if (label == e.label) return &e;
  return nullptr;
}

struct Case {
  std::string label;
  Bytes frame;
  const Exclusion* excluded;
};

// The frame built by `make` from a source port of its own (tshark takes a
// repeated DNS id or TCP segment for a retransmission), and the frame with
// each of its length fields cut and lengthened by one.
void add_with_lengths(std::vector<Case>& cases, uint16_t& port, const std::string& label,
                      const std::function<Frame(uint16_t)>& make) {
  const Frame base = make(port++);
  cases.push_back({label, base.bytes, exclusion(label)});
  for (const LengthField& f : base.lengths)
    for (const int delta : {-1, 1}) {
      const std::string name = label + ": " + f.name + (delta < 0 ? " - 1" : " + 1");
      cases.push_back({name, with_length(make(port++), f, delta), exclusion(name)});
    }
}

// Whether the request cut to k bytes ends inside a header's name: past the
// request line, in a line begun that has no colon (nor its CR) yet.
bool cut_in_header_name(const std::string& request, size_t k) {
  const size_t line = request.rfind("\r\n", k < 2 ? 0 : k - 2);
  if (line == std::string::npos || k <= line + 2) return false;
  return request.substr(line + 2, k - line - 2).find_first_of(":\r") == std::string::npos;
}

std::vector<Case> oracle_cases() {
  std::vector<Case> cases;
  const auto add = [&cases](const std::string& label, const Bytes& frame) {
    cases.push_back({label, frame, exclusion(label)});
  };
  uint16_t port = 20000;
  add_with_lengths(cases, port, "dns response", dns_response_frame);
  add_with_lengths(cases, port, "dns query/tcp", dns_query_frame);
  add_with_lengths(cases, port, "tls", [](uint16_t p) { return tls_frame(p); });
  add_with_lengths(cases, port, "tls server_name only", [](uint16_t p) { return tls_frame(p, false); });
  add_with_lengths(cases, port, "http", [](uint16_t p) { return http_frame(p); });
  for (const uint32_t octets : {255u, 256u}) {
    const uint16_t p = port++;
    add("dns name of " + std::to_string(octets) + " octets",
        ip_frame(17, dns_named_response(p, labels_of_wire_length(octets)), p, 53).bytes);
  }
  for (const uint32_t octets : {253u, 254u}) {
    const uint16_t p = port++;
    add("dns answer x + pointer to " + std::to_string(octets) + " octets",
        ip_frame(17, dns_named_response(p, labels_of_wire_length(octets), "x"), p, 53).bytes);
  }
  for (const int over : {0, 1}) {
    const Frame f = tls_frame(port++);
    const LengthField record = length_field(f, "tls record length");
    const int held = static_cast<int>(f.bytes.size() - record.at - 2);
    add(over ? "tls: record of 2^14 + 1 bytes" : "tls: record of 2^14 bytes",
        with_length(f, record, (1 << 14) + over - held));
  }
  const std::string request = kHttpRequestText;
  for (size_t k = 0; k < request.size(); ++k) {
    const Frame f = http_frame(port++);
    const int cut = static_cast<int>(k) - static_cast<int>(request.size());
    cases.push_back({"http cut to " + std::to_string(k) + " bytes",
                     with_length(f, length_field(f, "ip total length"), cut),
                     cut_in_header_name(request, k) ? &kHttpCutInHeaderName : nullptr});
  }
  add("http host in the body",
      http_frame(port++, "POST /form HTTP/1.1\r\nContent-Length: 20\r\n\r\nHost: not.a.header\r\n").bytes);
  return cases;
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) out.append(buf.data(), n);
  pclose(f);
  return out;
}

using gnio::apptest::split;

// What tshark says of one frame.
struct TsharkVerdict {
  bool malformed = false;
  std::string name;
  std::string why;  // the expert messages, for a failure's message
};

const char* kFields[] = {"_ws.malformed", "_ws.expert.severity", "_ws.expert.message", "dns.qry.name",
                         "dns.resp.name", "tls.handshake.extensions_server_name", "http.host"};

std::map<uint64_t, TsharkVerdict> tshark_verdicts(const std::string& capture) {
  std::string cmd = "tshark -r " + capture +
                    " -n -o tcp.desegment_tcp_streams:FALSE -o tcp.analyze_sequence_numbers:FALSE -T fields"
                    " -E separator=/t -E occurrence=a -E aggregator=/s -e frame.number";
  for (const char* f : kFields) cmd += std::string(" -e ") + f;
  std::map<uint64_t, TsharkVerdict> out;
  for (const std::string& line : split(run(cmd + " 2>/dev/null"), '\n')) {
    if (line.empty()) continue;
    std::vector<std::string> f = split(line, '\t');
    f.resize(1 + std::size(kFields));
    TsharkVerdict v;
    v.malformed = !f[1].empty();
    for (const std::string& severity : split(f[2], ' '))
      if (!severity.empty() && std::stoul(severity) >= 0x00600000) v.malformed = true;  // PI_WARN and above
    v.malformed |= f[3].find("Unreassembled fragment") != std::string::npos;
    for (const std::string& names : {f[4], f[5]})
      v.malformed |= names.find("<Name too long>") != std::string::npos ||
                     names.find("<Unknown extended label>") != std::string::npos;
    for (const size_t i : {4u, 6u, 7u})
      if (v.name.empty() && !f[i].empty()) v.name = split(f[i], ' ')[0];
    v.why = f[3];
    out[std::stoull(f[0])] = v;
  }
  return out;
}

TEST(AppParsersTshark, VerdictsAndNamesEqualTsharks) {
  if (std::system("command -v tshark >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "tshark is not installed (scripts/bootstrap.sh test installs it)";
  const std::vector<Case> cases = oracle_cases();
  for (const Exclusion& e : kExclusions) {
    const bool found = std::any_of(cases.begin(), cases.end(), [&](const Case& c) { return c.label == e.label; });
    EXPECT_TRUE(found) << "an exclusion without its case: " << e.label;
  }
  const std::string capture = (std::filesystem::current_path() / "app_parsers.pcap").string();
  std::vector<Bytes> frames;
  for (const Case& c : cases) frames.push_back(c.frame);
  write_pcap(capture, frames);
  const std::map<uint64_t, TsharkVerdict> tshark = tshark_verdicts(capture);
  ASSERT_EQ(tshark.size(), cases.size()) << "tshark read " << capture;
  uint64_t verdicts = 0, names = 0, malformed = 0, excluded = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const Verdict g = analyze_frame(c.frame);
    const TsharkVerdict& t = tshark.at(i + 1);
    const bool gnio_malformed = g.reason != kReasonNone;
    const std::string what = "frame " + std::to_string(i + 1) + " of " + capture + " (" + c.label + "): gnio " +
                             kReasonNames[g.reason] + " '" + g.name + "', tshark " +
                             (t.malformed ? "malformed" : "whole") + " '" + t.name + "' " + t.why;
    const bool verdict_compared = c.excluded == nullptr || c.excluded->what == Exclusion::kName;
    const bool name_compared = c.excluded == nullptr || c.excluded->what == Exclusion::kVerdict;
    excluded += c.excluded != nullptr;
    if (verdict_compared) {
      ++verdicts;
      malformed += gnio_malformed;
      EXPECT_EQ(gnio_malformed, t.malformed) << what;
    }
    if (name_compared && !gnio_malformed && (!t.malformed || c.excluded != nullptr)) {
      ++names;
      EXPECT_EQ(g.name, t.name) << what;
    }
  }
  std::printf("%zu frames: %llu verdicts and %llu names compared, %llu cases excluded\n", cases.size(),
              static_cast<unsigned long long>(verdicts), static_cast<unsigned long long>(names),
              static_cast<unsigned long long>(excluded));
  // Most cases are compared, of both kinds.
  EXPECT_GE(verdicts, 150u);
  EXPECT_GE(malformed, 50u);
  EXPECT_GE(names, 60u);
}

}  // namespace
