// qlaunch validate: every problem with a domain XML, its semantics, and this host.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "domain/parser.h"
#include "domain/validate.h"
#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/input_file.h"
#include "launcher/lifecycle/start/inputs.h"
#include "launcher/lifecycle/start/preflight.h"
#include "launcher/lifecycle/start/slurm_gres.h"
#include "launcher/lifecycle/start/start_checks.h"
#include "launcher/host/qemu_user.h"
#include "qemu_cmd/planner.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string xml, sysfs, qemu, caps_file;
  bool strict = false, gres = false;
};

// A DAC <seclabel> naming a user that a running domain runs as too: start will share it, and warn.
void SharedSeclabelWarnings(const domain::DomainDef& def, std::vector<Diagnostic>* problems) {
  if (!def.seclabel.present || def.seclabel.type != "static" || def.seclabel.label.empty()) return;
  try {
    const QemuUser user = ResolveQemuUser("", def);
    for (const std::string& other : DomainsRunningAs(StateDir(), def.name, user.user + ":" + user.group))
      problems->push_back({Severity::kWarning, def.file, def.seclabel.line, "seclabel", SharedUserWarning(other, user.user + ":" + user.group)});
  } catch (const std::exception&) {  // a user that does not exist: start's error, not validate's business here
  }
}

int Run(const Options& o) {
  std::vector<Diagnostic> problems;
  std::string gres;
  domain::ParseOptions popts;
  popts.strict = o.strict;
  domain::DomainDef def;
  try {
    def = o.xml == "-" ? domain::ParseDomainXml(ReadStdinXml(), "<stdin>", popts)
                       : domain::ParseDomainFile(o.xml, popts);
  } catch (const DiagnosticError& e) {
    for (const auto& d : e.diagnostics()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return 1;
  }
  problems = def.warnings;
  SharedSeclabelWarnings(def, &problems);
  auto semantic = domain::ValidateDomain(def);
  problems.insert(problems.end(), semantic.begin(), semantic.end());
  if (!HasErrors(semantic)) {
    numa::HostTopology host = LoadHost(o.sysfs);
    qemu::QemuCaps caps = LoadCaps(PickEmulator(o.qemu, &def), o.caps_file);
    try {
      qemu::LaunchPlan plan = qemu::PlanLaunch(def, host, caps, DefaultPlanOptions(def.name, qemu::PreallocMode::kAuto));
      // On this very host, a KVM plan KVM cannot run is start's refusal, word for word (not with
      // --gres: the scheduler picks the host).
      std::vector<Diagnostic> accel = o.sysfs.empty() && o.caps_file.empty() && !o.gres ? CheckAccelerator(def)
                                                                                         : std::vector<Diagnostic>{};
      for (const auto& n : plan.notes)
        if (accel.empty() || n.message != qemu::kKvmUnusableNote) problems.push_back(n);
      problems.insert(problems.end(), accel.begin(), accel.end());
      if (o.gres) gres = GresArgument(plan.pool_needs);
      // --gres: the pages are the scheduler's business, on whichever node it picks.
      if (!o.gres)
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
  if (o.gres) {
    if (gres.empty()) std::fprintf(stderr, "qlaunch: %s takes no hugepages: it needs no --gres\n", o.xml.c_str());
    else std::printf("%s\n", gres.c_str());
    return 0;
  }
  // Checked against another host's /sys or another QEMU's capabilities: not this host.
  std::string against = "this host";
  if (!o.sysfs.empty() || !o.caps_file.empty()) {
    if (!o.sysfs.empty()) against = "the host in " + o.sysfs;
    if (!o.caps_file.empty()) against += " with the QEMU of " + o.caps_file;
  }
  std::printf("%s: valid for %s\n", o.xml == "-" ? "<stdin>" : o.xml.c_str(), against.c_str());
  return 0;
}

}  // namespace

void AddValidateCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "validate",
      "Check a libvirt domain XML: syntax, semantics (cells add up, CPUs disjoint, nodesets name\n"
      "existing cells, ...) and this host (host nodes exist, hugepage sizes are mounted, the pools\n"
      "have enough free pages per node, KVM for type='kvm' unless --sysfs or --caps-file name\n"
      "another host). Lists every problem; exit 0 when valid, 1 otherwise.\n"
      "With --gres, print instead the argument of Slurm's --gres that the domain's hugepages need\n"
      "(hugepages:<size>:<pages>, as 'capabilities --format gres' declares them), without checking\n"
      "this host's free pages or KVM.\n"
      "Example: qlaunch validate examples/two-cells-hugepages.xml;\n"
      "         sbatch --gres=$(qlaunch validate --gres vm.xml) vm.sbatch");
  SetKind(sub->add_option("DOMAIN.xml", o->xml, "libvirt domain XML; - reads it from standard input"),
          ArgKind::kInputOrStdin)
      ->required();
  SetKind(sub->add_option("--sysfs", o->sysfs, "read the host from this copy of /sys instead of the real one"),
          ArgKind::kDir);
  SetKind(sub->add_option("--qemu", o->qemu, "QEMU binary to check against (default: the domain's <emulator>)"),
          ArgKind::kPath);
  SetKind(sub->add_option("--caps-file", o->caps_file, "use capabilities from this JSON file instead of probing QEMU"),
          ArgKind::kInputFile);
  sub->add_flag("--strict", o->strict, "treat unsupported XML elements as errors");
  sub->add_flag("--gres", o->gres, "print the Slurm --gres argument for the domain's hugepages (e.g. hugepages:2M:3072)");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
