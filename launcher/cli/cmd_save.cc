// qlaunch save: a running (or paused) domain's state and memory into a file, then the domain is
// gone, as `virsh save` (launcher/lifecycle/move/save.h).
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/move/save.h"

namespace qlaunch::launcher {

namespace {

struct Options {
  SaveOptions s;
  bool bypass_cache = false, json = false;
};

int Run(Options& o) {
  const SaveReport r = SaveDomain(StateDir(), o.s);
  if (o.json) {
    std::printf("%s\n", ToJson(r).dump().c_str());
  } else {
    std::printf("Domain '%s' saved to %s (%s, %.1f MiB in %.0f ms)\n", r.name.c_str(), r.file.c_str(),
                r.state.c_str(), r.file_bytes / 1048576.0, r.save_ms);
  }
  return 0;
}

}  // namespace

void AddSaveCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "save",
      "Save a running or paused domain's state and memory into FILE and stop it, as `virsh save`;\n"
      "`qlaunch restore FILE` brings it back. The guest is paused first, its devices' and memory's state\n"
      "written by QEMU (a migration stream to a file qlaunch opens: QEMU itself may not spawn a writer),\n"
      "then QEMU quits and its state dir, taps, labels, cgroup and hugepages are released as by destroy.\n"
      "FILE (mode 0600, overwritten if it exists) starts with qlaunch's header: the magic QLAUNCH-SAVE,\n"
      "a version, whether the guest ran, the domain's live XML (`qlaunch dumpxml`), then QEMU's stream at\n"
      "a 4 KiB-aligned offset. Disks are not saved: restore expects them as they were. On any failure\n"
      "or SIGINT/SIGTERM, FILE is removed and the domain runs on (paused if it was).\n"
      "Example: qlaunch save vm1 /var/lib/qlaunch/vm1.save && qlaunch restore /var/lib/qlaunch/vm1.save");
  SetKind(sub->add_option("NAME", o->s.name, "the domain's <name>"), ArgKind::kDomain)->required();
  SetKind(sub->add_option("FILE", o->s.file, "the file to write"), ArgKind::kPath)->required();
  sub->add_flag("--bypass-cache", o->bypass_cache, "accepted as virsh users type it, and ignored");
  sub->add_flag("--progress", o->s.progress, "a progress line on stderr (memory written / total)");
  sub->add_flag("--json", o->json,
                "print {\"name\",\"file\",\"state\" (before: running or paused),\"file_bytes\",\"stream_bytes\",\n"
                "\"save_ms\",\"wall_ms\"}");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
