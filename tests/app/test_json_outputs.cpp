// SPDX-License-Identifier: Apache-2.0
// The JSON of `gnio caps`, `gnio doctor` and `gnio diagnose` for a NIC spec
// whose file name holds bytes that are not UTF-8 (and controls, quotes,
// backslashes): the spec and every text quoting it are written by
// escape_text()'s rule, the output parses, and a capability snapshot saved
// with such a spec is read back to the very file (`caps --diff` finds no
// difference).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kCli = GNIO_CLI;
const std::string kData = GNIO_DATA_DIR;

struct Outcome {
  int status = -1;
  std::string out, err;
};

std::string read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::string text;
  if (f == nullptr) return text;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) text.append(buf.data(), n);
  std::fclose(f);
  return text;
}

// gnio with these arguments, given as they are (no shell between: any
// bytes reach it): exit status, stdout and stderr apart.
Outcome gnio(const std::vector<std::string>& args) {
  const std::string err = (fs::temp_directory_path() / ("gnio-json-" + std::to_string(getpid()) + ".err")).string();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(kCli.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  Outcome o;
  int out[2];
  if (pipe(out) != 0) return o;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(e, STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    close(e);
    execv(kCli.c_str(), argv.data());
    _exit(127);
  }
  close(out[1]);
  std::array<char, 4096> buf;
  ssize_t n;
  while ((n = read(out[0], buf.data(), buf.size())) > 0) o.out.append(buf.data(), static_cast<size_t>(n));
  close(out[0]);
  int st = 0;
  if (pid > 0 && waitpid(pid, &st, 0) == pid) o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  o.err = read_file(err);
  fs::remove(err);
  return o;
}

// The rule written out by hand for text where no bytes of 0x80.. form a
// whole UTF-8 sequence (as in the names below).
std::string escaped(const std::string& bytes) {
  std::string out;
  for (char ch : bytes) {
    const auto v = static_cast<unsigned char>(ch);
    if (v == '\\') {
      out += "\\\\";
    } else if (v >= 0x20 && v <= 0x7E) {
      out += ch;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", v);
      out += hex;
    }
  }
  return out;
}

// A folder whose name holds every byte 0x01..0x7f a pcap spec can carry
// (not the spec's ',' '"' '=', not '/'), and in it a copy of sample.pcap
// named by the bytes 0x80..0xff in order (no two of which are a UTF-8
// sequence).
class OddName : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string low;
    for (int v = 1; v < 0x80; ++v)
      if (v != '/' && v != ',' && v != '"' && v != '=') low += static_cast<char>(v);
    std::string high;
    for (int v = 0x80; v < 0x100; ++v) high += static_cast<char>(v);
    root_ = fs::temp_directory_path() / ("gnio-json-" + std::to_string(getpid()));
    fs::create_directories(root_ / low);
    path_ = (root_ / low / high).string();
    fs::copy_file(kData + "/sample.pcap", path_);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
  std::string path_;
};

TEST_F(OddName, CapsJsonWritesTheSpecEscapedAndItsSnapshotReadsBackToTheSameFile) {
  const std::string snapshot = (root_ / "snapshot-\xff.json").string();
  const Outcome caps = gnio({"caps", "--nic", "pcap:" + path_, "--gpu", "cpu", "--json", "--save", snapshot});
  ASSERT_EQ(caps.status, 0) << caps.err;
  const json j = json::parse(caps.out);  // throws (fails the test) on text that is not JSON
  EXPECT_EQ(j["nic"]["spec"], "pcap:" + escaped(path_));
  EXPECT_EQ(j["nic"]["state"], "queried");
  EXPECT_EQ(json::parse(read_file(snapshot))["nic"]["spec"], "pcap:" + escaped(path_));

  // The live side opens the spec the snapshot names: the same file.
  const Outcome diff = gnio({"caps", "--diff", snapshot, "--json"});
  EXPECT_EQ(diff.status, 0) << diff.out << diff.err;
  const json d = json::parse(diff.out);
  EXPECT_EQ(d["baseline"], escaped(snapshot));
  EXPECT_EQ(d["changes"], json::array());
  EXPECT_EQ(d["live"]["nic"]["state"], "queried");
}

TEST_F(OddName, CapsJsonOfAFileThatIsNotThereQuotesItEscaped) {
  const std::string missing = path_ + "\xfe";
  const Outcome caps = gnio({"caps", "--nic", "pcap:" + missing, "--gpu", "cpu", "--json"});
  EXPECT_EQ(caps.status, 1) << caps.err;
  const json j = json::parse(caps.out);
  EXPECT_EQ(j["nic"]["state"], "unavailable");
  EXPECT_NE(j["nic"]["error"].get<std::string>().find("capture file '" + escaped(missing) + "' does not exist"),
            std::string::npos)
      << j["nic"]["error"];
  EXPECT_NE(j["features"]["gpu_rx"]["nic"]["reason"].get<std::string>().find("'pcap:" + escaped(missing) + "'"),
            std::string::npos)
      << j["features"]["gpu_rx"];
}

// An afxdp spec also reports its interface: a name of odd bytes is quoted
// escaped there too.
TEST(JsonOutputs, CapsJsonOfAnAfxdpInterfaceOfOddBytesQuotesItEscaped) {
  const Outcome caps = gnio({"caps", "--nic", "afxdp:\x01\xff", "--gpu", "cpu", "--json"});
  EXPECT_EQ(caps.status, 1) << caps.err;
  const json j = json::parse(caps.out);
  EXPECT_EQ(j["nic"]["spec"], "afxdp:\\x01\\xff");
  EXPECT_EQ(j["nic"]["interface"]["interface"], "\\x01\\xff");
  EXPECT_NE(j["nic"]["interface"]["error"].get<std::string>().find("interface '\\x01\\xff' does not exist"),
            std::string::npos)
      << j["nic"]["interface"];
}

TEST_F(OddName, DoctorAndDiagnoseJsonQuoteTheSpecEscaped) {
  const std::string opens = "'pcap:" + escaped(path_) + "' opens: driver pcap";
  const Outcome doctor = gnio({"doctor", "--nic", "pcap:" + path_, "--gpu", "cpu", "--json"});
  const json j = json::parse(doctor.out);
  EXPECT_EQ(j["exit_code"], doctor.status);
  std::string nic_open;
  for (const json& c : j["checks"])
    if (c["id"] == "nic.open") nic_open = c["found"];
  EXPECT_EQ(nic_open.rfind(opens, 0), 0u) << nic_open;

  const Outcome diagnose = gnio({"diagnose", "NOT_SUPPORTED", "--nic", "pcap:" + path_, "--gpu", "cpu", "--json"});
  const json d = json::parse(diagnose.out);
  EXPECT_EQ(d["name"], "NOT_SUPPORTED");
  EXPECT_EQ(d["capabilities"]["nic"]["spec"], "pcap:" + escaped(path_));
  nic_open.clear();
  for (const json& c : d["checks"])
    if (c["id"] == "nic.open") nic_open = c["found"];
  EXPECT_EQ(nic_open.rfind(opens, 0), 0u) << nic_open;
}

}  // namespace
