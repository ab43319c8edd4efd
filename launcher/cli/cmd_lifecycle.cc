// The guest lifecycle verbs, named as in virsh: suspend, resume, reboot, shutdown.
#include <cstdio>
#include <memory>
#include <thread>

#include <CLI/CLI.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/lifecycle/session/destroy.h"
#include "launcher/lifecycle/session/domain_session.h"

namespace qlaunch::launcher {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kQmpTimeout{5000};

struct Options {
  std::string name;
  double timeout_s = 60;
  bool force = false;
};

// One QMP command on a running domain; prints what was done.
int Simple(const Options& o, Verb verb, const char* command, const char* done) {
  StateDir state;
  DomainSession s = OpenDomainSession(state, o.name, verb, kQmpTimeout);
  s.qmp->Execute(command, nullptr, kQmpTimeout);
  std::printf("domain %s %s\n", o.name.c_str(), done);
  return 0;
}

// ACPI power button, then wait for QEMU to go; --force destroys a guest that ignores it.
int Shutdown(const Options& o) {
  StateDir state;
  DomainSession s = OpenDomainSession(state, o.name, Verb::kShutdown, kQmpTimeout);
  s.qmp->Execute("system_powerdown", nullptr, kQmpTimeout);
  s.qmp.reset();
  const auto deadline = Clock::now() + std::chrono::duration<double>(o.timeout_s);
  while (ProcessAlive(s.qemu) && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!ProcessAlive(s.qemu)) {
    state.WithLock([&] { state.RemoveIfStale(o.name); });  // QEMU exited: its state goes
    std::printf("domain %s is shut off\n", o.name.c_str());
    return 0;
  }
  if (!o.force) {
    std::fprintf(stderr,
                 "qlaunch: error: domain %s did not shut down within %g s of the ACPI power button (the guest "
                 "ignores it, or is paused); it still runs. Use --force to destroy it then, or 'qlaunch destroy'\n",
                 o.name.c_str(), o.timeout_s);
    return 1;
  }
  DestroyResult r = DestroyDomain(state, o.name);
  std::printf("domain %s did not shut down within %g s; destroyed (pid %d, %s)\n", o.name.c_str(), o.timeout_s,
              static_cast<int>(r.pid), r.how.c_str());
  return 0;
}

CLI::App* AddVerb(CLI::App& app, const char* name, const std::string& help, std::shared_ptr<Options> o) {
  CLI::App* sub = app.add_subcommand(name, help);
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  return sub;
}

}  // namespace

void AddLifecycleCommands(CLI::App& app, CommandAction* action) {
  auto suspend = std::make_shared<Options>();
  AddVerb(app, "suspend",
          "Pause a running domain's vCPUs (QMP 'stop'), like `virsh suspend`; its memory stays.\n"
          "Example: qlaunch suspend two-cells",
          suspend)
      ->callback([suspend, action] { *action = [suspend] { return Simple(*suspend, Verb::kSuspend, "stop", "suspended"); }; });

  auto resume = std::make_shared<Options>();
  AddVerb(app, "resume", "Run a suspended domain's vCPUs again (QMP 'cont'), like `virsh resume`.\n"
                         "Example: qlaunch resume two-cells",
          resume)
      ->callback([resume, action] { *action = [resume] { return Simple(*resume, Verb::kResume, "cont", "resumed"); }; });

  auto reboot = std::make_shared<Options>();
  AddVerb(app, "reboot",
          "Reset a domain like pressing its reset button (QMP 'system_reset'; virsh calls this 'reset').\n"
          "The guest is not asked first. Example: qlaunch reboot two-cells",
          reboot)
      ->callback([reboot, action] { *action = [reboot] { return Simple(*reboot, Verb::kReboot, "system_reset", "reset"); }; });

  auto shutdown = std::make_shared<Options>();
  CLI::App* sub = AddVerb(app, "shutdown",
                          "Ask a domain's guest to power off (ACPI power button, QMP 'system_powerdown'), like\n"
                          "`virsh shutdown`, and wait until its QEMU has exited (its state is then removed).\n"
                          "Exit 1 if it still runs after --timeout, unless --force destroys it then.\n"
                          "Example: qlaunch shutdown --timeout 30 --force two-cells",
                          shutdown);
  sub->add_option("--timeout", shutdown->timeout_s, "seconds to wait for the guest to power off")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_flag("--force", shutdown->force, "destroy the domain if it has not powered off by then");
  sub->callback([shutdown, action] { *action = [shutdown] { return Shutdown(*shutdown); }; });
}

}  // namespace qlaunch::launcher
