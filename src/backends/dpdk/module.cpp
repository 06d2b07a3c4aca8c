// SPDX-License-Identifier: Apache-2.0
// libgnio_dpdk.so, found and loaded, and the EAL brought up through it.
#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "backends/dpdk/internal.hpp"
#include "core/log.hpp"

namespace gnio::backend::dpdk {

namespace {

uint64_t hugepages_total() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "HugePages_Total:") return value;
    in.ignore(256, '\n');
  }
  return 0;
}

bool is_pci_address(const std::string& port) {
  // DDDD:BB:DD.F or BB:DD.F
  const std::string dev = port.substr(0, port.find(','));
  const size_t dot = dev.rfind('.');
  return dot != std::string::npos && dev.find(':') != std::string::npos && dot + 2 == dev.size() &&
         std::isxdigit(static_cast<unsigned char>(dev.back()));
}

}  // namespace

const Module& module() {
  static const Module m = [] {
    Module out;
    std::vector<std::string> tried;
    if (const char* env = std::getenv("GNIO_DPDK_MODULE"); env && *env) tried.emplace_back(env);
    tried.emplace_back(GNIO_DPDK_MODULE_BUILD_PATH);
    tried.emplace_back(GNIO_DPDK_MODULE_INSTALL_PATH);
    tried.emplace_back("libgnio_dpdk.so");  // the loader's search path
    std::string why;
    for (const std::string& path : tried) {
      if (path.find('/') != std::string::npos && !std::filesystem::exists(path)) continue;
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (!h) {
        why += std::string(why.empty() ? "" : "; ") + dlerror();
        continue;
      }
      auto fn = reinterpret_cast<gnio_dpdk_api_fn>(dlsym(h, "gnio_dpdk_api_v1"));
      const gnio_dpdk_api* api = fn ? fn() : nullptr;
      if (!api || api->version != GNIO_DPDK_API_VERSION) {
        why += (why.empty() ? "" : "; ") + path + " is not a gnio " + std::to_string(GNIO_DPDK_API_VERSION) +
               " DPDK module";
        continue;
      }
      out.api = api;
      return out;
    }
    out.error = "cannot load libgnio_dpdk.so (looked for $GNIO_DPDK_MODULE, " GNIO_DPDK_MODULE_BUILD_PATH
                ", " GNIO_DPDK_MODULE_INSTALL_PATH " and the loader's path" +
                (why.empty() ? std::string(")") : "): " + why) +
                "; install gnio's library directory with it, or point GNIO_DPDK_MODULE at the file";
    return out;
  }();
  return m;
}

Status init_eal(const gnio_dpdk_api& api, const Options& o, const std::string& spec_text) {
  static std::mutex mu;
  static bool up = false;
  static std::string used;
  std::lock_guard lock(mu);
  if (up) {
    if (o.eal_given && o.eal != used)
      log::warn("dpdk", spec_text + ": the EAL is already up with '" + used + "'; eal='" + o.eal + "' is not used");
    return Status::ok();
  }
  std::string args = o.eal;
  if (!o.eal_given) {
    // One main lcore, no runtime files or telemetry socket: gnio's engine
    // threads are not EAL lcores, and two gnio processes must not collide.
    args = "-l 0 --no-telemetry --log-level=warning";
    // Only the PCI device the spec names is probed (a virtual device: none),
    // so the EAL never touches the machine's other NICs; a later spec's
    // PCI device is probed when it opens (hotplug).
    args += " -a " + (is_pci_address(o.port) ? o.port.substr(0, o.port.find(',')) : std::string("0000:00:00.0"));
    if (hugepages_total() > 0) {
      args += " --in-memory";
    } else {
      // 22.11 refuses --in-memory with --no-huge (which implies legacy
      // memory); --no-shconf keeps the same promise of no runtime files.
      args += " --no-huge --no-shconf -m 512";
      log::info("dpdk", "no hugepages are reserved (HugePages_Total 0 in /proc/meminfo): the EAL runs with "
                        "--no-huge --no-shconf on 512 MiB of ordinary memory; RX frame data lives in gnio's own "
                        "page-aligned regions either way (reserve hugepages for NICs at line rate)");
    }
  }
  int already = 0;
  char err[GNIO_DPDK_ERR_LEN] = {};
  if (api.eal_init(args.c_str(), &already, err) != 0)
    return Status(Errc::Driver, Layer::Backend,
                  spec_text + ": " + err +
                      "; check the eal= arguments (the EAL can be initialised once per process: restart the program)");
  up = true;
  used = args;
  if (already)
    log::info("dpdk", "the EAL was already initialised in this process; gnio uses it as it is (eal arguments '" +
                          args + "' not applied)");
  else
    log::info("dpdk", "EAL up with '" + args + "'; PMDs come from the EAL's plugin directory (Debian: "
                      "/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0); eal=\"... -d PMD.so\" loads others");
  return Status::ok();
}

}  // namespace gnio::backend::dpdk
