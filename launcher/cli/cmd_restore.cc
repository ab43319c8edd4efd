// qlaunch restore: run a domain again from the file `qlaunch save` wrote, as `virsh restore`
// (launcher/lifecycle/move/restore.h).
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/lifecycle/move/restore.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  RestoreOptions r;
  bool bypass_cache = false, json = false;
};

int Run(Options& o) {
  RestoreReport r = RestoreDomain(o.r);
  if (o.json) {
    std::printf("%s\n", ToJson(r).dump().c_str());
  } else {
    std::printf("Domain '%s' restored from %s (%s, pid %d): memory filled in %.0f ms, state loaded in %.0f ms, "
                "%.0f ms in all\n",
                r.start.name.c_str(), r.file.c_str(), r.state.c_str(), static_cast<int>(r.start.pid), r.fill_ms,
                r.load_ms, r.wall_ms);
  }
  return 0;
}

}  // namespace

void AddRestoreCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "restore",
      "Run the domain `qlaunch save` wrote into FILE again, as `virsh restore`: same name, devices and\n"
      "memory, running if it ran when it was saved, paused if it was paused. The domain is started from\n"
      "the live XML in FILE's header as `qlaunch start` would (hugepage pools checked, memory filled),\n"
      "then QEMU loads its state from FILE. A file that is not a qlaunch save file (no QLAUNCH-SAVE\n"
      "magic) or is cut short is refused before anything starts; if QEMU cannot load the state, or on\n"
      "SIGINT/SIGTERM, everything is released again (no QEMU, no state dir, hugepages back). FILE stays.\n"
      "Example: qlaunch restore /var/lib/qlaunch/vm1.save --json");
  SetKind(sub->add_option("FILE", o->r.file, "a file `qlaunch save` wrote"), ArgKind::kInputFile)->required();
  sub->add_flag("--bypass-cache", o->bypass_cache, "accepted as virsh users type it, and ignored");
  sub->add_flag("--progress", o->r.progress, "a preallocation progress line on stderr");
  sub->add_flag("--json", o->json,
                "print {\"name\",\"pid\",\"file\",\"state\",\"start_ms\",\"fill_ms\" (preallocating memory),\n"
                "\"load_ms\" (QEMU reading the state),\"wall_ms\",\"prealloc\",\"timings_ms\":{the start's}}");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
