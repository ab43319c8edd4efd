// The source's side of a migration once `migrate` has been sent, shared by `qlaunch migrate`
// (migrate.h) and `qlaunch save` (save.h): query-migrate until QEMU says completed, failed or
// cancelled, with a progress line, SIGINT/SIGTERM (migrate_cancel) and an optional timeout; and the
// "migrating" file that puts the domain in state migrating meanwhile.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/lifecycle/start/start_interrupt.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

// The "migrating" file: this process moves the domain away (state_dir.h); gone with it.
class MigratingMark {
 public:
  explicit MigratingMark(const std::filesystem::path& dir);
  ~MigratingMark();
  MigratingMark(const MigratingMark&) = delete;
  MigratingMark& operator=(const MigratingMark&) = delete;

 private:
  std::filesystem::path file_;
};

struct MigrationWait {
  std::chrono::steady_clock::time_point begin;  // the timeout counts from here
  std::chrono::milliseconds timeout{0};         // 0: none
  bool timeout_abort = false;  // on the timeout: cancel, else let the guest pause to finish now (suspend)
  const char* progress = nullptr;  // the progress line's label; nullptr: none
  std::chrono::milliseconds qmp_timeout{5000};
};

struct MigrationOutcome {
  nlohmann::json info;        // the last query-migrate (completed: with its times booked)
  std::string why_cancelled;  // "interrupted by SIGINT", "not done within --timeout N s"; "" otherwise
  bool timed_out = false;     // the timeout struck and the guest was paused to finish (suspend)
  bool completed() const { return info.value("status", "") == "completed"; }
};

MigrationOutcome WaitForMigration(qemu::QmpClient& qmp, const StartInterrupt& interrupt, const MigrationWait& w);

// "<what> cancelled: WHY" / "<what> failed: QEMU's error-desc", for an outcome that did not complete.
std::string MigrationFailure(const std::string& what, const MigrationOutcome& o);

}  // namespace qlaunch::launcher
