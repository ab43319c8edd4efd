// MigrateDomain: `qlaunch migrate NAME URI`, the source's side of a live migration to a destination
// that `qlaunch start --incoming URI` (or `run --incoming`) prepared: the capabilities both ends set
// (start/incoming.h), the bandwidth, `migrate`, then query-migrate until QEMU says completed, failed or
// cancelled. The return path is on: QEMU says completed only once the destination has loaded the
// guest and runs it (or keeps it paused, as it came). Then `confirm` (ssh://: asked over ssh),
// and only then is the source's QEMU (paused by QEMU at the switch-over) quit and the domain's
// state, taps, labels, cgroup and hugepages released, as destroy releases them.
//
// Nothing is lost on a failure: QEMU resumes a guest it had paused for the switch-over itself, so
// after a refused connection, a destination that fails to load the guest or dies before it has,
// SIGINT/SIGTERM (migrate_cancel) or --timeout-action abort, the source runs on as before and the
// error says why; so it does when `confirm` says the destination does not have the guest (qlaunch
// resumes it). What stays unknowable toward a bare `start --incoming` destination: that it keeps
// running once it has said it loaded the guest (it may die a moment later; the source is gone).
// While it works, the domain is in state migrating (its "migrating" file names this process).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/move/migration_drive.h"

namespace qlaunch::launcher {

struct MigrateOptions {
  std::string name;
  std::string uri;  // tcp:HOST:PORT or unix:PATH (migration_uri.h)
  DriveOptions drive;
  // Asked once QEMU says completed, before the source lets go, with the state the guest must
  // have there ("running" or "paused", as it was here): "" when the destination has it so, else
  // why not (the source is then resumed if it ran, and the migration fails). Unset: the return
  // path's word is taken.
  std::function<std::string(const std::string& want)> confirm;
  // Set true once the migration is completed and confirmed: the guest runs on the destination from then on, even if
  // releasing the source fails afterwards (migrate_ssh.h tears a destination down only before).
  bool* completed = nullptr;
};

struct MigrateReport {
  std::string name, uri;
  std::string source_state;  // "running" or "paused", before
  DriveResult drive;         // QEMU's figures
  double wall_ms = 0;        // this command, from the session to the source released
  nlohmann::json destination;  // ssh:// only (migrate_ssh.h): how the destination was prepared
};

// Throws std::invalid_argument (bad URI), NotRunningError / WrongStateError (domain_session.h), and
// std::runtime_error for a migration that did not complete or was not confirmed (the source
// still runs, or is paused as it was).
MigrateReport MigrateDomain(const StateDir& state, const MigrateOptions& opts);

// {"name","uri","status":"completed","source_state","timed_out","total_time_ms","setup_time_ms",
//  "downtime_ms","ram_transferred_bytes","ram_total_bytes","wall_ms"[,"destination"]}
nlohmann::json ToJson(const MigrateReport& r);

}  // namespace qlaunch::launcher
