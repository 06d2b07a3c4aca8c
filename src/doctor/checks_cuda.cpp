// SPDX-License-Identifier: Apache-2.0
// CUDA and DOCA rows of the environment-precondition matrix: toolkit,
// driver, runtime, their compatibility, DOCA versions, devices.
#include <algorithm>
#include <cstdlib>
#include <regex>

#include "doctor/checks.hpp"
#include "doctor/util.hpp"
#include "gnio/gpu.hpp"

#if GNIO_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gnio::doctor::detail {

namespace {

std::string major_minor(std::string_view v) {
  size_t dot = v.find('.');
  if (dot == std::string_view::npos) return std::string(v);
  size_t dot2 = v.find('.', dot + 1);
  return std::string(v.substr(0, dot2));
}

int major_of(std::string_view v) { return std::atoi(std::string(v).c_str()); }

std::string required_toolkit_hint() {
#if GNIO_HAVE_CUDA
  return "the CUDA toolkit gnio was built with (" + cuda_version_text(CUDART_VERSION) + ")";
#else
  return "a CUDA toolkit";
#endif
}

const char* const kNoCudaNeeded = "the emulated device (--gpu cpu) needs no CUDA";

}  // namespace

ToolkitInfo toolkit_info(const Environment& env, bool run_nvcc) {
  ToolkitInfo t;
  if (env.cuda_root.empty()) return t;
  const std::string& root = env.cuda_root;
  t.root_exists = path_exists(root);
  if (!t.root_exists) return t;

  if (auto vj = read_file(root + "/version.json")) {
    // {"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, ...}
    std::smatch m;
    static const std::regex re(R"re("cuda"\s*:\s*\{[^}]*"version"\s*:\s*"([0-9.]+)")re");
    if (std::regex_search(*vj, m, re)) t.sources.push_back({"version.json", m[1]});
  }
  if (auto vt = read_file(root + "/version.txt")) {
    std::smatch m;
    static const std::regex re(R"re(CUDA Version\s+([0-9.]+))re");
    if (std::regex_search(*vt, m, re)) t.sources.push_back({"version.txt", m[1]});
  }
  if (auto h = read_file(root + "/include/cuda.h")) {
    std::smatch m;
    static const std::regex re(R"re(#define\s+CUDA_VERSION\s+([0-9]+))re");
    if (std::regex_search(*h, m, re)) t.sources.push_back({"cuda.h", cuda_version_text(std::atoi(m[1].str().c_str()))});
  }
  if (run_nvcc) {
    std::string nvcc = root + "/bin/nvcc";
    if (path_exists(nvcc)) {
      CommandResult r = run_command({nvcc, "--version"});
      std::string v = parse_nvcc_version(r.output);
      if (!v.empty()) t.sources.push_back({"nvcc", v});
      else
        t.nvcc_error = r.timed_out ? nvcc + " --version did not finish within 3 s"
                                   : nvcc + " --version printed no release (exit " + std::to_string(r.exit_code) +
                                         "): " + first_line(r.output);
    }
  }
  if (!t.sources.empty()) t.version = t.sources.front().second;
  return t;
}

DocaVersions doca_versions(const Environment& env) {
  DocaVersions d;
  std::vector<std::pair<std::string, std::string>> vars;
  if (!env.pkg_config_path.empty()) vars.emplace_back("PKG_CONFIG_PATH", env.pkg_config_path);
  // Without system dirs only the given path is searched (tests, audits).
  if (!env.pkg_config_system_dirs) vars.emplace_back("PKG_CONFIG_LIBDIR", env.pkg_config_path);
  for (auto [name, out] : {std::pair{"doca-gpunetio", &d.gpunetio}, std::pair{"doca-common", &d.common}}) {
    CommandResult r = run_command({env.pkg_config, "--modversion", name}, vars);
    if (!r.started) {
      d.pkg_config_missing = true;
      return d;
    }
    if (r.exit_code == 0) *out = first_line(r.output);
  }
  return d;
}

CheckResult check_cuda_toolkit(const Environment& env, const Request& req) {
  const char* id = "cuda.toolkit";
  bool cpu = only_emulated(req);
  if (env.cuda_root.empty()) {
    if (cpu) return make(id, State::Skip, "no CUDA toolkit found; " + std::string(kNoCudaNeeded));
    return make(id, State::Fail,
                "no CUDA toolkit found (looked at $CUDA_HOME, $CUDA_PATH, /usr/local/cuda and nvcc on PATH)",
                "install " + required_toolkit_hint() + " or pass --cuda-root DIR; for the emulated device use --gpu cpu");
  }
  ToolkitInfo t = toolkit_info(env, true);
  if (!t.root_exists)
    return make(id, cpu ? State::Warn : State::Fail, "CUDA toolkit root " + env.cuda_root + " does not exist",
                "pass --cuda-root with the directory that holds bin/nvcc and include/cuda.h");
  if (t.sources.empty())
    return make(id, cpu ? State::Warn : State::Fail,
                env.cuda_root + " has no version.json, version.txt, include/cuda.h or working bin/nvcc" +
                    (t.nvcc_error.empty() ? "" : " (" + t.nvcc_error + ")"),
                "reinstall the CUDA toolkit there, or pass --cuda-root with a complete installation");
  std::string found = "CUDA " + t.version + " at " + env.cuda_root + " (";
  bool agree = true;
  for (size_t i = 0; i < t.sources.size(); ++i) {
    found += (i ? ", " : "") + t.sources[i].first + " " + t.sources[i].second;
    if (major_minor(t.sources[i].second) != major_minor(t.version)) agree = false;
  }
  found += ")";
  if (!agree)
    return make(id, State::Warn, "partial or mixed install: " + found,
                "reinstall the toolkit so that nvcc, headers and version files come from one release, or point "
                "--cuda-root at a single installation");
  if (!t.nvcc_error.empty())
    return make(id, State::Warn, found + "; but " + t.nvcc_error, "repair bin/nvcc (reinstall the cuda-nvcc package)");
  if (!path_exists(env.cuda_root + "/bin/nvcc"))
    return make(id, State::Warn, found + "; no bin/nvcc", "install the compiler (cuda-nvcc) to build gnio's kernels");
  return make(id, State::Pass, found);
}

CheckResult check_cuda_driver(const Environment& env, const Request& req) {
  const char* id = "cuda.driver";
  if (only_emulated(req)) return make(id, State::Skip, std::string(kNoCudaNeeded));
  const std::string proc_file = env.proc_root + "/driver/nvidia/version";
  auto text = read_file(proc_file);
  std::string module = text ? parse_nvidia_driver_version(*text) : std::string();
  int api = env.cuda.runtime.driver_version;
  std::string api_text = api > 0 ? "CUDA driver API " + cuda_version_text(api) : "cudaDriverGetVersion reports 0";
  if (module.empty() && api <= 0)
    return make(id, State::Fail,
                "no NVIDIA driver: " + proc_file + " is absent; " +
                    (env.cuda.runtime.error.empty() ? api_text : env.cuda.runtime.error),
                "install and load the NVIDIA driver (modprobe nvidia; nvidia-smi must list the GPU), or use "
                "--gpu cpu for the emulated device");
  if (api <= 0)
    return make(id, State::Fail,
                "kernel module " + module + " is loaded but the CUDA driver library is not usable: " +
                    (env.cuda.runtime.error.empty() ? api_text : env.cuda.runtime.error),
                "install the user-space driver (libcuda.so.1) of the same release " + module +
                    " (e.g. the libnvidia-compute package), and make it visible to the loader");
  if (module.empty())
    return make(id, State::Pass, api_text + "; kernel module version not shown (" + proc_file + " unreadable)");
  return make(id, State::Pass, "kernel module " + module + ", " + api_text);
}

CheckResult check_cuda_runtime(const Environment& env, const Request& req) {
  const char* id = "cuda.runtime";
  if (!env.cuda.built_with_cuda)
    return make(id, only_emulated(req) ? State::Skip : State::Fail,
                "gnio was built without CUDA: only the emulated device (--gpu cpu) can run",
                only_emulated(req) ? "" : "rebuild gnio with a CUDA toolkit (nvcc found by CMake) to drive GPUs");
  int rt = env.cuda.runtime.runtime_version;
  int drv = env.cuda.runtime.driver_version;
  std::string found = "gnio's CUDA runtime " + cuda_version_text(rt);
  if (only_emulated(req)) return make(id, State::Skip, found + "; " + kNoCudaNeeded);
  if (drv <= 0) return make(id, State::Skip, found + "; no driver to run it on (see cuda.driver)");
  found += ", driver supports CUDA " + cuda_version_text(drv);
  if (rt / 1000 > drv / 1000)
    return make(id, State::Fail, found + ": a runtime of a newer CUDA major than the driver cannot start",
                "upgrade the NVIDIA driver to one supporting CUDA " + cuda_version_text(rt) +
                    " (see cuda.driver_compat for the minimum), or rebuild gnio with CUDA " +
                    cuda_version_text(drv));
  if (rt > drv)
    return make(id, State::Warn, found + ": runs through minor-version compatibility (features newer than the "
                                         "driver and newer PTX are unavailable)",
                "upgrade the NVIDIA driver to one that supports CUDA " + cuda_version_text(rt));
  return make(id, State::Pass, found);
}

CheckResult check_cuda_driver_compat(const Environment& env, const Request& req) {
  const char* id = "cuda.driver_compat";
  if (only_emulated(req)) return make(id, State::Skip, std::string(kNoCudaNeeded));
  ToolkitInfo t = toolkit_info(env, false);
  if (t.version.empty()) return make(id, State::Skip, "no CUDA toolkit version (see cuda.toolkit)");
  auto tables = CompatTables::load(env.compat_dir);
  if (!tables) return make(id, State::Fail, tables.status().message(), "restore data/compat or drop --compat-dir");
  const std::string toolkit = major_minor(t.version);
  auto text = read_file(env.proc_root + "/driver/nvidia/version");
  std::string module = text ? parse_nvidia_driver_version(*text) : std::string();
  int api = env.cuda.runtime.driver_version;

  if (module.empty()) {
    if (api <= 0) return make(id, State::Skip, "no NVIDIA driver to compare with CUDA " + toolkit + " (see cuda.driver)");
    std::string found = "CUDA toolkit " + toolkit + ", driver supports CUDA " + cuda_version_text(api) +
                        " (kernel module version unknown)";
    if (major_of(toolkit) > api / 1000)
      return make(id, State::Fail, found + ": the driver is of an older CUDA major",
                  "upgrade the NVIDIA driver to one supporting CUDA " + toolkit);
    if (compare_versions(toolkit, cuda_version_text(api)) > 0)
      return make(id, State::Warn, found + ": minor-version compatibility only",
                  "upgrade the NVIDIA driver to one supporting CUDA " + toolkit);
    return make(id, State::Pass, found);
  }

  auto full = tables->min_driver_for(toolkit);
  auto compat = tables->min_driver_minor_compat(major_of(toolkit));
  std::string newest = tables->newest_toolkit_for(module);
  std::string driver_says = "driver " + module + (newest.empty() ? "" : " (fully supports CUDA <= " + newest + ")");
  if (!full && !compat)
    return make(id, State::Warn,
                "CUDA toolkit " + toolkit + " is not in the compatibility table; " + driver_says,
                "check the CUDA " + toolkit + " release notes for its minimum driver and add a row to "
                "data/compat/cuda_driver.json");
  if (full && compare_versions(module, *full) >= 0)
    return make(id, State::Pass, "CUDA toolkit " + toolkit + " needs driver >= " + *full + "; " + driver_says);
  if (compat && compare_versions(module, *compat) >= 0)
    return make(id, State::Warn,
                "CUDA toolkit " + toolkit + " ships with driver " + (full ? *full : "?") + "; " + driver_says +
                    " runs it only through minor-version compatibility (>= " + *compat + "): limited feature set",
                "upgrade the NVIDIA driver to >= " + (full ? *full : *compat) + " for full CUDA " + toolkit +
                    " support");
  std::string need = compat ? *compat : *full;
  return make(id, State::Fail,
              "CUDA toolkit " + toolkit + " is newer than the driver supports: it needs driver >= " + need +
                  (full && *full != need ? " (>= " + *full + " for full support)" : "") + "; found " + driver_says,
              "upgrade the NVIDIA driver to >= " + (full ? *full : need) +
                  (newest.empty() ? "" : ", or install a CUDA toolkit <= " + newest + " (what this driver supports)"));
}

CheckResult check_doca_versions(const Environment& env, const Request&) {
  const char* id = "doca.versions";
  DocaVersions d = doca_versions(env);
  if (d.pkg_config_missing)
    return make(id, State::Skip, "'" + env.pkg_config + "' cannot be run, so DOCA cannot be looked up",
                "install pkg-config to check a DOCA installation (gnio's own backends do not need DOCA)");
  if (d.gpunetio.empty() && d.common.empty())
    return make(id, State::Skip,
                "DOCA not installed (pkg-config finds neither doca-gpunetio nor doca-common" +
                    (env.pkg_config_path.empty() ? std::string(")") : " with PKG_CONFIG_PATH=" + env.pkg_config_path + ")") +
                    "; gnio's own backends do not need DOCA");
  if (d.gpunetio.empty() || d.common.empty()) {
    bool has_gpunetio = !d.gpunetio.empty();
    return make(id, State::Fail,
                std::string("partial DOCA install: ") + (has_gpunetio ? "doca-gpunetio " + d.gpunetio : "doca-common " + d.common) +
                    " found but " + (has_gpunetio ? "doca-common" : "doca-gpunetio") + " not",
                std::string("install ") + (has_gpunetio ? "doca-sdk-common" : "doca-sdk-gpunetio (libdoca-sdk-gpunetio-dev)") +
                    " of the same DOCA release, or add its pkgconfig directory to PKG_CONFIG_PATH");
  }
  if (d.gpunetio != d.common)
    return make(id, State::Fail, "doca-gpunetio " + d.gpunetio + " != doca-common " + d.common + ": mixed DOCA releases",
                "install one DOCA release for both packages (upgrade the older one); mixed releases fail at link "
                "time or with DRIVER at run time");
  return make(id, State::Pass, "doca-gpunetio " + d.gpunetio + " == doca-common " + d.common);
}

CheckResult check_doca_cuda(const Environment& env, const Request&) {
  const char* id = "doca.cuda";
  DocaVersions d = doca_versions(env);
  if (d.pkg_config_missing || (d.gpunetio.empty() && d.common.empty()))
    return make(id, State::Skip, "DOCA not installed (see doca.versions); gnio's own backends do not need DOCA");
  std::string doca = d.gpunetio.empty() ? d.common : d.gpunetio;
  ToolkitInfo t = toolkit_info(env, false);
  if (t.version.empty())
    return make(id, State::Fail, "DOCA " + doca + " is installed but no CUDA toolkit was found: a partial install",
                "install the CUDA toolkit DOCA " + doca + " supports (see data/compat/doca_cuda.json) or pass "
                "--cuda-root DIR");
  auto tables = CompatTables::load(env.compat_dir);
  if (!tables) return make(id, State::Fail, tables.status().message(), "restore data/compat or drop --compat-dir");
  const std::string cuda = major_minor(t.version);
  const DocaCudaRow* row = tables->doca_row(doca);
  if (row == nullptr)
    return make(id, State::Warn,
                "DOCA " + doca + " has no row in the DOCA/CUDA compatibility table; CUDA toolkit is " + cuda,
                "check the DOCA " + doca + " release notes and the DOCA Compatibility Policy "
                "(https://docs.nvidia.com/doca/sdk/doca-compatibility-policy/index.html) and add a row to "
                "data/compat/doca_cuda.json");
  std::string range = "CUDA >= " + row->cuda_min + " and < " + row->cuda_below;
  if (compare_versions(cuda, row->cuda_min) < 0 || compare_versions(cuda, row->cuda_below) >= 0)
    return make(id, State::Fail,
                "DOCA " + doca + " supports " + range + " but the CUDA toolkit is " + cuda +
                    (row->note.empty() ? "" : " (" + row->note + ")"),
                "install a CUDA toolkit in that range (or a DOCA release that supports CUDA " + cuda +
                    "); a skewed pair fails at link time or with DRIVER from doca_gpu_create");
  return make(id, State::Pass, "DOCA " + doca + " supports " + range + "; CUDA toolkit is " + cuda);
}

CheckResult check_cuda_devices(const Environment& env, const Request& req) {
  const char* id = "cuda.devices";
  if (only_emulated(req)) return make(id, State::Skip, "emulated device requested (--gpu cpu)");
  if (!env.cuda.built_with_cuda)
    return make(id, State::Fail, "gnio was built without CUDA: no CUDA device can be enumerated",
                "rebuild gnio with a CUDA toolkit, or use --gpu cpu");
  if (!env.cuda.devices_error.empty())
    return make(id, State::Fail, env.cuda.devices_error,
                "check that the driver is loaded and matches the runtime (cuda.driver, cuda.runtime); "
                "nvidia-smi -L must list the GPU");
  if (env.cuda.devices.empty())
    return make(id, State::Fail,
                env.cuda.runtime.error.empty() ? "no CUDA device: cudaGetDeviceCount returns 0"
                                               : "no CUDA device: " + env.cuda.runtime.error,
                "load the NVIDIA driver so that nvidia-smi -L lists the GPU (and, in a container, pass the GPU "
                "in), or use --gpu cpu for the emulated device");
  std::string found = std::to_string(env.cuda.devices.size()) + " device(s): ";
  for (size_t i = 0; i < env.cuda.devices.size(); ++i) {
    const auto& d = env.cuda.devices[i];
    found += (i ? "; " : "") + std::string("#") + std::to_string(d.ordinal) + " " + d.bus_id + " " + d.name + " (cc " +
             std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ")";
  }
  return make(id, State::Pass, found);
}

const CudaDeviceInfo* resolve_gpu(const Environment& env, const Request& req, std::string* why) {
  if (env.cuda.devices.empty()) {
    *why = "no CUDA device (see cuda.devices)";
    return nullptr;
  }
  if (req.gpu.empty() || req.gpu == "auto") return &env.cuda.devices.front();
  std::string bus = normalize_bus_id(req.gpu);
  if (bus.empty()) {
    *why = "'" + req.gpu + "' is not a PCIe bus id (dddd:bb:dd.f), 'auto' or 'cpu'";
    return nullptr;
  }
  std::string seen;
  for (const auto& d : env.cuda.devices) {
    if (d.bus_id == bus) return &d;
    seen += (seen.empty() ? "" : ", ") + d.bus_id;
  }
  *why = "bus id " + bus + " matches none of the CUDA devices (" + seen + ")";
  return nullptr;
}

bool only_emulated(const Request& req) {
  for (size_t pos = 0; pos <= req.gpu.size();) {
    const size_t comma = std::min(req.gpu.find(',', pos), req.gpu.size());
    if (!Gpu::names_emulated(std::string_view(req.gpu).substr(pos, comma - pos))) return false;
    pos = comma + 1;
  }
  return true;
}

namespace {

int severity(State s) {
  switch (s) {
    case State::Skip: return 0;
    case State::Pass: return 1;
    case State::Warn: return 2;
    case State::Fail: return 3;
  }
  return 0;
}

}  // namespace

CheckResult per_gpu(const Environment& env, const Request& req, std::string_view id, std::string_view emulated_why,
                    const std::function<CheckResult(const Request&)>& one) {
  if (req.gpu.find(',') == std::string::npos && req.gpu != "all") return one(req);
  auto entries = Gpu::parse_list(req.gpu);
  if (!entries)
    return make(id, State::Fail, entries.status().message(),
                "name GPUs by PCIe bus id, auto, all or cpu:N, separated by single commas");
  if (entries->front() == "all") {
    entries->clear();
    for (const CudaDeviceInfo& d : env.cuda.devices) entries->push_back(d.bus_id);
    if (entries->empty()) return make(id, State::Skip, "--gpu all: no CUDA device (see cuda.devices)");
  }
  Request each = req;
  if (entries->size() == 1) {
    each.gpu = entries->front();
    return one(each);
  }
  CheckResult all = make(id, State::Skip, "");
  bool first = true;
  for (const std::string& gpu : *entries) {
    each.gpu = gpu;
    const CheckResult r = Gpu::names_emulated(gpu) ? make(id, State::Skip, std::string(emulated_why)) : one(each);
    all.found += (all.found.empty() ? "" : "; ") + std::string("[") + gpu + "] " + r.found;
    if (first || severity(r.state) > severity(all.state)) {
      all.state = r.state;
      all.fix = r.fix;
    }
    if (all.fix.empty() && r.state == all.state) all.fix = r.fix;
    first = false;
  }
  return all;
}

namespace {

CheckResult bus_id(const Environment& env, const Request& req) {
  const char* id = "cuda.bus_id";
  std::string why;
  const CudaDeviceInfo* d = resolve_gpu(env, req, &why);
  if (d == nullptr) {
    if (env.cuda.devices.empty()) return make(id, State::Skip, why);
    return make(id, State::Fail, "--gpu " + req.gpu + ": " + why,
                "pass one of the listed bus ids (nvidia-smi -L / cudaDeviceGetPCIBusId print them), or --gpu auto");
  }
  std::string found = "--gpu " + req.gpu + " -> CUDA device #" + std::to_string(d->ordinal) + " " + d->bus_id + " (" +
                      d->name + ")";
  if (!path_exists(env.sys_root + "/bus/pci/devices/" + d->bus_id))
    return make(id, State::Warn, found + "; " + env.sys_root + "/bus/pci/devices/" + d->bus_id + " is missing",
                "mount the host's /sys (containers) so that PCIe placement and link checks can run");
  return make(id, State::Pass, found + "; present in sysfs");
}

CheckResult set_device(const Environment& env, const Request& req) {
  const char* id = "cuda.set_device";
  std::string why;
  const CudaDeviceInfo* d = resolve_gpu(env, req, &why);
  if (d == nullptr) return make(id, State::Skip, "no device to select: " + why);
  if (!env.cuda.set_device) return make(id, State::Skip, "no CUDA runtime to call cudaSetDevice with");
  Status s = env.cuda.set_device(d->ordinal);
  if (!s)
    return make(id, State::Fail, "cudaSetDevice(" + std::to_string(d->ordinal) + ") for " + d->bus_id + ": " + s.message(),
                "check the GPU with nvidia-smi -q -i " + d->bus_id +
                    " (compute mode EXCLUSIVE_PROCESS held by another process, ECC or Xid errors, MIG without an "
                    "instance)");
  return make(id, State::Pass, "cudaSetDevice(" + std::to_string(d->ordinal) + ") succeeded for " + d->bus_id);
}

}  // namespace

CheckResult check_cuda_bus_id(const Environment& env, const Request& req) {
  const char* id = "cuda.bus_id";
  if (only_emulated(req)) return make(id, State::Skip, "emulated device requested (--gpu " + req.gpu + ")");
  return per_gpu(env, req, id, "emulated device", [&](const Request& one) { return bus_id(env, one); });
}

CheckResult check_cuda_set_device(const Environment& env, const Request& req) {
  const char* id = "cuda.set_device";
  if (only_emulated(req)) return make(id, State::Skip, "emulated device requested (--gpu " + req.gpu + ")");
  return per_gpu(env, req, id, "emulated device: no cudaSetDevice",
                 [&](const Request& one) { return set_device(env, one); });
}

// A module cannot be loaded into a context while one of its kernels runs:
// the load waits for it, and a persistent kernel does not end. Lazy loading
// defers every kernel's load to its first launch, so any CUDA code that
// first runs beside gnio's kernels (PyTorch, CuPy, cuBLAS, one's own) hangs.
CheckResult check_cuda_module_loading(const Environment& env, const Request& req) {
  const char* id = "cuda.module_loading";
  if (only_emulated(req)) return make(id, State::Skip, "emulated device requested (--gpu cpu)");
  if (env.cuda.devices.empty()) return make(id, State::Skip, "no CUDA device");
  const std::string& mode = env.cuda_module_loading;
  if (mode == "EAGER") return make(id, State::Pass, "CUDA_MODULE_LOADING=EAGER: kernels are loaded when CUDA starts");
  const std::string found =
      mode.empty() ? "CUDA_MODULE_LOADING is unset, so kernels load lazily (the default since CUDA 12.2)"
                   : "CUDA_MODULE_LOADING=" + mode + ": kernels load lazily";
  return make(id, State::Warn,
              found + "; CUDA code that first runs while a persistent kernel runs waits for it forever",
              "set CUDA_MODULE_LOADING=EAGER where a program runs other CUDA code beside gnio's kernels (the Python "
              "module does so on import), or run that code once before gnio's kernels start; gnio's own tools "
              "need neither");
}

}  // namespace gnio::doctor::detail
