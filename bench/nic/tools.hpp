// SPDX-License-Identifier: Apache-2.0
// Other programs the veth benchmark runs as baselines (xdp-bench,
// xdp-filter, dpdk-testpmd): found on PATH, started as children in the
// calling thread's network namespace, their output collected as it comes.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gnio/status.hpp"

namespace gnio::nicbench {

// The full path of `name` on PATH (and the sbin directories, which root's
// PATH has but a test runner's may not), or "" where there is none.
std::string find_tool(const std::string& name);

// A private mount namespace with a fresh BPF filesystem on /sys/fs/bpf,
// held by a descriptor: libxdp pins its programs and maps there, and a
// machine that has no bpffs mounted stays as it is.
class BpfFsNamespace {
 public:
  BpfFsNamespace() = default;
  static Result<BpfFsNamespace> create();
  BpfFsNamespace(BpfFsNamespace&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  BpfFsNamespace& operator=(BpfFsNamespace&& o) noexcept;
  BpfFsNamespace(const BpfFsNamespace&) = delete;
  BpfFsNamespace& operator=(const BpfFsNamespace&) = delete;
  ~BpfFsNamespace();
  int fd() const { return fd_; }

 private:
  explicit BpfFsNamespace(int fd) : fd_(fd) {}
  int fd_ = -1;
};

struct ChildOptions {
  int mount_ns = -1;     // enter this mount namespace first (-1: this process's)
  bool terminal = false;  // stdin/stdout/stderr on a pseudo-terminal (line-buffered output, interactive tools)
};

// A running child; output is stdout and stderr together. It is killed
// (SIGKILL) when this object goes, and with the bench if the bench dies.
class Child {
 public:
  static Result<std::unique_ptr<Child>> start(const std::vector<std::string>& argv, const ChildOptions& o);
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();
  Status write(const std::string& text);
  std::string output() const;
  // Waits until `done(output)` or the child ended or `seconds` passed; returns done's last answer.
  bool wait_for(const std::function<bool(const std::string&)>& done, double seconds) const;
  // SIGINT, then SIGKILL if it has not ended after `seconds`; the exit status
  // (128 + signal when a signal ended it).
  int interrupt(double seconds);
  // Waits for it to end by itself; SIGKILL after `seconds`.
  int wait(double seconds);
  pid_t pid() const { return pid_; }

 private:
  Child() = default;
  bool running() const;
  void read_output();
  std::string name_;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::thread reader_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::string output_;
  bool closed_ = false;
  mutable int status_ = -1;  // exit status once reaped
};

// Runs a child to its end (SIGKILL after `seconds`): exit status and output.
struct ToolResult {
  int status = -1;
  std::string output;
};
Result<ToolResult> run_tool(const std::vector<std::string>& argv, const ChildOptions& o, double seconds);

// The last `lines` non-empty lines of a tool's output on one line, for a row's status.
std::string last_lines(const std::string& output, size_t lines);
// The number after the last `label` in `text` (spaces and ':' between,
// digits grouped with ',' allowed); false when there is none.
bool number_after(const std::string& text, const std::string& label, uint64_t& value);

}  // namespace gnio::nicbench
