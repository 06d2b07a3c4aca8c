// SPDX-License-Identifier: Apache-2.0
// Running `gnio run packet-processing` from a test: on the emulated device,
// or on a real GPU with GNIO_TEST_GPU=auto (skipped without one); its exit
// status, standard output and standard error.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gnio::apptest {

namespace fs = std::filesystem;

inline const std::string kCli = GNIO_CLI;
inline const std::string kData = GNIO_DATA_DIR;

inline std::string tmp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("gnio-outputs-" + std::to_string(getpid()) + "-" + name)).string();
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Outcome {
  int status = -1;
  std::string out, err;
};

// `gpus`: the --gpu list; empty: cpu, or auto under GNIO_TEST_GPU=auto
// (a list that starts with auto also asks for --require-gpu).
inline std::string run_command(const std::string& args, const std::string& gpus = "") {
  const char* g = std::getenv("GNIO_TEST_GPU");
  const bool real = g != nullptr && std::string(g) == "auto";
  const std::string list = gpus.empty() ? (real ? "auto" : "cpu") : gpus;
  const std::string device = " --gpu " + list + (list.rfind("auto", 0) == 0 ? " --require-gpu" : "");
  return kCli + " run packet-processing --quiet" + device + " " + args;
}

// The command's exit status, stdout and stderr apart.
inline Outcome run_cli(const std::string& args, const std::string& gpus = "") {
  const std::string err = tmp_path("stderr");
  Outcome o;
  FILE* f = popen((run_command(args, gpus) + " 2>" + err).c_str(), "r");
  if (f == nullptr) return o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) o.out.append(buf.data(), n);
  const int st = pclose(f);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  o.err = read_file(err);
  fs::remove(err);
  return o;
}

// The command with `out_fd` as its standard output (a pipe whose reader is
// gone, /dev/full): its exit status and stderr.
inline Outcome run_cli_writing_to(const std::string& args, int out_fd) {
  const std::string err = tmp_path("stderr");
  const std::string command = run_command(args) + " 2>" + err;
  Outcome o;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, STDOUT_FILENO);
    close(out_fd);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int st = 0;
  if (pid > 0 && waitpid(pid, &st, 0) == pid) o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  o.err = read_file(err);
  fs::remove(err);
  return o;
}

}  // namespace gnio::apptest
