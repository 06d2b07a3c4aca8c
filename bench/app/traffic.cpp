// SPDX-License-Identifier: Apache-2.0
// app_bench's traffic: the captures merged into one pcap that the mem:
// source replays, and the mem: spec every row of a traffic opens.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sections.hpp"
#include "gnio/host_reference.hpp"

using namespace gnio;

namespace app_bench {

Result<std::string> merge_captures(const std::string& dir, std::string& listing) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".pcap") files.push_back(e.path());
  if (ec || files.empty())
    return Status(Errc::NotFound, Layer::App,
                  "no .pcap captures in " + dir + (ec ? " (" + ec.message() + ")" : "") +
                      "; give the folder of the project's captures with --captures DIR");
  std::sort(files.begin(), files.end());
  const std::string out = (std::filesystem::temp_directory_path() / ("gnio-app-bench-" + std::to_string(getpid()) + ".pcap")).string();
  std::ofstream f(out, std::ios::binary);
  auto put32 = [&](uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
  auto put16 = [&](uint16_t v) { f.write(reinterpret_cast<const char*>(&v), 2); };
  put32(0xa1b2c3d4);
  put16(2);
  put16(4);
  put32(0);
  put32(0);
  put32(65535);
  put32(1);  // LINKTYPE_ETHERNET
  for (const auto& p : files) {
    uint64_t n = 0;
    GNIO_TRY(for_each_host_frame("pcap:" + p.string(), [&](const std::vector<uint8_t>& fr) {
      put32(static_cast<uint32_t>(n));
      put32(0);
      put32(static_cast<uint32_t>(fr.size()));
      put32(static_cast<uint32_t>(fr.size()));
      f.write(reinterpret_cast<const char*>(fr.data()), static_cast<std::streamsize>(fr.size()));
      ++n;
    }));
    listing += (listing.empty() ? "" : ", ") + p.filename().string() + " " + std::to_string(n);
  }
  if (!f.flush())
    return Status(Errc::IoError, Layer::App, "cannot write " + out + ": check free space in the temporary folder");
  return out;
}

std::string mem_spec(const Options& o, const Traffic& t) {
  return "mem:" + t.frames + ",count=" + std::to_string(t.packets) + ",ring=" + std::to_string(o.ring) +
         ",queues=" + std::to_string(o.queues);
}

}  // namespace app_bench
