// qlaunch list: the running domains.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/command.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/observe/defined_list.h"
#include "launcher/lifecycle/observe/domain_list.h"
#include "launcher/lifecycle/start/start.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  bool json = false, all = false, autostart = false, names = false;
};

int Run(const Options& o) {
  StateDir state;
  auto timeout = std::min<std::chrono::milliseconds>(QmpTimeoutFromEnv(), std::chrono::seconds(5));
  auto domains = ListDomains(state, timeout);
  AddDefinedDomains(DefinedDomains(), o.all, &domains);
  if (o.autostart) std::erase_if(domains, [](const DomainEntry& e) { return !e.autostart; });
  if (o.names) {
    for (const DomainEntry& e : domains) std::printf("%s\n", e.name.c_str());
    return 0;
  }
  if (o.json) std::printf("%s\n", ToJson(domains).dump().c_str());
  else std::printf("%s", ToTable(domains).c_str());
  return 0;
}

}  // namespace

void AddListCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "list",
      "List the domains qlaunch started that are still running, with their state from QEMU\n"
      "(QMP query-status: running, paused, ...; 'starting' while a start is at work). Entries whose\n"
      "QEMU has gone are removed from $QLAUNCH_STATE_DIR (default /run/qlaunch) and not listed.\n"
      "With --all, also the defined domains that do not run (`define`): '-' for the pid, 'shut off',\n"
      "after the running ones, as `virsh list --all`.\n"
      "Example: qlaunch list --all --json");
  sub->add_flag("--json", o->json,
                "print [{\"name\",\"pid\",\"state\",\"memory_bytes\",\"vcpus\",\"graphics\",\"interfaces\"}, ...]\n"
                "instead of a table (graphics: type, listen, port; interfaces: type, model, mac, tap, bridge;\n"
                "also \"persistent\": defined, \"autostart\")");
  sub->add_flag("--all", o->all, "also the defined domains that are shut off (virsh list --all)");
  sub->add_flag("--autostart", o->autostart, "only the domains marked for autostart (`qlaunch autostart`)");
  sub->add_flag("--name", o->names, "print only the names, one a line (virsh list --name)");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
