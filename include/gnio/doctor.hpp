// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief The environment doctor (`gnio doctor`): the environment
/// preconditions of GPU-initiated networking as one check per row (what
/// must be true, what was found, PASS/WARN/FAIL/SKIP, the fix).
///
/// Every input comes from an Environment of file-system roots, tool paths
/// and injected CUDA facts, so that tests can fake each one. Host only.
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

/// @brief The environment doctor: checks of the machine's preconditions,
/// and the version helpers and compatibility tables they use.
namespace gnio::doctor {

/// @brief What the CUDA runtime and driver said, captured once.
struct CudaFacts {
  bool built_with_cuda = false;         ///< gnio was compiled with CUDA (GNIO_HAVE_CUDA).
  CudaRuntimeInfo runtime;              ///< Runtime and driver versions, init error.
  std::vector<CudaDeviceInfo> devices;  ///< As list_cuda_devices() returned them.
  std::string devices_error;            ///< The list_cuda_devices() failure, if any.
  /// Makes a device current (cudaSetDevice) and says whether that worked;
  /// empty when gnio was built without CUDA.
  std::function<Status(int ordinal)> set_device;
};

/// @brief Everything the checks read: file-system roots, tools and CUDA
/// facts. Environment::real() describes the live machine; tests fill in
/// fakes.
struct Environment {
  std::string sys_root = "/sys";    ///< Where sysfs is (PCIe topology, IOMMU, modules, hugepages).
  std::string proc_root = "/proc";  ///< Where procfs is (driver version, capabilities, limits).
  std::string cuda_root;            ///< The CUDA toolkit root; empty when none was found.
  std::string pkg_config_path;      ///< PKG_CONFIG_PATH for the DOCA queries.
  bool pkg_config_system_dirs = true;  ///< False: pkg-config searches pkg_config_path only.
  std::string pkg_config = "pkg-config";  ///< The pkg-config program to run.
  std::string compat_dir;           ///< Directory of the compatibility tables; empty: those built into gnio from data/compat.
  std::string cuda_module_loading;  ///< CUDA_MODULE_LOADING as this process sees it; empty: unset.
  CudaFacts cuda;                   ///< What the CUDA runtime and driver said.
  /// Opens a queue spec and returns its capabilities (EthDevice::open());
  /// empty: the NIC checks have no NIC to open.
  std::function<Result<EthCaps>(std::string_view spec)> open_nic;

  /// @brief The live machine: /sys, /proc, the toolkit find_cuda_root()
  ///        finds, PKG_CONFIG_PATH, CUDA_MODULE_LOADING, the CUDA runtime (queried now) and
  ///        EthDevice::open().
  /// @return The environment.
  static Environment real();
};

/// @brief Where this machine's CUDA toolkit is: $CUDA_HOME, $CUDA_PATH,
///        /usr/local/cuda, or the directory above the `bin/` holding the
///        first `nvcc` on PATH (symbolic links resolved), in that order.
/// @return The first that exists; empty when none.
std::string find_cuda_root();

/// @brief What the user is about to drive, which some checks depend on.
struct Request {
  std::string nic_spec;      ///< The queue spec; empty: none named (NIC checks SKIP).
  std::string gpu = "auto";  ///< Bus id, "auto" or "cpu".
  uint64_t ring_bytes = 0;   ///< Pinned ring bytes the run will lock; 0: not given.
};

/// @brief The outcome of one check.
enum class State : uint8_t {
  Pass,  ///< The requirement holds.
  Warn,  ///< It holds, but something deserves a look (the fix says what).
  Fail,  ///< It does not hold: the run will fail; the fix says what to do.
  Skip,  ///< Not applicable here, or cannot be checked (e.g. no NIC named).
};
/// @brief The upper-case name of a state, as the table prints it.
/// @param s The state.
/// @return "PASS", "WARN", "FAIL" or "SKIP".
std::string_view state_name(State s) noexcept;

/// @brief The result of one check: one row of `gnio doctor`.
struct CheckResult {
  std::string id;           ///< Stable id, e.g. "cuda.driver".
  std::string requirement;  ///< What must be true.
  State state = State::Skip;  ///< The outcome.
  std::string found;        ///< What was found, with the values.
  std::string fix;          ///< What to do; empty when nothing is to be done.
};

/// @brief One registered check.
struct CheckInfo {
  std::string_view id;           ///< Stable id, e.g. "host.memlock".
  std::string_view requirement;  ///< What must be true.
  /// Runs the check; it fills state, found and fix (id and requirement are
  /// set by run_check(), run_all() and run_some()).
  CheckResult (*run)(const Environment&, const Request&);
};

/// @brief Every check, in the order `gnio doctor` prints them.
/// @return The static registry.
std::span<const CheckInfo> checks() noexcept;
/// @brief Runs one check by id.
/// @param id A check id, e.g. "cuda.driver".
/// @param env The environment to check.
/// @param req What the user is about to drive.
/// @return The result, or NotFound (listing the check ids) for an unknown id.
Result<CheckResult> run_check(std::string_view id, const Environment& env, const Request& req);
/// @brief Runs every check.
/// @param env The environment to check.
/// @param req What the user is about to drive.
/// @return One result per check, in checks() order.
std::vector<CheckResult> run_all(const Environment& env, const Request& req);
/// @brief Runs the checks named in `ids`.
/// @param ids Check ids; unknown ids are ignored.
/// @param env The environment to check.
/// @param req What the user is about to drive.
/// @return One result per named check, in checks() order (not in `ids` order).
std::vector<CheckResult> run_some(std::span<const std::string_view> ids, const Environment& env, const Request& req);

/// @brief The exit status of `gnio doctor`.
/// @param results The results.
/// @return 0 when no check FAILs, 1 otherwise.
int exit_code(const std::vector<CheckResult>& results) noexcept;
/// @brief The table `gnio doctor` prints: state, id and requirement, what
///        was found and the fix per check, then a summary line.
/// @param results The results.
/// @return Multi-line text.
std::string format_table(const std::vector<CheckResult>& results);
/// @brief The JSON of a doctor run:
///        `{"schema_version":1,"checks":[...],"summary":{...},"exit_code":N}`.
/// @param results The results.
/// @param indent Spaces per level; -1 for one line.
/// @return The JSON text.
std::string to_json(const std::vector<CheckResult>& results, int indent = 2);

/// @brief Compares dotted versions numerically ("580.65.06" vs "580").
///
/// Missing components count as 0; parsing stops at the first component
/// that is not a number.
/// @param a The first version.
/// @param b The second version.
/// @return Less than 0, 0 or greater than 0 as `a` is older than, equal to
///         or newer than `b`.
int compare_versions(std::string_view a, std::string_view b);
/// @brief The toolkit version in `nvcc --version` output.
/// @param text The output, e.g. containing "release 13.0, V13.0.88".
/// @return "13.0.88" (or "13.0" without the V part); empty when absent.
std::string parse_nvcc_version(std::string_view text);
/// @brief The kernel module version in /proc/driver/nvidia/version.
/// @param text The file's text.
/// @return The first dotted number after "Kernel Module", e.g. "580.65.06";
///         empty when absent.
std::string parse_nvidia_driver_version(std::string_view text);
/// @brief A CUDA version number as text.
/// @param version As cudaRuntimeGetVersion gives it: 1000 * major + 10 * minor.
/// @return "13.0" for 13000, "12.4" for 12040; "" for 0 or less.
std::string cuda_version_text(int version);

/// @brief A row of data/compat/cuda_driver.json: the driver a toolkit
/// release needs.
struct ToolkitDriverRow {
  std::string toolkit;     ///< Toolkit major.minor, e.g. "13.0".
  std::string min_driver;  ///< The minimum driver for full support, e.g. "580.65.06".
};
/// @brief A row of the minor-version-compatibility table: the driver a CUDA
/// major needs to run any of its minor releases.
struct MinorCompatRow {
  int cuda_major = 0;      ///< The CUDA major version.
  std::string min_driver;  ///< The minimum driver for minor-version compatibility.
};
/// @brief A row of data/compat/doca_cuda.json: the CUDA toolkits a range of
/// DOCA releases supports.
struct DocaCudaRow {
  std::string doca_min;    ///< First DOCA version of the range (inclusive), e.g. "2.0".
  std::string doca_below;  ///< End of the DOCA range (exclusive), e.g. "3.0".
  std::string cuda_min;    ///< First supported CUDA version (inclusive).
  std::string cuda_below;  ///< End of the supported CUDA range (exclusive).
  std::string note;        ///< Remark shown with the verdict; may be empty.
};

/// @brief The compatibility tables of data/compat: toolkit vs driver, minor
/// version compatibility, and DOCA vs CUDA.
class CompatTables {
 public:
  /// @brief Loads the tables.
  /// @param dir Empty: the tables compiled into gnio; otherwise a directory
  ///        holding cuda_driver.json and doca_cuda.json.
  /// @return The tables, or: NotFound when a file cannot be read;
  ///         InvalidValue (naming the file) when one is not the expected JSON.
  static Result<CompatTables> load(const std::string& dir = {});

  /// @brief The toolkit-to-driver rows.
  /// @return The rows, in file order.
  const std::vector<ToolkitDriverRow>& toolkit_driver() const noexcept { return toolkit_driver_; }
  /// @brief The minor-version-compatibility rows.
  /// @return The rows, in file order.
  const std::vector<MinorCompatRow>& minor_compat() const noexcept { return minor_compat_; }
  /// @brief The DOCA-to-CUDA rows.
  /// @return The rows, in file order.
  const std::vector<DocaCudaRow>& doca_cuda() const noexcept { return doca_cuda_; }
  /// @brief Where the toolkit/driver table's data comes from (its "source").
  /// @return The text; empty when the file gives none.
  const std::string& cuda_driver_source() const noexcept { return cuda_driver_source_; }
  /// @brief Where the DOCA/CUDA table's data comes from (its "source").
  /// @return The text; empty when the file gives none.
  const std::string& doca_cuda_source() const noexcept { return doca_cuda_source_; }

  /// @brief The driver a toolkit release needs for full support.
  /// @param toolkit A version with at least major.minor ("13.0", "13.0.88").
  /// @return The row's minimum driver, or std::nullopt when major.minor is
  ///         unlisted or `toolkit` has no minor part.
  std::optional<std::string> min_driver_for(std::string_view toolkit) const;
  /// @brief The minor-version-compatibility minimum of a CUDA major.
  /// @param cuda_major The CUDA major version.
  /// @return The minimum driver, or std::nullopt when unlisted.
  std::optional<std::string> min_driver_minor_compat(int cuda_major) const;
  /// @brief The newest toolkit whose full driver requirement a driver meets.
  /// @param driver A driver version, e.g. "580.65.06".
  /// @return The toolkit (major.minor as listed); empty when none.
  std::string newest_toolkit_for(std::string_view driver) const;
  /// @brief The DOCA row whose range holds a DOCA version.
  /// @param doca_version A DOCA version, e.g. "2.9.1".
  /// @return The first row with doca_min <= version < doca_below; nullptr
  ///         when none. Valid while these tables are alive.
  const DocaCudaRow* doca_row(std::string_view doca_version) const;

 private:
  std::vector<ToolkitDriverRow> toolkit_driver_;
  std::vector<MinorCompatRow> minor_compat_;
  std::vector<DocaCudaRow> doca_cuda_;
  std::string cuda_driver_source_;
  std::string doca_cuda_source_;
};

}  // namespace gnio::doctor
