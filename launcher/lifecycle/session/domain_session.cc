#include "launcher/lifecycle/session/domain_session.h"

#include <stdexcept>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

#include "launcher/host/uid_lease.h"

namespace qlaunch::launcher {

DomainStatus PeekDomain(const StateDir& state, const std::string& name) { return state.Inspect(name); }

std::filesystem::path KnownDomainDir(const StateDir& state, const std::string& name) {
  try {
    CheckDomainName(name);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("domain " + name + " is not running: " + e.what());
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(state.DomainDir(name), ec))
    throw std::runtime_error("domain " + name + " is not running (qlaunch has no domain of that name in " +
                             state.root().string() + ")");
  return state.DomainDir(name);
}

DomainStatus LookUpDomain(const StateDir& state, const std::string& name, std::chrono::milliseconds timeout) {
  SettleIncoming(state, name, timeout);
  DomainStatus st = state.Inspect(name);
  if (st.kind != DomainStatus::Kind::kStale) return st;
  bool reaped = false;
  state.WithLock([&] { reaped = state.RemoveIfStale(name); });
  return reaped ? st : state.Inspect(name);  // not reaped: it came back to life meanwhile (a new start)
}

ProcessRef RunningQemu(const StateDir& state, const std::string& name, Verb verb) {
  ReapLeases();  // a start killed before its domain dir existed left a lease no dir names
  try {
    CheckDomainName(name);
  } catch (const std::invalid_argument&) {
    throw NotRunningError(name);
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(state.DomainDir(name), ec)) throw NotRunningError(name);
  const DomainStatus st = LookUpDomain(state, name, std::chrono::seconds(2));
  if (st.kind == DomainStatus::Kind::kStale) throw NotRunningError(name);
  const DomainState now = StateFromStatus(st);
  if (!Accepts(now, verb))
    throw WrongStateError(RefusalMessage(
        name, now, verb, now == DomainState::kStarting ? "by qlaunch pid " + std::to_string(st.owner->pid) : ""));
  return *st.qemu;
}

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

void SettleIncoming(const StateDir& state, const std::string& name, std::chrono::milliseconds timeout) {
  const auto file = state.DomainDir(name) / "incoming";
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return;
  const std::string status = QueryStatus((state.DomainDir(name) / "qmp.sock").string(), timeout);
  if (status != "inmigrate" && status != "unknown") std::filesystem::remove(file, ec);
}

std::string QueryStatus(const std::string& socket, std::chrono::milliseconds timeout) {
  try {
    auto qmp = qemu::QmpClient::Connect(socket, timeout);
    qmp->Execute("qmp_capabilities", nullptr, timeout);
    nlohmann::json st = qmp->Execute("query-status", nullptr, timeout);
    std::string status = st.value("status", "");
    return status.empty() ? "unknown" : status;
  } catch (const std::exception&) {
    return "unknown";
  }
}

std::string ShownStatus(const std::string& qemu_status) {
  // postmigrate: a source kept after a migration its destination did not take, paused (as virsh
  // shows it); save and migrate ask for a resume first (RefuseIfDisksReleased).
  if (qemu_status == "postmigrate") return "paused";
  return qemu_status == "inmigrate" ? "incoming" : qemu_status;
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
