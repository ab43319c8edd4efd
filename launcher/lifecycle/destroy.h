// DestroyDomain: stop a running domain and remove its state, escalating politely:
// QMP `quit`, then SIGTERM, then SIGKILL, each after its timeout, until the pid is gone.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

class NotRunningError : public std::runtime_error {
 public:
  explicit NotRunningError(const std::string& name) : std::runtime_error("domain " + name + " is not running") {}
};

struct DestroyOptions {
  std::chrono::milliseconds qmp_timeout{5000};   // connecting and each QMP command
  std::chrono::milliseconds quit_wait{10000};    // for QEMU to exit after `quit`
  std::chrono::milliseconds term_wait{5000};     // after SIGTERM
  std::chrono::milliseconds kill_wait{10000};    // after SIGKILL
};

struct DestroyResult {
  pid_t pid = 0;
  std::string how;  // "quit", "SIGTERM" or "SIGKILL": what ended it
};

// The QEMU of a running domain, for every verb that acts on one. Throws NotRunningError for
// unknown names and stale entries (which it removes), std::runtime_error while a `start` of it
// is still at work.
ProcessRef RunningQemu(const StateDir& state, const std::string& name);

// Throws as RunningQemu does, and std::runtime_error when QEMU will not die.
DestroyResult DestroyDomain(const StateDir& state, const std::string& name, const DestroyOptions& opts = {});

}  // namespace qlaunch::launcher
