#include "launcher/lifecycle/migrate.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include "launcher/lifecycle/destroy.h"
#include "launcher/lifecycle/domain_session.h"
#include "launcher/lifecycle/incoming.h"
#include "launcher/lifecycle/migration_uri.h"
#include "launcher/lifecycle/start_interrupt.h"
#include "prealloc/progress_line.h"

namespace qlaunch::launcher {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// QEMU refuses a max-bandwidth above SIZE_MAX / 1000 bytes/s; 1 TiB/s stands for "no limit".
constexpr uint64_t kUnlimitedBandwidth = uint64_t{1} << 40;
// The largest downtime QEMU takes (2000 s): with it, QEMU switches over at its next check.
constexpr uint64_t kSwitchOverNowMs = 2000 * 1000;

// The "migrating" file: this process moves the domain away (state_dir.h); gone with it.
class MigratingMark {
 public:
  explicit MigratingMark(fs::path dir) : file_(std::move(dir) / "migrating") {
    AtomicWrite(file_, std::to_string(::getpid()) + " " + std::to_string(RefOf(::getpid()).start_time) + "\n");
  }
  ~MigratingMark() {
    std::error_code ec;
    fs::remove(file_, ec);
  }

 private:
  fs::path file_;
};

bool Finished(const std::string& status) {
  return status == "completed" || status == "failed" || status == "cancelled";
}

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

  std::unique_ptr<prealloc::ProgressLine> line;
  if (o.progress) line = std::make_unique<prealloc::ProgressLine>(stderr, "migrate");
  std::string why_cancelled;
  json info;
  for (;;) {
    info = qmp.Execute("query-migrate", nullptr, o.qmp_timeout);
    const std::string status = info.value("status", "");
    if (Finished(status)) break;
    if (line && info.contains("ram"))
      line->Update(info["ram"].value("transferred", uint64_t{0}), info["ram"].value("total", uint64_t{0}));
    if (why_cancelled.empty() && interrupt.signal()) {
      why_cancelled = "interrupted by " + std::string(interrupt.signal() == SIGINT ? "SIGINT" : "SIGTERM");
      qmp.Execute("migrate_cancel", nullptr, o.qmp_timeout);
    }
    if (!r.timed_out && why_cancelled.empty() && o.timeout.count() > 0 && Clock::now() - begin >= o.timeout) {
      if (o.timeout_abort) {
        why_cancelled = "not done within --timeout " + std::to_string(o.timeout.count() / 1000.0).substr(0, 5) + " s";
        qmp.Execute("migrate_cancel", nullptr, o.qmp_timeout);
      } else {  // as virsh's --timeout-action suspend: the guest pauses now, the rest goes across
        r.timed_out = true;
        qmp.Execute("migrate-set-parameters", {{"downtime-limit", kSwitchOverNowMs}}, o.qmp_timeout);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (line) line->Finish();
  const std::string status = info.value("status", "");
  if (status != "completed") {
    const std::string now = qmp.Execute("query-status", nullptr, o.qmp_timeout).value("status", "");
    std::string msg = "migration of domain " + o.name + " to " + r.uri + " " +
                      (why_cancelled.empty() ? status : "cancelled: " + why_cancelled);
    if (why_cancelled.empty() && info.contains("error-desc")) msg += ": " + info["error-desc"].get<std::string>();
    throw std::runtime_error(msg + "; the domain stays here (" + (now.empty() ? "unknown" : now) + ")");
  }
  if (o.completed) *o.completed = true;
  // QEMU says completed a moment before it books the times (migration_calculate_complete).
  for (int i = 0; i < 50 && info.value("total-time", 0.0) == 0.0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    info = qmp.Execute("query-migrate", nullptr, o.qmp_timeout);
  }
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
  json j{{"name", r.name},
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
  if (!r.destination.is_null()) j["destination"] = r.destination;
  return j;
}

}  // namespace qlaunch::launcher
