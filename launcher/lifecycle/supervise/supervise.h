// `qlaunch run`: after a start, stay in the foreground as the domain's supervisor until it is
// gone, acting on QEMU's events as libvirt does with <on_poweroff>, <on_reboot>, <on_crash>, and
// turning SIGTERM/SIGINT into a graceful shutdown (ACPI power button, then destroy after the
// timeout). The exit status tells the guest's fate (RunExit).
#pragma once

#include <chrono>
#include <string>

#include "domain/domain_def.h"
#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

enum RunExit : int {
  kRunPoweredOff = 0,   // the guest powered off (also after a SIGTERM it answered in time)
  kRunStartFailed = 1,  // the start failed; nothing is left
  kRunUsage = 2,        // bad command line
  kRunCrashed = 3,      // the guest crashed and <on_crash> destroyed it
  kRunTimedOut = 4,     // SIGTERM/SIGINT: the guest did not power off in time and was destroyed
  kRunQemuDied = 5,     // QEMU ended by itself (killed, crashed) or was destroyed by someone else
  kRunMigrated = 6,     // the domain migrated away (`qlaunch migrate`) and runs elsewhere now
};

struct SuperviseOptions {
  std::chrono::milliseconds shutdown_timeout{30000};  // after SIGTERM/SIGINT; 0 = destroy at once
  bool json = false;                                  // events as JSON lines on stderr
};

// Installs the signal handling `run` needs (SIGTERM/SIGINT noted, SIGHUP ignored) for the
// rest of the process. Call before the start, so no signal is lost in between.
void InstallRunSignals();

// Watches the started domain `name` (its events.sock monitor) until it is gone; releases
// everything (destroy, stale cleanup) before returning the exit status.
int Supervise(const StateDir& state, const std::string& name, const domain::Lifecycle& lifecycle,
              const SuperviseOptions& opts);

// systemd's readiness protocol: "READY=1" to $NOTIFY_SOCKET (a path, or @abstract), if set.
void NotifyReady();

}  // namespace qlaunch::launcher
