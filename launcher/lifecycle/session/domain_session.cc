#include "launcher/lifecycle/session/domain_session.h"

#include <stdexcept>
#include <thread>

#include "launcher/lifecycle/session/destroy.h"

namespace qlaunch::launcher {

DomainSession OpenDomainSession(const StateDir& state, const std::string& name, Verb verb,
                                std::chrono::milliseconds timeout) {
  DomainSession s;
  s.qemu = RunningQemu(state, name, verb);
  const std::string socket = (state.DomainDir(name) / "qmp.sock").string();
  try {
    s.qmp = qemu::QmpClient::Connect(socket, timeout, /*wait_for_server=*/false);
    s.qmp->Execute("qmp_capabilities", nullptr, timeout);
  } catch (const qemu::QmpError& e) {
    throw std::runtime_error("domain " + name + " (QEMU pid " + std::to_string(s.qemu.pid) +
                             ") does not answer on QMP: " + e.what());
  }
  return s;
}

void RefuseIfDisksReleased(const std::string& verb, const std::string& name, const std::string& qemu_status) {
  if (qemu_status != "postmigrate") return;
  throw std::runtime_error(verb + " " + name + ": the domain is paused after a migration its destination did not take, "
                           "and QEMU has released its disks to that destination; resume it first (qlaunch resume " +
                           name + " takes them back), then " + verb + " it");
}

std::string UnchangedOrEnded(const DomainSession& s, const std::exception& e, const std::filesystem::path& domain_dir) {
  if (dynamic_cast<const qemu::QmpClosed*>(&e) != nullptr && s.qemu.pid > 0) {
    // QEMU closes its socket as it dies: give the process a moment to be gone.
    for (int i = 0; i < 100 && ProcessAlive(s.qemu); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!ProcessAlive(s.qemu))
      return "; QEMU has ended, and the domain with it (its log: " + (domain_dir / "qemu.log").string() + ")";
  }
  return "; the domain is unchanged";
}

}  // namespace qlaunch::launcher
