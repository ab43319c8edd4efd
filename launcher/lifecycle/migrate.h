// MigrateDomain: `qlaunch migrate NAME URI`, the source's side of a live migration to a destination
// that `qlaunch start --incoming URI` (or `run --incoming`) prepared: the capabilities both ends set
// (incoming.h), the bandwidth, `migrate`, then query-migrate until QEMU says completed, failed or
// cancelled. Completed: the source's QEMU (paused by QEMU at the switch-over) is quit and the
// domain's state, taps, labels, cgroup and hugepages released, as destroy releases them.
//
// Nothing is lost on a failure: QEMU resumes a guest it had paused for the switch-over itself, so
// after a refused connection, a destination that dies, SIGINT/SIGTERM (migrate_cancel) or
// --timeout-action abort, the source runs on as before and the error says why. While it works, the
// domain is in state migrating (its "migrating" file names this process).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/migration_drive.h"

namespace qlaunch::launcher {

struct MigrateOptions {
  std::string name;
  std::string uri;  // tcp:HOST:PORT or unix:PATH (migration_uri.h)
  DriveOptions drive;
  // Set true once QEMU says completed: the guest runs on the destination from then on, even if
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

// Throws std::invalid_argument (bad URI), NotRunningError / WrongStateError (destroy.h), and
// std::runtime_error for a migration that did not complete (the source still runs).
MigrateReport MigrateDomain(const StateDir& state, const MigrateOptions& opts);

// {"name","uri","status":"completed","source_state","timed_out","total_time_ms","setup_time_ms",
//  "downtime_ms","ram_transferred_bytes","ram_total_bytes","wall_ms"[,"destination"]}
nlohmann::json ToJson(const MigrateReport& r);

}  // namespace qlaunch::launcher
