#include "launcher/lifecycle/move/migration_drive.h"

#include <stdexcept>
#include <thread>

#include "launcher/lifecycle/move/migration_poll.h"

namespace qlaunch::launcher {

MigrationSettings SettingsOf(const DriveOptions& o) {
  MigrationSettings s;
  s.ignore_shared = o.ignore_shared;
  s.return_path = o.return_path;
  s.max_bandwidth = o.bandwidth_mib << 20;
  return s;
}

DriveResult DriveMigration(qemu::QmpClient& qmp, const std::string& name, const std::string& qemu_uri,
                           const DriveOptions& o, const StartInterrupt& interrupt) {
  MigrationWait w;
  w.begin = std::chrono::steady_clock::now();
  w.timeout = o.timeout;
  w.timeout_abort = o.timeout_abort;
  w.progress = o.progress ? "migrate" : nullptr;
  w.qmp_timeout = o.qmp_timeout;
  qmp.Execute("migrate", {{"uri", qemu_uri}}, o.qmp_timeout);
  const MigrationOutcome out = WaitForMigration(qmp, interrupt, w);
  if (!out.completed()) {
    // QEMU says failed a moment before it puts the guest back as it was (running, or paused).
    std::string now;
    for (int i = 0; i < 100; ++i) {
      now = qmp.Execute("query-status", nullptr, o.qmp_timeout).value("status", "");
      if (now != "finish-migrate") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // A return path that broke (the destination could not load the guest, or ended) leaves QEMU
    // no error of its own to give.
    const bool silent = out.why_cancelled.empty() && !out.info.contains("error-desc");
    throw std::runtime_error(MigrationFailure("migration of domain " + name + " to " + qemu_uri, out) +
                             (silent && o.return_path ? ": the destination did not confirm that it loaded the guest "
                                                        "(it could not, or it ended: its qemu.log says why)"
                                                      : "") +
                             "; the domain stays here (" + (now.empty() ? "unknown" : now) + ")");
  }
  DriveResult r;
  r.timed_out = out.timed_out;
  const nlohmann::json& info = out.info;
  r.total_ms = info.value("total-time", 0.0);
  r.setup_ms = info.value("setup-time", 0.0);
  r.downtime_ms = info.value("downtime", 0.0);
  if (info.contains("ram")) {
    r.ram_transferred = info["ram"].value("transferred", uint64_t{0});
    r.ram_total = info["ram"].value("total", uint64_t{0});
  }
  return r;
}

nlohmann::json ToJson(const DriveResult& r) {
  return {{"timed_out", r.timed_out},
          {"total_time_ms", r.total_ms},
          {"setup_time_ms", r.setup_ms},
          {"downtime_ms", r.downtime_ms},
          {"ram_transferred_bytes", r.ram_transferred},
          {"ram_total_bytes", r.ram_total}};
}

}  // namespace qlaunch::launcher
