// qlaunch setmem: a running domain's balloon target, as `virsh setmem --live` sets it.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/cli/scaled_size.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/change/balloon.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  std::string name, size;
  bool live = false, current = false, config = false, json = false;
};

int Run(const Options& o) {
  if (o.config)
    throw std::runtime_error("--config: qlaunch keeps no stored definition of a domain to change; setmem acts on "
                             "the running domain only (--live)");
  StateDir state;
  const SetMemoryResult r = SetMemory(state, o.name, VirshScaledSize(o.size, "setmem"), std::chrono::seconds(10));
  if (o.json) {
    std::printf("%s\n", nlohmann::json({{"target_bytes", r.target_bytes}, {"max_bytes", r.max_bytes},
                                        {"balloon", r.balloon}, {"qmp", r.qmp}})
                            .dump()
                            .c_str());
  }
  return 0;
}

}  // namespace

void AddSetmemCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "setmem",
      "Set how much memory a running domain's balloon leaves the guest, as `virsh setmem --live`\n"
      "does under libvirt 9.0 (QMP balloon). The guest's balloon driver then gives the rest back\n"
      "or takes it again; `dominfo` shows what the guest holds now (Used memory). SIZE is KiB\n"
      "unless it has a unit, and at most the domain's <memory>.\n"
      "Example: qlaunch setmem vm1 2G; qlaunch setmem vm1 1048576");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_option("SIZE", o->size, "the new memory size: KiB, or with a unit (M, MiB, G, GiB, ...)")->required();
  sub->add_flag("--live", o->live, "act on the running domain (what qlaunch always does)");
  sub->add_flag("--current", o->current, "the same as --live for a running domain");
  sub->add_flag("--config", o->config, "refused: qlaunch keeps no stored definition");
  sub->add_flag("--json", o->json, "print {\"target_bytes\",\"max_bytes\",\"balloon\",\"qmp\": the command sent}");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
