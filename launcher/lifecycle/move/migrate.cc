#include "launcher/lifecycle/move/migrate.h"

#include <filesystem>
#include <optional>
#include <stdexcept>

#include "launcher/lifecycle/move/migration_drive.h"
#include "launcher/lifecycle/move/migration_poll.h"
#include "launcher/lifecycle/session/destroy.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "launcher/lifecycle/start/migration_settings.h"
#include "launcher/lifecycle/start/migration_uri.h"
#include "launcher/lifecycle/start/start_interrupt.h"

namespace qlaunch::launcher {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

}  // namespace

MigrateReport MigrateDomain(const StateDir& state, const MigrateOptions& o) {
  const MigrationUri uri = ParseMigrationUri(o.uri, UriUse::kMigrate, fs::current_path().string());
  if (uri.kind == MigrationUri::Kind::kSsh)
    throw std::invalid_argument("migrate: an ssh:// destination is prepared by the migrate command itself");
  MigrateReport r;
  r.name = o.name;
  r.uri = uri.ForQemu();
  const auto begin = Clock::now();
  StartInterrupt interrupt;  // SIGINT/SIGTERM: cancel the migration, not the process
  DomainSession s = OpenDomainSession(state, o.name, Verb::kMigrate, o.drive.qmp_timeout);
  qemu::QmpClient& qmp = *s.qmp;
  r.source_state = qmp.Execute("query-status", nullptr, o.drive.qmp_timeout).value("status", "");
  RefuseIfDisksReleased("migrate", o.name, r.source_state);
  std::optional<MigratingMark> mark(std::in_place, state.DomainDir(o.name));

  SourceMigrationSettings settings(qmp, SettingsOf(o.drive), o.drive.qmp_timeout);
  r.drive = DriveMigration(qmp, o.name, r.uri, o.drive, interrupt);
  if (o.confirm) {
    const std::string why = o.confirm(r.source_state);
    if (!why.empty()) {
      // The source is paused (postmigrate) and still has every page and device: it takes the
      // guest back. cont makes QEMU take its disks back too.
      std::string now = "paused";
      if (r.source_state == "running") {
        qmp.Execute("cont", nullptr, o.drive.qmp_timeout);
        now = qmp.Execute("query-status", nullptr, o.drive.qmp_timeout).value("status", "");
      }
      throw std::runtime_error("migration of domain " + o.name + " to " + r.uri +
                               " completed, but the destination does not have the guest: " + why +
                               "; the domain stays here (" + now + ")");
    }
  }
  settings.Release();
  if (o.completed) *o.completed = true;
  // The guest runs on the destination now; this QEMU (postmigrate) and all it holds go.
  s.qmp.reset();
  DestroyDomain(state, o.name);
  mark.reset();
  r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
  return r;
}

json ToJson(const MigrateReport& r) {
  json j{{"name", r.name},
         {"uri", r.uri},
         {"status", "completed"},
         {"source_state", r.source_state},
         {"wall_ms", r.wall_ms}};
  j.update(ToJson(r.drive));
  if (!r.destination.is_null()) j["destination"] = r.destination;
  return j;
}

}  // namespace qlaunch::launcher
