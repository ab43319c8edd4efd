// qlaunch run: start a domain and supervise it in the foreground until it is gone.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/input_file.h"
#include "launcher/lifecycle/start/definition.h"
#include "launcher/lifecycle/start/inputs.h"
#include "launcher/lifecycle/start/start.h"
#include "launcher/lifecycle/supervise/supervise.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  StartOptions start;
  std::string prealloc = "auto", pidfile;
  double shutdown_timeout_s = 30;
  bool json = false;
};

// The pid file: written whole (a temporary file renamed over it) before the start, so that
// whoever sees the domain running (list, systemd's PIDFile= after READY=1) finds it; removed
// however run ends.
struct PidFile {
  std::string path;
  explicit PidFile(std::string p) : path(std::move(p)) {
    if (path.empty()) return;
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << ::getpid() << "\n";
    if (std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
  }
  ~PidFile() {
    if (!path.empty()) std::remove(path.c_str());
  }
};

int Run(Options& o) {
  InstallRunSignals();
  o.start.prealloc = *ParsePreallocMode(o.prealloc);
  o.start.supervised = true;
  const PidFile pid_file(o.pidfile);
  StartReport report;
  try {
    // The domain's <on_*> come from the start's own parse: `run` reads the XML once, as `start` does.
    CheckDefinitionName(o.start.domain_xml);
    report = StartDomain(o.start);
    report.timings.Mark(Phase::kReturn);
    report.timings.Finish();
  } catch (const DiagnosticError& e) {
    for (const auto& d : e.diagnostics()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return kRunStartFailed;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qlaunch: error: %s\n", e.what());
    return kRunStartFailed;
  }
  if (o.json) std::fprintf(stderr, "%s\n", ToJson(report).dump().c_str());
  else std::fprintf(stderr, "%s", ToTable(report).c_str());
  SuperviseOptions so;
  so.shutdown_timeout = std::chrono::milliseconds(static_cast<long long>(o.shutdown_timeout_s * 1000));
  so.json = o.json;
  int rc = Supervise(StateDir(o.start.state_root.empty() ? DefaultStateRoot() : o.start.state_root), report.name,
                     report.lifecycle, so);
  return rc;
}

}  // namespace

void AddRunCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "run",
      "Start a domain like 'start' and stay in the foreground as its supervisor until it is gone: for\n"
      "systemd (Type=notify: READY=1 once the guest runs), supervisord, Nomad raw_exec, a pod. Acts on\n"
      "QEMU's events as libvirt does: <on_poweroff>, <on_reboot> and <on_crash> (destroy, restart,\n"
      "preserve). SIGTERM/SIGINT press the ACPI power button and destroy the domain after\n"
      "--shutdown-timeout; SIGHUP is ignored. Events go to stderr (JSON lines with --json).\n"
      "The exit status tells how it ended (the list below); everything is released however it ends.\n"
      "With --incoming the domain is the destination of a migration (as for start), supervised from\n"
      "then on; a migration that fails there ends with 5.\n"
      "Example: qlaunch run --shutdown-timeout 60 --pidfile /run/vm1.pid vm1.xml");
  AddDomainInput(sub, &o->start.domain_xml);
  SetKind(sub->add_option("--qemu", o->start.qemu, "QEMU binary (as for start)"), ArgKind::kPath);
  sub->add_option("--prealloc", o->prealloc, "auto|qemu|launcher (as for start)")
      ->check(CLI::IsMember({"auto", "qemu", "launcher"}))
      ->capture_default_str();
  SetKind(sub->add_option("--user", o->start.user, "run QEMU as USER[:GROUP] (as for start)"), ArgKind::kUser);
  SetKind(sub->add_option("--sysfs", o->start.sysfs, "read the host from this copy of /sys"), ArgKind::kDir);
  sub->add_option("--incoming", o->start.incoming, "URI: wait for a migration there (as for start)");
  sub->add_flag("--progress", o->start.progress, "show a preallocation progress line on stderr");
  sub->add_flag("--run-early", o->start.run_early,
                "resume the guest as soon as QEMU is ready and fill its memory behind it (as for start);\n"
                "READY=1 goes out once the memory is full")
      ->excludes("--incoming");
  sub->add_option("--shutdown-timeout", o->shutdown_timeout_s,
                  "seconds between the ACPI power button and destroy on SIGTERM/SIGINT (0: destroy at once)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  SetKind(sub->add_option("--pidfile", o->pidfile, "write qlaunch run's pid here while it starts and supervises the domain"), ArgKind::kPath);
  sub->add_flag("--json", o->json, "the start report and every event as JSON lines on stderr");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
