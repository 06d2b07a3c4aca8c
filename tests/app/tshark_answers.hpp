// SPDX-License-Identifier: Apache-2.0
// tshark's answers for the application's tests. A GPU machine without a
// package manager has no tshark: there GNIO_TSHARK_ANSWERS=DIR replays the
// answers a machine with tshark recorded (GNIO_TSHARK_RECORD=DIR), keyed by
// the file's bytes and the arguments. A missing answer has status 127.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

namespace gnio::apptest {

struct ToolOutput {
  int status = -1;
  std::string text;
};

// A shell command's exit status and output (stderr too, unless it is redirected in `cmd`).
inline ToolOutput run_tool(const std::string& cmd) {
  ToolOutput o;
  const bool quiet = cmd.find("2>/dev/null") != std::string::npos;
  FILE* f = popen((quiet ? cmd : cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) o.text.append(buf.data(), n);
  const int st = pclose(f);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

inline constexpr int kNoTsharkAnswer = 127;

inline ToolOutput tshark_answer(const std::string& file, const std::string& args) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t h = 1469598103934665603ull;  // FNV-1a: the same key on every machine
  for (unsigned char c : bytes + '\0' + args) h = (h ^ c) * 1099511628211ull;
  char key[24];
  std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(h));
  if (const char* dir = std::getenv("GNIO_TSHARK_ANSWERS")) {
    std::ifstream answer(std::string(dir) + "/" + key, std::ios::binary);
    if (!answer) return {kNoTsharkAnswer, "no recorded tshark answer " + std::string(key) + " for " + file};
    return {0, std::string((std::istreambuf_iterator<char>(answer)), std::istreambuf_iterator<char>())};
  }
  ToolOutput o = run_tool("tshark -r " + file + " " + args + " 2>/dev/null");
  if (const char* dir = std::getenv("GNIO_TSHARK_RECORD"); dir != nullptr && o.status == 0) {
    std::filesystem::create_directories(dir);
    std::ofstream(std::string(dir) + "/" + key, std::ios::binary) << o.text;
  }
  return o;
}

// The fields of `s` between each `sep` (tshark's lines and columns); a
// trailing separator gives a last empty field.
inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

}  // namespace gnio::apptest
