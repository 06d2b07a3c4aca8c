// The environment doctor: the model's environment-precondition matrix as
// one check per row (what must be true, what was found, PASS/WARN/FAIL/SKIP,
// the fix). Every input comes from an Environment of roots and injected
// CUDA facts, so that tests can fake each one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gnio/cuda_info.hpp"
#include "gnio/eth_caps.hpp"
#include "gnio/status.hpp"

namespace gnio::doctor {

// What the CUDA runtime and driver said, captured once.
struct CudaFacts {
  bool built_with_cuda = false;            // gnio compiled with GNIO_HAVE_CUDA
  CudaRuntimeInfo runtime;                 // runtime/driver versions, init error
  std::vector<CudaDeviceInfo> devices;     // as list_cuda_devices() returned them
  std::string devices_error;               // list_cuda_devices() failure, if any
  std::function<Status(int ordinal)> set_device;  // cudaSetDevice; empty when unavailable
};

struct Environment {
  std::string sys_root = "/sys";
  std::string proc_root = "/proc";
  std::string cuda_root;        // CUDA toolkit root; empty when none was found
  std::string pkg_config_path;  // PKG_CONFIG_PATH for the DOCA queries
  bool pkg_config_system_dirs = true;  // false: search pkg_config_path only
  std::string pkg_config = "pkg-config";
  std::string compat_dir;       // empty: the tables built into gnio from data/compat
  CudaFacts cuda;
  // Opens a queue spec and returns its capabilities (EthDevice::open).
  std::function<Result<EthCaps>(std::string_view spec)> open_nic;

  // The live machine: /sys, /proc, the toolkit from CUDA_HOME / CUDA_PATH /
  // /usr/local/cuda / nvcc on PATH, the CUDA runtime, EthDevice::open.
  static Environment real();
};

// Where the toolkit of this machine is, in that order; empty when none.
std::string find_cuda_root();

// What the user is about to drive.
struct Request {
  std::string nic_spec;     // empty: none named
  std::string gpu = "auto"; // bus id, "auto" or "cpu"
  uint64_t ring_bytes = 0;  // pinned ring bytes the run will lock; 0: not given
};

enum class State : uint8_t { Pass, Warn, Fail, Skip };
std::string_view state_name(State s) noexcept;  // "PASS", "WARN", "FAIL", "SKIP"

struct CheckResult {
  std::string id;           // stable: "cuda.driver"
  std::string requirement;  // what must be true
  State state = State::Skip;
  std::string found;        // what was found, with the values
  std::string fix;          // what to do (empty when nothing is to be done)
};

struct CheckInfo {
  std::string_view id;
  std::string_view requirement;
  CheckResult (*run)(const Environment&, const Request&);
};

// Every check, in the order `gnio doctor` prints them.
std::span<const CheckInfo> checks() noexcept;
// One check by id; NotFound for an unknown id.
Result<CheckResult> run_check(std::string_view id, const Environment& env, const Request& req);
std::vector<CheckResult> run_all(const Environment& env, const Request& req);
std::vector<CheckResult> run_some(std::span<const std::string_view> ids, const Environment& env, const Request& req);

// 0 when no check FAILs, 1 otherwise.
int exit_code(const std::vector<CheckResult>& results) noexcept;
std::string format_table(const std::vector<CheckResult>& results);
// {"schema_version":1,"checks":[...],"summary":{...},"exit_code":N}
std::string to_json(const std::vector<CheckResult>& results, int indent = 2);

// ---- version helpers and compatibility tables (data/compat) ----

// Compares dotted versions numerically ("580.65.06" vs "580"): <0, 0, >0.
// Missing components count as 0.
int compare_versions(std::string_view a, std::string_view b);
// "release 13.0, V13.0.88" in `nvcc --version` output -> "13.0.88"
// (or "13.0" without the V part); empty when absent.
std::string parse_nvcc_version(std::string_view text);
// The kernel module version in /proc/driver/nvidia/version -> "580.65.06".
std::string parse_nvidia_driver_version(std::string_view text);
// 13000 -> "13.0"; 0 -> "".
std::string cuda_version_text(int version);

struct ToolkitDriverRow {
  std::string toolkit;     // "13.0"
  std::string min_driver;  // "580.65.06"
};
struct MinorCompatRow {
  int cuda_major = 0;
  std::string min_driver;  // the minimum for minor-version compatibility
};
struct DocaCudaRow {
  std::string doca_min;     // inclusive, "2.0"
  std::string doca_below;   // exclusive, "3.0"
  std::string cuda_min;     // inclusive
  std::string cuda_below;   // exclusive
  std::string note;
};

class CompatTables {
 public:
  // dir empty: the tables compiled into gnio; otherwise dir/cuda_driver.json
  // and dir/doca_cuda.json.
  static Result<CompatTables> load(const std::string& dir = {});

  const std::vector<ToolkitDriverRow>& toolkit_driver() const noexcept { return toolkit_driver_; }
  const std::vector<MinorCompatRow>& minor_compat() const noexcept { return minor_compat_; }
  const std::vector<DocaCudaRow>& doca_cuda() const noexcept { return doca_cuda_; }
  const std::string& cuda_driver_source() const noexcept { return cuda_driver_source_; }
  const std::string& doca_cuda_source() const noexcept { return doca_cuda_source_; }

  // Driver shipped with toolkit major.minor ("13.0"); nullopt when unlisted.
  std::optional<std::string> min_driver_for(std::string_view toolkit) const;
  // The minor-version-compatibility minimum of a CUDA major.
  std::optional<std::string> min_driver_minor_compat(int cuda_major) const;
  // The newest toolkit (major.minor) whose full driver requirement `driver`
  // meets; empty when none.
  std::string newest_toolkit_for(std::string_view driver) const;
  const DocaCudaRow* doca_row(std::string_view doca_version) const;

 private:
  std::vector<ToolkitDriverRow> toolkit_driver_;
  std::vector<MinorCompatRow> minor_compat_;
  std::vector<DocaCudaRow> doca_cuda_;
  std::string cuda_driver_source_;
  std::string doca_cuda_source_;
};

}  // namespace gnio::doctor
