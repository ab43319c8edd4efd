// A QMP session with a running domain, for the verbs that act on one (suspend, resume, reboot,
// shutdown, qemu-monitor-command): the domain must be running (launcher/lifecycle/session/destroy.h RunningQemu),
// then its QMP socket is connected and qmp_capabilities sent.
#pragma once

#include <chrono>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/session/domain_state.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

struct DomainSession {
  ProcessRef qemu;
  std::unique_ptr<qemu::QmpClient> qmp;
};

// `verb` is asked of the domain's state (RunningQemu). Throws NotRunningError, WrongStateError,
// std::runtime_error (still starting; QMP does not answer, naming the
// domain and the socket).
DomainSession OpenDomainSession(const StateDir& state, const std::string& name, Verb verb,
                                std::chrono::milliseconds timeout);

// How an error of a change QEMU did not make ends: "; the domain is unchanged", or, when `e` is
// the QMP connection closing because QEMU ended (waited for a moment), that the domain ended with
// it and where its log is.
// A source kept after a migration its destination did not take, left paused: QEMU says
// "postmigrate" and has released its disks to the destination, and QEMU 7.2 cannot hand them over
// a second time. Throws for `verb` (save, migrate) with what to do: resume it first (cont takes
// the disks back). Any other status passes.
void RefuseIfDisksReleased(const std::string& verb, const std::string& name, const std::string& qemu_status);

std::string UnchangedOrEnded(const DomainSession& s, const std::exception& e, const std::filesystem::path& domain_dir);

}  // namespace qlaunch::launcher
