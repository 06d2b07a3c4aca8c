// SPDX-License-Identifier: Apache-2.0
// Bringing up the EAL, once per process, for every port of the module.
#include <pthread.h>
#include <sched.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <cerrno>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "port_module.hpp"

namespace gnio::dpdk_module {

int eal_init(const char* args, int* already, char* err) {
  static std::mutex mu;
  static int state = 0;  // 0: not tried, 1: up, -1: failed (the EAL cannot be retried)
  static int was_up = 0;
  static std::string failure;
  std::lock_guard lock(mu);
  if (state == 1) {
    *already = was_up;
    return 0;
  }
  if (state == -1) {
    set_err(err, "%s", failure.c_str());
    return -1;
  }
  // The EAL keeps pointers into argv: the strings live as long as the process.
  static std::vector<std::string> words;
  static std::vector<char*> argv;
  words.assign(1, "gnio");
  std::istringstream in(args ? args : "");
  for (std::string w; in >> w;) words.push_back(w);
  argv.clear();
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  // rte_eal_init pins the calling thread to the main lcore; gnio's threads
  // (engines started later inherit the mask) keep the CPUs they had.
  cpu_set_t before;
  const bool have_mask = pthread_getaffinity_np(pthread_self(), sizeof before, &before) == 0;
  int rc = rte_eal_init(static_cast<int>(words.size()), argv.data());
  const int eal_errno = rte_errno;
  if (have_mask) pthread_setaffinity_np(pthread_self(), sizeof before, &before);
  if (rc < 0 && eal_errno == EALREADY) {
    state = 1;
    was_up = 1;
    *already = 1;
    return 0;
  }
  if (rc < 0) {
    state = -1;
    failure = std::string("rte_eal_init('") + (args ? args : "") + "') failed: " + rte_strerror(eal_errno);
    set_err(err, "%s", failure.c_str());
    return -1;
  }
  state = 1;
  *already = 0;
  return 0;
}

}  // namespace gnio::dpdk_module
