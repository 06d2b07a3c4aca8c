// SPDX-License-Identifier: Apache-2.0
// `gnio run packet-processing`'s outputs end to end: names of any bytes are
// written by escape_text()'s rule into the report and --print and parse
// back, and the flow export of such a capture is well-formed CSV and JSON
// lines; an output that cannot be written (a full disk, a bad path, a pipe
// whose reader went away, the replies' pcap-out file) is reported with its
// file and reason while the summary and the other outputs are still
// written; a capture cut in its last record is reported and the frames
// before the cut are still summarised.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

using nlohmann::json;
using namespace gnio::apptest;

// ---- a capture built here: names holding each byte value ----------------

void put16(std::vector<uint8_t>& v, size_t at, uint16_t x) {
  v[at] = static_cast<uint8_t>(x >> 8);
  v[at + 1] = static_cast<uint8_t>(x);
}

void append16(std::vector<uint8_t>& v, uint16_t x) {
  v.push_back(static_cast<uint8_t>(x >> 8));
  v.push_back(static_cast<uint8_t>(x));
}

uint16_t ones_sum(const uint8_t* p, size_t n, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (n % 2) sum += static_cast<uint32_t>(p[n - 1] << 8);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

// Ethernet + IPv4 10.1.0.1 -> 10.1.0.2 + UDP or TCP (checksums right).
std::vector<uint8_t> frame(uint8_t proto, uint16_t sport, uint16_t dport, const std::vector<uint8_t>& payload) {
  const size_t l4_len = (proto == 17 ? 8 : 20) + payload.size();
  std::vector<uint8_t> f(14 + 20 + l4_len, 0);
  const uint8_t mac[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};
  std::memcpy(f.data(), mac, 12);
  put16(f, 12, 0x0800);
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  put16(f, 16, static_cast<uint16_t>(20 + l4_len));
  ip[8] = 64;
  ip[9] = proto;
  const uint8_t addrs[8] = {10, 1, 0, 1, 10, 1, 0, 2};
  std::memcpy(ip + 12, addrs, 8);
  put16(f, 24, static_cast<uint16_t>(~ones_sum(ip, 20)));
  const size_t l4 = 34;
  put16(f, l4, sport);
  put16(f, l4 + 2, dport);
  if (proto == 17) {
    put16(f, l4 + 4, static_cast<uint16_t>(l4_len));
  } else {
    put16(f, l4 + 4, 0);
    put16(f, l4 + 8, 1);
    f[l4 + 12] = 0x50;
    f[l4 + 13] = 0x18;  // PSH, ACK
    put16(f, l4 + 14, 65535);
  }
  std::memcpy(f.data() + l4 + (proto == 17 ? 8 : 20), payload.data(), payload.size());
  const uint32_t pseudo = ones_sum(addrs, 8) + proto + static_cast<uint32_t>(l4_len);
  const uint16_t sum = static_cast<uint16_t>(~ones_sum(f.data() + l4, l4_len, pseudo));
  put16(f, l4 + (proto == 17 ? 6 : 16), proto == 17 && sum == 0 ? 0xFFFF : sum);
  return f;
}

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

std::vector<uint8_t> dns_query(uint8_t b) {
  std::vector<uint8_t> m = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
  for (uint8_t c : {uint8_t{3}, uint8_t{'a'}, b, uint8_t{'z'}, uint8_t{4}, uint8_t{'t'}, uint8_t{'e'}, uint8_t{'s'},
                    uint8_t{'t'}, uint8_t{0}})
    m.push_back(c);
  append16(m, 1);  // A
  append16(m, 1);  // IN
  return m;
}

std::vector<uint8_t> client_hello(uint8_t b) {
  const std::vector<uint8_t> name = {'s', b, 't'};
  std::vector<uint8_t> ext;
  append16(ext, 0);  // server_name
  append16(ext, static_cast<uint16_t>(name.size() + 5));
  append16(ext, static_cast<uint16_t>(name.size() + 3));
  ext.push_back(0);  // host_name
  append16(ext, static_cast<uint16_t>(name.size()));
  ext.insert(ext.end(), name.begin(), name.end());
  std::vector<uint8_t> body = {3, 3};
  body.insert(body.end(), 32, 0x5A);  // random
  body.push_back(0);                  // session id
  append16(body, 2);
  append16(body, 0x1301);
  body.push_back(1);
  body.push_back(0);  // compression: null
  append16(body, static_cast<uint16_t>(ext.size()));
  body.insert(body.end(), ext.begin(), ext.end());
  std::vector<uint8_t> rec = {22, 3, 1};
  append16(rec, static_cast<uint16_t>(body.size() + 4));
  rec.push_back(1);  // ClientHello
  rec.push_back(0);
  append16(rec, static_cast<uint16_t>(body.size()));
  rec.insert(rec.end(), body.begin(), body.end());
  return rec;
}

// Ports that say which packet a record came from: the byte value is the
// source port's low byte.
constexpr uint16_t kDnsPort = 10000, kHostPort = 20000, kPathPort = 30000, kTlsPort = 40000;

void write_pcap(const std::string& path, const std::vector<std::vector<uint8_t>>& frames) {
  std::ofstream out(path, std::ios::binary);
  const uint32_t header[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};
  out.write(reinterpret_cast<const char*>(header), sizeof header);
  uint32_t t = 0;
  for (const auto& f : frames) {
    const uint32_t rec[4] = {1700000000, t++, static_cast<uint32_t>(f.size()), static_cast<uint32_t>(f.size())};
    out.write(reinterpret_cast<const char*>(rec), sizeof rec);
    out.write(reinterpret_cast<const char*>(f.data()), static_cast<std::streamsize>(f.size()));
  }
}

// Every byte value in the DNS qname, the HTTP Host, the HTTP path and the
// TLS SNI, one packet each.
std::string every_byte_capture() {
  std::vector<std::vector<uint8_t>> frames;
  for (int v = 0; v < 256; ++v) {
    const auto b = static_cast<uint8_t>(v);
    const auto c = static_cast<char>(v);
    frames.push_back(frame(17, static_cast<uint16_t>(kDnsPort + v), 53, dns_query(b)));
    frames.push_back(frame(6, static_cast<uint16_t>(kHostPort + v), 80,
                           bytes(std::string("GET /index HTTP/1.1\r\nHost: h") + c + "i\r\n\r\n")));
    frames.push_back(frame(6, static_cast<uint16_t>(kPathPort + v), 80,
                           bytes(std::string("GET /p") + c + "q HTTP/1.1\r\nHost: x\r\n\r\n")));
    frames.push_back(frame(6, static_cast<uint16_t>(kTlsPort + v), 443, client_hello(b)));
  }
  const std::string path = tmp_path("every-byte.pcap");
  write_pcap(path, frames);
  return path;
}

// The rule for one byte between printable ASCII letters, written out by
// hand: no single byte of 0x80.. is a whole UTF-8 sequence.
std::string escaped(int v) {
  if (v == '\\') return "\\\\";
  if (v >= 0x20 && v <= 0x7E) return std::string(1, static_cast<char>(v));
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", v);
  return buf;
}

TEST(RunOutputs, NamesOfEveryByteValueAreEscapedInTheReportAndThePrintout) {
  const std::string capture = every_byte_capture(), report = tmp_path("every-byte.json");
  const Outcome o = run_cli("--rx pcap:" + capture + " --json " + report + " --print dns,http,tls");
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(o.status, 0) << o.err;
  const json r = json::parse(read_file(report));  // throws (fails the test) on a file that is not JSON
  EXPECT_EQ(r["schema_version"], 4);
  EXPECT_EQ(r["run"]["packets"], 4 * 256);

  std::map<int, std::string> qname, host, path, sni;
  for (const json& d : r["dns"]) qname[d["sport"].get<int>() - kDnsPort] = d["qname"];
  for (const json& h : r["http"]) {
    const int port = h["sport"].get<int>();
    if (port >= kPathPort) path[port - kPathPort] = h["path"];
    else host[port - kHostPort] = h["host"];
  }
  for (const json& t : r["tls"]) sni[t["sport"].get<int>() - kTlsPort] = t["sni"];
  ASSERT_EQ(qname.size(), 256u);
  ASSERT_EQ(host.size(), 256u);
  ASSERT_EQ(sni.size(), 256u);
  // A space, CR or LF ends the request target: no request line, no record.
  ASSERT_EQ(path.size(), 253u);
  for (int v = 0; v < 256; ++v) {
    SCOPED_TRACE("byte 0x" + std::to_string(v));
    EXPECT_EQ(qname[v], "a" + escaped(v) + "z.test");
    // CR and LF end the Host header's value.
    EXPECT_EQ(host[v], v == '\r' || v == '\n' ? "h" : "h" + escaped(v) + "i");
    if (v != ' ' && v != '\r' && v != '\n') {
      EXPECT_EQ(path[v], "/p" + escaped(v) + "q");
    }
    EXPECT_EQ(sni[v], "s" + escaped(v) + "t");
    EXPECT_NE(o.out.find(" query a" + escaped(v) + "z.test type 1 "), std::string::npos);
    EXPECT_NE(o.out.find(" sni s" + escaped(v) + "t\n"), std::string::npos);
  }
  // No control byte of a name reaches the terminal: stdout holds none but
  // the line ends.
  for (char c : o.out) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << int(c);
  fs::remove(capture);
  fs::remove(report);
}

// The fields of a CSV line without quoting, an empty last field included.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1)
    out.push_back(line.substr(start, comma - start));
  out.push_back(line.substr(start));
  return out;
}

// The flow export holds no text from the wire (addresses, ports, counters,
// names of gnio's own): the capture of every byte value in each name gives a
// CSV of one line per flow with the header's 17 fields, and JSON lines that
// parse, both with the flows the capture holds.
TEST(RunOutputs, TheFlowExportOfNamesOfEveryByteValueIsWellFormed) {
  const std::string capture = every_byte_capture(), csv = tmp_path("every-byte.csv"),
                    jsonl = tmp_path("every-byte.jsonl");
  const Outcome c = run_cli("--rx pcap:" + capture + " --flows-out " + csv);
  if (c.status == 77) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(c.status, 0) << c.err;
  const Outcome j = run_cli("--rx pcap:" + capture + " --flows-out " + jsonl);
  ASSERT_EQ(j.status, 0) << j.err;

  // One flow per packet: each has a source port of its own.
  constexpr size_t kFlows = 4 * 256;
  std::ifstream in_csv(csv);
  std::string header;
  ASSERT_TRUE(std::getline(in_csv, header));
  EXPECT_EQ(header,
            "snapshot,at_s,version,proto,a,port_a,b,port_b,packets_ab,bytes_ab,packets_ba,bytes_ba,first_ns,last_ns,"
            "tcp_flags_ab,tcp_flags_ba,tcp_state,tunnel,tunnel_id");
  std::map<uint32_t, std::string> csv_proto;  // by the port that is not 53, 80 or 443
  for (std::string line; std::getline(in_csv, line);) {
    const std::vector<std::string> f = csv_fields(line);
    ASSERT_EQ(f.size(), 19u) << line;
    EXPECT_EQ(f[17] + "/" + f[18], "none/") << line;
    EXPECT_EQ(f[0], "0") << line;
    EXPECT_EQ(f[2], "4") << line;
    EXPECT_TRUE((f[4] == "10.1.0.1" && f[6] == "10.1.0.2") || (f[4] == "10.1.0.2" && f[6] == "10.1.0.1")) << line;
    EXPECT_EQ(f[8] + "/" + f[10], f[4] == "10.1.0.1" ? "1/0" : "0/1") << line;
    const uint32_t port = static_cast<uint32_t>(std::stoul(f[4] == "10.1.0.1" ? f[5] : f[7]));
    csv_proto[port] = f[3];
  }
  EXPECT_EQ(csv_proto.size(), kFlows);
  for (int v = 0; v < 256; ++v) {
    EXPECT_EQ(csv_proto[kDnsPort + v], "udp") << v;
    EXPECT_EQ(csv_proto[kTlsPort + v], "tcp") << v;
  }

  std::ifstream in_jsonl(jsonl);
  std::map<uint32_t, std::string> json_proto;
  for (std::string line; std::getline(in_jsonl, line);) {
    const json f = json::parse(line);  // throws (fails the test) on a line that is not JSON
    EXPECT_EQ(f["snapshot"], 0);
    EXPECT_EQ(f["version"], 4);
    const bool a_sent = f["a"] == "10.1.0.1";
    json_proto[f[a_sent ? "port_a" : "port_b"].get<uint32_t>()] = f["proto"];
  }
  EXPECT_EQ(json_proto, csv_proto);
  fs::remove(capture);
  fs::remove(csv);
  fs::remove(jsonl);
}

// ---- outputs that cannot be written ---------------------------------------

// The summary's first line: "N packets, B bytes in ...".
uint64_t summary_packets(const std::string& out) {
  const size_t at = out.find(" packets, ");
  if (at == std::string::npos) return UINT64_MAX;
  size_t begin = out.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return std::stoull(out.substr(begin, at - begin));
}

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST(RunOutputs, AFullDiskForTheReportIsReportedAndTheRestIsWritten) {
  const std::string dns = kData + "/captures/dns.pcap", good = tmp_path("good.json"), flows = tmp_path("flows.csv");
  const Outcome ok = run_cli("--rx pcap:" + dns + " --json " + good);
  if (ok.status == 77) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(ok.status, 0) << ok.err;
  const json r = json::parse(read_file(good));
  const uint64_t tracked = r["flows"]["tracked"];
  ASSERT_GT(tracked, 0u);

  const Outcome full = run_cli("--rx pcap:" + dns + " --json /dev/full --flows-out " + flows);
  EXPECT_EQ(full.status, 1) << full.err;
  EXPECT_NE(full.err.find("--json /dev/full: " + std::string(std::strerror(ENOSPC))), std::string::npos) << full.err;
  EXPECT_NE(full.err.find("free space"), std::string::npos) << full.err;
  EXPECT_EQ(summary_packets(full.out), r["run"]["packets"].get<uint64_t>()) << full.out;
  // The CSV header and one line per flow of the final snapshot.
  EXPECT_EQ(lines(read_file(flows)), tracked + 1);
  fs::remove(good);
  fs::remove(flows);
}

TEST(RunOutputs, AReportPathTooLongIsReportedAndTheRestIsWritten) {
  const std::string dns = kData + "/captures/dns.pcap", flows = tmp_path("flows.jsonl");
  const std::string long_name = fs::temp_directory_path().string() + "/" + std::string(300, 'n') + ".json";
  const Outcome o = run_cli("--rx pcap:" + dns + " --json " + long_name + " --flows-out " + flows);
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("cannot open --json " + long_name + ": " + std::strerror(ENAMETOOLONG)), std::string::npos)
      << o.err;
  EXPECT_NE(summary_packets(o.out), UINT64_MAX) << o.out;
  // JSON lines, each a flow of the final snapshot.
  std::ifstream in(flows);
  size_t n = 0;
  for (std::string line; std::getline(in, line); ++n) EXPECT_EQ(json::parse(line)["snapshot"], 0) << line;
  EXPECT_GT(n, 0u);
  fs::remove(flows);
}

TEST(RunOutputs, AFullDiskForTheFlowExportIsReportedAndTheRestIsWritten) {
  const std::string dns = kData + "/captures/dns.pcap", report = tmp_path("flows-full.json");
  const Outcome o = run_cli("--rx pcap:" + dns + " --flows-out /dev/full --json " + report);
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("writing the flow export: IO_ERROR [app]: cannot write --flows-out /dev/full: " +
                       std::string(std::strerror(ENOSPC)) + " (errno " + std::to_string(ENOSPC) +
                       "); free space on its file system, or give a path on another one"),
            std::string::npos)
      << o.err;
  const json r = json::parse(read_file(report));
  EXPECT_GT(r["run"]["packets"].get<uint64_t>(), 0u);
  EXPECT_EQ(summary_packets(o.out), r["run"]["packets"].get<uint64_t>()) << o.out;
  fs::remove(report);
}

// A pipe whose reader went away before gnio wrote (`gnio run ... | head -c 1`
// once head has exited): the --print lines and the summary cannot reach it.
// The error names standard output and the reason, the summary goes to
// stderr, the report is written, and the exit status is 1.
TEST(RunOutputs, AClosedPipeAsStandardOutputIsReportedAndTheRestIsWritten) {
  const std::string dns = kData + "/captures/dns.pcap", report = tmp_path("closed-pipe.json");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  const Outcome o = run_cli_writing_to("--rx pcap:" + dns + " --print dns --json " + report, fds[1]);
  close(fds[1]);
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("printing the summary: IO_ERROR [app]: cannot write standard output (the --print lines and "
                       "the summary): " +
                       std::string(std::strerror(EPIPE)) + " (errno " + std::to_string(EPIPE) +
                       "); the program reading the pipe went away"),
            std::string::npos)
      << o.err;
  const json r = json::parse(read_file(report));
  EXPECT_GT(r["dns"].size(), 0u);
  const std::string on_stderr = "the summary, on standard error:\n";
  const size_t at = o.err.find(on_stderr);
  ASSERT_NE(at, std::string::npos) << o.err;
  EXPECT_EQ(summary_packets(o.err.substr(at + on_stderr.size())), r["run"]["packets"].get<uint64_t>()) << o.err;
  fs::remove(report);
}

// Standard output redirected to a full disk: the same, with its reason.
TEST(RunOutputs, AFullDiskAsStandardOutputIsReportedAndTheRestIsWritten) {
  const std::string dns = kData + "/captures/dns.pcap", report = tmp_path("stdout-full.json");
  const int full = open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0) << std::strerror(errno);
  const Outcome o = run_cli_writing_to("--rx pcap:" + dns + " --json " + report, full);
  close(full);
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("cannot write standard output (the --print lines and the summary): " +
                       std::string(std::strerror(ENOSPC))),
            std::string::npos)
      << o.err;
  const json r = json::parse(read_file(report));
  const size_t at = o.err.find("the summary, on standard error:\n");
  ASSERT_NE(at, std::string::npos) << o.err;
  EXPECT_EQ(summary_packets(o.err.substr(at)), r["run"]["packets"].get<uint64_t>()) << o.err;
  fs::remove(report);
}

// The replies' output (--tx pcap-out) on a full disk: reported as what it
// is, and the summary and the report still cover the run and its replies.
TEST(RunOutputs, AFullDiskForTheRepliesIsReportedAndTheRestIsWritten) {
  const std::string ping = kData + "/captures/ping.pcap", report = tmp_path("replies-full.json");
  const Outcome o = run_cli("--rx pcap:" + ping +
                            " --tx pcap-out:/dev/full --ip 10.77.0.1 --ip fd77::1 --mac 02:00:00:00:00:01 --json " +
                            report);
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("writing the replies to --tx pcap-out:/dev/full"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("'/dev/full' failed after "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(std::strerror(ENOSPC)), std::string::npos) << o.err;
  const json r = json::parse(read_file(report));
  EXPECT_EQ(summary_packets(o.out), r["run"]["packets"].get<uint64_t>()) << o.out;
  // ping.pcap: 6 ICMP and 4 ICMPv6 echo requests, an ARP request and a
  // neighbour solicitation, each answered.
  EXPECT_EQ(r["replies"]["tx_submitted"], 12);
  EXPECT_NE(o.out.find("tx: submitted 12 "), std::string::npos) << o.out;
  fs::remove(report);
}

// ---- a capture cut in its last record ---------------------------------------

struct Cut {
  std::string path;
  uint64_t whole_records = 0;
  uint64_t cut_offset = 0;  // where the cut record starts
  uint32_t cut_caplen = 0;  // the cut record's captured length, and the bytes of it left
  uint32_t cut_left = 0;
};

// dns.pcap cut in the middle of its last record's frame bytes; the records
// are counted from the file's own headers (classic pcap, either byte order).
Cut cut_capture() {
  const std::string d = read_file(kData + "/captures/dns.pcap");
  uint32_t magic;
  std::memcpy(&magic, d.data(), 4);
  const bool swapped = magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1;
  auto u32 = [&](size_t at) {
    uint32_t x;
    std::memcpy(&x, d.data() + at, 4);
    return swapped ? __builtin_bswap32(x) : x;
  };
  size_t off = 24, last = 24;
  uint64_t records = 0;
  while (off + 16 <= d.size()) {
    last = off;
    off += 16 + u32(off + 8);
    ++records;
  }
  Cut c;
  c.path = tmp_path("cut.pcap");
  c.whole_records = records - 1;
  c.cut_offset = last;
  c.cut_caplen = u32(last + 8);
  c.cut_left = c.cut_caplen / 2;
  std::ofstream(c.path, std::ios::binary) << d.substr(0, last + 16 + c.cut_left);
  return c;
}

TEST(RunOutputs, ACaptureCutInItsLastRecordIsReportedAndSummarised) {
  const Cut cut = cut_capture();
  ASSERT_GT(cut.whole_records, 10u);
  const std::string report = tmp_path("cut.json");
  const Outcome o = run_cli("--rx pcap:" + cut.path + " --json " + report);
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(o.status, 1) << o.err;
  // The file, the record's byte offset and what libpcap said.
  const std::string said = "pcap: cannot read record " + std::to_string(cut.whole_records) + " at byte offset " +
                           std::to_string(cut.cut_offset) + " of '" + cut.path + "': truncated dump file; tried to read " +
                           std::to_string(cut.cut_caplen) + " captured bytes, only got " + std::to_string(cut.cut_left);
  EXPECT_NE(o.err.find("reading --rx pcap:" + cut.path + " (the summary and the report cover the frames before the "
                       "error): IO_ERROR [backend]: " + said),
            std::string::npos)
      << o.err;
  EXPECT_EQ(summary_packets(o.out), cut.whole_records) << o.out;
  EXPECT_NE(o.out.find("(input error)"), std::string::npos) << o.out;
  const std::string text = read_file(report);
  ASSERT_FALSE(text.empty()) << o.err;
  const json r = json::parse(text);
  EXPECT_EQ(r["run"]["stop_reason"], "input error");
  EXPECT_EQ(r["run"]["packets"], cut.whole_records);
  EXPECT_EQ(r["run"]["input_error"].get<std::string>().rfind(said, 0), 0u) << r["run"]["input_error"];
  fs::remove(cut.path);
  fs::remove(report);
}

// --print writes an endpoint as the report's address and port, an IPv6
// address in brackets (RFC 3986) so that the port cannot be read as a group.
TEST(RunOutputs, PrintedEndpointsBracketIpv6Addresses) {
  const std::string report = tmp_path("endpoints.json");
  const Outcome o = run_cli("--rx pcap:" + kData + "/captures/dns.pcap --json " + report + " --print dns");
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(o.status, 0) << o.err;
  const json r = json::parse(read_file(report));
  auto endpoint = [](const json& d, const char* addr, const char* port) {
    const std::string a = d[addr].get<std::string>();
    return (a.find(':') == std::string::npos ? a : "[" + a + "]") + ":" + std::to_string(d[port].get<int>());
  };
  size_t v6 = 0;
  for (const json& d : r["dns"]) {
    if (d["src"].get<std::string>().find(':') != std::string::npos) ++v6;
    const std::string line = "dns  " + endpoint(d, "src", "sport") + " -> " + endpoint(d, "dst", "dport") +
                             (d["response"].get<bool>() ? " response " : " query ") + d["qname"].get<std::string>();
    EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  }
  EXPECT_GT(v6, 0u) << "the capture has DNS over IPv6";
  fs::remove(report);
}

}  // namespace
