// qlaunch undefine: remove a domain's definition, like `virsh undefine`.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/host/defined_domains.h"
#include "launcher/host/systemd_unit.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string name;
};

int Run(const Options& o) {
  DefinedDomains defined;
  bool autostart = false;
  defined.WithLock([&] {
    autostart = defined.Autostart(o.name);
    defined.Remove(o.name);
  });
  if (autostart && SystemdIsInit()) SetUnitEnabled(o.name, false);
  std::printf("Domain '%s' has been undefined\n", o.name.c_str());
  return 0;
}

}  // namespace

void AddUndefineCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "undefine",
      "Remove a defined domain's definition (and its autostart), like `virsh undefine`. A domain that\n"
      "runs keeps running, as a transient one: once destroyed it is gone.\n"
      "Example: qlaunch undefine vm1");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDefined)->required();
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
