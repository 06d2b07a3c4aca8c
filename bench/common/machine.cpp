// SPDX-License-Identifier: Apache-2.0
#include "machine.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

namespace gnio::bench {

std::string machine(const Gpu& gpu) {
  utsname u{};
  uname(&u);
  std::string cpu = "unknown CPU", driver = "no NVIDIA driver";
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  std::ifstream d("/proc/driver/nvidia/version");
  if (std::string line; std::getline(d, line)) {
    const size_t k = line.find("Kernel Module");
    driver = k == std::string::npos ? line : line.substr(k);
    driver = driver.substr(0, driver.find("  "));
  }
  const std::string name = gpu.emulated() ? std::string("emulated device (kernels on CPU threads)") : gpu.info().name;
  return "GPU " + name + " (" + gpu.bus_id() + "), driver: " + driver + "; CPU " + cpu + " x " +
         std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + "; kernel " + u.sysname + " " + u.release + " " + u.machine;
}

}  // namespace gnio::bench
