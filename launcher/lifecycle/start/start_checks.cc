#include "launcher/lifecycle/start/start_checks.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "domain/memory_totals.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "launcher/lifecycle/session/domain_state.h"
#include "launcher/lifecycle/start/preflight.h"
#include "launcher/lifecycle/start/run_early.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

void CheckEmulator(const std::string& emulator, const StartOptions& opts, const domain::DomainDef& def) {
  struct stat st {};
  std::string problem;
  if (::stat(emulator.c_str(), &st) != 0) problem = "does not exist";
  else if (!S_ISREG(st.st_mode)) problem = "is not a file";
  else if (::access(emulator.c_str(), X_OK) != 0) problem = "is not executable";
  if (problem.empty()) return;
  Diagnostic d;
  if (!opts.qemu.empty()) {
    d.message = "emulator " + emulator + " (given by --qemu) " + problem;
  } else if (!def.devices.emulator.empty()) {
    d.file = def.file;
    d.line = def.devices.emulator_line;
    d.element = "emulator";
    d.message = "emulator " + emulator + " " + problem + " (use --qemu PATH to choose another)";
  } else {
    d.message = "the default emulator " + emulator + " " + problem +
                " (install qemu-system-x86, or use --qemu PATH or <emulator> in the domain)";
  }
  throw DiagnosticError(d);
}

std::optional<Diagnostic> CheckMemlockLimit(const domain::DomainDef& def, const QemuUser& user) {
  if (!def.memory_backing.locked || !user.change) return std::nullopt;
  const rlim_t need = domain::TotalMemoryBytes(def) + (1ull << 30);
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_MEMLOCK, &lim) == 0 && (lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= need)) return std::nullopt;
  struct rlimit want {need, need};
  if (::setrlimit(RLIMIT_MEMLOCK, &want) == 0) return std::nullopt;
  Diagnostic d;
  d.file = def.file;
  d.line = def.memory_backing.line;
  d.element = "memoryBacking";
  d.message = "<locked/>: QEMU's user " + user.user + " needs RLIMIT_MEMLOCK of " + std::to_string(need) +
              " bytes (guest memory + 1 GiB), and this host refuses to raise it (" + std::strerror(errno) +
              "; the hard limit is " + std::to_string(lim.rlim_max) +
              " bytes): raise the limit for qlaunch (e.g. LimitMEMLOCK= in its unit, or ulimit -l), or pass "
              "--user root to let QEMU lock memory as root";
  return d;
}

void RefuseIfRunning(const StateDir& state, const std::string& name) {
  DomainStatus st = PeekDomain(state, name);  // a clear refusal before the pool check
  if (fs::exists(state.DomainDir(name)) && !Accepts(StateFromStatus(st), Verb::kStart))
    throw AlreadyRunningError(name, st.qemu_alive ? st.qemu->pid : st.owner->pid,
                              st.kind == DomainStatus::Kind::kStarting && !st.qemu_alive);
}

std::vector<std::string> DomainsRunningAs(const StateDir& state, const std::string& name, const std::string& user) {
  std::vector<std::string> out;
  for (const std::string& other : state.Names()) {
    if (other == name) continue;
    std::string theirs = ReadSmallFile(state.DomainDir(other) / "user").value_or("");
    while (!theirs.empty() && theirs.back() == '\n') theirs.pop_back();
    if (theirs == user && PeekDomain(state, other).qemu_alive) out.push_back(other);
  }
  return out;
}

std::string SharedUserWarning(const std::string& other, const std::string& user) {
  return "domain " + other + " runs as " + user +
         " too: a guest that escapes into either QEMU reaches the other (its memory, disks and process); leave "
         "--user and <seclabel> out for ids of its own";
}

void WarnSharedUser(const StateDir& state, const std::string& name, const std::string& user) {
  for (const std::string& other : DomainsRunningAs(state, name, user))
    std::fprintf(stderr, "qlaunch: warning: %s\n", SharedUserWarning(other, user).c_str());
}

void CheckHostForPlan(const domain::DomainDef& def, const qemu::LaunchPlan& plan, const numa::HostTopology& host,
                      const std::map<uint64_t, uint64_t>& reserved_pages, const QemuUser& qemu_user,
                      bool run_early) {
  std::vector<Diagnostic> problems = CheckAccelerator(def);
  if (auto d = CheckMemlockLimit(def, qemu_user)) problems.push_back(*d);
  if (run_early)
    if (auto d = RunEarlyRefusal(plan, def)) problems.push_back(*d);
  if (problems.empty() && def.type == "kvm" && qemu_user.change) {
    if (int err = OpenErrorAs(qemu_user, qemu::KvmDevicePath(), O_RDWR)) {
      Diagnostic d;
      d.message = "type='kvm': the QEMU user " + qemu_user.user + " cannot open /dev/kvm (" + std::strerror(err) +
                  "); add it to the group that owns /dev/kvm (kvm)";
      problems.push_back(d);
    }
  }
  for (auto& d : CheckHugepagePools(plan.pool_needs, host, reserved_pages)) problems.push_back(std::move(d));
  if (!problems.empty()) {
    for (auto& d : problems)
      if (d.file.empty()) d.file = def.file;
    throw DiagnosticError(std::move(problems));
  }
}

}  // namespace qlaunch::launcher
