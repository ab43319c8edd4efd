// qlaunch destroy: stop a running domain, like `virsh destroy`.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/session/destroy.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string name;
};

int Run(const Options& o) {
  StateDir state;
  DestroyResult r = DestroyDomain(state, o.name);
  std::printf("domain %s destroyed (pid %d, %s)\n", o.name.c_str(), static_cast<int>(r.pid), r.how.c_str());
  return 0;
}

}  // namespace

void AddDestroyCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "destroy",
      "Stop a domain started by qlaunch: QMP 'quit', then SIGTERM, then SIGKILL if it will not go,\n"
      "wait until its QEMU is gone (its hugepages are then back in the pool) and remove its state\n"
      "directory. Exit 1 with \"domain NAME is not running\" for an unknown name.\n"
      "Example: qlaunch destroy two-cells");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
