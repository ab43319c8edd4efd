// DestroyDomain: stop a running domain and remove its state, escalating politely:
// QMP `quit`, then SIGTERM, then SIGKILL, each after its timeout, until the pid is gone. The way
// out of the door (domain_session.h): a domain is opened there as for any verb, and ends here.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/session/domain_session.h"

namespace qlaunch::launcher {

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

// Throws as RunningQemu does, and std::runtime_error when QEMU will not die.
DestroyResult DestroyDomain(const StateDir& state, const std::string& name, const DestroyOptions& opts = {});

}  // namespace qlaunch::launcher
