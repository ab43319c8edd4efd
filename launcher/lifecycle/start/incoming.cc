#include "launcher/lifecycle/start/incoming.h"

#include <stdexcept>

#include "launcher/lifecycle/start/migration_settings.h"

namespace qlaunch::launcher {

using nlohmann::json;

std::string ListenIncoming(qemu::QmpClient& qmp, const MigrationUri& uri, bool ignore_shared,
                           std::chrono::milliseconds timeout, int fd) {
  MigrationSettings settings;
  settings.ignore_shared = ignore_shared;
  qmp.Execute("migrate-set-capabilities", {{"capabilities", MigrationCapabilities(settings)}}, timeout);
  if (uri.kind == MigrationUri::Kind::kFd) qmp.ExecuteWithFd("getfd", {{"fdname", uri.path}}, fd, timeout);
  try {
    qmp.Execute("migrate-incoming", {{"uri", uri.ForQemu()}}, timeout);
  } catch (const qemu::QmpTimeout&) {
    throw;
  } catch (const qemu::QmpError& e) {
    if (uri.kind != MigrationUri::Kind::kUnix) throw;
    throw qemu::QmpError(std::string(e.what()) + " (QEMU runs unprivileged and makes the socket itself: its user " +
                         "needs write access to the socket's directory, as in /tmp)");
  }
  if (uri.kind != MigrationUri::Kind::kTcp || uri.port != 0) return uri.ForQemu();
  const json info = qmp.Execute("query-migrate", nullptr, timeout);
  for (const json& a : info.value("socket-address", json::array())) {
    if (a.value("type", "") != "inet") continue;
    MigrationUri real = uri;
    const json port = a.value("port", json());
    real.port = port.is_string() ? std::stoi(port.get<std::string>()) : port.get<int>();
    return real.ForQemu();
  }
  throw std::runtime_error("QEMU listens for the migration but does not say on which port (query-migrate: " +
                           info.dump() + ")");
}

}  // namespace qlaunch::launcher
