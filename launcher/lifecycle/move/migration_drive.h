// The source's half of a migration to another QEMU (`migrate`, `migrate --local`): the
// capabilities and the bandwidth (migration_settings.h, set by the caller, who holds them until the
// source lets go), `migrate`, then migration_poll.h's wait until QEMU says completed, failed or
// cancelled, acting on SIGINT/SIGTERM (migrate_cancel) and on the timeout meanwhile. QEMU resumes a
// guest it paused for the switch-over when the migration does not complete, so a failure here leaves
// the source as it was. With the return path on, QEMU says completed only once the destination
// has loaded the guest (and started it, or left it paused as it came); a destination that fails to
// load it, or dies first, fails the migration here and the source runs on.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "launcher/lifecycle/start/migration_settings.h"
#include "launcher/lifecycle/start/start_interrupt.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

struct DriveOptions {
  std::chrono::milliseconds timeout{0};  // 0: none
  bool timeout_abort = false;  // on the timeout: cancel, else switch over now (suspend, as virsh)
  uint64_t bandwidth_mib = 0;  // MiB/s; 0: no cap (QEMU's own default is 32 MiB/s)
  bool progress = false;       // a progress line on stderr
  bool ignore_shared = false;  // x-ignore-shared: RAM in shared memory is not sent
  bool return_path = true;     // the destination confirms it loaded the guest (socket URIs)
  std::chrono::milliseconds qmp_timeout{5000};
};

// The capabilities and bandwidth `o` asks for.
MigrationSettings SettingsOf(const DriveOptions& o);

// What QEMU's query-migrate said at the end.
struct DriveResult {
  bool timed_out = false;  // the timeout struck and the guest was paused to finish
  double total_ms = 0, setup_ms = 0, downtime_ms = 0;
  uint64_t ram_transferred = 0, ram_total = 0;
};

// {"timed_out","total_time_ms","setup_time_ms","downtime_ms","ram_transferred_bytes","ram_total_bytes"}
nlohmann::json ToJson(const DriveResult& r);

// Migrates to `qemu_uri` (as QEMU takes it), the caller holding SourceMigrationSettings of
// SettingsOf(o). Throws std::runtime_error("migration of domain NAME to
// URI failed: <QEMU's error> | cancelled: <why>; the domain stays here (<its status now>)").
DriveResult DriveMigration(qemu::QmpClient& qmp, const std::string& name, const std::string& qemu_uri,
                           const DriveOptions& o, const StartInterrupt& interrupt);

}  // namespace qlaunch::launcher
