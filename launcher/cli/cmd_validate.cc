// qlaunch validate: every problem with a domain XML, its semantics, and this host.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "domain/parser.h"
#include "domain/validate.h"
#include "launcher/cli/command.h"
#include "launcher/lifecycle/inputs.h"
#include "launcher/lifecycle/preflight.h"
#include "qemu_cmd/planner.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string xml, sysfs, qemu, caps_file;
  bool strict = false;
};

int Run(const Options& o) {
  std::vector<Diagnostic> problems;
  domain::ParseOptions popts;
  popts.strict = o.strict;
  domain::DomainDef def;
  try {
    def = domain::ParseDomainFile(o.xml, popts);
  } catch (const DiagnosticError& e) {
    for (const auto& d : e.diagnostics()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return 1;
  }
  problems = def.warnings;
  auto semantic = domain::ValidateDomain(def);
  problems.insert(problems.end(), semantic.begin(), semantic.end());
  if (!HasErrors(semantic)) {
    numa::HostTopology host = LoadHost(o.sysfs);
    qemu::QemuCaps caps = LoadCaps(PickEmulator(o.qemu, &def), o.caps_file);
    try {
      qemu::LaunchPlan plan = qemu::PlanLaunch(def, host, caps, DefaultPlanOptions(def.name, qemu::PreallocMode::kAuto));
      problems.insert(problems.end(), plan.notes.begin(), plan.notes.end());
      for (auto& d : CheckHugepagePools(plan, host)) {
        d.file = def.file;
        problems.push_back(std::move(d));
      }
    } catch (const DiagnosticError& e) {
      problems.insert(problems.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  }
  for (const auto& d : problems) std::fprintf(stderr, "%s\n", d.ToString().c_str());
  if (HasErrors(problems)) return 1;
  std::printf("%s: valid for this host\n", o.xml.c_str());
  return 0;
}

}  // namespace

void AddValidateCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "validate",
      "Check a libvirt domain XML: syntax, semantics (cells add up, CPUs disjoint, nodesets name\n"
      "existing cells, ...) and this host (host nodes exist, hugepage sizes are mounted, the pools\n"
      "have enough free pages per node). Lists every problem; exit 0 when valid, 1 otherwise.\n"
      "Example: qlaunch validate examples/two-cells-hugepages.xml");
  sub->add_option("DOMAIN.xml", o->xml, "libvirt domain XML")->required()->check(CLI::ExistingFile);
  sub->add_option("--sysfs", o->sysfs, "read the host from this copy of /sys instead of the real one");
  sub->add_option("--qemu", o->qemu, "QEMU binary to check against (default: the domain's <emulator>)");
  sub->add_option("--caps-file", o->caps_file, "use capabilities from this JSON file instead of probing QEMU");
  sub->add_flag("--strict", o->strict, "treat unsupported XML elements as errors");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
