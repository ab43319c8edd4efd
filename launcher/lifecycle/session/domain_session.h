// The one door: every verb that acts on a running domain opens it here and nowhere else. By its
// name the domain is found in the state dir; one coming in by migration is settled (QEMU has the
// guest now); one whose QEMU has died is reaped (its state, labels and cgroup removed, as
// StateDir::RemoveIfStale does); the table of states (domain_state.h) is asked whether the domain's
// state accepts the verb; and for the verbs that talk to QEMU, its QMP socket is connected and
// qmp_capabilities sent (OpenDomainSession). `list` looks every domain up through the same door
// (LookUpDomain), and `destroy` (destroy.h) is the way out.
#pragma once

#include <chrono>
#include <exception>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/session/domain_state.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

class NotRunningError : public std::runtime_error {
 public:
  explicit NotRunningError(const std::string& name) : std::runtime_error("domain " + name + " is not running") {}
};

// A verb the domain's state refuses (domain_state.h), with the table's message.
class WrongStateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What the state dir says of the domain `name` as it is: nothing settled, nothing reaped. For a
// verb that shows what the state dir keeps even of a domain whose QEMU is gone (dumpxml: the XML
// it was started with), and for start's refusal of a name that runs.
DomainStatus PeekDomain(const StateDir& state, const std::string& name);

// The directory of the domain `name`, found without settling or reaping it (dumpxml). Throws
// std::runtime_error "domain NAME is not running: <why>" for a name qlaunch refuses, and
// "domain NAME is not running (qlaunch has no domain of that name in ROOT)" for one it does not know.
std::filesystem::path KnownDomainDir(const StateDir& state, const std::string& name);

// What the state dir says of the domain `name` now: an incoming one settled first
// (SettleIncoming, QEMU given `timeout`); a stale entry (its QEMU gone) reaped under the state
// root's lock and returned as kStale; one that came back to life meanwhile (a new start) read again.
DomainStatus LookUpDomain(const StateDir& state, const std::string& name, std::chrono::milliseconds timeout);

// The QEMU of a running domain, for a verb that acts on one: the domain is looked up
// (LookUpDomain) and its state asked whether it accepts `verb` (domain_state.h). Throws
// NotRunningError for unknown names and stale entries (which it removes), WrongStateError when the
// state refuses the verb (while a `start` of it is still at work, for every verb but list).
ProcessRef RunningQemu(const StateDir& state, const std::string& name, Verb verb);
// As destroy asks: for code that acts on a domain it has just started itself (run's supervisor).
inline ProcessRef RunningQemu(const StateDir& state, const std::string& name) {
  return RunningQemu(state, name, Verb::kDestroy);
}

// A QMP session with a running domain, for the verbs that talk to its QEMU.
struct DomainSession {
  ProcessRef qemu;
  std::unique_ptr<qemu::QmpClient> qmp;
};

// `verb` is asked of the domain's state (RunningQemu). Throws NotRunningError, WrongStateError,
// std::runtime_error (still starting; QMP does not answer, naming the
// domain and the socket).
DomainSession OpenDomainSession(const StateDir& state, const std::string& name, Verb verb,
                                std::chrono::milliseconds timeout);

// The destination's "incoming" file (state_dir.h) stays until a verb sees that QEMU has the guest:
// when the file is there and QEMU's status is no longer inmigrate, it is removed, so the domain's
// state is running (or paused) from then on. Called by LookUpDomain (and restore) before the state
// is read; a QEMU that does not answer within `timeout` leaves the file as it is.
void SettleIncoming(const StateDir& state, const std::string& name,
                    std::chrono::milliseconds timeout = std::chrono::seconds(2));

// QMP query-status of the QEMU behind `socket`: its "status", or "unknown" on any failure.
std::string QueryStatus(const std::string& socket, std::chrono::milliseconds timeout);
// The state list and dominfo show for QEMU's status: "incoming" for QEMU's inmigrate (the
// destination of a migration, waiting), else QEMU's own word.
std::string ShownStatus(const std::string& qemu_status);

// A source kept after a migration its destination did not take, left paused: QEMU says
// "postmigrate" and has released its disks to the destination, and QEMU 7.2 cannot hand them over
// a second time. Throws for `verb` (save, migrate) with what to do: resume it first (cont takes
// the disks back). Any other status passes.
void RefuseIfDisksReleased(const std::string& verb, const std::string& name, const std::string& qemu_status);

// How an error of a change QEMU did not make ends: "; the domain is unchanged", or, when `e` is
// the QMP connection closing because QEMU ended (waited for a moment), that the domain ended with
// it and where its log is.
std::string UnchangedOrEnded(const DomainSession& s, const std::exception& e, const std::filesystem::path& domain_dir);

}  // namespace qlaunch::launcher
