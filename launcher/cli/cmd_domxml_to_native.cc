// qlaunch domxml-to-native: the QEMU command line qlaunch would run for a domain XML.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/shell_quote.h"
#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/input_file.h"
#include "launcher/lifecycle/start/inputs.h"
#include "qemu_cmd/planner.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string xml, format = "shell", sysfs, qemu, caps_file, prealloc = "auto";
  bool strict = false;
};

int Run(const Options& o) {
  domain::DomainDef def =
      o.xml == "-" ? LoadDomainText(ReadStdinXml(), "<stdin>", o.strict) : LoadDomain(o.xml, o.strict);
  numa::HostTopology host = LoadHost(o.sysfs);
  qemu::QemuCaps caps = LoadCaps(PickEmulator(o.qemu, &def), o.caps_file);
  qemu::LaunchPlan plan = qemu::PlanLaunch(def, host, caps, DefaultPlanOptions(def.name, *ParsePreallocMode(o.prealloc)));
  for (const auto& n : plan.notes) std::fprintf(stderr, "%s\n", n.ToString().c_str());
  std::string handed;  // backends qlaunch fills and hands over: the argv names their fds
  for (const auto& b : plan.backends)
    if (b.prealloc == qemu::PreallocBy::kLauncher) handed += (handed.empty() ? "" : ", ") + b.id;
  if (!handed.empty() && o.format != "json")
    std::fprintf(stderr,
                 "qlaunch: note: %s: filled by qlaunch and handed to QEMU as /proc/self/fd/N, as `qlaunch start` "
                 "does; for a command line QEMU runs on its own, add --prealloc qemu\n",
                 handed.c_str());
  if (o.format == "json") {
    std::cout << qemu::ToJson(plan).dump(2) << "\n";
  } else if (o.format == "lines") {
    for (const auto& a : plan.argv) std::cout << a << "\n";
  } else {
    std::cout << ShellJoin(plan.argv) << "\n";
  }
  return 0;
}

}  // namespace

void AddDomxmlToNativeCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "domxml-to-native",
      "Print the QEMU command line qlaunch would run for a libvirt domain XML: memory backends,\n"
      "thread-contexts and -numa options planned for this host and this QEMU. <domain type='kvm'>\n"
      "is planned with -accel kvm also where this host cannot use KVM (a note says so).\n"
      "Example: qlaunch domxml-to-native --format json examples/two-cells-hugepages.xml");
  SetKind(sub->add_option("DOMAIN.xml", o->xml, "libvirt domain XML; - reads it from standard input"),
          ArgKind::kInputOrStdin)
      ->required();
  sub->add_option("--format", o->format, "shell: one copy-pasteable line (default); lines: one argument per "
                                         "line; json: argv plus the planned backends and thread-contexts")
      ->check(CLI::IsMember({"shell", "lines", "json"}));
  SetKind(sub->add_option("--sysfs", o->sysfs, "read the host from this copy of /sys instead of the real one"),
          ArgKind::kDir);
  SetKind(sub->add_option("--qemu", o->qemu, "QEMU binary to plan for (default: the domain's <emulator>)"),
          ArgKind::kPath);
  SetKind(sub->add_option("--caps-file", o->caps_file, "use capabilities from this JSON file instead of probing QEMU"),
          ArgKind::kInputFile);
  sub->add_option("--prealloc", o->prealloc,
                  "who preallocates shared memfd memory: auto|qemu|launcher (as `start --prealloc`; qemu gives a\n"
                  "command line QEMU runs on its own, without memfds handed over by qlaunch)")
      ->check(CLI::IsMember({"auto", "qemu", "launcher"}));
  sub->add_flag("--strict", o->strict, "treat unsupported XML elements as errors");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
