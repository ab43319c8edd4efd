// qlaunch autostart: start a defined domain when the host boots, like `virsh autostart`: through
// systemd's qlaunch@.service, with no daemon of qlaunch's own.
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
  bool disable = false;
};

int Run(const Options& o) {
  DefinedDomains defined;
  const bool on = !o.disable;
  defined.WithLock([&] {
    const bool was = defined.Autostart(o.name);
    defined.SetAutostart(o.name, on);
    if (!SystemdIsInit()) return;
    try {
      SetUnitEnabled(o.name, on);
    } catch (...) {
      defined.SetAutostart(o.name, was);  // as it was: nothing half done
      throw;
    }
  });
  std::printf("Domain '%s' %s as autostarted\n", o.name.c_str(), on ? "marked" : "unmarked");
  if (on && !SystemdIsInit())
    std::fprintf(stderr,
                 "qlaunch: warning: autostart: systemd is not PID 1 on this host (PID 1 is '%s'), so %s was not\n"
                 "enabled and nothing will start '%s' at boot by itself. Have this host's init run\n"
                 "`qlaunch start %s` at boot (every marked domain: `qlaunch list --all --autostart --name`),\n"
                 "or run `qlaunch run %s` under its supervisor (docs/supervision.md).\n",
                 InitName().c_str(), UnitName(o.name).c_str(), o.name.c_str(), o.name.c_str(), o.name.c_str());
  return 0;
}

}  // namespace

void AddAutostartCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "autostart",
      "Mark a defined domain to start when the host boots, like `virsh autostart`: enables the systemd\n"
      "unit qlaunch@NAME.service (`systemctl enable`; the template runs `qlaunch run NAME` after the\n"
      "local filesystems and the hugepage pools, see docs/supervision.md) and keeps the mark beside the\n"
      "definition ($QLAUNCH_CONFIG_DIR/autostart/NAME.xml, shown by `dominfo` and `list --autostart`).\n"
      "Where systemd is not PID 1 the mark is kept, and a warning says that nothing starts the domain\n"
      "at boot and what to do instead. `undefine` removes the mark and disables the unit.\n"
      "Example: qlaunch autostart vm1; qlaunch autostart --disable vm1");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDefined)->required();
  sub->add_flag("--disable", o->disable, "unmark it: no start at boot (systemctl disable)");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
