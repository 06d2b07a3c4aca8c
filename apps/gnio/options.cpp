// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

namespace gnio::cli {

void add_target_options(CLI::App* cmd, TargetOptions& t, bool with_ring_bytes) {
  cmd->add_option("--nic", t.nic,
                  "Queue spec of the NIC to drive: pcap:FILE, pcap-out:FILE, pcapng-out:FILE, synthetic:..., loop:, "
                  "afxdp:IFACE, dpdk:...")
      ->type_name("SPEC");
  cmd->add_option("--gpu", t.gpu,
                  "GPU to drive: a PCIe bus id (0000:06:00.0, as nvidia-smi -L prints it), 'auto' (the first CUDA "
                  "device) or 'cpu' (the emulated device)")
      ->type_name("BUSID|auto|cpu")
      ->capture_default_str();
  if (with_ring_bytes)
    cmd->add_option("--ring-bytes", t.ring_bytes,
                    "Bytes of rings the run will pin, checked against RLIMIT_MEMLOCK (suffixes k, m, g: 64m)")
        ->type_name("N")
        ->transform(CLI::AsSizeValue(false));
}

void add_root_options(CLI::App* cmd, RootOptions& r) {
  cmd->add_option("--cuda-root", r.cuda_root,
                  "CUDA toolkit root to check instead of $CUDA_HOME / $CUDA_PATH / /usr/local/cuda / nvcc on PATH")
      ->type_name("DIR");
  cmd->add_option("--sys-root", r.sys_root, "Read sysfs from DIR instead of /sys")->type_name("DIR");
  cmd->add_option("--proc-root", r.proc_root, "Read procfs from DIR instead of /proc")->type_name("DIR");
  cmd->add_option("--pkg-config-path", r.pkg_config_path,
                  "PKG_CONFIG_PATH for the DOCA lookups instead of the inherited one")
      ->type_name("PATH");
  cmd->add_option("--compat-dir", r.compat_dir,
                  "Read cuda_driver.json and doca_cuda.json from DIR instead of the tables built into gnio")
      ->type_name("DIR");
}

doctor::Request make_request(const TargetOptions& t) {
  doctor::Request req;
  req.nic_spec = t.nic;
  req.gpu = t.gpu;
  req.ring_bytes = t.ring_bytes;
  return req;
}

doctor::Environment make_environment(const RootOptions& r) {
  doctor::Environment env = doctor::Environment::real();
  if (!r.cuda_root.empty()) env.cuda_root = r.cuda_root;
  if (!r.sys_root.empty()) env.sys_root = r.sys_root;
  if (!r.proc_root.empty()) env.proc_root = r.proc_root;
  if (!r.pkg_config_path.empty()) env.pkg_config_path = r.pkg_config_path;
  if (!r.compat_dir.empty()) env.compat_dir = r.compat_dir;
  return env;
}

void exit_with(int code) { throw CLI::RuntimeError(code); }

}  // namespace gnio::cli
