// DestroyDomain: stop a running domain and remove its state, escalating politely:
// QMP `quit`, then SIGTERM, then SIGKILL, each after its timeout, until the pid is gone.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/session/domain_state.h"

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

// A verb the domain's state refuses (domain_state.h), with the table's message.
class WrongStateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The QEMU of a running domain, for a verb that acts on one: the domain's state, from the state
// dir, is asked whether it accepts `verb` (domain_state.h). Throws NotRunningError for unknown
// names and stale entries (which it removes), WrongStateError when the state refuses the verb
// (while a `start` of it is still at work, for every verb but list).
ProcessRef RunningQemu(const StateDir& state, const std::string& name, Verb verb);
// As destroy asks: for code that acts on a domain it has just started itself (run's supervisor).
inline ProcessRef RunningQemu(const StateDir& state, const std::string& name) {
  return RunningQemu(state, name, Verb::kDestroy);
}

// Throws as RunningQemu does, and std::runtime_error when QEMU will not die.
DestroyResult DestroyDomain(const StateDir& state, const std::string& name, const DestroyOptions& opts = {});

}  // namespace qlaunch::launcher
