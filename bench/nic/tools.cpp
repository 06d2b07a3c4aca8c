// SPDX-License-Identifier: Apache-2.0
#include "tools.hpp"
#include "traffic.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace gnio::nicbench {

namespace {

int64_t ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What the child does between fork and exec: only async-signal-safe calls
// (the bench has other threads).
[[noreturn]] void exec_child(const char* path, char* const* argv, char* const* envp, int mount_ns, int in, int out,
                             bool terminal) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  setsid();
  if (terminal) ioctl(out, TIOCSCTTY, 0);
  if (mount_ns >= 0 && setns(mount_ns, CLONE_NEWNS) != 0) {
    const char msg[] = "cannot enter the tools' mount namespace\n";
    (void)!::write(out, msg, sizeof msg - 1);
    _exit(126);
  }
  dup2(in, 0);
  dup2(out, 1);
  dup2(out, 2);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(path, argv, envp);
  const char msg[] = "exec failed\n";
  (void)!::write(out, msg, sizeof msg - 1);
  _exit(127);
}

}  // namespace

std::string find_tool(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = std::string(path ? path : "") + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  std::stringstream ss(dirs);
  for (std::string dir; std::getline(ss, dir, ':');) {
    if (dir.empty()) continue;
    const std::string full = dir + "/" + name;
    struct stat st {};
    if (stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(full.c_str(), X_OK) == 0) return full;
  }
  return "";
}

// ---- mount namespace for the tools ---------------------------------------------

BpfFsNamespace& BpfFsNamespace::operator=(BpfFsNamespace&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

BpfFsNamespace::~BpfFsNamespace() {
  if (fd_ >= 0) close(fd_);
}

Result<BpfFsNamespace> BpfFsNamespace::create() {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return os_error("pipe", errno, "check the process's descriptor limit");
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(ready[0]);
    close(ready[1]);
    return os_error("fork", err, "check the process limit");
  }
  if (pid == 0) {
    // A holder: makes the namespace, says so, and waits to be killed. A
    // sysfs mounted here shows the calling thread's network namespace, as
    // `ip netns exec` does; bpffs is a fresh instance of its own.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char step = 'm';
    if (unshare(CLONE_NEWNS) == 0 && (step = 'p', mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0) &&
        (step = 's', umount2("/sys", MNT_DETACH) == 0 || errno == EINVAL) &&
        (step = 'S', mount("sysfs", "/sys", "sysfs", 0, nullptr) == 0) &&
        (step = 'b', mount("bpf", "/sys/fs/bpf", "bpf", 0, nullptr) == 0))
      step = 'k';
    const char report[2] = {step, static_cast<char>(errno)};
    (void)!::write(ready[1], report, 2);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char report[2] = {0, 0};
  const ssize_t n = read(ready[0], report, 2);
  close(ready[0]);
  Result<BpfFsNamespace> out = Status(Errc::IoError, Layer::App, "");
  if (n != 2 || report[0] != 'k') {
    const char* what = report[0] == 'm'   ? "unshare(CLONE_NEWNS)"
                       : report[0] == 'p' ? "making / private"
                       : report[0] == 's' ? "unmounting /sys"
                       : report[0] == 'S' ? "mounting sysfs on /sys"
                       : report[0] == 'b' ? "mounting bpffs on /sys/fs/bpf"
                                          : "the namespace holder";
    out = Status(Errc::IoError, Layer::App,
                 std::string("cannot make a mount namespace for the XDP tools: ") + what + " failed: " +
                     std::strerror(report[1]) + "; run as root (CAP_SYS_ADMIN)");
  } else {
    const std::string path = "/proc/" + std::to_string(pid) + "/ns/mnt";
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) out = os_error("open " + path, errno, "a kernel with mount namespaces has it");
    else out = BpfFsNamespace(fd);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return out;
}

// ---- child processes ---------------------------------------------------------------

Result<std::unique_ptr<Child>> Child::start(const std::vector<std::string>& argv, const ChildOptions& o) {
  const std::string path = find_tool(argv.at(0));
  if (path.empty())
    return Status(Errc::NotSupported, Layer::App, argv[0] + " not found on PATH or in the sbin directories");
  std::unique_ptr<Child> c(new Child());
  c->name_ = argv[0];
  int child_in = -1, child_out = -1;
  if (o.terminal) {
    const int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    char name[128];
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, sizeof name) != 0) {
      const int err = errno;
      if (master >= 0) close(master);
      return os_error("pseudo-terminal for " + argv[0], err, "check that /dev/pts is mounted");
    }
    const int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) {
      const int err = errno;
      close(master);
      return os_error(std::string("open ") + name, err, "check that /dev/pts is mounted");
    }
    c->out_ = master;
    c->in_ = fcntl(master, F_DUPFD_CLOEXEC, 0);
    child_in = child_out = slave;
  } else {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) return os_error("pipe", errno, "check the process's descriptor limit");
    if (pipe2(out, O_CLOEXEC) != 0) {
      const int err = errno;
      close(in[0]);
      close(in[1]);
      return os_error("pipe", err, "check the process's descriptor limit");
    }
    c->in_ = in[1];
    c->out_ = out[0];
    child_in = in[0];
    child_out = out[1];
  }
  // Everything the child needs is made before fork: after it only
  // async-signal-safe calls are allowed.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "LC_ALL=", 7) != 0) env_text.emplace_back(*e);
  env_text.emplace_back("LC_ALL=C");  // numbers without grouping, messages untranslated
  std::vector<char*> args, env;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env_text) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) exec_child(path.c_str(), args.data(), env.data(), o.mount_ns, child_in, child_out, o.terminal);
  const int err = errno;
  close(child_in);
  if (child_out != child_in) close(child_out);
  if (pid < 0) return os_error("fork for " + argv[0], err, "check the process limit");
  c->pid_ = pid;
  c->reader_ = std::thread([p = c.get()] { p->read_output(); });
  return c;
}

void Child::read_output() {
  char buf[4096];
  for (;;) {
    pollfd p{out_, POLLIN, 0};
    const int r = poll(&p, 1, 50);
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
    }
    if (r <= 0) continue;
    const ssize_t n = read(out_, buf, sizeof buf);
    std::lock_guard lock(mu_);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      closed_ = true;  // end of output (a pseudo-terminal says EIO once the child is gone)
      changed_.notify_all();
      return;
    }
    output_.append(buf, static_cast<size_t>(n));
    changed_.notify_all();
  }
}

Child::~Child() {
  if (pid_ > 0 && status_ < 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  if (reader_.joinable()) reader_.join();
  if (in_ >= 0) close(in_);
  if (out_ >= 0) close(out_);
}

Status Child::write(const std::string& text) {
  size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = ::write(in_, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return os_error("writing to " + name_, errno, "it has ended: see its output");
    at += static_cast<size_t>(n);
  }
  return Status::ok();
}

std::string Child::output() const {
  std::lock_guard lock(mu_);
  return output_;
}

bool Child::running() const {
  if (status_ >= 0) return false;
  int st = 0;
  if (waitpid(pid_, &st, WNOHANG) == 0) return true;
  status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return false;
}

bool Child::wait_for(const std::function<bool(const std::string&)>& done, double seconds) const {
  const int64_t until = ms_now() + static_cast<int64_t>(seconds * 1e3);
  std::unique_lock lock(mu_);
  for (;;) {
    if (done(output_)) return true;
    if (ms_now() >= until) return false;
    lock.unlock();
    const bool alive = running();
    lock.lock();
    if (!alive) return done(output_);
    changed_.wait_for(lock, std::chrono::milliseconds(5));
  }
}

int Child::wait(double seconds) {
  const int64_t until = ms_now() + static_cast<int64_t>(seconds * 1e3);
  while (running() && ms_now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (running()) {
    kill(pid_, SIGKILL);
    int st = 0;
    waitpid(pid_, &st, 0);
    status_ = 128 + SIGKILL;
  }
  // The last of its output, before the caller reads it.
  std::unique_lock lock(mu_);
  changed_.wait_for(lock, std::chrono::milliseconds(500), [&] { return closed_; });
  return status_;
}

int Child::interrupt(double seconds) {
  if (running()) kill(pid_, SIGINT);
  return wait(seconds);
}

Result<ToolResult> run_tool(const std::vector<std::string>& argv, const ChildOptions& o, double seconds) {
  auto c = Child::start(argv, o);
  if (!c) return c.status();
  ToolResult r;
  r.status = (*c)->wait(seconds);
  r.output = (*c)->output();
  return r;
}

std::string last_lines(const std::string& output, size_t lines) {
  std::vector<std::string> kept;
  std::stringstream ss(output);
  for (std::string line; std::getline(ss, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    kept.push_back(line.substr(first));
  }
  std::string out;
  for (size_t i = kept.size() > lines ? kept.size() - lines : 0; i < kept.size(); ++i)
    out += (out.empty() ? "" : " / ") + kept[i];
  return out;
}

bool number_after(const std::string& text, const std::string& label, uint64_t& value) {
  const size_t at = text.rfind(label);
  if (at == std::string::npos) return false;
  size_t i = at + label.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == ':' || text[i] == '\t')) ++i;
  if (i >= text.size() || text[i] < '0' || text[i] > '9') return false;
  uint64_t v = 0;
  for (; i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == ','); ++i)
    if (text[i] != ',') v = v * 10 + static_cast<uint64_t>(text[i] - '0');
  value = v;
  return true;
}

}  // namespace gnio::nicbench
