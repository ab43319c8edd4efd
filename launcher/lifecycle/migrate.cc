#include "launcher/lifecycle/migrate.h"

#include <filesystem>
#include <optional>
#include <stdexcept>

#include "launcher/lifecycle/destroy.h"
#include "launcher/lifecycle/domain_session.h"
#include "launcher/lifecycle/incoming.h"
#include "launcher/lifecycle/migration_poll.h"
#include "launcher/lifecycle/migration_uri.h"
#include "launcher/lifecycle/start_interrupt.h"

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
  DomainSession s = OpenDomainSession(state, o.name, Verb::kMigrate, o.qmp_timeout);
  qemu::QmpClient& qmp = *s.qmp;
  r.source_state = qmp.Execute("query-status", nullptr, o.qmp_timeout).value("status", "");
  std::optional<MigratingMark> mark(std::in_place, state.DomainDir(o.name));

  qmp.Execute("migrate-set-capabilities", {{"capabilities", MigrationCapabilities(o.ignore_shared)}}, o.qmp_timeout);
  qmp.Execute("migrate-set-parameters",
              {{"max-bandwidth", o.bandwidth_mib ? o.bandwidth_mib << 20 : kUnlimitedBandwidth}}, o.qmp_timeout);
  qmp.Execute("migrate", {{"uri", r.uri}}, o.qmp_timeout);

  MigrationWait w;
  w.begin = begin;
  w.timeout = o.timeout;
  w.timeout_abort = o.timeout_abort;
  w.progress = o.progress ? "migrate" : nullptr;
  w.qmp_timeout = o.qmp_timeout;
  const MigrationOutcome out = WaitForMigration(qmp, interrupt, w);
  r.timed_out = out.timed_out;
  if (!out.completed()) {
    const std::string now = qmp.Execute("query-status", nullptr, o.qmp_timeout).value("status", "");
    throw std::runtime_error(MigrationFailure("migration of domain " + o.name + " to " + r.uri, out) +
                             "; the domain stays here (" + (now.empty() ? "unknown" : now) + ")");
  }
  const json& info = out.info;
  r.total_ms = info.value("total-time", 0.0);
  r.setup_ms = info.value("setup-time", 0.0);
  r.downtime_ms = info.value("downtime", 0.0);
  if (info.contains("ram")) {
    r.ram_transferred = info["ram"].value("transferred", uint64_t{0});
    r.ram_total = info["ram"].value("total", uint64_t{0});
  }
  // The guest runs on the destination now; this QEMU (postmigrate) and all it holds go.
  s.qmp.reset();
  DestroyDomain(state, o.name);
  mark.reset();
  r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
  return r;
}

json ToJson(const MigrateReport& r) {
  return json{{"name", r.name},
              {"uri", r.uri},
              {"status", "completed"},
              {"source_state", r.source_state},
              {"timed_out", r.timed_out},
              {"total_time_ms", r.total_ms},
              {"setup_time_ms", r.setup_ms},
              {"downtime_ms", r.downtime_ms},
              {"ram_transferred_bytes", r.ram_transferred},
              {"ram_total_bytes", r.ram_total},
              {"wall_ms", r.wall_ms}};
}

}  // namespace qlaunch::launcher
