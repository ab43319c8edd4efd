#include "launcher/lifecycle/domain_session.h"

#include <stdexcept>

#include "launcher/lifecycle/destroy.h"

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

}  // namespace qlaunch::launcher
