#include "launcher/lifecycle/move/migration_poll.h"

#include <unistd.h>

#include <memory>
#include <thread>

#include "launcher/host/state_dir.h"
#include "prealloc/progress_line.h"

namespace qlaunch::launcher {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// The largest downtime QEMU takes (2000 s): with it, QEMU switches over at its next check.
constexpr uint64_t kSwitchOverNowMs = 2000 * 1000;

bool Finished(const std::string& status) {
  return status == "completed" || status == "failed" || status == "cancelled";
}

}  // namespace

MigratingMark::MigratingMark(const std::filesystem::path& dir) : file_(dir / "migrating") {
  AtomicWrite(file_, std::to_string(::getpid()) + " " + std::to_string(RefOf(::getpid()).start_time) + "\n");
}

MigratingMark::~MigratingMark() {
  std::error_code ec;
  std::filesystem::remove(file_, ec);
}

MigrationOutcome WaitForMigration(qemu::QmpClient& qmp, const StartInterrupt& interrupt, const MigrationWait& w) {
  MigrationOutcome o;
  std::unique_ptr<prealloc::ProgressLine> line;
  if (w.progress) line = std::make_unique<prealloc::ProgressLine>(stderr, w.progress);
  for (;;) {
    o.info = qmp.Execute("query-migrate", nullptr, w.qmp_timeout);
    if (Finished(o.info.value("status", ""))) break;
    if (line && o.info.contains("ram"))
      line->Update(o.info["ram"].value("transferred", uint64_t{0}), o.info["ram"].value("total", uint64_t{0}));
    if (o.why_cancelled.empty() && interrupt.signal()) {
      o.why_cancelled = InterruptedBy(interrupt.signal());
      qmp.Execute("migrate_cancel", nullptr, w.qmp_timeout);
    }
    if (!o.timed_out && o.why_cancelled.empty() && w.timeout.count() > 0 && Clock::now() - w.begin >= w.timeout) {
      if (w.timeout_abort) {
        o.why_cancelled = "not done within --timeout " + std::to_string(w.timeout.count() / 1000.0).substr(0, 5) + " s";
        qmp.Execute("migrate_cancel", nullptr, w.qmp_timeout);
      } else {  // as virsh's --timeout-action suspend: the guest pauses now, the rest goes across
        o.timed_out = true;
        qmp.Execute("migrate-set-parameters", {{"downtime-limit", kSwitchOverNowMs}}, w.qmp_timeout);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (line) line->Finish();
  if (!o.completed()) return o;
  // QEMU says completed a moment before it books the times (migration_calculate_complete).
  for (int i = 0; i < 50 && o.info.value("total-time", 0.0) == 0.0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    o.info = qmp.Execute("query-migrate", nullptr, w.qmp_timeout);
  }
  return o;
}

std::string MigrationFailure(const std::string& what, const MigrationOutcome& o) {
  const std::string status = o.info.value("status", "");
  std::string msg = what + " " + (o.why_cancelled.empty() ? status : "cancelled: " + o.why_cancelled);
  if (o.why_cancelled.empty() && o.info.contains("error-desc")) msg += ": " + o.info["error-desc"].get<std::string>();
  return msg;
}

}  // namespace qlaunch::launcher
