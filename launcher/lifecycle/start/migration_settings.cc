#include "launcher/lifecycle/start/migration_settings.h"

#include <string>

namespace qlaunch::launcher {

using nlohmann::json;

namespace {

// The capabilities put back after a migration that did not complete ("events" stays on: `run`'s
// supervisor reads the MIGRATION events, and it changes nothing a migration carries).
bool PutBack(const std::string& capability) { return capability == "x-ignore-shared" || capability == "return-path"; }

}  // namespace

json MigrationCapabilities(const MigrationSettings& s) {
  return json::array({{{"capability", "events"}, {"state", true}},
                      {{"capability", "x-ignore-shared"}, {"state", s.ignore_shared}},
                      {{"capability", "return-path"}, {"state", s.return_path}}});
}

SourceMigrationSettings::SourceMigrationSettings(qemu::QmpClient& qmp, const MigrationSettings& s,
                                                 std::chrono::milliseconds timeout)
    : qmp_(nullptr), timeout_(timeout), capabilities_(json::array()), parameters_(json::object()) {
  for (const json& c : qmp.Execute("query-migrate-capabilities", nullptr, timeout))
    if (c.is_object() && PutBack(c.value("capability", ""))) capabilities_.push_back(c);
  const json params = qmp.Execute("query-migrate-parameters", nullptr, timeout);
  for (const char* p : {"max-bandwidth", "downtime-limit"})
    if (params.contains(p)) parameters_[p] = params[p];
  qmp_ = &qmp;  // from here on, what is set is put back
  qmp.Execute("migrate-set-capabilities", {{"capabilities", MigrationCapabilities(s)}}, timeout);
  qmp.Execute("migrate-set-parameters", {{"max-bandwidth", s.max_bandwidth ? s.max_bandwidth : kUnlimitedBandwidth}},
              timeout);
}

SourceMigrationSettings::~SourceMigrationSettings() {
  if (!qmp_) return;
  try {
    if (!capabilities_.empty()) qmp_->Execute("migrate-set-capabilities", {{"capabilities", capabilities_}}, timeout_);
    if (!parameters_.empty()) qmp_->Execute("migrate-set-parameters", parameters_, timeout_);
  } catch (const std::exception&) {
  }
}

}  // namespace qlaunch::launcher
